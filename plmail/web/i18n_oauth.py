"""German text of connecting Gmail and Microsoft 365 accounts and their admin section (merged in i18n)."""

from __future__ import annotations

OAUTH_GERMAN: dict[str, str] = {
    # Accounts
    "Connect Gmail": "Gmail verbinden",
    "Connect Microsoft 365 / Outlook": "Microsoft 365 / Outlook verbinden",
    "You sign in at Google or Microsoft; plmail never sees your password.":
        "Du meldest dich bei Google oder Microsoft an; plmail sieht dein Passwort nie.",
    "Connect again": "Erneut verbinden",
    "This account was connected before plmail could send mail. Connect it again and allow sending to send from "
    "it.":
        "Dieses Konto wurde verbunden, bevor plmail E-Mails senden konnte. Verbinde es erneut und erlaube das "
        "Senden, um von ihm aus zu senden.",
    "Access was withdrawn; connect the account again to resume syncing.":
        "Der Zugriff wurde entzogen; verbinde das Konto erneut, damit es wieder synchronisiert.",
    "The account was not connected": "Das Konto wurde nicht verbunden",
    "Try again": "Noch einmal versuchen",
    "Access was not granted at {provider}, so no account was connected.":
        "Bei {provider} wurde der Zugriff nicht erlaubt, daher wurde kein Konto verbunden.",
    "This sign-in did not start here, has expired or was already used. Please start again.":
        "Diese Anmeldung wurde nicht hier begonnen, ist abgelaufen oder wurde schon verwendet. Bitte beginne "
        "von vorn.",
    "{provider} sign-in is not set up yet: an administrator must enter the OAuth client id and secret on the "
    "administration page.":
        "Die Anmeldung über {provider} ist noch nicht eingerichtet: Eine Administratorin muss Client-ID und "
        "Client-Secret auf der Administrationsseite eintragen.",
    "You signed in as {signed_in}, but this account is {expected}. Sign in as {expected} to reconnect it, or add "
    "{signed_in} as a new account.":
        "Du hast dich als {signed_in} angemeldet, dieses Konto ist aber {expected}. Melde dich als {expected} an, "
        "um es erneut zu verbinden, oder füge {signed_in} als neues Konto hinzu.",
    "{provider} reported a problem: {detail}": "{provider} meldet ein Problem: {detail}",
    # Administration → Gmail and Microsoft 365 sign-in
    "Gmail and Microsoft 365 sign-in": "Anmeldung für Gmail und Microsoft 365",
    "Users connect Gmail and Microsoft 365 accounts through an OAuth client you register with Google or "
    "Microsoft. Register the redirect URI shown below with it. Entries here win over the environment.":
        "Gmail- und Microsoft-365-Konten werden über einen OAuth-Client verbunden, den du bei Google oder "
        "Microsoft registrierst. Trage dort die unten angezeigte Weiterleitungs-URI ein. Einträge hier haben "
        "Vorrang vor der Umgebung.",
    "Set up": "Eingerichtet",
    "Not set up": "Nicht eingerichtet",
    "from the environment": "aus der Umgebung",
    "Redirect URI to register": "Zu registrierende Weiterleitungs-URI",
    "Client id": "Client-ID",
    "Client secret": "Client-Secret",
    "The client id cannot contain spaces.": "Die Client-ID darf keine Leerzeichen enthalten.",
    # Deleting for good (providers/gmail/destroyer.py NEEDS_FULL_SCOPE)
    "Deleting mail for good needs Gmail's full mail access, which this account was connected without. Reconnect it "
    "under Settings → Accounts and allow full access; until then, move the mail to Trash instead.":
        "Endgültiges Löschen braucht den vollen E-Mail-Zugriff bei Gmail, ohne den dieses Konto verbunden wurde. "
        "Verbinde es unter Einstellungen → Konten erneut und erlaube den vollen Zugriff; bis dahin verschiebe die "
        "E-Mails in den Papierkorb.",
}
