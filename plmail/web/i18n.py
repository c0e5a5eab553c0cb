"""User-facing text in English and German.

English strings are the keys; a missing German entry falls back to English, and a test checks that
every string the templates ask for has one.
"""

from __future__ import annotations

from plmail.domain.enums import Locale
from plmail.web.i18n_accounts import ACCOUNTS_GERMAN
from plmail.web.i18n_assistant import ASSISTANT_GERMAN
from plmail.web.i18n_calendar import CALENDAR_GERMAN
from plmail.web.i18n_compose import COMPOSE_GERMAN
from plmail.web.i18n_oauth import OAUTH_GERMAN
from plmail.web.i18n_security import SECURITY_GERMAN

GERMAN: dict[str, str] = {
    # layout
    "Inbox": "Posteingang",
    "Snoozed": "Zurückgestellt",
    "Sent": "Gesendet",
    "Drafts": "Entwürfe",
    "Spam": "Spam",
    "Trash": "Papierkorb",
    "Archive": "Archiv",
    "Labels": "Labels",
    "Accounts": "Konten",
    "No accounts connected yet.": "Noch keine Konten verbunden.",
    "Settings": "Einstellungen",
    "Administration": "Administration",
    "Sign out": "Abmelden",
    "Skip to content": "Zum Inhalt springen",
    "Main navigation": "Hauptnavigation",
    "unread": "ungelesen",
    # sign-in and setup
    "Sign in": "Anmelden",
    "Sign in to plmail": "Bei plmail anmelden",
    "Email address": "E-Mail-Adresse",
    "Password": "Passwort",
    "Welcome to plmail": "Willkommen bei plmail",
    "Create the first account. It will be the administrator of this installation.":
        "Lege das erste Benutzerkonto an. Es verwaltet diese Installation.",
    "Your name": "Dein Name",
    "Choose a password": "Passwort wählen",
    "At least 8 characters.": "Mindestens 8 Zeichen.",
    "Language": "Sprache",
    "Time zone": "Zeitzone",
    "Create and sign in": "Anlegen und anmelden",
    "The email address or password is wrong.": "E-Mail-Adresse oder Passwort ist falsch.",
    "Too many failed sign-in attempts. Try again in {seconds} seconds.":
        "Zu viele fehlgeschlagene Anmeldeversuche. Versuche es in {seconds} Sekunden erneut.",
    "plmail is already set up; sign in instead.": "plmail ist bereits eingerichtet; melde dich stattdessen an.",
    # mail pages
    "General": "Allgemein",
    "Promotions": "Werbung",
    "Social": "Soziale Netzwerke",
    "Updates": "Benachrichtigungen",
    "Forums": "Foren",
    "No conversations here.": "Hier sind keine Konversationen.",
    "Connect a mail account to see your mail here.": "Verbinde ein E-Mail-Konto, um hier deine Mail zu sehen.",
    "Not found": "Nicht gefunden",
    "This page does not exist, or it belongs to someone else.":
        "Diese Seite gibt es nicht, oder sie gehört jemand anderem.",
    "Not allowed": "Nicht erlaubt",
    "Only administrators can open this page.": "Nur Administratoren können diese Seite öffnen.",
    "Something went wrong": "Etwas ist schiefgelaufen",
    "Back to the inbox": "Zurück zum Posteingang",
    "(no subject)": "(kein Betreff)",
    "Attachment": "Anhang",
    "Newer": "Neuere",
    "Older": "Ältere",
    "Inbox tabs": "Posteingangs-Tabs",
    "Search": "Suche",
    "Search mail": "Mail durchsuchen",
    "Results for": "Ergebnisse für",
    "to": "an",
    "Why is this here?": "Warum ist das hier?",
    "Remote images are hidden to protect your privacy.":
        "Externe Bilder sind zum Schutz deiner Privatsphäre ausgeblendet.",
    "Show images": "Bilder anzeigen",
    "Always show images from this sender": "Bilder von diesem Absender immer anzeigen",
    "Message body": "Nachrichtentext",
    "no category label": "kein Kategorie-Label",
    "Gmail filed it under {tab} ({signal}).": "Gmail hat sie unter {tab} einsortiert ({signal}).",
    "You have written to {signal} before, so it stays in General.":
        "Du hast {signal} schon einmal geschrieben, deshalb bleibt sie unter Allgemein.",
    "It came through a mailing list (header {signal}).": "Sie kam über eine Mailingliste (Header {signal}).",
    "It carries bulk-mail headers ({signal}).": "Sie trägt Massenversand-Header ({signal}).",
    "It comes from a social network ({signal}).": "Sie kommt von einem sozialen Netzwerk ({signal}).",
    "It was sent automatically ({signal}).": "Sie wurde automatisch verschickt ({signal}).",
    "Nothing marks it as bulk or automatic mail, so it is in General.":
        "Nichts kennzeichnet sie als Massen- oder automatische Mail, deshalb steht sie unter Allgemein.",
    "It would be in {original}, but that tab is switched off, so it stays in General.":
        "Sie gehörte zu {original}, aber dieser Tab ist ausgeschaltet, deshalb bleibt sie unter Allgemein.",
    # settings
    "Preferences": "Voreinstellungen",
    "Display name": "Anzeigename",
    "Save": "Speichern",
    "Saved.": "Gespeichert.",
    "Change password": "Passwort ändern",
    "Current password": "Aktuelles Passwort",
    "New password": "Neues Passwort",
    "Password changed. Other sessions were signed out.":
        "Passwort geändert. Andere Sitzungen wurden abgemeldet.",
    "The current password is wrong.": "Das aktuelle Passwort ist falsch.",
    # admin
    "Queues": "Warteschlangen",
    "Queue": "Warteschlange",
    "Queued": "Wartend",
    "Scheduled": "Geplant",
    "Running": "Laufend",
    "Failed": "Fehlgeschlagen",
    "Completed (last hour)": "Erledigt (letzte Stunde)",
    "Workers": "Worker",
    "Check workers": "Worker prüfen",
    "Last check": "Letzte Prüfung",
    "answered by {worker} after {ms} ms": "beantwortet von {worker} nach {ms} ms",
    "waiting for a worker…": "wartet auf einen Worker …",
    "never checked": "nie geprüft",
    "Recent failures": "Letzte Fehlschläge",
    "No failed jobs.": "Keine fehlgeschlagenen Jobs.",
    "Job": "Job",
    "Error": "Fehler",
    "Attempts": "Versuche",
    "Finished": "Beendet",
    "Users": "Benutzer",
    "Administrator": "Administrator",
    "Add user": "Benutzer hinzufügen",
    "User {email} added.": "Benutzer {email} hinzugefügt.",
    "Health": "Zustand",
    "Changes the providers have not accepted yet": "Änderungen, die die Anbieter noch nicht übernommen haben",
    "Change": "Änderung",
    "They are retried with growing pauses; what you did in plmail stays as you did it.":
        "Sie werden mit wachsenden Pausen erneut versucht; was du in plmail getan hast, bleibt so.",
    "Every change has reached its provider.": "Jede Änderung ist beim Anbieter angekommen.",
    # thread operations, labels, filters
    "Actions for the selected conversations": "Aktionen für die ausgewählten Konversationen",
    "Conversation actions": "Aktionen für die Konversation",
    "Select": "Auswählen",
    "Select all on this page": "Alle auf dieser Seite auswählen",
    "All conversations on this page are selected.": "Alle Konversationen auf dieser Seite sind ausgewählt.",
    "Select every conversation in this view": "Jede Konversation in dieser Ansicht auswählen",
    "Every conversation in this view is selected.": "Jede Konversation in dieser Ansicht ist ausgewählt.",
    "verb|Archive": "Archivieren",
    "Delete": "Löschen",
    "Delete this message": "Diese Nachricht löschen",
    "Restore": "Wiederherstellen",
    "Delete forever": "Endgültig löschen",
    "Empty trash": "Papierkorb leeren",
    "Delete everything in Trash for good?": "Alles im Papierkorb endgültig löschen?",
    "Not spam": "Kein Spam",
    "Mark read": "Als gelesen markieren",
    "Mark unread": "Als ungelesen markieren",
    "Star": "Markieren",
    "Unstar": "Markierung entfernen",
    "Starred": "Markiert",
    "Label": "Label",
    "Label…": "Label …",
    "Add label": "Label hinzufügen",
    "Move": "Verschieben",
    "Snooze": "Zurückstellen",
    "Unsnooze": "Nicht mehr zurückstellen",
    "Snooze until": "Zurückstellen bis",
    "Snoozed until": "Zurückgestellt bis",
    "Pick a date and time": "Datum und Uhrzeit wählen",
    "Later today": "Später heute",
    "Tomorrow": "Morgen",
    "This weekend": "Am Wochenende",
    "Next week": "Nächste Woche",
    "Name": "Name",
    "Colour": "Farbe",
    "No colour": "Keine Farbe",
    "Inside": "Innerhalb von",
    "Top level": "Oberste Ebene",
    "Shown": "Angezeigt",
    "Create": "Anlegen",
    "New label": "Neues Label",
    "Delete this label? The mail stays.": "Dieses Label löschen? Die Mail bleibt erhalten.",
    "gray": "Grau", "red": "Rot", "orange": "Orange", "amber": "Bernstein", "green": "Grün", "teal": "Petrol",
    "blue": "Blau", "violet": "Violett", "pink": "Rosa",
    "Filters": "Filter",
    "Filter": "Filter",
    "New filter": "Neuer Filter",
    "Edit filter": "Filter bearbeiten",
    "Edit": "Bearbeiten",
    "No filters yet.": "Noch keine Filter.",
    "off": "aus",
    "Apply to existing mail": "Auf vorhandene Mail anwenden",
    "Waiting to run on existing mail…": "Wartet auf die Anwendung auf vorhandene Mail …",
    "Running on existing mail: {n} checked, {m} matched": "Läuft auf vorhandener Mail: {n} geprüft, {m} Treffer",
    "Ran on existing mail: {m} of {n} matched": "Auf vorhandene Mail angewendet: {m} von {n} getroffen",
    "The last run failed:": "Der letzte Lauf ist fehlgeschlagen:",
    "Account": "Konto",
    "All accounts": "Alle Konten",
    "When a message arrives and": "Wenn eine Nachricht ankommt und",
    "all of these match": "alle diese Bedingungen zutreffen",
    "any of these match": "eine dieser Bedingungen zutrifft",
    "Field": "Feld",
    "Value": "Wert",
    "Add a condition": "Bedingung hinzufügen",
    "For labels, write the label's name as shown on the label page; sizes are in kilobytes.":
        "Bei Labels den Namen wie auf der Label-Seite angeben; Größen in Kilobyte.",
    "Then": "Dann",
    "Apply the label": "Label anwenden",
    "File into the tab (only for authenticated senders)": "Im Tab ablegen (nur bei authentifizierten Absendern)",
    "Stop processing other filters": "Weitere Filter nicht mehr anwenden",
    "Filter is on": "Filter ist eingeschaltet",
    "Save filter": "Filter speichern",
    "matches {n} messages": "trifft {n} Nachrichten",
    "matches {n}+ messages": "trifft {n}+ Nachrichten",
    "From contains": "Absender enthält", "To contains": "An enthält", "Cc contains": "Cc enthält",
    "Subject contains": "Betreff enthält", "Body contains": "Text enthält",
    "Anywhere in the message": "Irgendwo in der Nachricht", "Mailing list is": "Mailingliste ist",
    "Attachment named": "Anhang heißt", "Has an attachment": "Hat einen Anhang",
    "Larger than (KB)": "Größer als (KB)", "Smaller than (KB)": "Kleiner als (KB)",
    "Has the label": "Hat das Label", "Does not have the label": "Hat das Label nicht",
    "Archive it": "Archivieren", "Move it to the trash": "In den Papierkorb legen",
    "Mark it as spam": "Als Spam markieren", "Star it": "Markieren", "Mark it as read": "Als gelesen markieren",
    "Database": "Datenbank",
    # devices
    "Devices": "Geräte",
    "Phone and desktop mail apps that speak JMAP sign in with an app password of their own.":
        "Mail-Apps auf Telefon und Computer, die JMAP sprechen, melden sich mit einem eigenen App-Passwort an.",
    "Server address": "Serveradresse",
    "App password for {name}": "App-Passwort für {name}",
    "Copy it now: it is shown only once.": "Jetzt kopieren: Es wird nur einmal angezeigt.",
    "Use it as the password with your email address {email}, or as a Bearer token.":
        "Als Passwort zu deiner E-Mail-Adresse {email} verwenden oder als Bearer-Token.",
    "New app password": "Neues App-Passwort",
    "Device name": "Gerätename",
    "Phone": "Telefon",
    "Create app password": "App-Passwort erstellen",
    "Signed-in devices": "Angemeldete Geräte",
    "Device": "Gerät",
    "Created": "Erstellt",
    "Last used": "Zuletzt verwendet",
    "never": "nie",
    "Revoke": "Widerrufen",
    "No devices yet.": "Noch keine Geräte.",
    "The device can no longer sign in.": "Das Gerät kann sich nicht mehr anmelden.",
    "Name the device, for example “Phone”.": "Gib dem Gerät einen Namen, zum Beispiel „Telefon“.",
    "Mail apps on phones and computers sign in with app passwords.":
        "Mail-Apps auf Telefonen und Computern melden sich mit App-Passwörtern an.",
    "Manage devices": "Geräte verwalten",
}


GERMAN.update(CALENDAR_GERMAN)
GERMAN.update(ACCOUNTS_GERMAN)
GERMAN.update(ASSISTANT_GERMAN)
GERMAN.update(OAUTH_GERMAN)
GERMAN.update(COMPOSE_GERMAN)
GERMAN.update(SECURITY_GERMAN)


def translate(text: str, locale: Locale | str, **values: object) -> str:
    """`verb|Archive` and similar keys tell a verb from a noun that English spells the same."""
    template = GERMAN.get(text, text) if str(locale) == Locale.DE.value else text
    if template.startswith("verb|"):
        template = template[5:]
    return template.format(**values) if values else template


def pick_locale(accept_language: str | None) -> Locale:
    """The best of our two languages for a visitor who is not signed in."""
    if not accept_language:
        return Locale.EN
    best = Locale.EN
    best_q = -1.0
    for item in accept_language.split(","):
        tag, _, params = item.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in ("de", "en") and q > best_q:
            best, best_q = Locale(primary), q
    return best
