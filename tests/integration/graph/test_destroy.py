"""Destroy is destroy at Microsoft 365 (RFC 8621 §4.6): POST /me/messages/{id}/permanentDelete, not a DELETE (which
keeps the message recoverable) nor a move to Deleted Items; gone at the fake, and the next sync does not bring
it back. Its neighbour in Deleted Items stays."""

from __future__ import annotations

from tests.integration.graph.conftest import GraphSetup, old_message, rfc_id


async def test_destroy_from_deleted_items_is_a_permanent_delete(graph: GraphSetup) -> None:
    doomed = old_message(graph.mailbox, "deleteditems", 1)
    kept = old_message(graph.mailbox, "deleteditems", 2)
    await graph.sync_all()
    row = await graph.row(rfc_id(doomed))
    assert await graph.labels_of(rfc_id(doomed)) == {"trash"}

    outcome = await graph.services.destroyer.destroy(graph.user.id, [row["id"]])
    assert outcome.destroyed == (row["id"],) and outcome.refused == {}
    assert await graph.services.db.fetchval("SELECT count(*) FROM message WHERE id = $1", row["id"]) == 0
    await graph.propagate()
    deletes = [c for c in graph.fake.calls if c.method in ("DELETE", "POST") and doomed.id in c.path]
    assert [(c.method, c.path.rsplit("/", 1)[-1], c.status) for c in deletes] == [
        ("POST", "permanentDelete", 204)]
    assert doomed.id not in graph.mailbox.messages and kept.id in graph.mailbox.messages
    pending = await graph.services.db.fetchval(
        "SELECT count(*) FROM message_tombstone WHERE account_id = $1 AND done_at IS NULL", graph.account_id)
    assert pending == 0

    await graph.sync_all()
    assert await graph.services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND rfc_message_id = $2", graph.account_id,
        rfc_id(doomed)) == 0
    assert (await graph.row(rfc_id(kept)))["graph_id"] == kept.id


async def test_a_message_already_gone_at_microsoft_counts_as_deleted(graph: GraphSetup) -> None:
    doomed = old_message(graph.mailbox, "inbox", 3)
    await graph.sync_all()
    row = await graph.row(rfc_id(doomed))
    graph.mailbox.delete(doomed.id)  # another client deleted it meanwhile: Graph answers 404
    await graph.services.destroyer.destroy(graph.user.id, [row["id"]])
    await graph.propagate()
    assert await graph.services.db.fetchval(
        "SELECT count(*) FROM message_tombstone WHERE account_id = $1 AND done_at IS NULL", graph.account_id) == 0
