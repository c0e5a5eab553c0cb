"""The post-ingest pipeline against a real PostgreSQL: storing, threading, announcing, guarding."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from plmail.domain.enums import LabelRole, ProviderKind, QueueName
from plmail.domain.ingest import PostIngestResult, ProviderRef
from plmail.domain.jobs import PROBE_QUEUE
from plmail.mail.steps import EnrichmentRouter
from tests.integration.mail.conftest import Mailbox, loads
from tests.support.mail import BASE_DATE, make_message


async def test_a_batch_is_stored_threaded_and_announced_in_one_go(mailbox: Mailbox) -> None:
    html = '<p>Your flight</p><script type="application/ld+json">{"@type": "FlightReservation"}</script>' \
           '<img src="https://tracker.example/p.gif" onerror="x()">'
    raws = [
        make_message(message_id="root@x", subject="Trip", html=html),
        make_message(message_id="reply@x", subject="Re: Trip", in_reply_to="root@x", references=["root@x"],
                     sender="Bob <bob@example.net>", to=["reader@example.org"], date=BASE_DATE + timedelta(hours=1)),
    ]
    result = await mailbox.services.pipeline.ingest([mailbox.message(r, source_ref=str(i)) for i, r in enumerate(raws)])
    assert result.stored == 2 and result.duplicates == 0 and not result.skipped
    rows = await mailbox.services.db.fetch(
        "SELECT id, thread_id, body_html, body_html_safe, raw_path, category FROM message ORDER BY id")
    assert rows[0]["thread_id"] == rows[1]["thread_id"] is not None
    # bodyHtml stays raw for the booking extractor; the rendered copy has no script, handler or remote image.
    assert '<script type="application/ld+json">' in rows[0]["body_html"]
    safe = rows[0]["body_html_safe"]
    assert "<script" not in safe and "onerror" not in safe and "tracker.example" not in safe
    assert await mailbox.services.blobs.get(rows[0]["raw_path"]) == raws[0]  # the original is kept
    thread = await mailbox.services.db.fetchrow("SELECT * FROM message_thread WHERE id = $1", rows[0]["thread_id"])
    assert (thread["message_count"], thread["unread_count"], thread["subject"]) == (2, 2, "Trip")
    assert thread["threading_method"] == "references"
    labels = await mailbox.services.db.fetch("SELECT label_id FROM thread_label WHERE thread_id = $1", thread["id"])
    assert [r["label_id"] for r in labels] == [mailbox.inbox]
    changes = await mailbox.changes()
    created = [c for c in changes if c[0] == "Email"]
    assert created == [("Email", str(r["id"]), "created") for r in rows]  # real ids, never 0
    # RFC 8620 §5.2: a thread that did not exist at the old state is "created" (issue 35), not "updated".
    assert ("Thread", str(thread["id"]), "created") in changes


async def test_same_tree_in_six_orders_across_batches_gives_identical_threads(mailbox: Mailbox) -> None:
    tree = {
        "root@x": make_message(message_id="root@x", subject="Plan"),
        "a@x": make_message(message_id="a@x", subject="Re: Plan", references=["root@x"], in_reply_to="root@x"),
        "b@x": make_message(message_id="b@x", subject="Re: Plan", references=["root@x", "a@x"], in_reply_to="a@x"),
        "c@x": make_message(message_id="c@x", subject="Re: Plan", references=["root@x", "a@x", "b@x"],
                            in_reply_to="b@x"),
        "other@x": make_message(message_id="other@x", subject="Plan"),  # same subject, not a reply
        "d@x": make_message(message_id="d@x", subject="Re: Plan", references=["other@x"], in_reply_to="other@x"),
    }
    expected = {frozenset({"root@x", "a@x", "b@x", "c@x"}), frozenset({"other@x", "d@x"})}
    orders = list(itertools.permutations(tree))[::97][:6]
    assert len(orders) == 6
    for n, order in enumerate(orders):
        account = await mailbox.new_account(f"order {n}")
        for key in order:  # one message per batch: replies routinely arrive before their parents
            await mailbox.services.pipeline.ingest([mailbox.message(tree[key], account_id=account)])
        assert await mailbox.threads_by_message_id(account) == expected, order


async def test_a_reply_that_arrived_first_is_adopted_and_merges_keep_the_older_thread(mailbox: Mailbox) -> None:
    pipeline = mailbox.services.pipeline
    await pipeline.ingest([mailbox.message(make_message(message_id="gp@x", subject="Budget"))])
    await pipeline.ingest([mailbox.message(make_message(message_id="child@x", subject="Re: Budget",
                                                        in_reply_to="parent@x", references=["gp@x", "parent@x"]))])
    # child references gp, so it already joined gp's thread; a grandchild referencing only the parent
    # arrives next and starts its own thread.
    await pipeline.ingest([mailbox.message(make_message(message_id="grandchild@x", subject="Re: Budget",
                                                        in_reply_to="parent@x", references=["parent@x"]))])
    before = await mailbox.services.db.fetch("SELECT DISTINCT thread_id FROM message ORDER BY 1")
    assert len(before) == 2
    older, newer = before[0]["thread_id"], before[1]["thread_id"]
    await pipeline.ingest([mailbox.message(make_message(message_id="parent@x", subject="Re: Budget",
                                                        in_reply_to="gp@x", references=["gp@x"]))])
    after = await mailbox.services.db.fetch("SELECT DISTINCT thread_id FROM message")
    assert [r["thread_id"] for r in after] == [older]
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM message_thread WHERE id = $1", newer) == 0
    assert ("Thread", str(newer), "destroyed") in await mailbox.changes("Thread")
    moved = await mailbox.services.db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'grandchild@x'")
    assert ("Email", str(moved), "updated") in await mailbox.changes("Email")
    count = await mailbox.services.db.fetchval("SELECT message_count FROM message_thread WHERE id = $1", older)
    assert count == 4


async def test_a_merged_conversation_takes_its_subject_from_the_side_holding_the_replied_to_message(
    mailbox: Mailbox,
) -> None:
    """Seed: "der Betreff kommt von der Seite, die die beantwortete Nachricht hält" — not from the oldest
    message, whose date may be a replier's clock running behind."""
    pipeline, db = mailbox.services.pipeline, mailbox.services.db
    reply = await pipeline.ingest([mailbox.message(make_message(
        message_id="r@x", subject="Re: Quarterly plan, second draft", in_reply_to="x@x", references=["x@x"],
        sender="Bob <bob@example.net>", date=BASE_DATE - timedelta(minutes=2)))])
    await pipeline.ingest([mailbox.message(make_message(message_id="x@x", subject="Quarterly plan",
                                                        date=BASE_DATE))])
    assert await mailbox.threads_by_message_id() == {frozenset({"r@x", "x@x"})}
    row = await db.fetchrow("SELECT subject, normalized_subject FROM message_thread WHERE id = $1",
                            reply.messages[0].thread_id)
    assert (row["subject"], row["normalized_subject"]) == ("Quarterly plan", "quarterly plan")


