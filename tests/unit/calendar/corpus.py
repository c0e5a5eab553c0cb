"""The shared public corpora, as calendar tests read them (read-only; archives unpack into temp dirs)."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"  # ../shared/corpus beside the checkout
INVITATIONS = CORPUS / "thunderbird-calendar-invitations" / "browser" / "invitations" / "data"
LIBICAL = CORPUS / "libical-test-data" / "test-data"
KHAL = CORPUS / "khal-test-ics" / "ics"
KITINERARY = CORPUS / "kitinerary-autotests"
SCHEMA_ORG = CORPUS / "schemaorg-markup-examples"
ICS_CORPORA = ("icalendar-python-tests", "ical4j-samples", "khal-test-ics", "node-ical-fixtures")


def invitation(name: str) -> bytes:
    return (INVITATIONS / name).read_bytes()


def ics_files(*corpora: str) -> list[Path]:
    return sorted(path for corpus in corpora for path in (CORPUS / corpus).rglob("*.ics"))


def spamassassin_messages(*archives: str, limit: int | None = None) -> Iterator[tuple[str, bytes]]:
    """(name, raw bytes) of the messages in SpamAssassin tarballs, read straight from the archive."""
    produced = 0
    for archive in archives:
        with tarfile.open(CORPUS / "spamassassin-public-corpus" / f"{archive}.tar.gz") as tar:
            for member in tar:
                if not member.isfile() or member.name.rsplit("/", 1)[-1] == "cmds":
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                yield member.name, handle.read()
                produced += 1
                if limit is not None and produced >= limit:
                    return


KITINERARY_EXTRACTORDATA = KITINERARY / "extractordata"
# What each input file would be in a mail: a body (text, HTML), an invitation part, or an attachment.
_AS_BODY = {".txt": "plain", ".html": "html"}
_AS_ATTACHMENT = {".pdf": "application/pdf", ".pkpass": "application/vnd.apple.pkpass",
                  ".bin": "application/octet-stream", ".ics": "text/calendar"}
# KItinerary's own autotests read undated input as received on 2018-01-01 unless the file name starts with a date.
_DEFAULT_RECEIVED = "2018-01-01T00:00:00+00:00"


def kitinerary_mail(path: Path, *, subject: str | None = None) -> bytes:
    """One extractordata input as the mail that would carry it: the provider folder's context.eml headers
    (its From) around the file as body or attachment, dated by the file name's date prefix when it has one,
    with the file name as subject unless one is given. ``.eml`` files are mail already."""
    from datetime import datetime
    from email import message_from_bytes, policy
    from email.message import EmailMessage
    from email.utils import format_datetime

    if path.suffix == ".eml":
        return path.read_bytes()
    message = EmailMessage()
    context = path.parent / "context.eml"
    sender = "tickets@example.org"
    if context.exists():
        sender = str(message_from_bytes(context.read_bytes(), policy=policy.default).get("From") or sender)
    stamp = path.name[:8]
    received = (datetime.strptime(stamp, "%Y%m%d").astimezone() if stamp.isdigit()
                else datetime.fromisoformat(_DEFAULT_RECEIVED))
    message["From"] = sender
    message["To"] = "reader@example.org"
    message["Subject"] = subject if subject is not None else path.stem
    message["Date"] = format_datetime(received)
    if path.suffix in _AS_BODY:
        message.set_content(path.read_text(errors="replace"), subtype=_AS_BODY[path.suffix])
    else:
        message.set_content("Your documents are attached.")
        maintype, subtype = _AS_ATTACHMENT[path.suffix].split("/")
        message.add_attachment(path.read_bytes(), maintype=maintype, subtype=subtype, filename=path.name)
    return bytes(message)


def kitinerary_inputs() -> list[Path]:
    """Every extractordata input a mail could carry (expected outputs, context files and notes left out)."""
    suffixes = {".eml", *_AS_BODY, *_AS_ATTACHMENT}
    return sorted(path for path in KITINERARY_EXTRACTORDATA.rglob("*")
                  if path.is_file() and path.suffix in suffixes and path.name != "context.eml")
