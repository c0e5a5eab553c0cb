"""German text of the account settings, sync and import pages (merged into the catalogue in i18n)."""

from __future__ import annotations

ACCOUNTS_GERMAN: dict[str, str] = {
    # list and status
    "Add an IMAP account": "IMAP-Konto hinzufügen",
    "Add account": "Konto hinzufügen",
    "Status": "Status",
    "Import": "Import",
    "Connected": "Verbunden",
    "last sync": "zuletzt abgeglichen",
    "Last attempt:": "Letzter Versuch:",
    "Paused": "Pausiert",
    "Sign-in failed": "Anmeldung fehlgeschlagen",
    "Sign-in failed; plmail stopped trying until you change the settings.":
        "Anmeldung fehlgeschlagen; plmail versucht es erst wieder, wenn du die Einstellungen änderst.",
    # import progress
    "Importing: {done} of {total} messages": "Import: {done} von {total} Nachrichten",
    "All mail is in: {done} messages": "Alle Mail ist da: {done} Nachrichten",
    "less than {n} minutes left": "noch weniger als {n} Minuten",
    "about {n} minutes left": "noch etwa {n} Minuten",
    "about {n} hours left": "noch etwa {n} Stunden",
    "importing": "wird importiert",
    # the form
    "Server": "Server",
    "IMAP server": "IMAP-Server",
    "Port": "Port",
    "Encryption": "Verschlüsselung",
    "Implicit TLS (usually port 993)": "TLS von Anfang an (meist Port 993)",
    "STARTTLS (usually port 143)": "STARTTLS (meist Port 143)",
    "No encryption (this machine only)": "Keine Verschlüsselung (nur auf diesem Rechner)",
    "User name": "Benutzername",
    "Usually the email address": "Meist die E-Mail-Adresse",
    "Shown in the sidebar": "Wird in der Seitenleiste angezeigt",
    "Leave empty to keep the saved password": "Leer lassen, um das gespeicherte Passwort zu behalten",
    "Test connection": "Verbindung testen",
    "Connection and sign-in work.": "Verbindung und Anmeldung funktionieren.",
    "Encrypted with {tls}.": "Verschlüsselt mit {tls}.",
    "Not encrypted.": "Nicht verschlüsselt.",
    "The connection failed:": "Die Verbindung ist fehlgeschlagen:",
    # presets
    "This provider needs an app password, not your normal password.":
        "Dieser Anbieter braucht ein App-Passwort, nicht dein normales Passwort.",
    "Allow IMAP access in the GMX settings first.": "Erlaube zuerst den IMAP-Zugriff in den GMX-Einstellungen.",
    "Allow IMAP access in the WEB.DE settings first.": "Erlaube zuerst den IMAP-Zugriff in den WEB.DE-Einstellungen.",
    "Use the e-mail password set in the Telekom customer centre.":
        "Verwende das E-Mail-Passwort aus dem Telekom-Kundencenter.",
    "Proton Mail is reached through Proton Bridge.": "Proton Mail wird über Proton Bridge erreicht.",
    "A guess from the domain; check it with your provider.":
        "Aus der Domain geraten; prüfe es bei deinem Anbieter.",
    # the account page
    "Sync now": "Jetzt abgleichen",
    "Pause syncing": "Abgleich pausieren",
    "Resume syncing": "Abgleich fortsetzen",
    "Folders": "Ordner",
    "Folder": "Ordner",
    "Messages": "Nachrichten",
    "Sync": "Abgleich",
    "On": "An",
    "Off": "Aus",
    "Sync this folder": "Diesen Ordner abgleichen",
    "Stop syncing this folder": "Diesen Ordner nicht mehr abgleichen",
    "Remove": "Entfernen",
    "Remove account": "Konto entfernen",
    "Removing the account deletes its mail from plmail. The mail on the server stays.":
        "Das Entfernen löscht die Mail des Kontos aus plmail. Die Mail auf dem Server bleibt.",
    "Remove this account and delete its mail from plmail?": "Dieses Konto entfernen und seine Mail aus plmail löschen?",
    # sending (SMTP)
    "Sending (SMTP)": "Versand (SMTP)",
    "SMTP server": "SMTP-Server",
    "SMTP port": "SMTP-Port",
    "SMTP encryption": "SMTP-Verschlüsselung",
    "SMTP user name": "SMTP-Benutzername",
    "SMTP password": "SMTP-Passwort",
    "Leave empty: this account only reads": "Leer lassen: Dieses Konto liest nur",
    "Empty: the IMAP user name": "Leer: der IMAP-Benutzername",
    "Empty: the IMAP password": "Leer: das IMAP-Passwort",
    "Implicit TLS (usually port 465)": "Implizites TLS (meist Port 465)",
    "STARTTLS (usually port 587)": "STARTTLS (meist Port 587)",
    "SMTP: {result}.": "SMTP: {result}.",
    "Sending does not work: {reason}": "Der Versand funktioniert nicht: {reason}",
    "Check the SMTP settings below; nothing you wrote was lost, it waits in Drafts.":
        "Prüfe die SMTP-Einstellungen unten; nichts Geschriebenes ging verloren, es wartet in den Entwürfen.",
}