async def test_merges_in_one_batch_carry_star_snooze_pinned_category_and_leave_the_bin(mailbox: Mailbox) -> None:
    pipeline, db = mailbox.services.pipeline, mailbox.services.db
    for family in ("x", "y"):
        await pipeline.ingest([mailbox.message(make_message(message_id=f"{family}-gp@x", subject=f"Plan {family}"))])
        await pipeline.ingest([mailbox.message(make_message(
            message_id=f"{family}-kid@x", subject=f"Re: Plan {family}", in_reply_to=f"{family}-parent@x",
            references=[f"{family}-parent@x"]))])
    rows = await db.fetch("SELECT rfc_message_id, thread_id FROM message")
    thread = {r["rfc_message_id"]: r["thread_id"] for r in rows}
    assert len(set(thread.values())) == 4
    starred = datetime(2026, 1, 2, tzinfo=UTC)
    snoozed = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3)
    await db.execute("UPDATE message SET starred_at = $1 WHERE rfc_message_id = 'x-kid@x'", starred)
    await db.execute("UPDATE message_thread SET starred_at = $2, category = 'updates', category_pinned = true "
                     "WHERE id = $1", thread["x-kid@x"], starred)
    await db.execute("UPDATE message_thread SET snoozed_until = $2 WHERE id = $1", thread["y-kid@x"], snoozed)
    trash = (await mailbox.services.labels.role_ids(mailbox.user.id))[LabelRole.TRASH]
    # y's older thread is in the bin: its one message is in Trash and nowhere else
    await db.execute("DELETE FROM message_label WHERE message_id = (SELECT id FROM message WHERE rfc_message_id = "
                     "'y-gp@x')")
    await db.execute("INSERT INTO message_label (message_id, label_id) SELECT id, $1 FROM message "
                     "WHERE rfc_message_id = 'y-gp@x'", trash)
    assert await db.fetchval("SELECT binned FROM message_thread WHERE id = $1", thread["y-gp@x"]) is True

    # both parents in one batch: two merges, written together
    result = await pipeline.ingest([mailbox.message(make_message(
        message_id=f"{family}-parent@x", subject=f"Re: Plan {family}", in_reply_to=f"{family}-gp@x",
        references=[f"{family}-gp@x"])) for family in ("x", "y")])
    assert result.stored == 2
    assert await mailbox.threads_by_message_id() == {
        frozenset({"x-gp@x", "x-kid@x", "x-parent@x"}), frozenset({"y-gp@x", "y-kid@x", "y-parent@x"})}
    survivors = {r["id"]: r for r in await db.fetch("SELECT * FROM message_thread")}
    assert set(survivors) == {thread["x-gp@x"], thread["y-gp@x"]}  # the older thread of each family survives
    x, y = survivors[thread["x-gp@x"]], survivors[thread["y-gp@x"]]
    assert (x["starred_at"], x["category"], x["category_pinned"]) == (starred, "updates", True)
    assert (y["snoozed_until"], y["starred_at"], y["category_pinned"]) == (snoozed, None, False)
    assert (x["message_count"], y["message_count"]) == (3, 3)
    assert y["binned"] is False  # mail outside Trash moved in, so the thread left the bin
    destroyed = {c[1] for c in await mailbox.changes("Thread") if c[2] == "destroyed"}
    assert destroyed == {str(thread["x-kid@x"]), str(thread["y-kid@x"])}


