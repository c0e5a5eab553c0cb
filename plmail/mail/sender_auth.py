"""Who really sent a message: the receiving server's Authentication-Results (RFC 8601), judged as DMARC does.

Only a header written by the account's own receiving server is believed: its authserv-id is one the account
trusts (Gmail's `mx.google.com`, Exchange Online's header without an id, the ids set on an IMAP account). A
receiving server puts its header on top and removes any carrying its own id that came with the message (RFC 8601
§5), so the topmost trusted header is its verdict; headers above it by anyone else are ignored, never merged.

Pass is DMARC pass for the From domain (RFC 7489 §3.1 alignment done by the receiver); where the receiver gives no
DMARC result (or `none`: the domain publishes no policy), a DKIM signature or an SPF pass aligned with the From
domain, relaxed (the same organisational domain, from the Public Suffix List, RFC 7489 §3.2). Anything else is not.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence

import authres
from publicsuffixlist import PublicSuffixList

from plmail.domain.authentication import EXCHANGE_ONLINE, AuthReason, SenderVerdict
from plmail.domain.messages import RawHeaders
from plmail.mail.headers import header_values

GMAIL_RECEIVER = "mx.google.com"
HEADER = "authentication-results"
# DMARC results that mean "no policy to apply": the receiver's own alignment below decides instead.
# Microsoft writes `bestguesspass` when the domain has no DMARC record but would have passed.
_NO_POLICY = frozenset({"none", "bestguesspass"})
# Learning an IMAP account's receiver: enough recent mail, nearly all of it topped by one server's header.
LEARN_SAMPLE = 20
LEARN_MINIMUM = 3
LEARN_SHARE = 0.8


def domain_of(address: str | None) -> str:
    """The lower-cased domain of an address ("" when it has none)."""
    if not address or "@" not in address:
        return ""
    return address.rpartition("@")[2].strip().rstrip(".").lower()


@functools.cache
def _public_suffixes() -> PublicSuffixList:
    """The bundled snapshot of the list, never fetched: it changes slowly and mail must not wait on the network.
    Parsed on first use, not at import: that took a tenth of a second at every start of every plmail command."""
    return PublicSuffixList()


def organisational_domain(domain: str) -> str | None:
    """The registered domain under its public suffix (RFC 7489 §3.2); None for a public suffix itself. The list's
    lookup ignores case and a trailing dot itself."""
    found: str | None = _public_suffixes().privatesuffix(domain)
    return found


def aligned(domain: str, from_domain: str) -> bool:
    """Relaxed alignment: both share one organisational domain."""
    organisation = organisational_domain(domain)
    return organisation is not None and organisation == organisational_domain(from_domain)


def parse(value: str) -> tuple[str, list[authres.core.AuthenticationResult]] | None:
    """(authserv-id, results) of one header value, the id lower-cased; Exchange Online's form without an id gets
    EXCHANGE_ONLINE. None when the value is not a header any server writes (it is then believed by nobody)."""
    text = " ".join(value.split())
    head = text.partition(";")[0]
    exchange = "=" in head  # the first item is a result, not an id: Exchange Online's form
    try:
        parsed = authres.AuthenticationResultsHeader.parse_value(f"exchange.invalid; {text}" if exchange else text)
    except Exception:  # authres raises its own SyntaxError and, on odd input, others
        return None
    if exchange:
        return EXCHANGE_ONLINE, list(parsed.results)
    # authres refuses a header without an id (Exchange's form is handled above), so no header can claim "".
    return str(parsed.authserv_id).lower(), list(parsed.results)


def receivers(values: Iterable[str]) -> list[str | None]:
    """The authserv-id of each header value, top first (None where it is unreadable)."""
    return [found[0] if (found := parse(value)) is not None else None for value in values]


def believed(headers: RawHeaders | None, trusted: Iterable[str]
             ) -> tuple[str, list[authres.core.AuthenticationResult]] | None:
    """The topmost header written by a trusted receiver; those above it are somebody else's and are skipped."""
    ids = {t.strip().lower() for t in trusted}
    for value in header_values(headers, HEADER):
        found = parse(value)
        if found is not None and found[0] in ids:
            return found
    return None


def _property(result: authres.core.AuthenticationResult, kind: str, *names: str) -> str:
    for name in names:
        for prop in result.properties:
            if prop.type.lower() == kind and prop.name.lower() == name and prop.value:
                return str(prop.value)  # authres has unquoted it
    return ""


