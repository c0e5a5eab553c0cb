"""The search box: `from:`, `label:`, `is:unread` and friends, plus free text over the search vector.

`from:`, `to:`, `cc:` and `bcc:` match whole words of a name or address, as Gmail's do: `to:anna`,
`to:anna@example.org`, `to:example.org` (a domain or any parent domain), `from:"Anna Müller"` (every word, in any
order). They walk an index in arrival order, so they cost the same at a million messages as at a thousand. A star
makes one a substring search instead (`to:*corp*`, `from:müll*`: the JMAP filter's `to`/`from` text condition,
RFC 8621 §4.4.1), for the part of a name or address that is not a word of its own; it reads more of the mail.

An unknown operator, or a known one with a value that cannot be read, stays part of the free text,
so a search never fails; a known operator with an empty value is dropped.
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime, timedelta

from plmail.domain.enums import LabelRole
from plmail.domain.search import SearchQuery

_ROLES = {
    "inbox": LabelRole.INBOX, "sent": LabelRole.SENT, "drafts": LabelRole.DRAFTS, "draft": LabelRole.DRAFTS,
    "trash": LabelRole.TRASH, "bin": LabelRole.TRASH, "deleted": LabelRole.TRASH, "spam": LabelRole.SPAM,
    "junk": LabelRole.SPAM, "archive": LabelRole.ARCHIVE, "archived": LabelRole.ARCHIVE,
    "snoozed": LabelRole.SNOOZED,
    # German spellings, so the search box works in the user's language too
    "posteingang": LabelRole.INBOX, "gesendet": LabelRole.SENT, "entwürfe": LabelRole.DRAFTS,
    "papierkorb": LabelRole.TRASH, "archiv": LabelRole.ARCHIVE,
}
_TEXT_OPERATORS = {"from": "fromWords", "to": "toWords", "cc": "ccWords", "bcc": "bccWords", "subject": "subject",
                   "list": "listId", "filename": "filename", "body": "body"}
# A star asks the address operators for a substring instead of whole words: the JMAP filter's text condition.
_SUBSTRING_OPERATORS = {"from": "from", "to": "to", "cc": "cc", "bcc": "bcc"}
_AGE = re.compile(r"^(\d{1,4})([dwmy])$")
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y")


def _tokens(query: str) -> list[str]:
    try:
        return shlex.split(query, posix=True)
    except ValueError:  # an unbalanced quote: fall back to plain words
        return query.split()


def _date(value: str) -> datetime | None:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _age(value: str, now: datetime) -> datetime | None:
    match = _AGE.match(value.lower())
    if not match:
        return None
    amount, unit = int(match.group(1)), match.group(2)
    days = {"d": 1, "w": 7, "m": 30, "y": 365}[unit] * amount
    return now - timedelta(days=days)


def parse_search(query: str, *, now: datetime | None = None) -> SearchQuery:
    moment = now or datetime.now(UTC)
    parsed = SearchQuery()
    free: list[str] = []
    for token in _tokens(query):
        name, sep, value = token.partition(":")
        name = name.lower()
        if not sep or not name or " " in name:
            free.append(f'"{token}"' if " " in token else token)
            continue
        value = value.strip().strip('"')
        if not value:
            if name in _TEXT_OPERATORS or name in {"label", "in", "is", "has", "before", "after", "older_than",
                                                   "newer_than"}:
                continue  # a known operator with nothing after it is dropped
            free.append(token)
            continue
        if not _apply(parsed, name, value, moment):
            free.append(token)
    parsed.text = " ".join(free)
    return parsed


def _apply(parsed: SearchQuery, name: str, value: str, now: datetime) -> bool:
    """Add one operator to the query; False when it is not one we understand (it becomes free text)."""
    lowered = value.lower()
    if name in _SUBSTRING_OPERATORS and "*" in value:
        if part := value.replace("*", "").strip():
            parsed.conditions.append({_SUBSTRING_OPERATORS[name]: part})
    elif name in _TEXT_OPERATORS:
        parsed.conditions.append({_TEXT_OPERATORS[name]: value})
    elif name == "label":
        parsed.labels.append(value)
    elif name == "in" and lowered in _ROLES:
        parsed.roles.append(_ROLES[lowered])
    elif name == "is" and lowered in ("unread", "read", "ungelesen", "gelesen"):
        parsed.unread = lowered in ("unread", "ungelesen")
    elif name == "is" and lowered in ("starred", "flagged", "markiert"):
        parsed.starred = True
    elif name == "is" and lowered == "snoozed":
        parsed.roles.append(LabelRole.SNOOZED)
    elif name == "has" and lowered in ("attachment", "attachments", "anhang"):
        parsed.conditions.append({"hasAttachment": True})
    elif name in ("before", "after") and (moment := _date(value)) is not None:
        parsed.conditions.append({name: moment.isoformat()})
    elif name == "older_than" and (moment := _age(value, now)) is not None:
        parsed.conditions.append({"before": moment.isoformat()})
    elif name == "newer_than" and (moment := _age(value, now)) is not None:
        parsed.conditions.append({"after": moment.isoformat()})
    else:
        return False
    return True
