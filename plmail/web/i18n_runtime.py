"""Strings the code chooses at run time (label roles, tabs, presets, colours, calendar words, the errors
services raise), marked so `pybabel extract` keeps them in the catalog: `tools/i18n` runs it."""

from __future__ import annotations


def N_(text: str) -> str:
    """gettext_noop: marks `text` for extraction; translation happens where it is shown."""
    return text


def NC_(context: str, text: str) -> str:
    """pgettext_noop: the same, for a word whose meaning depends on `context`."""
    return text


MAIL_RUNTIME = (
    N_("Snoozed"),
    N_("Drafts"),
    N_("Trash"),
    N_("Archive"),
    N_("plmail is already set up; sign in instead."),
    N_("General"),
    N_("Promotions"),
    N_("Social"),
    N_("Updates"),
    N_("Forums"),
    N_("Not found"),
    N_("This page does not exist, or it belongs to someone else."),
    N_("Not allowed"),
    N_("Only administrators can open this page."),
    N_("Something went wrong"),
    N_("Gmail filed it under {tab} ({signal})."),
    N_("You have written to {signal} before, so it stays in General."),
    N_("It came through a mailing list (header {signal})."),
    N_("It carries bulk-mail headers ({signal})."),
    N_("It comes from a social network ({signal})."),
    N_("It was sent automatically ({signal})."),
    N_("Nothing marks it as bulk or automatic mail, so it is in General."),
    N_("It would be in {original}, but that tab is switched off, so it stays in General."),
    N_("Password changed. Other sessions were signed out."),
    N_("The current password is wrong."),
    N_("Health"),
    N_("Later today"),
    N_("Tomorrow"),
    N_("This weekend"),
    N_("Next week"),
    N_("gray"),
    N_("red"),
    N_("orange"),
    N_("amber"),
    N_("green"),
    N_("teal"),
    N_("blue"),
    N_("violet"),
    N_("pink"),
    N_("From contains"),
    N_("To contains"),
    N_("Cc contains"),
    N_("Subject contains"),
    N_("Body contains"),
    N_("Anywhere in the message"),
    N_("Mailing list is"),
    N_("Attachment named"),
    N_("Has an attachment"),
    N_("Larger than (KB)"),
    N_("Smaller than (KB)"),
    N_("Has the label"),
    N_("Does not have the label"),
    N_("Archive it"),
    N_("Move it to the trash"),
    N_("Mark it as spam"),
    N_("Star it"),
    N_("Mark it as read"),
    N_("Database"),
    N_("The device can no longer sign in."),
    N_("Name the device, for example “Phone”."),
)

COMPOSER_RUNTIME = (
    N_("To"),
    N_("Cc"),
    N_("Bcc"),
    N_("Attachments"),
    N_("Send later"),
    N_("Reply"),
    N_("Reply all"),
    N_("Forward"),
    N_("Draft discarded"),
    N_("The message was not sent; it is a draft again."),
    N_("Connect an account to send mail from."),
    N_("Reply, reply all, forward or forward as attachment."),
    N_("Quote the original below the answer, or not at all."),
    N_("The undo delay is between 0 and 60 seconds."),
    N_("Only aliases you added can be removed; this address comes from the account."),
    N_('This provider decides which addresses the account sends as; add the address there, and it '
       'appears here after the next sync.'),
    N_("Choose the address to send from."),
    N_("Pick the time to send as a date and time."),
    N_("A scheduled send is at least a minute ahead."),
    N_("The subject field may not contain line breaks or control characters."),
    N_("The name field may not contain line breaks or control characters."),
    N_("The replyTo field may not contain line breaks or control characters."),
    N_("The to field may not contain line breaks or control characters."),
    N_("The cc field may not contain line breaks or control characters."),
    N_("The bcc field may not contain line breaks or control characters."),
    N_("You cannot send from that address: it is not one of your identities."),
    N_("The message has no recipients."),
    N_("This message was sent or discarded in another window, so this version was not saved. Copy what you still "
       "need into a new message."),
    N_("This message is on its way (Undo it first to change it), so this version was not saved."),
    N_("This message was sent or discarded."),
    N_("another window is saving this draft; try again"),
    N_("It is on its way or sent already; it cannot be taken back."),
)

