"""SpamAssassin ham as proposal input: unpacked to a temporary directory, read with the compat32 policy.

Shared by `test_gate_share.py` and `benchmarks/proposals.py`.
"""

from __future__ import annotations

import email
import email.message
import tarfile
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path

from plmail.calendar.proposals import ProposalInput
from plmail.domain.enums import Category, Locale

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "spamassassin-public-corpus"
HAM_ARCHIVES = ("easy_ham.tar.gz", "easy_ham_2.tar.gz", "hard_ham.tar.gz")
# The corpus owner's obfuscated addresses, as the To and Delivered-To headers show them.
OWNER_ADDRESSES = frozenset({"yyyy@spamassassin.taint.org", "zzzz@spamassassin.taint.org",
                             "yyyy@localhost.spamassassin.taint.org", "zzzz@localhost.netnoteinc.com",
                             "yyyy@localhost.netnoteinc.com"})  # fmt: skip
_FALLBACK_DATE = datetime(2002, 9, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Ham:
    name: str
    headers: dict[str, str | list[str]]
    body: str  # the first text/plain part that is not an attachment, decoded; "" when there is none
    date: datetime
    subject: str
    message_id: str


def unpack(into: Path) -> list[Path]:
    """Every ham file, after unpacking the archives into `into`."""
    for archive in HAM_ARCHIVES:
        with tarfile.open(CORPUS / archive) as tar:
            tar.extractall(into, filter="data")
    return sorted(p for p in into.rglob("*") if p.is_file())


def plain_body(message: email.message.Message) -> str:
    for part in message.walk():
        if part.get_content_type() != "text/plain" or part.get_filename():
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            continue
        charset = part.get_content_charset() or "latin-1"
        try:
            return payload.decode(charset, errors="replace")
        except LookupError:
            return payload.decode("latin-1", errors="replace")
    return ""


def _date(value: str | None) -> datetime:
    if not value:
        return _FALLBACK_DATE
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return _FALLBACK_DATE
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def read(path: Path) -> Ham:
    with path.open("rb") as handle:
        message = email.message_from_binary_file(handle)  # compat32, the default policy
    headers: dict[str, str | list[str]] = {}
    for name, value in message.items():
        existing = headers.get(name)
        text = str(value)
        if existing is None:
            headers[name] = text
        else:
            headers[name] = [*existing, text] if isinstance(existing, list) else [existing, text]
    return Ham(path.name, headers, plain_body(message), _date(message.get("Date")), str(message.get("Subject", "")),
               str(message.get("Message-ID", path.name)))  # fmt: skip


def _values(ham: Ham, name: str) -> tuple[str, ...]:
    value = next((v for k, v in ham.headers.items() if k.lower() == name), None)
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)


def facts(ham: Ham, *, as_delivered: bool) -> ProposalInput:
    """As delivered: the real headers and recipients, with the corpus owner as the account.
    Otherwise facts that pass every message rule, so that the gate and the detector see every message."""
    if as_delivered:
        to, cc, own, headers = _values(ham, "to"), _values(ham, "cc"), OWNER_ADDRESSES, ham.headers
    else:
        to, cc, own, headers = ("me@example.org",), (), frozenset({"me@example.org"}), {}
    return ProposalInput(
        message_key=ham.message_id, owner_user_id=1, is_draft=False, category=Category.GENERAL,
        message_date=ham.date, body_text=ham.body, subject=ham.subject, headers=headers, to_addresses=to,
        cc_addresses=cc, account_addresses=own, time_zone="Europe/London", language=Locale.EN,
    )  # fmt: skip


def recipients(ham: Ham) -> list[str]:
    return [address for _, address in getaddresses(list(_values(ham, "to") + _values(ham, "cc")))]
