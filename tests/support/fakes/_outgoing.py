"""What the Gmail and Graph fakes share about mail a client sends through them: the recipients a message's own
headers name (both APIs deliver to To, Cc and Bcc), and the message as its recipients receive it — without the
Bcc header, which both services remove from what they deliver and keep on the sender's Sent copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.support.fakes import _mime


@dataclass(frozen=True)
class Delivery:
    """One message the fake sent out: to whom, what they received, and where the sender's copy lives."""

    message_id: str  # the Sent copy's id at the fake
    thread_id: str  # Gmail's threadId, Graph's conversationId
    recipients: tuple[str, ...]  # every To, Cc and Bcc address, lower case
    received: bytes  # the message as delivered (no Bcc header)
    mail_from: str


def recipients(parsed: _mime.Parsed) -> tuple[str, ...]:
    found = [a.lower() for header in ("To", "Cc", "Bcc") for _, a in parsed.addresses(header)]
    return tuple(dict.fromkeys(found))


def sender(parsed: _mime.Parsed) -> str:
    found = parsed.addresses("From")
    return found[0][1].lower() if found else ""


def without_bcc(raw: bytes) -> bytes:
    """The message with its Bcc header (and that header's folded lines) removed."""
    head, separator, body = raw.partition(b"\r\n\r\n")
    if not separator:
        head, separator, body = raw.partition(b"\n\n")
    kept: list[bytes] = []
    skipping = False
    for line in re.split(rb"(?<=\n)", head):
        if line[:1] in (b" ", b"\t"):
            if not skipping:
                kept.append(line)
            continue
        skipping = line.split(b":", 1)[0].strip().lower() == b"bcc"
        if not skipping and line:
            kept.append(line)
    return b"".join(kept) + separator + body


def answers(parsed: _mime.Parsed) -> tuple[str, ...]:
    """The Message-IDs (with angle brackets) the message's In-Reply-To and References name."""
    text = " ".join(filter(None, [parsed.header("In-Reply-To"), parsed.header("References")]))
    return tuple(re.findall(r"<[^>]+>", text))


def base_subject(subject: str | None) -> str:
    """The subject without reply and forward prefixes, as Gmail compares them when threading."""
    return re.sub(r"^\s*((re|fwd?|aw|wg)\s*:\s*)+", "", subject or "", flags=re.IGNORECASE).strip().lower()