async def test_provider_conversation_in_one_batch_and_duplicates_in_the_batch(mailbox: Mailbox) -> None:
    raws = [make_message(message_id=f"g{i}@x", subject=f"Subject {i}") for i in range(3)]
    batch = [
        mailbox.message(raws[0], ref=ProviderRef(key="m1"), provider_thread_key="T1"),
        mailbox.message(raws[1], ref=ProviderRef(key="m2"), provider_thread_key="T1"),
        # the same message twice in one batch
        mailbox.message(raws[1], ref=ProviderRef(key="m2"), provider_thread_key="T1"),
        mailbox.message(raws[2], ref=ProviderRef(key="m3"), provider_thread_key="T2"),
    ]
    result = await mailbox.services.pipeline.ingest(batch)
    assert (result.stored, result.duplicates) == (3, 1)
    assert await mailbox.threads_by_message_id() == {frozenset({"g0@x", "g1@x"}), frozenset({"g2@x"})}
    again = await mailbox.services.pipeline.ingest(
        [mailbox.message(raws[0], ref=ProviderRef(key="m1"), provider_thread_key="T1")])
    assert (again.stored, again.duplicates) == (0, 1)  # an overlapping retry is stopped by the unique index
    threads = await mailbox.services.db.fetch("SELECT provider_thread_key, threading_method FROM message_thread")
    assert sorted((r["provider_thread_key"], r["threading_method"]) for r in threads) == [
        ("T1", "provider"), ("T2", "provider")]


async def test_garbage_and_nul_bytes_cost_only_themselves(mailbox: Mailbox) -> None:
    batch = [
        mailbox.message(b"\xff\xfe\x00garbage\x00", source_ref="garbage"),
        mailbox.message(b"Subject: nul\x00byte\r\nFrom: x@y.example\r\n\r\nbody\x00text", source_ref="nul"),
        mailbox.message(make_message(message_id="fine@x"), source_ref="fine"),
    ]
    result = await mailbox.services.pipeline.ingest(batch)
    assert result.stored + len(result.skipped) == 3
    stored = await mailbox.services.db.fetch("SELECT rfc_message_id FROM message")
    assert "fine@x" in {r["rfc_message_id"] for r in stored}


async def test_a_threading_failure_is_recorded_and_never_costs_the_batch(mailbox: Mailbox) -> None:
    # A real database-side failure, installed in this test's own database: thread creation by the
    # regular path is refused, the fallback (one thread per message) is not.
    await mailbox.services.db.execute("""
        CREATE FUNCTION refuse_threads() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'threads are refused today'; END $$;
        CREATE TRIGGER refuse BEFORE INSERT ON message_thread FOR EACH ROW
            WHEN (NEW.threading_method <> 'none') EXECUTE FUNCTION refuse_threads();""")
    raws = [make_message(message_id="p@x"), make_message(message_id="q@x", in_reply_to="p@x", references=["p@x"])]
    result = await mailbox.services.pipeline.ingest([mailbox.message(r) for r in raws])
    assert result.stored == 2
    rows = await mailbox.services.db.fetch("SELECT thread_id, thread_error FROM message ORDER BY id")
    assert all(r["thread_id"] is not None for r in rows)
    assert all("threads are refused today" in r["thread_error"] for r in rows)


