"""Whether a message's sender is who it claims to be, as the receiving server judged it.

Only the first Authentication-Results header is believed: the provider adds it on receipt, at the
top; any further down came with the message and could say anything.
"""

from __future__ import annotations

import re

from plmail.domain.messages import RawHeaders
from plmail.mail.headers import header_values

_RESULT = re.compile(r"\b(dmarc|dkim|spf)\s*=\s*(\w+)([^;]*)", re.IGNORECASE)
_DKIM_DOMAIN = re.compile(r"header\.(?:d|i)\s*=\s*@?([\w.-]+)", re.IGNORECASE)
_SPF_DOMAIN = re.compile(r"smtp\.mailfrom\s*=\s*(?:[^@\s;]*@)?([\w.-]+)", re.IGNORECASE)


def _aligned(domain: str, sender_domain: str) -> bool:
    domain, sender_domain = domain.lower().rstrip("."), sender_domain.lower().rstrip(".")
    return sender_domain == domain or sender_domain.endswith("." + domain) or domain.endswith("." + sender_domain)


def sender_authenticated(headers: RawHeaders | None, from_address: str | None) -> bool:
    """DMARC pass, or a DKIM or SPF pass for the From domain, in the receiving server's verdict."""
    values = header_values(headers, "authentication-results")
    if not values or not from_address or "@" not in from_address:
        return False
    sender_domain = from_address.rsplit("@", 1)[1]
    for method, result, rest in _RESULT.findall(values[0]):
        if result.lower() != "pass":
            continue
        method = method.lower()
        if method == "dmarc":
            return True
        pattern = _DKIM_DOMAIN if method == "dkim" else _SPF_DOMAIN
        found = pattern.search(rest)
        if found and _aligned(found.group(1), sender_domain):
            return True
    return False


def authentication_verdicts(headers: RawHeaders | None) -> list[tuple[str, str, str]]:
    """(method, result, detail) of SPF, DKIM and DMARC in the first Authentication-Results, for "Show original"."""
    values = header_values(headers, "authentication-results")
    if not values:
        return []
    return [(method.upper(), result.lower(), rest.strip()) for method, result, rest in _RESULT.findall(values[0])]
