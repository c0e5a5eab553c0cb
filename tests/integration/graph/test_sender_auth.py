"""The sender verdict of a Microsoft 365 account (issue 30): Graph hands over Exchange Online's
Authentication-Results in internetMessageHeaders (asked for with $select), written without an authserv-id; only
that header is believed, never one another server wrote."""

from __future__ import annotations

import json

from tests.integration.graph.conftest import GraphSetup
from tests.support.fakes import rfc822

EXCHANGE = ("spf=pass (sender IP is 40.107.22.45) smtp.mailfrom=contoso.com; dkim=pass (signature was verified) "
            "header.d=contoso.com;dmarc=pass action=none header.from=contoso.com;compauth=pass reason=100")


async def test_exchange_onlines_header_decides_and_a_strangers_does_not(graph: GraphSetup) -> None:
    graph.mailbox.add_message(rfc822("Invoice", sender="Billing <billing@contoso.com>",
                                     message_id="<inv-1@contoso.com>",
                                     headers={"Authentication-Results": EXCHANGE}), "inbox")
    graph.mailbox.add_message(rfc822("Invoice overdue", sender="Billing <billing@contoso.com>",
                                     message_id="<inv-2@evil.example>",
                                     headers={"Authentication-Results": "mx.evil.example; dmarc=pass "
                                                                        "header.from=contoso.com"}), "inbox")
    await graph.sync_all()
    verdicts = {r["rfc_message_id"]: json.loads(r["sender_auth"]) if isinstance(r["sender_auth"], str)
                else r["sender_auth"] for r in await graph.services.db.fetch(
                    "SELECT rfc_message_id, sender_auth FROM message WHERE account_id = $1", graph.account_id)}
    assert verdicts["inv-1@contoso.com"]["pass"] is True
    assert verdicts["inv-1@contoso.com"]["reason"] == "dmarc-pass" and verdicts["inv-1@contoso.com"]["receiver"] == ""
    assert verdicts["inv-2@evil.example"]["pass"] is False
    assert verdicts["inv-2@evil.example"]["reason"] == "no-trusted-header"
