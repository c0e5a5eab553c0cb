"""Email/set's patch syntax (RFC 8620 §5.3 paths into keywords and mailboxIds) read into an EmailPatch."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from plmail.jmap.errors import SetError, invalid_properties
from plmail.mail.email_writes import EmailPatch

_KEYWORD = re.compile(r"^[\x21-\x7e]{1,255}$")
_FORBIDDEN_KEYWORD_CHARS = set('()"{]%*\\')


def keyword(value: str) -> str:
    lowered = value.lower()
    if not _KEYWORD.match(lowered) or _FORBIDDEN_KEYWORD_CHARS & set(lowered):
        raise invalid_properties(f"{value!r} is not a keyword.", "keywords")
    return lowered


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def parse_patch(patch: Mapping[str, Any]) -> EmailPatch:
    result = EmailPatch()
    for path, value in patch.items():
        head, _, rest = path.partition("/")
        if head == "keywords" and not rest:
            if not isinstance(value, dict) or not all(v is True for v in value.values()):
                raise invalid_properties("'keywords' maps keywords to true.", "keywords")
            result.keywords = {keyword(k): True for k in value}
        elif head == "keywords" and "/" not in rest:
            if value not in (True, None):
                raise invalid_properties("A keyword patch is true or null.", path)
            result.keyword_edits[keyword(_unescape(rest))] = value is True
        elif head == "mailboxIds" and not rest:
            if not isinstance(value, dict) or not all(v is True for v in value.values()):
                raise invalid_properties("'mailboxIds' maps mailbox ids to true.", "mailboxIds")
            result.mailboxes = list(value)
        elif head == "mailboxIds" and "/" not in rest:
            if value not in (True, None):
                raise invalid_properties("A mailbox patch is true or null.", path)
            result.mailbox_edits[_unescape(rest)] = value is True
        else:
            raise invalid_properties("Only keywords and mailboxIds can be changed.", path)
    if (result.keywords is not None and result.keyword_edits) or (result.mailboxes is not None
                                                                   and result.mailbox_edits):
        raise SetError("invalidPatch", "A property and a path inside it cannot both be patched.")
    return result