def _text(result: authres.core.AuthenticationResult) -> str:
    props = " ".join(f"{p.type}.{p.name}={p.value}" for p in result.properties)
    return f"{result.method}={result.result}" + (f" {props}" if props else "")


def _dkim_domain(result: authres.core.AuthenticationResult) -> str:
    """The signing domain: header.d, else the domain of header.i (older Gmail headers give only that)."""
    return _property(result, "header", "d") or domain_of(_property(result, "header", "i"))


def _spf_domain(result: authres.core.AuthenticationResult) -> str:
    """The envelope sender's domain: smtp.mailfrom (or older Gmail's smtp.mail), an address or a bare domain."""
    sender = _property(result, "smtp", "mailfrom", "mail")
    return domain_of(sender) if "@" in sender else sender


def judge_results(from_domain: str, receiver: str, results: Sequence[authres.core.AuthenticationResult]
                  ) -> SenderVerdict:
    """The verdict from the believed header's results."""

    def verdict(passed: bool, reason: AuthReason, result: authres.core.AuthenticationResult | None = None
                ) -> SenderVerdict:
        return SenderVerdict(passed, reason, from_domain, receiver, _text(result) if result is not None else "")

    dmarc = [r for r in results if r.method.lower() == "dmarc"]
    for result in dmarc:
        policy_domain = _property(result, "header", "from").lower()
        if policy_domain and policy_domain != from_domain:
            return verdict(False, AuthReason.DMARC_OTHER_DOMAIN, result)
        outcome = result.result.lower()
        if outcome == "pass":
            return verdict(True, AuthReason.DMARC_PASS, result)
        if outcome not in _NO_POLICY:
            return verdict(False, AuthReason.DMARC_FAILED, result)
    passes = [r for r in results if r.result.lower() == "pass" and r.method.lower() in ("dkim", "spf")]
    for result in passes:
        if result.method.lower() == "dkim" and aligned(_dkim_domain(result), from_domain):
            return verdict(True, AuthReason.DKIM_ALIGNED, result)
    for result in passes:
        if result.method.lower() == "spf" and aligned(_spf_domain(result), from_domain):
            return verdict(True, AuthReason.SPF_ALIGNED, result)
    if passes:
        return verdict(False, AuthReason.NOT_ALIGNED, passes[0])
    if not results:
        return verdict(False, AuthReason.NO_RESULT)
    return verdict(False, AuthReason.NO_PASS, results[0])


def judge(headers: RawHeaders | None, from_address: str | None, trusted: Iterable[str]) -> SenderVerdict:
    """The one sender verdict a message is stored with."""
    from_domain = domain_of(from_address)
    if not from_domain:
        return SenderVerdict(False, AuthReason.NO_SENDER, "")
    ids = frozenset(trusted)
    if not ids:
        return SenderVerdict(False, AuthReason.NO_RECEIVER, from_domain)
    found = believed(headers, ids)
    if found is None:
        return SenderVerdict(False, AuthReason.NO_TRUSTED_HEADER, from_domain)
    return judge_results(from_domain, *found)


def learn_receiver(newest_inbox_headers: Iterable[RawHeaders]) -> str | None:
    """The authserv-id an IMAP account's own server writes, from the newest mail of its Inbox: the id on top of
    nearly all of it. None while too few messages agree (the ids are then the user's to set)."""
    tops = Counter[str]()
    counted = 0
    for headers in newest_inbox_headers:
        ids = receivers(header_values(headers, HEADER))
        if not ids:
            continue
        counted += 1
        if ids[0] is not None:
            tops[ids[0]] += 1
    if not tops:
        return None
    receiver, seen = max(tops.items(), key=lambda item: item[1])
    if seen < LEARN_MINIMUM or seen < LEARN_SHARE * counted:
        return None
    return receiver


def results_for_display(headers: RawHeaders | None, trusted: Iterable[str]) -> list[tuple[str, str, str]]:
    """(method, result, properties) of the believed header, for "Show original"."""
    found = believed(headers, trusted)
    if found is None:
        return []
    return [(r.method.upper(), r.result.lower(), " ".join(f"{p.type}.{p.name}={p.value}" for p in r.properties))
            for r in found[1]]
