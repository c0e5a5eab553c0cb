"""The reconciler's six rules, suppression and the same-batch lesson, each shown through the real job."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from plmail.calendar.extraction import ics_dedup_key
from plmail.calendar.sources import EventSource
from plmail.calendar.suppression import suppression_hash
from plmail.calendar.writer import EventDraft, EventEdit
from tests.integration.calendar.conftest import Diary, calendar_mail, invite, utc
from tests.support.repos import calendar_rows

T0 = utc(2026, 3, 20, 8)


async def test_sequence_two_then_one_leaves_two_and_files_one_unapplied(diary: Diary) -> None:
    later = await diary.receive(invite("ooo@x", sequence=2, title="Moved", start=utc(2026, 4, 2, 9)), start=T0)
    older = await diary.receive(invite("ooo@x", sequence=1, title="First"), start=T0 + timedelta(hours=5))
    event = await diary.only_event()
    assert (event["sequence"], event["title"], event["starts_at"]) == (2, "Moved", utc(2026, 4, 2, 9))
    assert await diary.links(event["id"]) == [(later[0], "ics", True), (older[0], "ics", False)]
    payload = await diary.services.db.fetchval(
        "SELECT payload ->> 'ical' FROM event_source_link WHERE message_id = $1", older[0])
    assert "SEQUENCE:1" in payload and "SUMMARY:First" in payload  # the loser's claim, kept verbatim


async def test_on_equal_sequence_the_later_arrival_wins_whatever_the_processing_order(diary: Diary) -> None:
    late = await diary.deliver(invite("tie@x", title="Second word"), arrivals=[T0 + timedelta(hours=3)])
    early = await diary.deliver(invite("tie@x", title="First word"), arrivals=[T0])
    await diary.extract(late)
    await diary.extract(early)
    event = await diary.only_event()
    assert event["title"] == "Second word"
    assert await diary.links(event["id"]) == [(late[0], "ics", True), (early[0], "ics", False)]


async def test_cancel_marks_every_occurrence_cancelled_and_deletes_nothing(diary: Diary) -> None:
    await diary.receive(invite("weekly@x", rrule="FREQ=WEEKLY;COUNT=10"), start=T0)
    event = await diary.only_event()
    before = await diary.services.db.fetch(
        "SELECT id FROM calendar_event_occurrence WHERE event_id = $1 ORDER BY id", event["id"])
    assert len(before) == 10
    await diary.receive(invite("weekly@x", sequence=1, method="CANCEL"), start=T0 + timedelta(days=1))
    after = await diary.services.db.fetch(
        "SELECT id, cancelled FROM calendar_event_occurrence WHERE event_id = $1 ORDER BY id", event["id"])
    assert [r["id"] for r in after] == [r["id"] for r in before]  # the same rows, none deleted
    assert all(r["cancelled"] for r in after)
    cancelled = await diary.only_event()
    assert (cancelled["id"], cancelled["status"], cancelled["title"]) == (event["id"], "cancelled", "Planning")

    # A later revision may call it on again; that is a restatement, not an undelete.
    await diary.receive(invite("weekly@x", sequence=2, rrule="FREQ=WEEKLY;COUNT=10"), start=T0 + timedelta(days=2))
    revived = await diary.only_event()
    assert revived["status"] == "confirmed"
    assert not any(c for _, _, c, _ in await diary.occurrences(revived["id"]))


async def test_a_cancel_for_one_recurrence_id_cancels_only_that_occurrence(diary: Diary) -> None:
    await diary.receive(invite("inst@x", rrule="FREQ=DAILY;COUNT=4", start=utc(2026, 4, 1, 9)), start=T0)
    await diary.receive(invite("inst@x", sequence=1, method="CANCEL", start=utc(2026, 4, 3, 9),
                               recurrence_id=utc(2026, 4, 3, 9)), start=T0 + timedelta(hours=1))
    event = await diary.only_event()
    assert event["status"] == "confirmed"
    assert [(s.day, c) for s, _, c, _ in await diary.occurrences(event["id"])] == [
        (1, False), (2, False), (3, True), (4, False)]


async def test_an_event_the_user_edited_is_never_overwritten(diary: Diary) -> None:
    await diary.receive(invite("edited@x", title="From mail"), start=T0)
    event = await diary.only_event()
    writer = diary.services.calendar.writer
    await writer.edit(diary.user_id, event["id"], EventEdit("My title", "My room", utc(2026, 4, 1, 10),
                                                            utc(2026, 4, 1, 11)),
                      user_zone="Europe/Berlin", reference=T0)
    update = await diary.receive(invite("edited@x", sequence=3, title="Mail knows better", start=utc(2026, 5, 1)),
                                 invite("edited@x", sequence=4, method="CANCEL"), start=T0 + timedelta(days=1))
    kept = await diary.only_event()
    assert (kept["title"], kept["location"], kept["starts_at"], kept["status"], kept["is_user_edited"]) == (
        "My title", "My room", utc(2026, 4, 1, 10), "confirmed", True)
    assert [(m, a) for m, _, a in await diary.links(event["id"]) if m in update] == [(update[0], False),
                                                                                     (update[1], False)]


async def test_an_event_mail_does_not_own_is_never_rewritten_by_mail(diary: Diary) -> None:
    calendar_id = await calendar_rows(diary.services).ensure_default(diary.user_id, "Calendar")
    manual = await diary.services.calendar.writer.create(
        calendar_id, diary.user_id,
        EventDraft(uid="typed@x", start=utc(2026, 4, 1, 9), end=utc(2026, 4, 1, 10), title="Typed by me",
                   source=EventSource.MANUAL),
        user_zone="Europe/Berlin", reference=T0,
    )
    ids = await diary.receive(invite("typed@x", sequence=9, title="Mail claim"), start=T0)
    event = await diary.only_event()
    assert (event["id"], event["title"], event["source"]) == (manual, "Typed by me", "manual")
    assert await diary.links(event["id"]) == [(ids[0], "ics", False)]  # filed as evidence all the same


async def test_suppression_is_checked_before_anything_is_created(diary: Diary) -> None:
    await diary.services.calendar.suppressor.suppress_keys(diary.user_id, [ics_dedup_key("nope@x")])
    report = await diary.extract(await diary.deliver(invite("nope@x"), start=T0))
    assert report["suppressed"] == 1
    assert await diary.events() == []
    assert await diary.services.db.fetchval("SELECT count(*) FROM event_source_link") == 0


async def test_not_an_event_survives_the_event_and_catches_every_resend(diary: Diary) -> None:
    await diary.receive(invite("spam@x"), start=T0)
    event = await diary.only_event()
    await diary.services.calendar.suppressor.not_an_event(diary.user_id, event["id"])
    assert await diary.events() == []
    stored = await diary.services.db.fetchval("SELECT dedup_key_hash FROM event_suppression")
    assert stored == suppression_hash(ics_dedup_key("spam@x"))  # the hash; nobody needs the key
    await diary.receive(invite("spam@x", sequence=5, title="Really, come"), start=T0 + timedelta(days=1))
    await diary.services.calendar.backfill.run()
    assert await diary.events() == []


async def test_the_same_invitation_twice_in_one_batch_makes_one_event(diary: Diary) -> None:
    ids = await diary.deliver(invite("twice@x", message_id="a@x"), invite("twice@x", message_id="b@x"),
                              invite("twice@x", sequence=1, title="Revised"), start=T0)
    report = await diary.extract(ids)
    assert (report["created"], report["applied"]) == (1, 2)
    event = await diary.only_event()
    assert (event["sequence"], event["title"]) == (1, "Revised")
    assert [applied for _, _, applied in await diary.links(event["id"])] == [True, True, True]


async def test_concurrent_batches_with_one_uid_meet_at_the_unique_index(diary: Diary) -> None:
    first = await diary.deliver(invite("race@x"), start=T0)
    second = await diary.deliver(invite("race@x"), start=T0 + timedelta(minutes=1))
    await asyncio.gather(diary.extract(first), diary.extract(second))
    event = await diary.only_event()
    assert len(await diary.links(event["id"])) == 2


async def test_a_reply_changes_participation_and_never_moves_or_creates(diary: Diary) -> None:
    assert await diary.extract(await diary.deliver(invite("orphan@x", method="REPLY"), start=T0)) == {
        "messages": 1, "claims": 1, "failed": 0, "no_event": 1}
    await diary.receive(invite("reply@x"), start=T0)
    assert (await diary.only_event())["my_participation"] == "needs-action"
    await diary.receive(invite("reply@x", method="REPLY", partstat="ACCEPTED", start=utc(2030, 1, 1)),
                        start=T0 + timedelta(hours=1))
    event = await diary.only_event()
    assert (event["my_participation"], event["starts_at"]) == ("accepted", utc(2026, 4, 1, 9))
    # The organiser re-sends the same revision: a stale NEEDS-ACTION never un-answers.
    await diary.receive(invite("reply@x", title="Planning (re-sent)"), start=T0 + timedelta(hours=2))
    event = await diary.only_event()
    assert (event["title"], event["my_participation"]) == ("Planning (re-sent)", "accepted")
    # A new revision may ask again.
    await diary.receive(invite("reply@x", sequence=1, start=utc(2026, 4, 8, 9)), start=T0 + timedelta(hours=3))
    assert (await diary.only_event())["my_participation"] == "needs-action"


async def test_account_override_is_validated_and_falls_back_silently(diary: Diary) -> None:
    calendars = calendar_rows(diary.services)
    box = diary.box
    target = await calendars.ensure_for_account(diary.user_id, box.account_id, "Archive")
    assert target is not None
    await calendars.set_account_target(diary.user_id, box.account_id, target)
    await diary.receive(invite("override@x"), start=T0)
    assert (await diary.only_event())["calendar_id"] == target

    stranger = await diary.services.users.create_user("stranger@example.org", "correct horse")
    foreign = await calendars.ensure_default(stranger.id, "Calendar")
    default = await calendars.ensure_default(diary.user_id, "Calendar")
    await calendars.set_account_target(diary.user_id, box.account_id, foreign)
    await diary.receive(invite("foreign@x"), start=T0 + timedelta(hours=1))
    events = {e["uid"]: e["calendar_id"] for e in await diary.events()}
    assert events["foreign@x"] == default
    assert await diary.events(stranger.id) == []  # nothing leaked into the other user's calendar

    other = await box.new_account("Work")
    deleted = await calendars.ensure_for_account(diary.user_id, other, "Work")
    assert deleted is not None and await calendars.delete(diary.user_id, deleted)
    await calendars.set_account_target(diary.user_id, box.account_id, deleted)
    await diary.receive(invite("deleted@x"), start=T0 + timedelta(hours=2))
    await diary.services.db.execute(
        "UPDATE account SET settings = settings || '{\"calendar.target_id\": \"not a number\"}' WHERE id = $1",
        box.account_id)
    await diary.receive(invite("garbage@x"), start=T0 + timedelta(hours=3))
    events = {e["uid"]: e["calendar_id"] for e in await diary.events()}
    assert events["deleted@x"] == default and events["garbage@x"] == default

    # An update follows the event to the calendar it is in, wherever the setting points now.
    await diary.receive(invite("override@x", sequence=1, title="Still there"), start=T0 + timedelta(hours=4))
    moved = [e for e in await diary.events() if e["uid"] == "override@x"]
    assert [(e["calendar_id"], e["title"]) for e in moved] == [(target, "Still there")]


async def test_one_message_that_cannot_be_read_costs_only_itself(diary: Diary) -> None:
    good, bad = await diary.deliver(invite("good@x"), invite("bad@x"), start=T0)
    digest = await diary.services.db.fetchval(
        "SELECT sha256 FROM message_part WHERE message_id = $1 AND is_calendar", bad)
    # the stored part is there but damaged: its bytes no longer match their name
    await diary.services.db.execute("UPDATE blob SET data = $2 WHERE digest = $1", digest, b"BEGIN:VCALENDAR")
    unparsable = invite("junk@x").replace(b"BEGIN:VEVENT", b"BEGIN:VEVENT\r\nBEGIN:VEVENT")
    garbage = await diary.deliver(unparsable, start=T0 + timedelta(minutes=5))
    report = await diary.extract([good, bad, *garbage])
    assert (report["messages"], report["failed"], report["created"]) == (3, 1, 1)
    assert [e["uid"] for e in await diary.events()] == ["good@x"]


async def test_a_floating_weekly_series_keeps_its_wall_clock_time_in_the_readers_zone(diary: Diary) -> None:
    ics = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:PUBLISH\r\nBEGIN:VEVENT\r\nUID:float@x\r\n"
           "DTSTART:20260319T090000\r\nDTEND:20260319T100000\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\n"
           "SUMMARY:Standup\r\nEND:VEVENT\r\nEND:VCALENDAR")
    await diary.receive(calendar_mail(ics, method="PUBLISH"), start=T0)
    event = await diary.only_event()
    assert (event["is_floating"], event["time_zone"]) == (True, None)
    # 09:00 in Berlin: UTC+1 before the change on 29 March, UTC+2 after it.
    assert [start for start, _, _, _ in await diary.occurrences(event["id"])] == [
        utc(2026, 3, 19, 8), utc(2026, 3, 26, 8), utc(2026, 4, 2, 7)]
