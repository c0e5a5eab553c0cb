"""Rows prepared ahead of their batch (what the IMAP import does for the page it reads ahead, while the page
before is stored) must store exactly what the batch would have stored itself, keep the seed's order, and let
a broken message cost only itself."""

from __future__ import annotations

from datetime import timedelta

from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message

_COLUMNS = ("subject", "headers", "to_addresses", "cc_addresses", "in_reply_to", "thread_references", "flags",
            "body_text", "body_html", "body_html_safe", "raw_path", "content_hash", "mime_tree", "category")


async def _rows(mailbox: Mailbox, account_id: int) -> list[dict[str, object]]:
    rows = await mailbox.services.db.fetch(
        f"SELECT id, {', '.join(_COLUMNS)} FROM message WHERE account_id = $1 ORDER BY rfc_message_id", account_id)
    # The sanitised HTML points at the row's own id (cid: images); compare it with the id taken out.
    return [{**{c: r[c] for c in _COLUMNS},
             "body_html_safe": (r["body_html_safe"] or "").replace(f"/message/{r['id']}/", "/message/ID/")}
            for r in rows]


async def test_a_batch_prepared_ahead_stores_what_the_batch_would_have_stored(mailbox: Mailbox) -> None:
    html = '<p>Logo</p><img src="cid:logo@x"><img src="https://tracker.example/p.gif">'
    raws = [make_message(message_id="a@x", subject="Plans", html=html, cc=["Carol <carol@example.com>"]),
            make_message(message_id="b@x", subject="Re: Plans", in_reply_to="a@x", references=["a@x"],
                         date=BASE_DATE + timedelta(hours=2))]
    pipeline = mailbox.services.pipeline
    await pipeline.ingest([mailbox.message(r, source_ref=f"in:{i}", flags=("\\Seen",)) for i, r in enumerate(raws)])
    other = await mailbox.new_account("Second")
    batch = [mailbox.message(r, account_id=other, source_ref=f"in:{i}", flags=("\\Seen",)) for i, r in enumerate(raws)]
    ahead = await pipeline.prepare_ahead(batch)
    result = await pipeline.ingest(batch, ahead=ahead)
    assert result.stored == 2
    # The rows carry the ids allocated ahead, so a cid: link points at the row itself.
    assert [m.id for m in result.messages] == [f.message_id for f in ahead.fields if f is not None]
    safe = await mailbox.services.db.fetchval("SELECT body_html_safe FROM message WHERE id = $1",
                                              result.messages[0].id)
    assert f"/message/{result.messages[0].id}/cid/" in safe and "tracker.example" not in safe
    assert await _rows(mailbox, other) == await _rows(mailbox, mailbox.account_id)
    assert await mailbox.threads_by_message_id(other) == {frozenset({"a@x", "b@x"})}


async def test_a_batch_prepared_before_the_one_ahead_of_it_is_stored_still_sees_what_that_one_stored(
        mailbox: Mailbox) -> None:
    """The importer prepares page N+1 while page N is stored: categorising (which reads the contacts page N
    harvests) and threading (which reads page N's rows) must still run with their batch, in ingest order."""
    pipeline = mailbox.services.pipeline
    newsletter = dict(sender="Shop <news@shop.example>", headers={"List-Unsubscribe": "<mailto:u@shop.example>"})
    first = [mailbox.message(make_message(message_id="sent@x", sender="Me <me@reader.example>",
                                          to=["news@shop.example"]), source_ref="p1:1"),
             mailbox.message(make_message(message_id="reply@x", subject="Re: Offer", in_reply_to="offer@x",
                                          references=["offer@x"], date=BASE_DATE + timedelta(days=1)),
                             source_ref="p1:2")]
    second = [mailbox.message(make_message(message_id="offer@x", subject="Offer", **newsletter),
                              source_ref="p2:1")]
    ahead = await pipeline.prepare_ahead(second)  # before the first batch is stored, as the importer does
    await pipeline.ingest(first)
    result = await pipeline.ingest(second, ahead=ahead)
    # The user wrote to the shop in the batch before: its newsletter is correspondence, not promotions.
    assert result.messages[0].category == "primary"
    # The reply stored a page earlier is adopted by the message it answers (threading's fourth stage).
    assert await mailbox.threads_by_message_id() == {frozenset({"sent@x"}), frozenset({"reply@x", "offer@x"})}


async def test_a_message_the_database_refuses_in_a_batch_prepared_ahead_costs_only_itself(mailbox: Mailbox) -> None:
    # A real database-side refusal, installed in this test's own database, for one message of sixty.
    await mailbox.services.db.execute("""
        CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'this one is refused'; END $$;
        CREATE TRIGGER refuse BEFORE INSERT ON message FOR EACH ROW
            WHEN (NEW.rfc_message_id = 'm37@x') EXECUTE FUNCTION refuse_one();""")
    batch = [mailbox.message(make_message(message_id=f"m{i}@x", subject=f"Note {i}",
                                          date=BASE_DATE + timedelta(minutes=i)), source_ref=f"in:{i}")
             for i in range(60)]
    ahead = await mailbox.services.pipeline.prepare_ahead(batch)
    stored, refused = await mailbox.services.pipeline.ingest_isolating_failures(batch, ahead=ahead)
    assert (stored, refused) == (59, {"in:37"})
    rows = await mailbox.services.db.fetch("SELECT id, rfc_message_id FROM message ORDER BY id")
    assert [r["rfc_message_id"] for r in rows] == [f"m{i}@x" for i in range(60) if i != 37]  # in ingest order
    skip = await mailbox.services.db.fetchval("SELECT reason FROM ingest_skip WHERE source_ref = 'in:37'")
    assert "this one is refused" in skip


async def test_a_batch_that_fails_as_a_whole_is_retried_one_by_one_with_the_fields_prepared_ahead(
        mailbox: Mailbox) -> None:
    """A failure outside the guarded insert (here: the label rows of one message) rolls the batch back; the
    one-by-one retry reuses the ids allocated ahead (unused after the rollback) and loses only that message."""
    await mailbox.services.db.execute("""
        CREATE FUNCTION refuse_label() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM message m WHERE m.id = NEW.message_id AND m.rfc_message_id = 'm3@x') THEN
            RAISE EXCEPTION 'no label for this one';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_label BEFORE INSERT ON message_label FOR EACH ROW EXECUTE FUNCTION refuse_label();""")
    raws = [make_message(message_id=f"m{i}@x", subject="Re: Thread" if i else "Thread",
                         in_reply_to="m0@x" if i else None, references=["m0@x"] if i else (),
                         date=BASE_DATE + timedelta(minutes=i)) for i in range(6)]
    batch = [mailbox.message(r, source_ref=f"in:{i}") for i, r in enumerate(raws)]
    ahead = await mailbox.services.pipeline.prepare_ahead(batch)
    stored, refused = await mailbox.services.pipeline.ingest_isolating_failures(batch, ahead=ahead)
    assert (stored, refused) == (5, {"in:3"})
    rows = await mailbox.services.db.fetch("SELECT id, rfc_message_id FROM message ORDER BY id")
    by_ref = {f"m{i}@x": f.message_id for i, f in enumerate(ahead.fields) if f is not None}
    assert {r["rfc_message_id"]: r["id"] for r in rows} == {k: v for k, v in by_ref.items() if k != "m3@x"}
    assert await mailbox.threads_by_message_id() == {frozenset(f"m{i}@x" for i in range(6) if i != 3)}
