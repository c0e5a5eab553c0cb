"""The first import parses the page read ahead in a process of its own (`plmail.mail.parse_worker`); a message
that trips the parser, or kills that process outright, is refused alone and the rest of its page is stored."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plmail.config import Settings
from plmail.domain.errors import ConfigurationError
from plmail.mail.parse_worker import ParseJob, ParserProcess, spare_cpu
from plmail.providers.imap.ingest import FolderIngest
from plmail.providers.imap.models import FetchedMessage
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.dying_parser import PARSER
from tests.support.imap_mail import message

KILLER = message(2, subject="kills the parser")
TRIPPER = message(4, subject="trips the parser")


async def delivered_to_the_inbox(imap: ImapSetup, raws: list[bytes]) -> tuple[MailboxRow, list[FetchedMessage]]:
    """The raw messages delivered to Dovecot's INBOX and synced, with the INBOX row and the fetch results a page
    of the first import would hand to the parser."""
    imap.mail.deliver(raws)
    await imap.sync()
    folder = next(f for f in await MailboxRepository(imap.services.db).for_account(imap.account_id)
                  if f.full_path == "INBOX")
    fetched = [FetchedMessage(uid, frozenset(), datetime(2026, 11, 28, tzinfo=UTC), len(raw), raw)
               for uid, raw in enumerate(raws, start=1)]
    return folder, fetched


async def test_a_message_that_kills_the_parsing_process_costs_only_itself(imap: ImapSetup) -> None:
    raws = [message(1), KILLER, message(3), TRIPPER, message(5)]
    folder, fetched = await delivered_to_the_inbox(imap, raws)
    parser = ParserProcess(PARSER)
    try:
        ingest = FolderIngest(imap.services.db, imap.services.pipeline, parser)
        page = await ingest.parse(imap.account_id, folder, fetched, yielding=True)
        # the page's process died on message 2; a new one took the page one message at a time, died on message 2
        # again, and a third took the rest
        assert parser.started == 3
        assert [m.uid for m, _ in page.parsed] == [1, 3, 5]
        reasons = {m.uid: reason for m, reason in page.unreadable}
        assert set(reasons) == {2, 4}
        assert "parsing process stopped" in reasons[2]
        assert reasons[4] == "parse: ValueError: the parser tripped"
        outcome = await ingest.store(imap.account_id, folder, fetched, listed_at=datetime.now(UTC), page=page)
    finally:
        await parser.close()
    assert outcome.stored == 3
    assert outcome.failed == {2, 4}  # tried again with the next page, given up after the fifth failure
    assert (await imap.stored_ids())["INBOX"] == {"seq-1@plmail.test", "seq-3@plmail.test", "seq-5@plmail.test"}
    skips = await imap.services.db.fetch(
        "SELECT source_ref, reason FROM ingest_skip WHERE account_id = $1 ORDER BY source_ref", imap.account_id)
    assert [r["source_ref"] for r in skips] == ["INBOX:2", "INBOX:4"]


async def test_the_parsing_process_answers_like_the_parser_and_ends_when_idle() -> None:
    parser = ParserProcess(idle_seconds=0.2)
    html = (b"From: A <a@example.org>\r\nSubject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nMessage-ID: <x@example.org>\r\n"
            b"Content-Type: text/html; charset=utf-8\r\n\r\n<p onclick='x()'>Hi <img src=\"cid:logo\"></p>"
            b"<script>alert(1)</script>\r\n")
    try:
        [result] = await parser.parse([ParseJob(html, 41, {"account_id": 1, "source_ref": "INBOX:7"})])
        assert result.error is None
        assert result.parsed is not None
        assert result.parsed.subject == "Grüße"
        assert result.parsed.message_id == "x@example.org"
        assert result.fields is not None
        # sanitised with the row's own id: the cid: image points at this message's part, the script is gone
        assert (result.fields.safe_html or "").strip() == '<p>Hi <img src="/message/41/cid/logo"></p>'
        process = parser._process
        assert process is not None
        assert await process.wait() == 0  # idle for 0.2 s: it read end-of-file and exited
        assert parser._process is None
        await parser.parse([ParseJob(html, 42, {"account_id": 1})])
        assert parser.started == 2  # asked again, a new one starts
    finally:
        await parser.close()


async def test_a_parsing_process_that_cannot_start_leaves_the_parse_to_this_process(imap: ImapSetup) -> None:
    """A child that fails before it is ready (here: its parser cannot be imported) is not a message's fault: the
    page is parsed in the importing process and every message is stored."""
    raws = [message(1), message(2)]
    folder, fetched = await delivered_to_the_inbox(imap, raws)
    parser = ParserProcess("tests.support.no_such_module:parse")
    try:
        ingest = FolderIngest(imap.services.db, imap.services.pipeline, parser)
        page = await ingest.parse(imap.account_id, folder, fetched, yielding=True)
        assert parser.started == 0
        assert page.unreadable == ()
        outcome = await ingest.store(imap.account_id, folder, fetched, listed_at=datetime.now(UTC), page=page)
    finally:
        await parser.close()
    assert outcome.stored == 2
    assert (await imap.stored_ids())["INBOX"] == {"seq-1@plmail.test", "seq-2@plmail.test"}


async def test_a_busy_machine_parses_the_page_here_and_a_machine_with_room_in_the_parsing_process(
    imap: ImapSetup,
) -> None:
    """The default (PLMAIL_PARSE_PROCESS unset): asked before every page, so an import that starts on a busy machine
    uses the child once the machine has room, and the other way round."""
    raws = [message(1), message(2), message(3)]
    folder, fetched = await delivered_to_the_inbox(imap, raws)
    room = [False]
    parser = ParserProcess(when=lambda: room[0])
    try:
        ingest = FolderIngest(imap.services.db, imap.services.pipeline, parser)
        busy = await ingest.parse(imap.account_id, folder, fetched[:1], yielding=True)
        assert parser.started == 0  # parsed here: no child was started
        room[0] = True
        free = await ingest.parse(imap.account_id, folder, fetched[1:], yielding=True)
        assert parser.started == 1
        assert [m.uid for m, _ in busy.parsed] == [1]
        assert [m.uid for m, _ in free.parsed] == [2, 3]
        await ingest.store(imap.account_id, folder, fetched[:1], listed_at=datetime.now(UTC), page=busy)
        await ingest.store(imap.account_id, folder, fetched[1:], listed_at=datetime.now(UTC), page=free)
    finally:
        await parser.close()
    assert (await imap.stored_ids())["INBOX"] == {"seq-1@plmail.test", "seq-2@plmail.test", "seq-3@plmail.test"}


def test_the_child_is_used_only_with_a_second_cpu_that_has_room() -> None:
    # The README's measurements on 2 cores: faster at load 1 and 6, slower at 8-9.
    assert spare_cpu(load=1.0, cpus=2)
    assert spare_cpu(load=6.0, cpus=2)
    assert not spare_cpu(load=8.0, cpus=2)
    assert not spare_cpu(load=9.0, cpus=2)
    assert not spare_cpu(load=0.0, cpus=1)  # one CPU has no second to give
    assert spare_cpu(load=20.0, cpus=8)  # 2.5 per CPU, as busy as load 5 on two
    assert not spare_cpu(load=40.0, cpus=8)


def test_plmail_parse_process_is_auto_by_default_and_says_what_it_takes() -> None:
    assert Settings.from_env({}).parse_process is None
    assert Settings.from_env({"PLMAIL_PARSE_PROCESS": "auto"}).parse_process is None
    assert Settings.from_env({"PLMAIL_PARSE_PROCESS": "true"}).parse_process is True
    assert Settings.from_env({"PLMAIL_PARSE_PROCESS": "0"}).parse_process is False
    with pytest.raises(ConfigurationError, match="PLMAIL_PARSE_PROCESS must be auto, true or false, got 'sometimes'"):
        Settings.from_env({"PLMAIL_PARSE_PROCESS": "sometimes"})
