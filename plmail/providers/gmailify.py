"""Gmailify: Gmail fetches the mail of another account the user has (over POP) and lists it as its own.

Such a message belongs to the sibling account named in its headers, whichever of the two syncs first: the
Gmail batch leaves it to a sibling that stores it already, and the sibling's sync re-points a Gmail row that
got there first. What the Gmail mailbox sent or drafts is Gmail's, whatever address it was sent as.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from email.utils import getaddresses

from plmail.db.repos.gmail_messages import SkippedNote
from plmail.domain.messages import ParsedMessage
from plmail.mail.headers import header_values

RECIPIENT_HEADERS = ("delivered-to", "x-original-to", "x-forwarded-to", "envelope-to")
GMAILS_OWN = frozenset({"SENT", "DRAFT"})  # Gmail labels of mail the Gmail mailbox itself wrote


def addresses(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a.strip().lower() for _, a in getaddresses(list(values)) if a and "@" in a))


def named_addresses(parsed: ParsedMessage) -> set[str]:
    """Every address the message was delivered or addressed to, lower-cased."""
    named = set(addresses([v for name in RECIPIENT_HEADERS for v in header_values(parsed.headers, name)]))
    return named | {a.address.lower() for a in (*parsed.to, *parsed.cc)}


def may_be_claimed(gmail_labels: Iterable[str] | None) -> bool:
    """False for mail the Gmail mailbox sent or drafts: that stays with Gmail."""
    return not (set(gmail_labels or ()) & GMAILS_OWN)


def claimed_by(parsed: ParsedMessage, gmail_labels: Iterable[str] | None, sibling_addresses: Collection[str]) -> bool:
    """Whether a sibling receiving mail for `sibling_addresses` has the better claim on this Gmail message."""
    return (parsed.message_id is not None and may_be_claimed(gmail_labels)
            and bool(named_addresses(parsed) & set(sibling_addresses)))


def claim_note(gmail_id: str, holder: int, parsed: ParsedMessage | None, *, thread_key: str | None,
               gmail_labels: Sequence[str] | None) -> SkippedNote:
    """What the Gmail account notes for a message a sibling holds: its listing treats a noted id as answered."""
    return SkippedNote(
        gmail_id=gmail_id, reason="gmailify", thread_id=thread_key,
        label_ids=tuple(gmail_labels) if gmail_labels is not None else None,
        from_address=parsed.from_address if parsed else None,
        to_addresses=tuple(a.address for a in parsed.to) if parsed else (),
        cc_addresses=tuple(a.address for a in parsed.cc) if parsed else (),
        delivered_to=addresses(header_values(parsed.headers, "delivered-to")) if parsed else (),
        subject=parsed.subject if parsed else None, detail=f"account {holder} holds this message (Gmailify)",
    )
