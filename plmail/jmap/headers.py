"""Header fields in RFC 8621's parsed forms (§4.1.2): `header:{name}[:as{Form}][:all]`.

Headers are stored raw and unnormalised (names in their original case, repeats as lists), so every
form is computed here from what arrived, never from a cleaned-up copy.
"""

from __future__ import annotations

import email.policy
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import getaddresses
from typing import Any

from plmail.jmap.errors import invalid_arguments
from plmail.mail.headers import decode_words
from plmail.mail.mime import message_ids

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


def _groups(raw: str) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """The address-list's groups in order (RFC 5322 §3.4), ungrouped addresses as groups without a name; the
    standard library's header parser reads groups, quoting and encoded words."""
    try:
        parsed = email.policy.default.header_factory("To", _unfold(raw).replace("\r", " ").replace("\n", " "))
        groups = [(g.display_name, [{"name": a.display_name or None, "email": a.addr_spec}
                                    for a in g.addresses if a.addr_spec]) for g in parsed.groups]
    except Exception:  # a header the parser cannot take: the plain reading, without groups
        groups = [(None, [{"name": decode_words(name) or None, "email": address}
                          for name, address in getaddresses([_unfold(raw)]) if address])]
    return groups


def addresses(raw: str) -> list[dict[str, Any]]:
    return [address for _, members in _groups(raw) for address in members]


def grouped_addresses(raw: str) -> list[dict[str, Any]]:
    """RFC 8621 §4.1.2.4: consecutive addresses outside any group are one group whose name is null."""
    result: list[dict[str, Any]] = []
    for name, members in _groups(raw):
        if name is None and result and result[-1]["name"] is None:
            result[-1]["addresses"].extend(members)
        else:
            result.append({"name": name, "addresses": list(members)})
    return result


def _parse(raw: str, form: str) -> Any:
    if form == "Raw":
        return raw
    if form == "Text":
        # RFC 8621 §4.1.2.2: unfolded, encoded words decoded, and normalised to NFC
        return unicodedata.normalize("NFC", decode_words(_unfold(raw)).strip())
    if form == "Addresses":
        return addresses(raw)
    if form == "GroupedAddresses":
        return grouped_addresses(raw)
    if form == "MessageIds":
        return list(message_ids(_unfold(raw))) or None
    if form == "Date":
        return rfc5322_date(_unfold(raw))
    return _URL.findall(_unfold(raw)) or None


_MONTHS = {m: n for n, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}
# RFC 5322 §4.3 obsolete zones; military letters mean "no information": -0000.
_OBS_ZONES = {"ut": 0, "gmt": 0, "z": 0, "est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420,
              "mdt": -360, "pst": -480, "pdt": -420}
_DATE = re.compile(
    r"^\s*(?:[a-z]{3,9}\s*,\s*)?(?P<day>\d{1,2})\s+(?P<month>[a-z]{3,9})\s+(?P<year>\d{2,4})\s+"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?\s*"
    r"(?P<zone>[+-]\d{2}:?\d{2}|[a-z]{1,5})?\s*$", re.IGNORECASE)
_COMMENT = re.compile(r"\([^()]*\)")


def rfc5322_date(value: str) -> str | None:
    """A Date header (RFC 5322 §3.3, with the obsolete forms of §4.3) as a JMAP Date in its own offset; None
    when it is no date."""
    text = value
    for _ in range(3):  # comments (CFWS), nested ones too
        text = _COMMENT.sub(" ", text)
    found = _DATE.match(text)
    if found is None:
        return None
    year = int(found["year"])
    if len(found["year"]) < 4:  # RFC 5322 §4.3: 00-49 are 2000-2049, 50-99 are 1950-1999, 3 digits add 1900
        year += 2000 if year < 50 and len(found["year"]) == 2 else 1900
    month = _MONTHS.get(found["month"][:3].lower())
    zone = (found["zone"] or "-0000").lower()
    if zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        minutes = int(digits[:2]) * 60 + int(digits[2:])
        offset = -minutes if zone[0] == "-" else minutes
    else:
        offset = _OBS_ZONES.get(zone, 0)
    if month is None or abs(offset) >= 24 * 60:
        return None
    try:
        moment = datetime(year, month, int(found["day"]), int(found["hour"]), int(found["minute"]),
                          int(found["second"] or 0), tzinfo=timezone(timedelta(minutes=offset)))
    except ValueError:
        return None
    if offset == 0:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    sign = "-" if offset < 0 else "+"
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"


def header_value(pairs: Sequence[tuple[str, str]], request: HeaderRequest) -> Any:
    values = [_parse(raw, request.form) for name, raw in pairs if name.lower() == request.name]
    if request.all:
        return values
    return values[-1] if values else None