async def test_rolled_back_work_leaves_no_change_log_rows(mailbox: Mailbox) -> None:
    services = mailbox.services
    async def ingest_then_fail() -> None:
        async with services.db.transaction():
            await services.pipeline.ingest([mailbox.message(make_message(message_id="gone@x"))])
            raise RuntimeError("abandon")

    with pytest.raises(RuntimeError, match="abandon"):
        await ingest_then_fail()
    assert await services.db.fetchval("SELECT count(*) FROM message") == 0
    assert await services.db.fetchval("SELECT count(*) FROM jmap_change_log") == 0


@dataclass
class RecordingStep:
    name: str
    seen: list[PostIngestResult] = field(default_factory=list)

    async def after_commit(self, result: PostIngestResult) -> None:
        self.seen.append(result)


@dataclass
class BrokenStep:
    name: str = "broken"

    async def after_commit(self, result: PostIngestResult) -> None:
        raise ValueError("this step is broken")


@dataclass
class EnqueueStep:
    """A step shaped like the real ones: it enqueues, through the router, for recent mail only."""

    queues: object
    router: EnrichmentRouter = field(default_factory=EnrichmentRouter)
    name: str = "enqueue"

    async def after_commit(self, result: PostIngestResult) -> None:
        if result.recent_ids:
            await self.queues.enqueue(PROBE_QUEUE, queue=self.router.queue_for(result),  # type: ignore[attr-defined]
                                      probe_id=result.recent_ids[0])


@dataclass
class FinishedImport:
    kind: ProviderKind = ProviderKind.LOCAL

    async def is_importing(self, account_id: int) -> bool:
        return False


async def test_a_raising_step_is_logged_and_the_next_step_still_runs(mailbox: Mailbox) -> None:
    recorder = RecordingStep("recorder")
    mailbox.services.steps.register(BrokenStep())
    mailbox.services.steps.register(recorder)
    result = await mailbox.services.pipeline.ingest([mailbox.message(make_message(message_id="s@x"))])
    assert result.stored == 1
    assert len(recorder.seen) == 1 and recorder.seen[0].messages[0].id == result.messages[0].id
    failures = await mailbox.services.steps.notify(result)
    assert failures == [("broken", "ValueError: this step is broken")]


async def test_follow_up_work_goes_to_enrich_live_only_for_recent_mail_of_a_finished_account(
    mailbox: Mailbox,
) -> None:
    services = mailbox.services
    services.steps.register(EnqueueStep(services.queues))
    now = datetime.now(UTC)
    old = make_message(message_id="old@x", date=now - timedelta(days=400))
    fresh = make_message(message_id="fresh@x", date=now - timedelta(hours=2))
    importing = await services.pipeline.ingest([mailbox.message(old), mailbox.message(fresh)])
    assert not importing.live  # an archive account is never live: doubt means "still importing"
    assert importing.recent_ids == (importing.messages[1].id,)
    services.provider_roles.import_probes.replace(FinishedImport())
    live = await services.pipeline.ingest([mailbox.message(make_message(message_id="new@x", date=now))])
    assert live.live
    probes = "FROM saq_jobs WHERE convert_from(job, 'UTF8')::jsonb ->> 'function' = 'probe_queue'"  # this step's own
    queued = await services.db.fetch(f"SELECT queue {probes} ORDER BY queue")
    assert [r["queue"] for r in queued] == [QueueName.ENRICH.value, QueueName.ENRICH_LIVE.value]
    nothing = await services.pipeline.ingest([mailbox.message(make_message(message_id="old2@x",
                                                                           date=now - timedelta(days=45)))])
    assert nothing.recent_ids == ()
    assert await services.db.fetchval(f"SELECT count(*) {probes}") == 2


