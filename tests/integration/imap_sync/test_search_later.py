"""A first import stores its pages without their search vectors, and `index_search` computes them afterwards, newest
first (issue 36: the vector was a third of the database's work per message in the insert the import waits for).
Mail that arrives once the import is done is searchable at once; until the vectors are computed the search page
says that it may miss some mail."""

from __future__ import annotations

import re

import httpx

from plmail.mail.search_index import SearchIndexer
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.imap_mail import message
from tests.support.web import sign_in


async def _subjects(imap: ImapSetup, query: str) -> list[str]:
    return sorted(t.subject for t in (await imap.services.reader.search(imap.user.id, query)).threads)


async def test_imported_mail_is_searchable_after_indexing_and_new_mail_at_once(imap: ImapSetup) -> None:
    imap.mail.deliver([message(n, subject=f"Quarterly report {n}") for n in range(1, 6)])
    await imap.sync_all()
    db = imap.services.db
    assert await db.fetchval("SELECT count(*) FROM message WHERE account_id = $1", imap.account_id) == 5
    assert await db.fetchval("SELECT count(*) FROM message_search_pending") == 5
    assert await _subjects(imap, "quarterly") == []
    assert await _subjects(imap, "from:sender3") == []  # the address words wait with the vectors
    indexer = imap.services.search_index
    assert await indexer.incomplete_for(imap.user.id)

    assert await indexer.catch_up() == 5
    assert await _subjects(imap, "quarterly") == [f"Quarterly report {n}" for n in range(1, 6)]
    assert await _subjects(imap, "reports") == [f"Quarterly report {n}" for n in range(1, 6)]  # stemmed
    assert await _subjects(imap, "from:sender3") == ["Quarterly report 3"]
    assert await _subjects(imap, "to:someone@example.net") == [f"Quarterly report {n}" for n in range(1, 6)]
    assert not await indexer.incomplete_for(imap.user.id)
    assert await indexer.catch_up() == 0  # nothing is indexed twice

    # The import is done: the next message is live, and its vector is written with its row.
    imap.mail.deliver([message(6, subject="Budget meeting")])
    await imap.sync()
    assert await _subjects(imap, "budget") == ["Budget meeting"]
    assert await _subjects(imap, "from:sender6") == ["Budget meeting"]
    assert await db.fetchval("SELECT count(*) FROM message_search_pending") == 0


async def test_indexing_goes_newest_first_a_batch_at_a_time_and_two_indexers_share_the_queue(imap: ImapSetup) -> None:
    imap.mail.deliver([message(n, subject=f"Invoice {n}") for n in range(1, 8)])
    await imap.sync_all()
    db = imap.services.db
    ids = [r["id"] for r in await db.fetch("SELECT id FROM message ORDER BY id")]
    repo = SearchIndexer(db).repo
    assert await repo.index_pending(3) == 3
    indexed = {r["message_id"] for r in await db.fetch("SELECT message_id FROM message_search")}
    assert indexed == set(ids[-3:])  # the newest (highest ids) first
    assert await repo.index_pending(100) == 4
    assert await db.fetchval("SELECT count(*) FROM message_search") == 7


async def test_the_search_page_says_while_mail_is_not_searchable_yet(imap: ImapSetup, client: httpx.AsyncClient
                                                                      ) -> None:
    imap.mail.deliver([message(1, subject="Travel plans")])
    await imap.sync_all()
    notice = "still being made searchable"
    await sign_in(client, imap.user.email, "correct horse")
    before = await client.get("/search", params={"q": "travel"})
    assert notice in before.text and not re.search(r'class="subject">Travel plans<', before.text)
    await imap.services.search_index.catch_up()
    after = await client.get("/search", params={"q": "travel"})
    assert notice not in after.text and re.search(r'class="subject">Travel plans<', after.text)
