"""GmailQuotaPacer: learns the limit from a refusal, paces at 85 % of it, slows after a refusal at a known
limit, forgets a learnt limit after a day, and shares one account's state between workers."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import ProviderKind
from plmail.providers.gmail.pacer import (
    MESSAGES_PER_REQUEST,
    SHARE,
    START_LIMIT,
    UNITS_PER_MESSAGE,
    GmailQuotaDeferred,
    GmailQuotaPacer,
    SystemTime,
)
from plmail.providers.gmail.repos.quota import GmailQuotaRepository
from plmail.services import Services
from tests.integration.gmail.conftest import FakeTime
from tests.support.fakes import ManualClock
from tests.support.repos import account_rows

CLIENT = "client.apps.googleusercontent.com"
REQUEST = MESSAGES_PER_REQUEST * UNITS_PER_MESSAGE


@pytest.fixture
async def account(services: Services) -> int:
    user = await services.users.create_user("pacer@example.org", "correct horse")
    return await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.GMAIL, name="g",
                                          email="pacer@gmail.com")


def _pacer(services: Services, time: FakeTime) -> GmailQuotaPacer:
    return GmailQuotaPacer(GmailQuotaRepository(services.db), time)


async def test_it_paces_at_85_percent_and_learns_the_limit_from_the_first_refusal(
    services: Services, account: int,
) -> None:
    time = FakeTime(ManualClock())
    pacer = _pacer(services, time)
    budget = await pacer.budget(account, CLIENT)
    assert (budget.limit, budget.learned, budget.units_per_minute) == (START_LIMIT, False, START_LIMIT * SHARE)
    start = time.now()
    for _ in range(40):
        await pacer.spend(account, CLIENT, REQUEST)
    minutes = (time.now() - start).total_seconds() / 60
    # 40 requests of five messages at 12,750 units a minute: two may go at once, the rest are spread out
    assert minutes == pytest.approx(38 * REQUEST / (START_LIMIT * SHARE), rel=0.01)

    until = await pacer.rejected(account, CLIENT, limit_value=6_000, retry_after=30)
    assert until == time.now() + timedelta(seconds=30)
    # the other requests of that moment are refused in the same minute: one refusal, not a reason to slow down
    assert await pacer.rejected(account, CLIENT, limit_value=6_000, retry_after=29) == until
    learned = await pacer.budget(account, CLIENT)
    assert (learned.limit, learned.learned, learned.units_per_minute) == (6_000, True, 6_000 * SHARE)
    with pytest.raises(GmailQuotaDeferred) as deferred:  # blocked until the account's minute is over
        await pacer.spend(account, CLIENT, REQUEST)
    assert deferred.value.until == until
    time.until(until)
    await pacer.spend(account, CLIENT, REQUEST)

    # a refusal at the limit it knew: slower for a while
    await pacer.rejected(account, CLIENT, limit_value=6_000, retry_after=10)
    slower = await pacer.budget(account, CLIENT)
    assert slower.units_per_minute < 6_000 * SHARE
    time.until(time.now() + timedelta(minutes=11))
    assert (await pacer.budget(account, CLIENT)).units_per_minute == 6_000 * SHARE
    # a learnt limit is forgotten after a day, so a raised one is found again
    time.until(time.now() + timedelta(days=1))
    forgotten = await pacer.budget(account, CLIENT)
    assert (forgotten.limit, forgotten.learned) == (START_LIMIT, False)


async def test_workers_draw_from_one_quota(services: Services, account: int) -> None:
    time = FakeTime(ManualClock())
    one, two = _pacer(services, time), _pacer(services, time)  # two workers, one account
    start = time.now()
    for _ in range(10):
        await one.spend(account, CLIENT, REQUEST)
        await two.spend(account, CLIENT, REQUEST)
    minutes = (time.now() - start).total_seconds() / 60
    assert minutes >= 18 * REQUEST / (START_LIMIT * SHARE) * 0.99  # as slow as one worker sending all twenty


async def test_the_seeds_numbers_start_15000_at_85_percent_and_five_messages_of_60_units_per_request(
    services: Services, account: int,
) -> None:
    """Seed: "beginnt bei 15.000 … taktet … auf 85 % davon, fünf Nachrichten pro Anfrage … Eine Nachricht zählt
    60 Einheiten" — written out here, not read from the pacer's constants."""
    time = FakeTime(ManualClock())
    pacer = _pacer(services, time)
    budget = await pacer.budget(account, CLIENT)
    assert (budget.limit, budget.units_per_minute) == (15_000, 12_750)
    start = time.now()
    for _ in range(20):
        await pacer.spend(account, CLIENT, 5 * 60)
    # one request of five messages may go at once beside the first; the other eighteen wait their share
    assert (time.now() - start).total_seconds() == pytest.approx(18 * 300 * 60 / 12_750, rel=0.01)


async def test_the_real_clock_is_utc_and_really_waits() -> None:
    """What production paces by: aware UTC instants (a quota minute is compared with Google's Retry-After) and
    a wait of the length asked for."""
    clock = SystemTime()
    now = clock.now()
    assert now.utcoffset() == timedelta(0) and abs(now - datetime.now(UTC)) < timedelta(seconds=5)
    started = time.monotonic()
    await clock.sleep(0.05)
    assert time.monotonic() - started >= 0.05