async def test_contacts_harvested_from_sent_mail_make_later_bulk_mail_general(mailbox: Mailbox) -> None:
    """Harvested inside the pipeline, deliberately not as a step like the seed's: the same batch counts."""
    pipeline = mailbox.services.pipeline
    newsletter = dict(sender="Shop <news@shop.example>", headers={"List-Unsubscribe": "<mailto:u@shop.example>"})
    first = await pipeline.ingest([mailbox.message(make_message(message_id="n1@x", **newsletter))])
    assert first.messages[0].category == "promotions"
    # Sent from an alias in the same batch as the next newsletter: the harvest runs before categorising.
    sent = make_message(message_id="s1@x", sender="Me <me@reader.example>", to=["news@shop.example"])
    second_newsletter = make_message(message_id="n2@x", **newsletter)
    batch = await pipeline.ingest([mailbox.message(sent), mailbox.message(second_newsletter)])
    assert batch.messages[1].category == "primary"
    contact = await mailbox.services.db.fetchrow("SELECT * FROM contact WHERE email = 'news@shop.example'")
    assert contact["is_correspondent"] and contact["frequency"] == 3


async def test_headers_stay_raw_and_search_finds_address_parts(mailbox: Mailbox) -> None:
    raw = make_message(message_id="h@x", subject="Quarterly invoices", sender="Carol <carol@billing.example.com>",
                       headers={"X-Weird-Header": "Value", "Received": "from a"})
    await mailbox.services.pipeline.ingest([mailbox.message(raw)])
    # A local archive account is always importing: its mail is indexed for search afterwards.
    await mailbox.services.search_index.catch_up()
    headers = loads(await mailbox.services.db.fetchval("SELECT headers FROM message"))
    assert isinstance(headers, dict) and headers["X-Weird-Header"] == "Value"
    reader = mailbox.services.reader
    for query in ("example.com", "billing.example.com", "invoice", "carol"):
        assert len((await reader.search(mailbox.user.id, query)).threads) == 1, query
    assert (await reader.search(mailbox.user.id, "nothing-like-this")).threads == []


async def test_steps_are_told_once_per_batch_after_the_last_commit(mailbox: Mailbox, database_url: str) -> None:
    """Seed P13: "Es gibt genau einen Haken, und er läuft nach dem letzten Flush. Ein Step sieht nie einen
    halbfertigen Stapel" — a step reading from another connection finds the whole batch committed, threads and
    the change log included."""
    seen: list[tuple[int, ...]] = []

    class Witness:
        name = "witness"

        async def after_commit(self, result: PostIngestResult) -> None:
            ids = [m.id for m in result.messages]
            async with await psycopg.AsyncConnection.connect(database_url) as other:
                row = await (await other.execute(
                    "SELECT count(*), count(thread_id), "
                    "(SELECT count(*) FROM jmap_change_log WHERE object_type = 'Email' AND entity_id = ANY(%s)), "
                    "(SELECT count(*) FROM message_label WHERE message_id = ANY(%s)) "
                    "FROM message WHERE id = ANY(%s)", ([str(i) for i in ids], ids, ids))).fetchone()
            assert row is not None
            seen.append((len(ids), *(int(v) for v in row)))

    mailbox.services.pipeline.steps.register(Witness())
    await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id=f"w{i}@x", subject=f"Witnessed {i}")) for i in range(3)])
    assert seen == [(3, 3, 3, 3, 3)]  # told once: stored, threaded, announced and labelled


async def test_stored_and_tombstoned_provider_ids_are_left_out_with_one_question(
        mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch) -> None:
    raws = [make_message(message_id=f"k{i}@x", subject=f"Known {i}") for i in range(3)]
    first = await mailbox.services.pipeline.ingest([mailbox.message(raws[0], ref=ProviderRef(key="k0"))])
    assert first.stored == 1
    await mailbox.services.db.execute(
        """INSERT INTO message_tombstone (account_id, provider_container, provider_key, rfc_message_id, attempts,
                                          last_error, created_at) VALUES ($1, '', 'k1', 'k1@x', 0, '', now())""",
        mailbox.account_id)
    asked: list[str] = []
    fetch = type(mailbox.services.db).fetch

    async def counting(db: object, sql: str, *args: object) -> object:
        if "x(i, c, k)" in sql:  # a batch's provider ids looked up among the stored and the tombstoned
            asked.append(sql)
        return await fetch(db, sql, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(type(mailbox.services.db), "fetch", counting)
    result = await mailbox.services.pipeline.ingest(
        [mailbox.message(raw, ref=ProviderRef(key=f"k{i}")) for i, raw in enumerate(raws)])
    assert [m.parsed.message_id for m in result.messages] == ["k2@x"] and result.duplicates == 2
    assert len(asked) == 1  # stored and tombstoned are one question per batch, not two
