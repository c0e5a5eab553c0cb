"""Gmailify with a Microsoft 365 sibling (issue 30): Gmail fetched the mail of the user's Microsoft account and
stored it first; the Graph account, named in its headers, claims the row when it syncs, as the IMAP sibling does
(tests/integration/gmail/test_gmailify.py): same id, the user's own labels and stars kept, stored once."""

from __future__ import annotations

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.ingest import ProviderRef
from plmail.mail.ingest import parse_message
from plmail.mail.labels import LabelManager
from tests.integration.graph.conftest import GraphSetup
from tests.support.fakes import rfc822
from tests.support.repos import account_rows


async def test_the_graph_sibling_claims_a_message_gmail_stored_first(graph: GraphSetup) -> None:
    services, db = graph.services, graph.services.db
    address = await db.fetchval("SELECT email FROM account WHERE id = $1", graph.account_id)
    gmail_account = await account_rows(services).create(user_id=graph.user.id, provider_kind=ProviderKind.GMAIL,
                                                        name="Gmail", email="owner@gmail.example")
    roles = await services.labels.role_ids(graph.user.id)
    fetched = rfc822("Fetched by Gmail", to=address, message_id="<claim-g1@work.example>")
    own = rfc822("Gmail's own", to="owner@gmail.example", message_id="<own-g1@gmail.example>")
    # What Gmail's sync stored first: the fetched message under its Gmail id, in the Inbox.
    await services.pipeline.ingest([
        parse_message(fetched, account_id=gmail_account, ref=ProviderRef(key="g-claim-1"),
                      provider_labels=("INBOX",), label_ids=(roles[LabelRole.INBOX],)),
        parse_message(own, account_id=gmail_account, ref=ProviderRef(key="g-own-1"), provider_labels=("INBOX",),
                      label_ids=(roles[LabelRole.INBOX],))])
    row_id = await db.fetchval("SELECT id FROM message WHERE provider_key = 'g-claim-1'")
    keep = await LabelManager(db).create(graph.user.id, "Keep")  # the user filed it by hand meanwhile
    await services.operations.add_label(graph.user.id, keep, message_ids=[row_id])
    await services.operations.set_starred(graph.user.id, True, message_ids=[row_id])

    graph.mailbox.add_message(fetched, "inbox")
    await graph.sync_all()

    rows = await db.fetch(
        "SELECT m.id, m.account_id, CASE WHEN m.provider_key = 'g-claim-1' THEN m.provider_key END AS gmail_id, "
        "m.provider_key AS graph_id, "
        "g.folder_id AS graph_folder_id, m.starred_at FROM message m LEFT JOIN graph_message g ON g.message_id = m.id "
        "WHERE m.rfc_message_id = 'claim-g1@work.example'")
    assert len(rows) == 1  # stored once, by the account named in its headers
    claimed = rows[0]
    assert (claimed["id"], claimed["account_id"], claimed["gmail_id"]) == (row_id, graph.account_id, None)
    assert claimed["graph_id"] is not None and claimed["graph_folder_id"] is not None
    assert claimed["starred_at"] is not None
    names = {r["n"] for r in await db.fetch(
        "SELECT coalesce(l.role, l.name) AS n FROM message_label ml JOIN label l ON l.id = ml.label_id "
        "WHERE ml.message_id = $1", row_id)}
    assert names == {LabelRole.INBOX.value, "Keep"}
    note = await db.fetchrow("SELECT reason, detail FROM gmail_skipped_message WHERE gmail_id = 'g-claim-1'")
    assert note is not None and note["reason"] == "gmailify" and f"account {graph.account_id}" in note["detail"]
    # Mail addressed to the Gmail address stays Gmail's
    assert await db.fetchval("SELECT account_id FROM message WHERE rfc_message_id = 'own-g1@gmail.example'") == \
        gmail_account
    # A second sync finds the row by its Graph id: nothing is stored again
    await graph.sync_all()
    assert await db.fetchval("SELECT count(*) FROM message WHERE rfc_message_id = 'claim-g1@work.example'") == 1
