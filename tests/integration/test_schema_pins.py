"""Schema decisions the seeds explain, pinned so a migration cannot undo them silently."""

from __future__ import annotations

from datetime import UTC, datetime

from plmail.calendar.writer import EventDraft
from plmail.services import Services
from tests.support.repos import calendar_rows


async def _indexes(services: Services, table: str) -> dict[str, str]:
    rows = await services.db.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1", table)
    return {r["indexname"]: r["indexdef"] for r in rows}


async def test_event_proposal_is_indexed_by_message_then_start_and_by_nothing_else(services: Services) -> None:
    """Seed: uniq_event_proposal_message_starts_at with the message in front; "Es gibt mit Absicht keinen Index
    auf usr_id über den des Fremdschlüssels hinaus und keinen auf starts_at"."""
    indexes = await _indexes(services, "event_proposal")
    unique = indexes.pop("uniq_event_proposal_message_starts_at")
    assert "UNIQUE" in unique and unique.endswith("(message_id, starts_at)")
    indexes.pop("event_proposal_pkey")
    for name, definition in indexes.items():
        columns = definition.rsplit("(", 1)[1]
        assert not columns.startswith(("user_id", "starts_at")), f"{name}: {definition}"


async def test_the_reply_lookup_and_the_rekeying_backfill_have_their_indexes(services: Services) -> None:
    """Seed: "Ein GIN-Ausdrucksindex, idx_message_referenced_ids" and "idx_event_source_link_dedup ist das, was ein
    Backfill zum Neuverschlüsseln benutzen würde"."""
    referenced = (await _indexes(services, "message"))["idx_message_referenced_ids"]
    assert "USING gin" in referenced and "in_reply_to || thread_references" in referenced
    dedup = (await _indexes(services, "event_source_link"))["idx_event_source_link_dedup"]
    assert dedup.endswith("(dedup_key)")


async def test_a_mailbox_reaches_its_label_only_through_the_binding(services: Services) -> None:
    """Seed: "Mailbox … erreicht sein Label über das Binding. Eine zweite Verknüpfung auf Mailbox würde … die
    Asymmetrie wiederherstellen"."""
    columns = {r["column_name"] for r in await services.db.fetch(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'mailbox'")}
    assert "label_id" not in columns and not any("label" in c for c in columns)
    binding = {r["column_name"] for r in await services.db.fetch(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'label_binding'")}
    assert {"label_id", "account_id", "mailbox_id"} <= binding
    unique_mailbox = [d for d in (await _indexes(services, "label_binding")).values()
                      if "UNIQUE" in d and d.endswith("(mailbox_id)")]
    assert len(unique_mailbox) == 1  # one binding per mailbox


async def test_a_calendar_event_records_the_formula_version_of_its_keys(services: Services) -> None:
    """Seed: "CalendarEvent::$dedupKeyVersion hält fest, welche Formel die Schlüssel … erzeugt hat … Die Spalte
    kostet jetzt ein Smallint"."""
    column = await services.db.fetchrow(
        "SELECT data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = 'calendar_event' AND column_name = 'dedup_key_version'")
    assert column is not None and column["data_type"] == "smallint" and column["is_nullable"] == "NO"


async def test_an_event_keeps_the_key_version_it_was_written_with(services: Services) -> None:
    """The version is what a re-keying backfill reads: a row written under another formula says so."""
    user = await services.users.create_user("keys@example.org", "correct horse")
    calendar_id = await calendar_rows(services).ensure_default(user.id, "Calendar")
    start = datetime(2026, 3, 2, 9, tzinfo=UTC)
    ids = [await services.calendar.writer.create(calendar_id, user.id, EventDraft(uid=f"v{n}@x", start=start, **kw),
                                                 user_zone="UTC", reference=start)
           for n, kw in enumerate([{}, {"dedup_key_version": 2}])]
    versions = [await services.db.fetchval("SELECT dedup_key_version FROM calendar_event WHERE id = $1", i)
                for i in ids]
    assert versions == [1, 2]  # today's formula is the first one; another is recorded as given