CALENDAR_RUNTIME = (
    N_("Previous"),
    N_("Today"),
    N_("Next"),
    N_("Day"),
    N_("Week"),
    N_("Month"),
    N_("Agenda"),
    N_("all day"),
    N_("continues"),
    N_("(no title)"),
    N_("Confirmed"),
    N_("Tentative"),
    N_("Cancelled"),
    N_("Accepted"),
    N_("Declined"),
    N_("Not answered yet"),
    N_("Delegated"),
    N_("Enter the time as shown, for example 2026-04-01T09:30."),
    N_("An all-day event takes dates, a timed event takes times."),
    N_("This event belongs to a subscribed calendar; change it there."),
    N_("An all-day event is moved in its editor."),
    N_("Give the new start and end as date and time."),
)

ACCOUNTS_RUNTIME = (
    N_("less than {n} minutes left"),
    N_("about {n} minutes left"),
    N_("about {n} hours left"),
    N_("Implicit TLS (usually port 993)"),
    N_("STARTTLS (usually port 143)"),
    N_("No encryption (this machine only)"),
    N_("This provider needs an app password, not your normal password."),
    N_("Allow IMAP access in the GMX settings first."),
    N_("Allow IMAP access in the WEB.DE settings first."),
    N_("Use the e-mail password set in the Telekom customer centre."),
    N_("Proton Mail is reached through Proton Bridge."),
    N_("A guess from the domain; check it with your provider."),
    N_("Filled in from the settings your provider publishes."),
    N_("Filled in from your provider's DNS records."),
    N_("Implicit TLS (usually port 465)"),
    N_("STARTTLS (usually port 587)"),
)

ASSISTANT_RUNTIME = (
    N_("OpenAI-compatible (chat completions)"),
    N_("Ollama"),
    N_("Hold mail between 2 and 300 seconds."),
    N_("Give the model between 1 and 300 seconds to answer."),
    N_("Choose an OpenAI-compatible or an Ollama endpoint."),
    N_("The model URL must start with http:// or https://."),
    N_("Name the model to use."),
    N_("Saved. Your mail is being sorted again."),
    N_("Choose who sorts your mail."),
    N_("The General tab cannot be switched off."),
)

OAUTH_RUNTIME = (
    N_("Access was not granted at {provider}, so no account was connected."),
    N_("This sign-in did not start here, has expired or was already used. Please start again."),
    N_('{provider} sign-in is not set up yet: an administrator must enter the OAuth client id and '
       'secret on the administration page.'),
    N_('You signed in as {signed_in}, but this account is {expected}. Sign in as {expected} to '
       'reconnect it, or add {signed_in} as a new account.'),
    N_("{provider} reported a problem: {detail}"),
    N_("The client id cannot contain spaces."),
)

WEB_UI_RUNTIME = (
    # the keyboard shortcuts list (base.html)
    N_("Next / previous conversation"), N_("Open"), N_("Back to the list"), N_("Delete"), N_("Report spam"),
    N_("Star or unstar"), N_("Select"), N_("Mark read / unread"), N_("Label"), N_("Snooze"), N_("Undo"),
    N_("Search"), N_("Compose"), N_("Reply / reply all / forward"), N_("Go to the inbox"), N_("Go to starred"),
    N_("Go to all mail"), N_("Go to sent"), N_("Go to drafts"), N_("Show this list"),
    # Settings → Appearance and keyboard
    N_("Follow the system"), N_("Light"), N_("Dark"), N_("Comfortable"), N_("Compact"),
    N_("As usual in my language"), N_("24-hour (14:30)"), N_("12-hour (2:30 PM)"),
    # time-zone regions
    N_("Africa"), N_("America"), N_("Antarctica"), N_("Arctic"), N_("Asia"), N_("Atlantic"), N_("Australia"),
    N_("Europe"), N_("Indian"), N_("Pacific"), N_("Other"),
)

# The state of this process's worker per queue on the admin page (jobs/workers.py WorkerState)
WORKER_STATES = (NC_("worker", "starting"), NC_("worker", "running"), NC_("worker", "restarting"),
                 NC_("worker", "stopped"), NC_("worker", "dead"))


