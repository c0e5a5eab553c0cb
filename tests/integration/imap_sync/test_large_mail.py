"""Large mail: the first import and the sync of new mail take raw messages in batches bounded by bytes as well
as by count, so a folder of scanned attachments fits in a small server's memory, and still every message
arrives exactly once."""

from __future__ import annotations

import re

from plmail.providers.imap.batches import BATCH_BYTES
from tests.integration.imap_sync.conftest import ImapSetup, add_account
from tests.support.imap_mail import large_message, message
from tests.support.imap_proxy import imap_proxy

MB = 1024 * 1024


def body_fetches(commands: list[str]) -> list[str]:
    """The UID sets of the client's body fetches, in the order sent."""
    found = (re.match(r"\S+ UID FETCH (\S+) .*BODY\.PEEK\[\]", line) for line in commands)
    return [m.group(1) for m in found if m]


async def test_large_mail_goes_in_batches_bounded_by_bytes(imap: ImapSetup) -> None:
    over_budget = BATCH_BYTES + MB
    history = [message(i) for i in range(1, 4)] + [large_message(i, 12 * MB) for i in range(4, 8)]
    history.append(large_message(8, over_budget))
    imap.mail.deliver(history)
    async with imap_proxy(imap.mail.server.host, imap.mail.server.port) as proxy:
        account_id = await add_account(imap.services, imap.user, imap.mail, port=proxy.port)
        setup = ImapSetup(imap.services, imap.user, imap.mail, account_id)
        await setup.sync()
        await setup.import_all()
        # Downward from the top: the message over the budget alone, then two scans (a third would pass the
        # budget), then the last two scans with the small mail below them. Each page is fetched once.
        assert [run.page.stored for run in setup.pages] == [1, 2, 5]
        assert body_fetches(proxy.commands()) == ["8", "6:7", "1:5"]
        assert await setup.stored_ids() == imap.server_ids(["INBOX"])
        assert await setup.count() == 8

        sent = len(proxy.commands())
        imap.mail.append([large_message(9, 20 * MB), large_message(10, 20 * MB), message(11)])
        await setup.sync()
        assert body_fetches(proxy.commands()[sent:]) == ["9", "10:11"]
        assert await setup.stored_ids() == imap.server_ids(["INBOX"])
        assert await setup.count() == 11
        sizes = await imap.services.db.fetch(
            "SELECT m.provider_key::bigint AS imap_uid, p.size "
            "FROM message m JOIN message_part p ON p.message_id = m.id "
            "WHERE m.account_id = $1 AND p.filename = 'scan.pdf' ORDER BY 1", account_id)
        assert [r["imap_uid"] for r in sizes] == [4, 5, 6, 7, 8, 9, 10]
        assert all(r["size"] > 8 * MB for r in sizes)  # the attachments are kept whole
