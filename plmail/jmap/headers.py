"""Header fields in RFC 8621's parsed forms (§4.1.2): `header:{name}[:as{Form}][:all]`.

Headers are stored raw and unnormalised (names in their original case, repeats as lists), so every
form is computed here from what arrived, never from a cleaned-up copy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from email.utils import getaddresses
from typing import Any

from plmail.jmap.errors import invalid_arguments
from plmail.mail.headers import decode_words
from plmail.mail.mime import message_ids, parse_date

_ADDRESS_FIELDS = {"from", "sender", "reply-to", "to", "cc", "bcc", "resent-from", "resent-sender",
                   "resent-reply-to", "resent-to", "resent-cc", "resent-bcc"}
_ID_FIELDS = {"message-id", "in-reply-to", "references", "resent-message-id"}
_DATE_FIELDS = {"date", "resent-date"}
_URL_FIELDS = {"list-help", "list-unsubscribe", "list-subscribe", "list-post", "list-owner", "list-archive"}
_TEXT_FIELDS = {"subject", "comments", "keywords", "list-id"}
# Fields RFC 5322 and RFC 2369 define: only their own forms apply to them; any other field takes any form.
_KNOWN = _ADDRESS_FIELDS | _ID_FIELDS | _DATE_FIELDS | _URL_FIELDS | _TEXT_FIELDS | {"received", "return-path"}
_FORMS = {
    "Raw": None,
    "Text": _TEXT_FIELDS,
    "Addresses": _ADDRESS_FIELDS,
    "GroupedAddresses": _ADDRESS_FIELDS,
    "MessageIds": _ID_FIELDS,
    "Date": _DATE_FIELDS,
    "URLs": _URL_FIELDS,
}
_FOLD = re.compile(r"\r?\n(?=[ \t])")
_URL = re.compile(r"<([^<>]+)>")


@dataclass(frozen=True, slots=True)
class HeaderRequest:
    property: str
    name: str  # lower-cased
    form: str
    all: bool


def parse_header_property(prop: str) -> HeaderRequest:
    parts = prop.split(":")
    if len(parts) < 2 or parts[0] != "header" or not parts[1]:
        raise invalid_arguments(f"{prop!r} is not a header property.")
    name, rest = parts[1].lower(), parts[2:]
    all_values = bool(rest) and rest[-1] == "all"
    if all_values:
        rest = rest[:-1]
    form = "Raw"
    if rest:
        if len(rest) > 1 or not rest[0].startswith("as") or rest[0][2:] not in _FORMS:
            raise invalid_arguments(f"{prop!r} asks for an unknown form.")
        form = rest[0][2:]
    allowed = _FORMS[form]
    if allowed is not None and name in _KNOWN and name not in allowed:
        raise invalid_arguments(f"The header {parts[1]!r} cannot be read {rest[0]}.")
    return HeaderRequest(prop, name, form, all_values)


def _unfold(raw: str) -> str:
    return _FOLD.sub("", raw)


def addresses(raw: str) -> list[dict[str, Any]]:
    result = []
    for name, address in getaddresses([_unfold(raw)]):
        if address:
            result.append({"name": decode_words(name) or None, "email": address})
    return result


def _parse(raw: str, form: str) -> Any:
    if form == "Raw":
        return raw
    if form == "Text":
        return decode_words(_unfold(raw)).strip()
    if form == "Addresses":
        return addresses(raw)
    if form == "GroupedAddresses":
        return [{"name": None, "addresses": addresses(raw)}]
    if form == "MessageIds":
        return list(message_ids(_unfold(raw))) or None
    if form == "Date":
        moment = parse_date(_unfold(raw))
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None
    return _URL.findall(_unfold(raw)) or None


def header_value(pairs: Sequence[tuple[str, str]], request: HeaderRequest) -> Any:
    values = [_parse(raw, request.form) for name, raw in pairs if name.lower() == request.name]
    if request.all:
        return values
    return values[-1] if values else None
