"""German text of sign-in, sessions, two-factor sign-in and security settings (merged into the catalogue in i18n)."""

from __future__ import annotations

from plmail.accounts.connection_tests import PORT_REFUSED, TOO_MANY_TESTS
from plmail.assistant.settings import KEY_FOR_OTHER_ORIGIN

SECURITY_GERMAN: dict[str, str] = {
    # sign-in
    "Keep me signed in on this browser": "Auf diesem Browser angemeldet bleiben",
    "Two-factor sign-in": "Anmeldung in zwei Schritten",
    "Code from your authenticator app, or a recovery code":
        "Code aus deiner Authenticator-App oder ein Wiederherstellungscode",
    "Don't ask for a code on this browser for 30 days": "Auf diesem Browser 30 Tage lang nicht nach einem Code fragen",
    "Start over": "Von vorn beginnen",
    "This account is disabled. Ask your administrator.":
        "Dieses Benutzerkonto ist gesperrt. Wende dich an deine Administration.",
    "That code is wrong or was used already.": "Dieser Code ist falsch oder wurde schon benutzt.",
    # sessions
    "Security": "Sicherheit",
    "on": "an",
    "Signed-in browsers": "Angemeldete Browser",
    "A session ends after 14 days without use, and at the latest 60 days after signing in.":
        "Eine Sitzung endet nach 14 Tagen ohne Nutzung und spätestens 60 Tage nach der Anmeldung.",
    "Browser": "Browser",
    "Address": "Adresse",
    "Signed in": "Angemeldet",
    "unknown": "unbekannt",
    "this browser": "dieser Browser",
    "Sign out everywhere": "Überall abmelden",
    "That browser is signed out.": "Dieser Browser ist abgemeldet.",
    # two-factor sign-in
    "Recovery codes": "Wiederherstellungscodes",
    "Keep these somewhere safe: each one signs you in once when your phone is not at hand. They are shown only now.":
        "Bewahre sie sicher auf: Jeder meldet dich einmal an, wenn dein Telefon nicht zur Hand ist. "
        "Sie werden nur jetzt angezeigt.",
    "Signing in on the web asks for a code from your authenticator app after the password.":
        "Die Anmeldung im Web fragt nach dem Passwort nach einem Code aus deiner Authenticator-App.",
    "{n} recovery codes left.": "Noch {n} Wiederherstellungscodes.",
    "New recovery codes": "Neue Wiederherstellungscodes",
    "Switch two-factor sign-in off": "Anmeldung in zwei Schritten ausschalten",
    "Switch two-factor sign-in on": "Anmeldung in zwei Schritten einschalten",
    "Set up an authenticator app": "Authenticator-App einrichten",
    "Scan this code with an authenticator app (for example Aegis, FreeOTP or Google Authenticator), then enter the "
    "six-digit code it shows.":
        "Scanne diesen Code mit einer Authenticator-App (zum Beispiel Aegis, FreeOTP oder Google Authenticator) "
        "und gib dann den sechsstelligen Code ein, den sie zeigt.",
    "Or type this key:": "Oder tippe diesen Schlüssel ein:",
    "Code": "Code",
    "App passwords for phone and desktop mail apps (JMAP) stay single-factor by design: each is a long random "
    "secret for one device, which you can revoke on its own, and mail apps have no way to ask for a code.":
        "App-Passwörter für Mail-Apps auf Telefon und Computer (JMAP) bleiben absichtlich einstufig: Jedes ist ein "
        "langes zufälliges Geheimnis für ein Gerät, das du einzeln widerrufen kannst, und Mail-Apps können nicht "
        "nach einem Code fragen.",
    "Two-factor sign-in is on.": "Die Anmeldung in zwei Schritten ist eingeschaltet.",
    "Two-factor sign-in is off.": "Die Anmeldung in zwei Schritten ist ausgeschaltet.",
    "New recovery codes; the old ones no longer work.":
        "Neue Wiederherstellungscodes; die alten gelten nicht mehr.",
    "Start the set-up again: the secret is not valid.": "Beginne die Einrichtung neu: Der Schlüssel ist ungültig.",
    "That code does not match. Check the time on your phone and try again.":
        "Dieser Code passt nicht. Prüfe die Uhrzeit auf deinem Telefon und versuche es noch einmal.",
    # administration
    "Two-factor": "Zwei Schritte",
    "disabled": "gesperrt",
    "Enable": "Entsperren",
    "Disable": "Sperren",
    "Reset second factor": "Zweiten Schritt zurücksetzen",
    "User disabled; their sessions ended.": "Benutzer gesperrt; seine Sitzungen sind beendet.",
    "User enabled.": "Benutzer entsperrt.",
    "Second factor removed; the user signs in with the password.":
        "Zweiter Schritt entfernt; der Benutzer meldet sich mit dem Passwort an.",
    "You cannot disable your own account.": "Du kannst dein eigenes Benutzerkonto nicht sperren.",
    "No such user.": "Diesen Benutzer gibt es nicht.",
    "Connection tests": "Verbindungstests",
    "Users can test and add accounts on the mail ports ({ports}) only, ten tests a minute, so that plmail cannot "
    "be used to probe other services on your network.":
        "Benutzer können Konten nur auf den Mail-Ports ({ports}) testen und hinzufügen, zehn Tests pro Minute, "
        "damit niemand mit plmail andere Dienste in deinem Netz abtasten kann.",
    "Allow any port (for a mail server on an unusual port)":
        "Jeden Port erlauben (für einen Mailserver auf einem ungewöhnlichen Port)",
    PORT_REFUSED: PORT_REFUSED.replace("plmail connects only to mail ports", "plmail verbindet sich nur mit Mail-Ports")
                              .replace("An administrator can allow other ports.",
                                       "Die Administration kann andere Ports erlauben."),
    TOO_MANY_TESTS: "Zu viele Verbindungstests. Warte eine Minute und versuche es dann noch einmal.",
    KEY_FOR_OTHER_ORIGIN: "Die URL zeigt jetzt auf einen anderen Server: Gib dessen API-Schlüssel noch einmal ein.",
    # mail
    "Part of this message could not be read:": "Ein Teil dieser Nachricht konnte nicht gelesen werden:",
}
