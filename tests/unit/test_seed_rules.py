"""Seed rules that the rest of the suite implemented but could not notice breaking, each pinned to the seed's own
number or wording (never to our constant): the recent window, an import-state probe that fails, the catch-up
schedule, the reply prefixes, the bulk headers of the proposer, the hold's settings and the live-mail cap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from croniter import croniter

from plmail.assistant.priority import LiveMailPriority
from plmail.assistant.settings import AssistantSettings
from plmail.calendar.proposals import EventProposer, Refusal
from plmail.domain.enums import ProviderKind
from plmail.domain.jobs import CLASSIFY_BACKLOG
from plmail.domain.registry import ProviderRegistry
from plmail.mail.steps import InitialImportState, RecentMailPolicy
from plmail.mail.threader import has_reply_prefix, normalize_subject
from tests.unit.proposals.test_proposer import with_

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_recent_mail_is_the_last_30_days_by_the_mails_own_date() -> None:
    """Seed: "gegen ein Fenster von 30 Tagen (ENRICH_RECENT_DAYS)"."""
    policy = RecentMailPolicy()
    assert policy.is_recent(NOW - timedelta(days=30), NOW)
    assert not policy.is_recent(NOW - timedelta(days=30, seconds=1), NOW)
    assert policy.is_recent(NOW + timedelta(days=2), NOW)  # a sender's clock ahead is still recent
    assert not policy.is_recent(None, NOW)  # no date: nothing to judge recency by


class _BrokenProbe:
    kind = ProviderKind("broken")

    async def is_importing(self, account_id: int) -> bool:
        raise OSError("the provider cannot say")


class _FinishedProbe:
    kind = ProviderKind("finished")

    async def is_importing(self, account_id: int) -> bool:
        return False


async def test_an_import_state_probe_that_fails_or_is_missing_means_still_importing() -> None:
    """Seed: "Im Zweifel heißt es „importiert noch“", because the opposite error queues a whole mailbox as live."""
    providers = ProviderRegistry()
    providers.import_probes.add(_BrokenProbe())
    providers.import_probes.add(_FinishedProbe())
    state = InitialImportState(providers)
    assert await state.is_importing(ProviderKind("broken"), 1) is True
    assert await state.is_importing(ProviderKind("unknown"), 1) is True
    assert await state.is_importing(ProviderKind("finished"), 1) is False


def test_the_assistants_catch_up_runs_every_quarter_hour() -> None:
    """Seed: "ClassificationCatchUp, alle Viertelstunde von app:ai:classify-backlog gestartet"."""
    assert CLASSIFY_BACKLOG.cron is not None
    runs = croniter(CLASSIFY_BACKLOG.cron, datetime(2026, 6, 1, 12, 1, tzinfo=UTC))
    moments = [runs.get_next(datetime) for _ in range(5)]
    assert [m.minute for m in moments] == [15, 30, 45, 0, 15]


@pytest.mark.parametrize("prefix", ["re", "fwd", "fw", "aw", "wg", "antw", "sv", "vs", "res", "rif", "tr", "doorst"])
def test_every_reply_prefix_the_seed_names_is_one(prefix: str) -> None:
    """Seed: "REPLY_PREFIX_PATTERN deckt re|fwd|fw|aw|wg|antw|sv|vs|res|rif|tr|doorst ab"."""
    for written in (f"{prefix}: Quarterly report", f"{prefix.upper()}: Quarterly report",
                    f"{prefix.title()}:Quarterly report"):
        assert has_reply_prefix(written), written
        assert normalize_subject(written) == "quarterly report", written
    assert not has_reply_prefix(f"{prefix}port: Quarterly report")  # a word that starts like a prefix


def test_a_subject_without_a_reply_prefix_is_no_reply() -> None:
    assert not has_reply_prefix("Your order is on its way")
    assert normalize_subject("FW: Re:  AW: Plan ") == "plan"


@pytest.mark.parametrize("header", ["list-id", "list-post", "list-unsubscribe", "x-mailman-version",
                                    "x-google-group-id", "feedback-id", "x-csa-complaints"])
def test_each_bulk_header_the_seed_names_refuses_a_proposal(header: str) -> None:
    """Seed: "BULK_HEADERS prüft list-id, list-post, list-unsubscribe, x-mailman-version, x-google-group-id,
    feedback-id und x-csa-complaints erneut" — written out here, not read from the proposer's list."""
    assert EventProposer().decide(with_()).refusal is None
    decision = EventProposer().decide(with_(headers={"From": "Anna <anna@example.org>", header.title(): "x"}))
    assert decision.refusal is Refusal.BULK_HEADER


def test_the_hold_waits_60_seconds_by_default() -> None:
    """Seed: "AiSettings::$holdMaxSeconds (Vorgabe 60, 2–300)"."""
    assert AssistantSettings().hold_max_seconds == 60


def test_bulk_classification_steps_back_for_live_mail_at_most_two_minutes() -> None:
    assert LiveMailPriority(stats=None).max_wait_seconds == 120.0  # type: ignore[arg-type]
