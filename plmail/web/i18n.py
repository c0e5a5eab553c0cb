"""User-facing text in English and German.

English strings are the keys; a missing German entry falls back to English, and a test checks that
every string the templates ask for has one.
"""

from __future__ import annotations

from plmail.domain.enums import Locale

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
    "Database": "Datenbank",
}


def translate(text: str, locale: Locale | str, **values: object) -> str:
    template = GERMAN.get(text, text) if str(locale) == Locale.DE.value else text
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
