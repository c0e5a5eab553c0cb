"""The post-ingest step routing (mail/steps.py): live mail of a finished account goes to enrich_live, everything
else to enrich; only recent mail gets follow-up work; a step that fails costs only itself (DESIGN: "Steps enqueue
through this, never by naming a queue"; the seed: "ein fehlschlagender Schritt kostet nur seine eigene Arbeit")."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import ProviderKind, QueueName
from plmail.domain.ingest import AccountFacts, PostIngestResult, StoredMessage
from plmail.domain.registry import ProviderRegistry
from plmail.mail.ingest import parse_message
from plmail.mail.steps import EnrichmentRouter, InitialImportState, RecentMailPolicy, StepRegistry
from tests.support.mail import make_message

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
PARSED = parse_message(make_message(), account_id=1).parsed


def _stored(message_id: int, occurred_at: datetime | None) -> StoredMessage:
    return StoredMessage(id=message_id, account_id=1, thread_id=None, occurred_at=occurred_at, category=None,
                         is_draft=False, parsed=PARSED)


def _result(*messages: StoredMessage, live: bool) -> PostIngestResult:
    facts = AccountFacts(1, 1, ProviderKind.IMAP, frozenset(), frozenset())
    return PostIngestResult(messages=messages, accounts={1: facts}, threads_by_account={}, live=live)


def test_live_mail_goes_to_enrich_live_and_everything_else_to_enrich() -> None:
    router = EnrichmentRouter()
    assert router.queue_for(_result(live=True)) is QueueName.ENRICH_LIVE
    assert router.queue_for(_result(live=False)) is QueueName.ENRICH


def test_only_recent_messages_are_listed_for_follow_up_work() -> None:
    policy = RecentMailPolicy()
    messages = [_stored(1, NOW - timedelta(days=29)), _stored(2, NOW - timedelta(days=31)), _stored(3, None),
                _stored(4, NOW)]
    assert policy.recent_ids(messages, NOW) == (1, 4)
    assert RecentMailPolicy(days=1).recent_ids(messages, NOW) == (4,)
    assert policy.is_recent(datetime.now(UTC) - timedelta(days=29))  # without `now`: the present
    assert not policy.is_recent(datetime.now(UTC) - timedelta(days=31))
    assert policy.recent_ids([_stored(5, datetime.now(UTC))]) == (5,)


class _Step:
    def __init__(self, name: str, fail: bool, seen: list[tuple[str, PostIngestResult]]) -> None:
        self.name, self.fail, self.seen = name, fail, seen

    async def after_commit(self, result: PostIngestResult) -> None:
        self.seen.append((self.name, result))
        if self.fail:
            raise RuntimeError("the model host is down")


async def test_a_failing_step_is_reported_and_the_next_one_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[str, PostIngestResult]] = []
    first = _Step("calendar", True, seen)
    registry = StepRegistry([first])
    registry.register(_Step("vacation", False, seen))
    assert [s.name for s in registry.steps] == ["calendar", "vacation"]
    batch = _result(_stored(1, NOW), live=True)
    with caplog.at_level(logging.ERROR, logger="plmail.mail.steps"):
        failures = await registry.notify(batch)
    assert seen == [("calendar", batch), ("vacation", batch)]  # each step is told about this batch
    assert failures == [("calendar", "RuntimeError: the model host is down")]
    [record] = caplog.records
    assert record.getMessage() == "post-ingest step calendar failed" and record.exc_info is not None
    assert await StepRegistry().notify(_result(live=True)) == []


class _PerAccountProbe:
    kind = ProviderKind("per_account")

    async def is_importing(self, account_id: int) -> bool:
        if account_id == 3:
            raise OSError("the provider cannot say")
        return account_id == 2  # account 2 is still importing, account 1 is done


async def test_the_import_state_is_asked_per_account_and_a_failure_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    providers = ProviderRegistry()
    providers.import_probes.add(_PerAccountProbe())
    state = InitialImportState(providers)
    kind = ProviderKind("per_account")
    assert (await state.is_importing(kind, 1), await state.is_importing(kind, 2)) == (False, True)
    with caplog.at_level(logging.ERROR, logger="plmail.mail.steps"):
        assert await state.is_importing(kind, 3) is True  # doubt counts as importing
    assert [r.getMessage() for r in caplog.records] == [
        "import state probe for per_account failed; treating account 3 as importing"]