# Chosen at run time by issues 19, 20, 23 (sign-in security, calendar forms and RSVP, destroy, connection
# tests): errors the services raise and the flash messages and options the controllers pick
INTEGRATED_RUNTIME = (
    N_("The email address or password is wrong."),
    N_("Invitation"),
    N_("Booking"),
    N_("Added to calendar"),
    N_("Choose an .ics file."),
    N_("Choose how the event repeats."),
    N_("Choose one of your calendars."),
    N_("Deleting mail for good needs Gmail's full mail access, which this account was connected without. "
       "Reconnect it under Settings → Accounts and allow full access; until then, move the mail to Trash instead."),
    N_("Does not repeat"),
    N_("Every day"),
    N_("Every month"),
    N_("Every week"),
    N_("Every weekday (Mon–Fri)"),
    N_("Every year"),
    N_("Give the event a title."),
    N_("Connect a mail account to invite guests: invitations go out as mail."),
    N_("An event can have at most 100 guests."),
    N_("Only the organiser can change who is invited."),
    N_("Guests cannot be invited here."),
    N_("The event's organiser is not one of your addresses."),
    N_("Keep this custom rule"),
    N_("Maybe"),
    N_("New recovery codes; the old ones no longer work."),
    N_("No"),
    N_("No such occurrence."),
    N_("No such user."),
    N_("Second factor removed; the user signs in with the password."),
    N_("Start the set-up again: the secret is not valid."),
    N_("That browser is signed out."),
    N_("That code does not match. Check the time on your phone and try again."),
    N_("That code is wrong or was used already."),
    N_("Too many wrong codes. Enter your password again."),
    N_("Enter your current password to make this change."),
    N_("You cannot send as this address yet: it is not verified. Open the confirmation link that was sent to it "
       "(Settings → Sending can send it again)."),
    N_("This address belongs to another plmail user: you cannot send as it."),
    N_("This address is verified already."),
    N_("A confirmation went to this address a moment ago; wait a minute before sending another."),
    N_("This confirmation link is not valid any more: send a new one from Settings → Sending."),
    N_("This account cannot send mail, so it cannot send the confirmation either."),
    N_("The URL points to another server now: enter its API key again."),
    N_("The end must be after the start."),
    N_("The event could not be saved; try again."),
    N_("The file is larger than 4 MB."),
    N_("This account is disabled. Ask your administrator."),
    N_("This event has no such occurrence."),
    N_("This is not an iCalendar (.ics) file."),
    N_("Too many connection tests. Wait a minute and try again."),
    N_("Two-factor sign-in is off."),
    N_("Two-factor sign-in is on."),
    N_("User disabled; their sessions ended."),
    N_("User enabled."),
    N_("Yes"),
    N_("You cannot disable your own account."),
    N_("Your answer is recorded and on its way to the organiser."),
    N_("Your answer is recorded, but it could not be sent to the organiser."),
    N_("Your answer is recorded; nothing was sent."),
    N_("plmail connects only to mail ports (25, 143, 465, 587, 993, 1025, 1143). An administrator can allow "
       "other ports."),
)

# Sender authentication (web/explain.py, mail/authentication.py): why a sender was or was not verified.
SENDER_AUTH_RUNTIME = (
    N_("The receiving server's DMARC check did not pass ({detail})."),
    N_("The receiving server's DMARC check was about another domain ({detail})."),
    N_("What passed belongs to another domain ({detail})."),
    N_("None of the receiving server's checks passed ({detail})."),
    N_("The receiving server checked nothing."),
    N_("The account's receiving server left no result of its own."),
    N_("The account's receiving server is not known yet; set it on the account's page."),
    N_("DMARC passed"),
    N_("it carries a DKIM signature of that domain"),
    N_("SPF passed for that domain"),
    N_("A receiving server is named like mx.example.org."),
    N_("At most 8 receiving servers."),
    N_("This provider's receiving server is known; there is nothing to set."),
)

# Web Push to the browser (web/controllers/notifications.py, push/browser.py, push/subscriptions.py).
PUSH_RUNTIME = (
    N_("Notification settings saved."),
    N_("The browser gave no usable push endpoint."),
    N_("Choose at least one label to be notified of."),
    N_("Choose at least one account to be notified of."),
    N_("Enter an email address such as anna@example.org."),
    N_("Your VIP list is full; remove a sender first."),
    N_("VIP sender added."),
    N_("VIP sender removed."),
    N_("Enter the quiet hours as two times, such as 22:00 and 07:00."),
    N_("Quiet hours need a start and an end that differ."),
)
