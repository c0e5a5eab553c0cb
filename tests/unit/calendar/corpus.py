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
