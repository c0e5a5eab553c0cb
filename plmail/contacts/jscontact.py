"""JSContact cards (RFC 9553) read from and written to the vCard text CardDAV keeps, following RFC 9555 for the
properties a contacts app shows: uid, kind, name, nicknames, emails, phones, addresses, organizations, titles,
notes, onlineServices, links and anniversaries (birthday).

A vCard property this module does not map is kept as it was when JMAP rewrites the card (RFC 9555 §3: what has no
JSContact counterpart must not be lost), so a phone's photo or custom label survives an edit made over JMAP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# The vCard properties this module owns: when JMAP rewrites a card these are written from the JSContact object,
# every other line of the old card is kept as it was.
_MAPPED = frozenset({"UID", "KIND", "X-ADDRESSBOOKSERVER-KIND", "FN", "N", "NICKNAME", "EMAIL", "TEL", "ADR", "ORG",
                     "TITLE", "ROLE", "NOTE", "IMPP", "URL", "BDAY", "ANNIVERSARY"})
_FRAME = frozenset({"BEGIN", "END", "VERSION", "PRODID", "REV"})
# RFC 9553 §2.2.1: the JSContact properties of a Card this server keeps; the rest are refused by name.
CARD_PROPERTIES = ("@type", "version", "uid", "kind", "name", "nicknames", "emails", "phones", "addresses",
                   "organizations", "titles", "notes", "onlineServices", "links", "anniversaries", "created",
                   "updated", "prodId")
_KINDS = ("individual", "group", "org", "location", "device", "application")
# RFC 9555 §2.3.2 (N) in vCard order: family; given; additional; prefix; suffix.
_N_KINDS = ("surname", "given", "given2", "title", "credential")
# RFC 9555 §2.4.1 (ADR) in vCard order: pobox; ext; street; locality; region; code; country.
_ADR_KINDS = ("postOfficeBox", "apartment", "name", "locality", "region", "postcode", "country")
_PHONE_FEATURES = {"voice": "voice", "fax": "fax", "cell": "mobile", "pager": "pager", "text": "text",
                   "video": "video", "textphone": "textphone"}
_CONTEXTS = {"work": "work", "home": "private"}
_DATE = re.compile(r"^(?:(\d{4})-?|--)(\d{2})-?(\d{2})$")


class CardError(ValueError):
    """A JSContact card that cannot be written as a vCard; ``prop`` names the offending property."""

    def __init__(self, message: str, prop: str) -> None:
        super().__init__(message)
        self.prop = prop


@dataclass(frozen=True, slots=True)
class VProp:
    group: str
    name: str
    params: dict[str, list[str]]
    value: str
    line: str  # as it came, unfolded


def unfold(text: str) -> list[str]:
    lines: list[str] = []
    for raw in text.splitlines():
        if raw[:1] in (" ", "\t") and lines:
            lines[-1] += raw[1:]
        elif raw.strip():
            lines.append(raw)
    return lines


def _split(text: str, sep: str) -> list[str]:
    """Splits at ``sep`` not escaped with a backslash, leaving escapes in place."""
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def unescape(text: str) -> str:
    """A vCard text value (RFC 6350 §3.4)."""
    out, escaped = [], False
    for char in text:
        if escaped:
            out.append("\n" if char in "nN" else char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(";", "\\;").replace("\n", "\\n")


def parse_line(line: str) -> VProp | None:
    quoted, cut = False, -1
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == ":" and not quoted:
            cut = index
            break
    if cut < 0:
        return None
    head_text, value = line[:cut], line[cut + 1:]
    head = head_text.split(";")
    group, _, name = head[0].rpartition(".")
    params: dict[str, list[str]] = {}
    for param in head[1:]:
        key, eq, raw = param.partition("=")
        values = [v.strip('"') for v in raw.split(",")] if eq else [key]
        params.setdefault(key.upper() if eq else "TYPE", []).extend(values)
    return VProp(group, name.upper(), params, value, line)


def _types(prop: VProp) -> set[str]:
    return {t.lower() for value in prop.params.get("TYPE", []) for t in value.split(",") if t}


def _contexts(prop: VProp) -> dict[str, bool] | None:
    found = {_CONTEXTS[t]: True for t in _types(prop) if t in _CONTEXTS}
    return found or None


def _pref(prop: VProp) -> int | None:
    for value in prop.params.get("PREF", []):
        if value.isdigit() and 1 <= int(value) <= 100:
            return int(value)
    return 1 if "pref" in _types(prop) else None


def _with(entry: dict[str, Any], **optional: Any) -> dict[str, Any]:
    entry.update({k: v for k, v in optional.items() if v is not None})
    return entry


def _date(value: str) -> dict[str, Any] | None:
    found = _DATE.match(value.strip().split("T")[0])
    if found is None:
        return None
    year, month, day = found.groups()
    date: dict[str, Any] = {"@type": "PartialDate"}
    if year and year != "1604":  # Apple writes 1604 for "no year" (with X-APPLE-OMIT-YEAR)
        date["year"] = int(year)
    date["month"], date["day"] = int(month), int(day)
    return date


def card_from_vcard(text: str) -> dict[str, Any]:
    """The JSContact Card of a stored vCard (without the JMAP-only id and addressBookIds)."""
    card: dict[str, Any] = {"@type": "Card", "version": "1.0", "kind": "individual"}
    maps: dict[str, dict[str, Any]] = {}
    counters: dict[str, int] = {}

    def add(prop_name: str, prefix: str, entry: dict[str, Any]) -> None:
        counters[prop_name] = counters.get(prop_name, 0) + 1
        maps.setdefault(prop_name, {})[f"{prefix}{counters[prop_name]}"] = entry

    name: dict[str, Any] = {}
    for line in unfold(text):
        prop = parse_line(line)
        if prop is None:
            continue
        value = prop.value  # as it was: a note's spaces are part of it
        if prop.name == "UID":
            card["uid"] = value.strip()
        elif prop.name in ("KIND", "X-ADDRESSBOOKSERVER-KIND") and value.strip().lower() in _KINDS:
            card["kind"] = value.strip().lower()
        elif prop.name == "FN" and "full" not in name:
            if value:
                name["full"] = unescape(value)
        elif prop.name == "N":
            components = []
            for kind, part in zip(_N_KINDS, _split(value, ";"), strict=False):
                components += [{"@type": "NameComponent", "kind": kind, "value": unescape(v)}
                               for v in _split(part, ",") if v]
            order = {"title": 0, "given": 1, "given2": 2, "surname": 3, "credential": 4}
            if components:
                name["components"] = sorted(components, key=lambda c: order[c["kind"]])
        elif prop.name == "NICKNAME":
            for nick in _split(value, ","):
                if nick:
                    add("nicknames", "k", {"@type": "Nickname", "name": unescape(nick)})
        elif prop.name == "EMAIL" and value:
            address = unescape(value.strip()).removeprefix("mailto:")
            add("emails", "e", _with({"@type": "EmailAddress", "address": address}, contexts=_contexts(prop),
                                     pref=_pref(prop)))
        elif prop.name == "TEL" and value:
            features = {_PHONE_FEATURES[t]: True for t in _types(prop) if t in _PHONE_FEATURES}
            number = unescape(value.strip()).removeprefix("tel:")
            add("phones", "p", _with({"@type": "Phone", "number": number},
                                     features=features or None, contexts=_contexts(prop), pref=_pref(prop)))
        elif prop.name == "ADR":
            components = [{"kind": kind, "value": unescape(v)}
                          for kind, part in zip(_ADR_KINDS, _split(value, ";"), strict=False)
                          for v in _split(part, ",") if v]
            full = prop.params.get("LABEL")
            add("addresses", "a", _with({"@type": "Address"}, components=components or None,
                                        full=unescape(full[0]) if full else None, contexts=_contexts(prop),
                                        pref=_pref(prop)))
        elif prop.name == "ORG":
            parts = [unescape(p) for p in _split(value, ";")]
            add("organizations", "o", _with({"@type": "Organization"}, name=parts[0] or None,
                                            units=[{"@type": "OrgUnit", "name": u} for u in parts[1:] if u] or None))
        elif prop.name in ("TITLE", "ROLE") and value:
            add("titles", "t", {"@type": "Title", "name": unescape(value),
                                "kind": "title" if prop.name == "TITLE" else "role"})
        elif prop.name == "NOTE" and value:
            add("notes", "n", {"@type": "Note", "note": unescape(value)})
        elif prop.name == "IMPP" and value:
            add("onlineServices", "s", _with({"@type": "OnlineService", "uri": value.strip()},
                                             contexts=_contexts(prop)))
        elif prop.name == "URL" and value:
            add("links", "l", _with({"@type": "Link", "uri": value.strip()}, contexts=_contexts(prop)))
        elif prop.name in ("BDAY", "ANNIVERSARY") and (date := _date(value)) is not None:
            add("anniversaries", "d", {"@type": "Anniversary",
                                       "kind": "birth" if prop.name == "BDAY" else "wedding", "date": date})
    if name:
        card["name"] = {"@type": "Name", **name}
    card.update(maps)
    return card


def _fold(line: str) -> str:
    """RFC 6350 §3.2: lines longer than 75 octets are folded (never inside a UTF-8 sequence)."""
    out, current = [], ""
    for char in line:
        if len((current + char).encode("utf-8")) > 75:
            out.append(current)
            current = " " + char
        else:
            current += char
    out.append(current)
    return "\r\n".join(out)


def _entries(card: dict[str, Any], prop: str, kind: str) -> list[tuple[str, dict[str, Any]]]:
    value = card.get(prop)
    if value is None:
        return []
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise CardError(f"'{prop}' must map ids to {kind} objects.", prop)
    for key, entry in value.items():
        if entry.get("@type", kind) != kind:
            raise CardError(f"'{prop}/{key}' must be a {kind}.", f"{prop}/{key}")
    return list(value.items())


def _text(entry: dict[str, Any], field: str, path: str, *, required: bool = True) -> str | None:
    value = entry.get(field)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise CardError(f"'{path}/{field}' must be text.", f"{path}/{field}")
    if "\r" in value or (field != "note" and "\n" in value):
        raise CardError(f"'{path}/{field}' must be one line.", f"{path}/{field}")
    return value


def _params(entry: dict[str, Any], path: str, version: str, *extra_types: str) -> str:
    types = list(extra_types)
    contexts = entry.get("contexts") or {}
    if not isinstance(contexts, dict):
        raise CardError(f"'{path}/contexts' must be an object.", f"{path}/contexts")
    types += [vcard for vcard, js in _CONTEXTS.items() if contexts.get(js)]
    pref = entry.get("pref")
    if pref is not None and (isinstance(pref, bool) or not isinstance(pref, int) or not 1 <= pref <= 100):
        raise CardError(f"'{path}/pref' must be 1 to 100.", f"{path}/pref")
    params = ""
    if pref is not None and version == "4.0":
        params += f";PREF={pref}"
    elif pref is not None:
        types.append("pref")
    return params + (f";TYPE={','.join(types)}" if types else "")


def vcard_from_card(card: dict[str, Any], previous: str | None = None) -> str:
    """The vCard of a JSContact card: vCard 3.0 (what phones read) unless the card was 4.0, keeping every line of
    ``previous`` this module does not map."""
    unknown = sorted(set(card) - set(CARD_PROPERTIES))
    if unknown:
        raise CardError(f"Unsupported properties: {', '.join(unknown)}.", unknown[0])
    kept: list[str] = []
    version, prodid = "3.0", "-//plmail//contacts//EN"
    groups = _groups(previous or "")
    for line in unfold(previous or ""):
        prop = parse_line(line)
        if prop is None:
            continue
        if prop.name == "VERSION":
            version = prop.value.strip()
        elif prop.name == "PRODID":
            prodid = prop.value.strip()
        elif prop.name not in _MAPPED and prop.name not in _FRAME:
            kept.append(line)
    uid = card.get("uid")
    if not isinstance(uid, str) or not uid.strip() or any(c in uid for c in "\r\n"):
        raise CardError("'uid' must be text.", "uid")
    lines = ["BEGIN:VCARD", f"VERSION:{version}", f"PRODID:{prodid}", f"UID:{uid}"]
    kind = card.get("kind", "individual")
    if kind not in _KINDS:
        raise CardError(f"'kind' must be one of {', '.join(_KINDS)}.", "kind")
    if kind != "individual":
        lines.append(f"KIND:{kind}" if version == "4.0" else f"X-ADDRESSBOOKSERVER-KIND:{kind}")
    lines += _name_lines(card.get("name"))
    nicks = [_text(e, "name", f"nicknames/{k}") for k, e in _entries(card, "nicknames", "Nickname")]
    if nicks:
        lines.append("NICKNAME:" + ",".join(escape(n or "") for n in nicks))
    for key, entry in _entries(card, "emails", "EmailAddress"):
        address = _text(entry, "address", f"emails/{key}") or ""
        if "@" not in address:
            raise CardError(f"'emails/{key}/address' must be an email address.", f"emails/{key}/address")
        internet = ("INTERNET",) if version == "3.0" else ()  # vCard 3.0's type for an email address (RFC 2426)
        lines.append(f"{groups.get(f'emails/{key}', '')}EMAIL{_params(entry, f'emails/{key}', version, *internet)}:"
                     f"{escape(address)}")
    for key, entry in _entries(card, "phones", "Phone"):
        number = _text(entry, "number", f"phones/{key}") or ""
        features = entry.get("features") or {}
        if not isinstance(features, dict):
            raise CardError(f"'phones/{key}/features' must be an object.", f"phones/{key}/features")
        wanted = [vcard for vcard, js in _PHONE_FEATURES.items() if features.get(js)]
        lines.append(f"{groups.get(f'phones/{key}', '')}TEL{_params(entry, f'phones/{key}', version, *wanted)}:"
                     f"{escape(number)}")
    for key, entry in _entries(card, "addresses", "Address"):
        lines.append(groups.get(f"addresses/{key}", "") + _adr_line(entry, f"addresses/{key}", version))
    for key, entry in _entries(card, "organizations", "Organization"):
        units = entry.get("units") or []
        if not isinstance(units, list) or not all(isinstance(u, dict) for u in units):
            raise CardError(f"'organizations/{key}/units' must be a list of OrgUnit.", f"organizations/{key}/units")
        parts = [_text(entry, "name", f"organizations/{key}", required=False) or ""]
        parts += [_text(u, "name", f"organizations/{key}/units") or "" for u in units]
        lines.append("ORG:" + ";".join(escape(p) for p in parts))
    for key, entry in _entries(card, "titles", "Title"):
        title = _text(entry, "name", f"titles/{key}") or ""
        lines.append(f"{'ROLE' if entry.get('kind') == 'role' else 'TITLE'}:{escape(title)}")
    for key, entry in _entries(card, "notes", "Note"):
        lines.append("NOTE:" + escape(_text(entry, "note", f"notes/{key}") or ""))
    for js_name, vname, js_type in (("onlineServices", "IMPP", "OnlineService"), ("links", "URL", "Link")):
        for key, entry in _entries(card, js_name, js_type):
            uri = _text(entry, "uri", f"{js_name}/{key}") or ""
            group = groups.get(f"{js_name}/{key}", "")
            lines.append(f"{group}{vname}{_params(entry, f'{js_name}/{key}', version)}:{uri}")
    for key, entry in _entries(card, "anniversaries", "Anniversary"):
        lines.append(_anniversary_line(entry, f"anniversaries/{key}", version))
    lines += kept
    lines.append("END:VCARD")
    return "\r\n".join(_fold(line) for line in lines) + "\r\n"


_GROUPED = {"EMAIL": "emails/e", "TEL": "phones/p", "ADR": "addresses/a", "IMPP": "onlineServices/s", "URL": "links/l"}


def _groups(previous: str) -> dict[str, str]:
    """The group prefix ("item1.") each mapped entry had, by its JSContact path: Apple ties a custom label
    (``item1.X-ABLabel``) to an address that way, and the label must still name the same address after a rewrite.
    Counted as card_from_vcard counts, so "emails/e2" is the second EMAIL there too."""
    found: dict[str, str] = {}
    counters: dict[str, int] = {}
    for line in unfold(previous):
        prop = parse_line(line)
        if prop is None or prop.name not in _GROUPED or (prop.name != "ADR" and not prop.value):
            continue
        counters[prop.name] = counters.get(prop.name, 0) + 1
        if prop.group:
            found[f"{_GROUPED[prop.name]}{counters[prop.name]}"] = prop.group + "."
    return found


def _name_lines(name: Any) -> list[str]:
    if name is None:
        raise CardError("'name' is required: a card needs a name to show (vCard's FN).", "name")
    if not isinstance(name, dict) or name.get("@type", "Name") != "Name":
        raise CardError("'name' must be a Name.", "name")
    components = name.get("components") or []
    if not isinstance(components, list) or not all(isinstance(c, dict) for c in components):
        raise CardError("'name/components' must be a list of NameComponent.", "name/components")
    parts: dict[str, list[str]] = {kind: [] for kind in _N_KINDS}
    for index, component in enumerate(components):
        value = _text(component, "value", f"name/components/{index}") or ""
        kind = component.get("kind")
        target = "given2" if kind == "surname2" else kind
        if target not in parts:
            raise CardError(f"'name/components/{index}/kind' is not a name part vCard knows.",
                            f"name/components/{index}/kind")
        parts[str(target)].append(value)
    full = _text(name, "full", "name", required=False)
    if not full:
        ordered = [*parts["title"], *parts["given"], *parts["given2"], *parts["surname"], *parts["credential"]]
        full = " ".join(ordered)
    if not full.strip():
        raise CardError("'name' needs a full name or components.", "name")
    lines = [f"FN:{escape(full)}"]
    if components:
        lines.append("N:" + ";".join(",".join(escape(v) for v in parts[kind]) for kind in _N_KINDS))
    return lines


def _adr_line(entry: dict[str, Any], path: str, version: str) -> str:
    components = entry.get("components") or []
    if not isinstance(components, list) or not all(isinstance(c, dict) for c in components):
        raise CardError(f"'{path}/components' must be a list of AddressComponent.", f"{path}/components")
    parts: dict[str, list[str]] = {kind: [] for kind in _ADR_KINDS}
    for index, component in enumerate(components):
        value = _text(component, "value", f"{path}/components/{index}") or ""
        kind = component.get("kind")
        target = {"number": "name", "building": "apartment", "room": "apartment", "floor": "apartment"}.get(
            str(kind), kind)
        if target not in parts:
            raise CardError(f"'{path}/components/{index}/kind' is not an address part vCard knows.",
                            f"{path}/components/{index}/kind")
        parts[str(target)].append(value)
    full = _text(entry, "full", path, required=False)
    label = f';LABEL="{full}"' if full and '"' not in full else ""
    value = ";".join(",".join(escape(v) for v in parts[kind]) for kind in _ADR_KINDS)
    return f"ADR{label}{_params(entry, path, version)}:{value}"


def _anniversary_line(entry: dict[str, Any], path: str, version: str) -> str:
    date = entry.get("date")
    kind = entry.get("kind")
    if kind not in ("birth", "wedding"):
        raise CardError(f"'{path}/kind' must be birth or wedding here.", f"{path}/kind")
    if not isinstance(date, dict) or date.get("@type", "PartialDate") != "PartialDate":
        raise CardError(f"'{path}/date' must be a PartialDate.", f"{path}/date")
    year, month, day = date.get("year"), date.get("month"), date.get("day")
    if not (isinstance(month, int) and isinstance(day, int) and 1 <= month <= 12 and 1 <= day <= 31) or (
            year is not None and (not isinstance(year, int) or isinstance(year, bool))):
        raise CardError(f"'{path}/date' needs a month and a day (and may have a year).", f"{path}/date")
    name = "BDAY" if kind == "birth" else "ANNIVERSARY"
    if year is not None:
        separator = "" if version == "4.0" else "-"
        return f"{name}:{year:04d}{separator}{month:02d}{separator}{day:02d}"
    if version == "4.0":
        return f"{name}:--{month:02d}{day:02d}"
    return f"{name};X-APPLE-OMIT-YEAR=1604:1604-{month:02d}-{day:02d}"
