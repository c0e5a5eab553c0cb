"""The registrable domain of a sender: the part a company registered, without its mail subdomains.

A heuristic, not the Public Suffix List: a country code whose second level is one of the generic
labels registries hand out (co, com, org, ac …) counts as a two-level suffix, plus a few
well-known ones that break that pattern. It needs no network and no data file, and it is wrong
only for rare private suffixes, where it errs towards a longer (more specific) issuer. The result
goes into dedup keys, so changing it is a key-version change.
"""

from __future__ import annotations

import re

_GENERIC_SECOND_LEVEL = frozenset(
    {"co", "com", "net", "org", "gov", "edu", "ac", "ne", "or", "go", "gob", "mil", "nic", "ltd", "plc", "sch", "nom"}
)
_TWO_LEVEL_SUFFIXES = frozenset({"gv.at", "priv.at", "com.de", "eu.com", "uk.com", "us.com", "co.com", "jpn.com"})
_LABEL = re.compile(r"[a-z0-9\u00a0-\uffff]([a-z0-9\u00a0-\uffff-]{0,61}[a-z0-9\u00a0-\uffff])?")


def registrable_domain(host: str | None) -> str:
    """``mail.lufthansa.com`` → ``lufthansa.com``, ``news.bbc.co.uk`` → ``bbc.co.uk``; "" when unusable."""
    if not host:
        return ""
    name = host.strip().strip("[]").rstrip(".").lower()
    if "@" in name:
        name = name.rsplit("@", 1)[1]
    if not name or len(name) > 253:
        return ""
    labels = name.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        return ""
    if all(label.isdigit() for label in labels):
        return name  # an IP literal is its own issuer
    if len(labels) < 3:
        return name
    last_two = ".".join(labels[-2:])
    if last_two in _TWO_LEVEL_SUFFIXES or (len(labels[-1]) == 2 and labels[-2] in _GENERIC_SECOND_LEVEL):
        return ".".join(labels[-3:])
    return last_two
