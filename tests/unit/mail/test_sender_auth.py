"""Sender authentication (RFC 8601 headers, RFC 7489 DMARC alignment): real headers as the big receivers write
them -> the verdict and its reason.

Each row is a header block as a receiving server writes it (values copied from real mail, addresses changed to
the example's); the expected verdict follows from the RFCs, not from our code: RFC 8601 §5 (only the receiver's
own header counts), RFC 7489 §3.1 (alignment: the same organisational domain, from the Public Suffix List), §6.6.2
(DMARC's result is the verdict where one is given).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from plmail.domain.authentication import EXCHANGE_ONLINE, AuthReason, SenderVerdict
from plmail.mail.sender_auth import (
    aligned,
    domain_of,
    judge,
    learn_receiver,
    organisational_domain,
    results_for_display,
)

GMAIL = frozenset({"mx.google.com"})
M365 = frozenset({EXCHANGE_ONLINE})
FASTMAIL = frozenset({"mx6.messagingengine.com"})
PROTON = frozenset({"mail.protonmail.ch"})
HOME = frozenset({"mail.home.example"})


@dataclass(frozen=True)
class Row:
    name: str
    sender: str
    headers: tuple[str, ...]  # Authentication-Results values, top (newest) first
    trusted: frozenset[str]
    passed: bool
    reason: AuthReason
    receiver: str | None = None


ROWS = [
    Row("gmail dmarc pass",
        "alerts@paypal.com",
        ("mx.google.com; dkim=pass header.i=@paypal.com header.s=pp-dkim1 header.b=Bn1YsBDs; "
         "spf=pass (google.com: domain of service@paypal.com designates 173.0.84.4 as permitted sender) "
         "smtp.mailfrom=service@paypal.com; dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=paypal.com",),
        GMAIL, True, AuthReason.DMARC_PASS, "mx.google.com"),
    Row("gmail dmarc fail: a forged bank",
        "alerts@bank.example",
        ("mx.google.com; spf=pass (google.com: domain of x@evil.example designates 203.0.113.9 as permitted "
         "sender) smtp.mailfrom=x@evil.example; dkim=pass header.i=@evil.example header.s=s1 header.b=abc; "
         "dmarc=fail (p=REJECT sp=REJECT dis=REJECT) header.from=bank.example",),
        GMAIL, False, AuthReason.DMARC_FAILED, "mx.google.com"),
    Row("an attacker's own DKIM signature, no DMARC: not the sender's",
        "alerts@bank.example",
        ("mx.google.com; dkim=pass header.i=@evil.example header.s=s1 header.b=abc; spf=softfail "
         "(google.com: domain of transitioning x@bank.example does not designate 203.0.113.9 as permitted sender)"
         " smtp.mailfrom=x@bank.example",),
        GMAIL, False, AuthReason.NOT_ALIGNED),
    Row("old gmail form: smtp.mail, header.i only, spf aligned",
        "bob@example.net",
        ("mx.google.com; spf=pass (google.com: domain of bob@example.net designates 173.193.210.44 as permitted"
         " sender) smtp.mail=bob@example.net; dkim=pass header.i=@example.net",),
        GMAIL, True, AuthReason.DKIM_ALIGNED),
    Row("gmail: DKIM of the mail provider, SPF of the sender's domain (iPhone mail via gmail.com)",
        "someone@somewhere.com",
        ("mx.google.com; spf=pass (google.com: domain of someone@somewhere.com designates 74.125.83.176 as "
         "permitted sender) smtp.mail=someone@somewhere.com; dkim=pass (test mode) header.i=@gmail.com",),
        GMAIL, True, AuthReason.SPF_ALIGNED),
    Row("gmail: neutral SPF only (mozilla bugmail)",
        "bugzilla-daemon@mozilla.org",
        ("mx.google.com; spf=neutral (google.com: 63.245.208.146 is neither permitted nor denied by best guess "
         "record for domain of bugzilla-daemon@mozilla.org) smtp.mail=bugzilla-daemon@mozilla.org",),
        GMAIL, False, AuthReason.NO_PASS),
    Row("microsoft 365 dmarc pass (no authserv-id)",
        "billing@contoso.com",
        ("spf=pass (sender IP is 40.107.22.45) smtp.mailfrom=contoso.com; dkim=pass (signature was verified) "
         "header.d=contoso.com;dmarc=pass action=none header.from=contoso.com;compauth=pass reason=100",),
        M365, True, AuthReason.DMARC_PASS, EXCHANGE_ONLINE),
    Row("microsoft 365: a bounce, dmarc fail (mimekit's bounce.txt)",
        "MAILER-DAEMON@hmail.jitbit.com",
        ("spf=none (sender IP is 185.132.181.12) smtp.helo=dispatchb-eu1.ppe-hosted.com; dkim=none (message "
         "not signed) header.d=none;dmarc=fail action=none header.from=hmail.jitbit.com;compauth=softpass "
         "reason=202",),
        M365, False, AuthReason.DMARC_FAILED),
    Row("microsoft 365 bestguesspass: no DMARC record, aligned DKIM decides",
        "news@fabrikam.co.uk",
        ("spf=pass (sender IP is 198.51.100.7) smtp.mailfrom=bounce.fabrikam.co.uk; dkim=pass (signature was "
         "verified) header.d=mail.fabrikam.co.uk;dmarc=bestguesspass action=none header.from=fabrikam.co.uk;"
         "compauth=pass reason=109",),
        M365, True, AuthReason.DKIM_ALIGNED),
    Row("fastmail (cyrus) dmarc pass, with its arc and iprev results",
        "ceo@fastmail.com",
        ("mx6.messagingengine.com; dkim=pass (2048-bit rsa key sha256) header.d=fastmail.com "
         "header.i=@fastmail.com header.b=Wq1Lx9eA header.a=rsa-sha256 header.s=fm2 x-bits=2048; "
         "dmarc=pass policy.published-domain-policy=none policy.applied-disposition=none "
         "policy.evaluated-disposition=none (p=none,d=none,d.eval=none) policy.policy-from=p "
         "header.from=fastmail.com; iprev=pass smtp.remote-ip=103.168.172.144 (fout-a1-smtp.messagingengine.com);"
         " spf=pass smtp.mailfrom=ceo@fastmail.com smtp.helo=fout-a1-smtp.messagingengine.com",),
        FASTMAIL, True, AuthReason.DMARC_PASS),
    Row("proton: dmarc pass for protonmail.com",
        "friend@protonmail.com",
        ("mail.protonmail.ch; dkim=pass (2048-bit key) header.d=protonmail.com header.i=@protonmail.com "
         "header.b=\"kE2y1Q0f\"; dmarc=pass (p=quarantine dis=none) header.from=protonmail.com; "
         "spf=pass smtp.mailfrom=protonmail.com",),
        PROTON, True, AuthReason.DMARC_PASS),
    Row("rspamd: dmarc reject for the From domain",
        "support@bank.example",
        ("mail.home.example; dkim=none; dmarc=fail reason=\"No valid SPF, No valid DKIM\" header.from=bank.example"
         " (policy=reject); spf=fail (mail.home.example: domain of x@phish.example does not designate 192.0.2.1 "
         "as permitted sender) smtp.mailfrom=x@phish.example",),
        HOME, False, AuthReason.DMARC_FAILED),
    Row("rspamd: aligned subdomain DKIM, dmarc pass",
        "orders@shop.example",
        ("mail.home.example; dkim=pass header.d=mail.shop.example header.s=2024 header.b=AbC; dmarc=pass "
         "(policy=none) header.from=shop.example; spf=pass (mail.home.example: domain of bounces@em.shop.example "
         "designates 198.51.100.2 as permitted sender) smtp.mailfrom=bounces@em.shop.example",),
        HOME, True, AuthReason.DMARC_PASS),
    Row("opendmarc above opendkim, both the receiver's: the top one (dmarc) decides",
        "news@lists.debian.org",
        ("mail.home.example; dmarc=pass (p=none dis=none) header.from=lists.debian.org",
         "mail.home.example; dkim=pass (2048-bit key; unprotected) header.d=lists.debian.org "
         "header.i=@lists.debian.org header.b=\"B4ckz6Ww\"; dkim-atps=neutral"),
        HOME, True, AuthReason.DMARC_PASS),
    Row("opendkim alone: dkim pass of the sender's organisation",
        "jsterr@proxforge.de",
        ("mail.home.example; dkim=pass (1024-bit key; secure) header.d=proxforge.de header.i=@proxforge.de "
         "header.b=\"x9Q\"",),
        HOME, True, AuthReason.DKIM_ALIGNED),
    Row("a forged pass written above the genuine header is ignored, not merged",
        "alerts@bank.example",
        ("relay.evil.example; dkim=pass header.d=bank.example; spf=pass smtp.mailfrom=bank.example; "
         "dmarc=pass header.from=bank.example",
         "mx.google.com; spf=fail smtp.mailfrom=x@evil.example; dkim=none; dmarc=fail (p=REJECT) "
         "header.from=bank.example"),
        GMAIL, False, AuthReason.DMARC_FAILED, "mx.google.com"),
    Row("a forged pass with the receiver's own id below the receiver's header is not believed",
        "alerts@bank.example",
        ("mail.home.example; spf=softfail smtp.mailfrom=x@evil.example; dkim=none",
         "mail.home.example; dmarc=pass header.from=bank.example"),
        HOME, False, AuthReason.NO_PASS),
    Row("only somebody else's header: nothing is believed",
        "alerts@bank.example",
        ("mx.evil.example; dkim=pass header.d=bank.example; dmarc=pass header.from=bank.example",),
        GMAIL, False, AuthReason.NO_TRUSTED_HEADER),
    Row("no header at all",
        "alerts@bank.example", (), GMAIL, False, AuthReason.NO_TRUSTED_HEADER),
    Row("a DMARC result for another domain (two From headers): not for this sender",
        "alerts@bank.example",
        ("mx.google.com; dkim=pass header.i=@evil.example; dmarc=pass (p=NONE) header.from=evil.example",),
        GMAIL, False, AuthReason.DMARC_OTHER_DOMAIN),
    Row("ARC-sealed forward through a list: gmail trusted the ARC chain and says dmarc=pass",
        "maria@university.example",
        ("mx.google.com; dkim=pass header.i=@googlegroups.com header.s=20230601 header.b=SmTq; arc=pass (i=2 "
         "spf=pass spfdomain=university.example dkim=pass dkdomain=university.example dmarc=pass "
         "fromdomain=university.example); spf=pass (google.com: domain of list+bncBC@googlegroups.com designates "
         "209.85.220.69 as permitted sender) smtp.mailfrom=list+bncBC@googlegroups.com; dmarc=pass (p=QUARANTINE"
         " sp=QUARANTINE dis=NONE arc=pass) header.from=university.example",),
        GMAIL, True, AuthReason.DMARC_PASS),
    Row("ARC-sealed forward where the receiver does not override: the ARC claim itself decides nothing",
        "maria@university.example",
        ("mx.google.com; dkim=pass header.i=@forwarder.example; arc=pass (i=1 spf=pass spfdomain=university."
         "example dkim=pass dkdomain=university.example dmarc=pass fromdomain=university.example); spf=pass "
         "smtp.mailfrom=srs0=ab@forwarder.example; dmarc=fail (p=QUARANTINE sp=QUARANTINE dis=QUARANTINE) "
         "header.from=university.example",),
        GMAIL, False, AuthReason.DMARC_FAILED),
    Row("temperror is not pass",
        "alerts@bank.example",
        ("mail.home.example; dkim=temperror (no key for signature) header.d=bank.example; "
         "dmarc=temperror header.from=bank.example",),
        HOME, False, AuthReason.DMARC_FAILED),
    Row("'none' results only (spamscope mail_test_17, a phishing mail)",
        "notificaccion-clientes@bbva.mx",
        ("mailb.triara.com; spf=None smtp.mailfrom=www-data@vps-051e4cda.vps.ovh.net",),
        frozenset({"mailb.triara.com"}), False, AuthReason.NO_PASS),
    Row("rspamd without DMARC: SPF of an envelope sender at the From domain decides",
        "billing@bank.example",
        ("mail.home.example; dkim=none; spf=pass (mail.home.example: domain of bounce@mail.bank.example designates "
         "198.51.100.2 as permitted sender) smtp.mailfrom=bounce@mail.bank.example",),
        HOME, True, AuthReason.SPF_ALIGNED),
    Row("a bare domain as the envelope sender (Exchange's way of writing smtp.mailfrom)",
        "billing@contoso.com",
        ("spf=pass (sender IP is 40.107.22.45) smtp.mailfrom=contoso.com; dkim=none (message not signed) "
         "header.d=none",),
        M365, True, AuthReason.SPF_ALIGNED, EXCHANGE_ONLINE),
    Row("a server that writes no spaces after the semicolons",
        "alerts@paypal.com", ("mx.google.com;dmarc=pass header.from=paypal.com;dkim=pass header.d=paypal.com",),
        GMAIL, True, AuthReason.DMARC_PASS, "mx.google.com"),
    Row("opendmarc's older form without header.from: the receiver judged this message's From",
        "news@lists.debian.org", ("mail.home.example; dmarc=pass (p=none dis=none)",),
        HOME, True, AuthReason.DMARC_PASS),
    Row("the receiver says it checked nothing",
        "alerts@bank.example", ("mail.home.example; none",), HOME, False, AuthReason.NO_RESULT),
    Row("an SPF pass of a public suffix is aligned with nobody",
        "someone@co.uk", ("mail.home.example; spf=pass smtp.mailfrom=x@co.uk",), HOME, False, AuthReason.NOT_ALIGNED),
    Row("the account's receiver is not known yet",
        "alerts@bank.example", ("mail.home.example; dmarc=pass header.from=bank.example",), frozenset(), False,
        AuthReason.NO_RECEIVER),
    Row("no From address", "", ("mail.home.example; dmarc=pass header.from=bank.example",), HOME, False,
        AuthReason.NO_SENDER),
    Row("an unreadable header is believed by nobody",
        "alerts@bank.example", ("mail.home.example; dmarc=pass=; ;;", ), HOME, False, AuthReason.NO_TRUSTED_HEADER),
]


# The result a reason is about: the detail stored with the verdict starts with it.
DECIDED_BY = {AuthReason.DMARC_PASS: "dmarc=pass", AuthReason.DMARC_FAILED: "dmarc=",
              AuthReason.DMARC_OTHER_DOMAIN: "dmarc=", AuthReason.DKIM_ALIGNED: "dkim=pass",
              AuthReason.SPF_ALIGNED: "spf=pass", AuthReason.NOT_ALIGNED: "", AuthReason.NO_PASS: ""}


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_real_headers_give_the_verdict_the_rfcs_give(row: Row) -> None:
    verdict = judge({"Authentication-Results": list(row.headers)}, row.sender, row.trusted)
    assert (verdict.passed, verdict.reason) == (row.passed, row.reason), verdict
    if row.receiver is not None:
        assert verdict.receiver == row.receiver
    assert verdict.domain == row.sender.rpartition("@")[2].lower()
    if row.reason in DECIDED_BY:
        assert verdict.detail.startswith(DECIDED_BY[row.reason]) and "=" in verdict.detail, verdict
        assert verdict.detail.split("=", 1)[0] in ("dmarc", "dkim", "spf"), verdict
    else:
        assert verdict.detail == ""  # nothing was believed, so nothing decided


def test_the_detail_is_the_deciding_result_as_written() -> None:
    home = {"mail.home.example"}
    assert judge({"Authentication-Results": "mail.home.example; dkim=fail"}, "a@bank.example", home).detail == \
        "dkim=fail"
    signed = judge({"Authentication-Results": "mail.home.example; dkim=pass header.d=bank.example header.s=s1"},
                   "a@bank.example", home)
    assert signed.detail == "dkim=pass header.d=bank.example header.s=s1"
    failed = judge({"Authentication-Results": "mail.home.example; spf=softfail smtp.mailfrom=x@evil.example; "
                                              "dkim=none"}, "a@bank.example", home)
    assert failed.detail == "spf=softfail smtp.mailfrom=x@evil.example"  # the first result given
    other = judge({"Authentication-Results": "mx.google.com; dmarc=pass header.from=evil.example"},
                  "a@bank.example", GMAIL)
    assert other.detail == "dmarc=pass header.from=evil.example"


def test_the_from_domain_is_normalised() -> None:
    assert domain_of("Alerts@Bank.Example.") == "bank.example"
    assert domain_of("info@Shop.TAX") == "shop.tax"  # only the trailing dot goes
    assert domain_of(" a@b@Bank.example ") == "bank.example"  # the domain is after the last @
    assert domain_of("bank.example") == "" and domain_of("") == "" and domain_of(None) == ""
    upper = {"Authentication-Results": "mx.google.com; dmarc=pass header.from=PAYPAL.COM"}
    assert judge(upper, "a@paypal.com", GMAIL).passed


def test_the_deciding_result_is_kept_as_the_reason_and_survives_storage() -> None:
    forged = ROWS[2]
    verdict = judge({"authentication-results": forged.headers[0]}, forged.sender, forged.trusted)
    assert verdict.detail.startswith("dkim=pass") and "header.i=@evil.example" in verdict.detail
    assert SenderVerdict.from_json(verdict.as_json()) == verdict
    assert SenderVerdict.from_json(None) is None and SenderVerdict.from_json({"reason": "made-up"}) is None
    assert SenderVerdict.from_json({"pass": "yes", "reason": "dmarc-pass"}) == SenderVerdict(
        False, AuthReason.DMARC_PASS, "")  # only a stored true passes


def test_trusted_ids_compare_without_case_and_a_gmail_header_is_nobody_elses() -> None:
    header = {"Authentication-Results": "MX.Google.COM; dmarc=pass header.from=paypal.com"}
    assert judge(header, "a@PayPal.com", {"mx.google.com"}).passed
    assert judge(header, "a@paypal.com", {" MX.GOOGLE.COM "}).passed
    assert not judge(header, "a@paypal.com", M365).passed  # Exchange's form is not Gmail's header


def test_alignment_is_by_organisational_domain_from_the_public_suffix_list() -> None:
    assert organisational_domain("mail.bank.example") == "bank.example"
    assert organisational_domain("a.b.co.uk") == "b.co.uk"
    assert organisational_domain("co.uk") is None and organisational_domain("github.io") is None
    assert aligned("mail.bank.example", "bank.example") and aligned("bank.example", "news.bank.example")
    assert not aligned("bank.example.evil.example", "bank.example")
    assert not aligned("evilbank.example", "bank.example")
    assert not aligned("a.github.io", "b.github.io")  # two sites under one public suffix are two owners
    assert not aligned("co.uk", "co.uk")


def test_an_imap_accounts_receiver_is_learned_only_when_nearly_all_recent_mail_agrees() -> None:
    def mail(*ids: str) -> dict[str, list[str]]:
        return {"Authentication-Results": [f"{i}; dkim=pass header.d=x.example" for i in ids]}

    own = [mail("mail.home.example", "relay.example") for _ in range(9)]
    assert learn_receiver([*own, mail("mx.evil.example")]) == "mail.home.example"  # 9 of 10
    assert learn_receiver([*own[:8], mail("mx.evil.example"), mail("mx.evil.example")]) == "mail.home.example"
    assert learn_receiver([*own[:7], mail("mx.evil.example"), mail("mx.other.example"),
                           mail("mx.third.example")]) is None  # 7 of 10 is below four in five
    unreadable = {"Authentication-Results": ["mail.home.example; dmarc=pass=; ;;", "mail.home.example; none"]}
    assert learn_receiver([unreadable, *own[:3]]) is None  # counted, though nobody's: 3 of 4 is too few
    assert learn_receiver([{"Subject": "sent by me"}, *own[:3]]) == "mail.home.example"
    assert learn_receiver([*own[:7], *(mail("mx.evil.example") for _ in range(3))]) is None  # 7 of 10
    assert learn_receiver(own[:2]) is None  # two messages prove nothing
    assert learn_receiver(own[:3]) == "mail.home.example"
    assert learn_receiver([*own[:4], {"Subject": "sent by me"}]) == "mail.home.example"  # no header: not counted
    exchange = {"Authentication-Results": "spf=pass smtp.mailfrom=a.example; dmarc=pass header.from=a.example"}
    assert learn_receiver([exchange] * 4) == EXCHANGE_ONLINE
    assert learn_receiver([]) is None


def test_show_original_lists_the_believed_headers_results() -> None:
    headers = {"Authentication-Results": ["relay.evil.example; dmarc=pass header.from=bank.example",
                                          "mx.google.com; spf=fail smtp.mailfrom=x@evil.example; dmarc=fail "
                                          "header.from=bank.example"]}
    assert results_for_display(headers, GMAIL) == [("SPF", "fail", "smtp.mailfrom=x@evil.example"),
                                                   ("DMARC", "fail", "header.from=bank.example")]
    assert results_for_display(headers, M365) == []
    signed = {"Authentication-Results": "mx.google.com; dkim=pass header.d=bank.example header.s=s1"}
    assert results_for_display(signed, GMAIL) == [("DKIM", "pass", "header.d=bank.example header.s=s1")]
