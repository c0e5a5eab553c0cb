"""German text of the composer and the outbox (merged into the catalogue in i18n)."""

from __future__ import annotations

COMPOSE_GERMAN: dict[str, str] = {
    "New message": "Neue Nachricht",
    "Compose": "Schreiben",
    "From": "Von",
    "To": "An",
    "Cc": "Cc",
    "Bcc": "Bcc",
    "Subject": "Betreff",
    "Message": "Nachricht",
    "Attachments": "Anhänge",
    "(no name)": "(ohne Namen)",
    "Attach files": "Dateien anhängen",
    "Send later": "Später senden",
    "Send": "Senden",
    "Save draft": "Entwurf speichern",
    "Discard": "Verwerfen",
    "Saved": "Gespeichert",
    "Answer": "Beantworten",
    "Reply": "Antworten",
    "Reply all": "Allen antworten",
    "Forward": "Weiterleiten",
    "Outbox": "Postausgang",
    "Sending…": "Wird gesendet …",
    "Sending… (retrying: {reason})": "Wird gesendet … (neuer Versuch: {reason})",
    "Scheduled for {time}": "Geplant für {time}",
    "Not sent: {reason}": "Nicht gesendet: {reason}",
    "Open the draft": "Entwurf öffnen",
    "May have been sent: {reason}": "Vielleicht gesendet: {reason}",
    "Undo": "Rückgängig",
    "Cancel": "Abbrechen",
    "Nothing is waiting to be sent.": "Nichts wartet auf den Versand.",
    # refusals the composer shows
    "Choose the address to send from.": "Wähle die Absenderadresse.",
    "Pick the time to send as a date and time.": "Gib den Sendezeitpunkt als Datum und Uhrzeit an.",
    "A scheduled send is at least a minute ahead.":
        "Ein geplanter Versand liegt mindestens eine Minute in der Zukunft.",
    "The subject may not contain line breaks or NUL characters.":
        "Der Betreff darf keine Zeilenumbrüche oder NUL-Zeichen enthalten.",
    "You cannot send from that address: it is not one of your identities.":
        "Von dieser Adresse kannst du nicht senden: Sie gehört nicht zu deinen Identitäten.",
    "The message has no recipients.": "Die Nachricht hat keine Empfänger.",
    "It is on its way or sent already; it cannot be taken back.":
        "Sie ist schon unterwegs oder gesendet und kann nicht mehr zurückgeholt werden.",
    # invitations answered
    "Going?": "Teilnehmen?",
    "Yes": "Ja",
    "Maybe": "Vielleicht",
    "No": "Nein",
    "Send my answer to the organiser": "Meine Antwort an den Organisator senden",
    "Your answer is recorded and on its way to the organiser.":
        "Deine Antwort ist gespeichert und an den Organisator unterwegs.",
    "Your answer is recorded; nothing was sent.": "Deine Antwort ist gespeichert; nichts wurde gesendet.",
    "Your answer is recorded, but it could not be sent to the organiser.":
        "Deine Antwort ist gespeichert, konnte aber nicht an den Organisator gesendet werden.",
}
