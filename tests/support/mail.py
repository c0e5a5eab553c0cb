"""Building raw RFC 822 messages for tests, and reading the shared corpora."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"  # ../shared/corpus beside the checkout

BASE_DATE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def make_message(
    *,
    subject: str = "Hello",
    sender: str = "Alice <alice@example.org>",
    to: Sequence[str] = ("Bob <bob@example.net>",),
    cc: Sequence[str] = (),
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    date: datetime | None = None,
    body: str = "Hi there.\n",
    html: str | None = None,
    headers: dict[str, str] | None = None,
    charset: str = "utf-8",
) -> bytes:
    lines = [f"From: {sender}", f"To: {', '.join(to)}"]
    if cc:
        lines.append(f"Cc: {', '.join(cc)}")
    lines += [f"Subject: {subject}", f"Date: {format_datetime(date or BASE_DATE)}"]
    if message_id:
        lines.append(f"Message-ID: <{message_id}>")
    if in_reply_to:
        lines.append(f"In-Reply-To: <{in_reply_to}>")
    if references:
        lines.append("References: " + " ".join(f"<{r}>" for r in references))
    for key, value in (headers or {}).items():
        lines.append(f"{key}: {value}")
    lines.append("MIME-Version: 1.0")
    if html is None:
        lines += [f"Content-Type: text/plain; charset={charset}", "Content-Transfer-Encoding: 8bit", ""]
        return ("\r\n".join(lines) + "\r\n").encode("ascii") + body.encode(charset)
    boundary = "b-0123456789"
    lines += [f'Content-Type: multipart/alternative; boundary="{boundary}"', "", f"--{boundary}",
              f"Content-Type: text/plain; charset={charset}", "", body, f"--{boundary}",
              f"Content-Type: text/html; charset={charset}", "", html, f"--{boundary}--", ""]
    return "\r\n".join(lines).encode(charset)


def days(n: float) -> timedelta:
    return timedelta(days=n)


def spamassassin(*archives: str) -> Iterator[tuple[str, bytes]]:
    """(name, raw bytes) of every message in the named SpamAssassin tarballs (e.g. "easy_ham")."""
    for archive in archives:
        with tarfile.open(CORPUS / "spamassassin-public-corpus" / f"{archive}.tar.gz") as tar:
            for member in tar.getmembers():
                if member.isfile():
                    handle = tar.extractfile(member)
                    if handle is not None:
                        yield f"{archive}/{Path(member.name).name}", handle.read()


def corpus_message_files() -> list[Path]:
    """Every single-message file in the mail corpora (not the calendars, not the mbox files)."""
    folders = ["python-email-testdata", "mime4j-testmsgs", "mimekit-testdata/messages", "dovecot-testmsgs-via-stalwart",
               "spamscope-mail-parser-mails", "flanker-fixtures", "thunderbird-mailnews-testdata",
               "thunderbird-calendar-invitations"]
    skip_suffixes = {".json", ".xml", ".md", ".txt.summary", ".py", ".cpp"}
    files: list[Path] = []
    for folder in folders:
        for path in sorted((CORPUS / folder).rglob("*")):
            if (not path.is_file() or path.suffix.lower() in skip_suffixes
                    or path.name.startswith(("LICENSE", "NOTICE"))):
                continue
            if path.name in ("SOURCE.md",):
                continue
            files.append(path)
    return files
