"""HeldMailReleaser, the one end of holding: what it tells, what it announces, and what it counts."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from plmail.db.repos.assistant import ReleasedMessage
from tests.integration.assistant.conftest import Desk


class _Listener:
    def __init__(self, name: str, *, fails: bool = False) -> None:
        self.name = name
        self.fails = fails
        self.told: list[list[int]] = []

    async def after_release(self, released: Sequence[ReleasedMessage]) -> None:
        self.told.append([m.id for m in released])
        if self.fails:
            raise RuntimeError("this listener is broken")


async def test_a_release_is_announced_and_told_and_a_broken_listener_costs_only_itself(
    desk: Desk, caplog: pytest.LogCaptureFixture,
) -> None:
    services = desk.services
    releaser = services.assistant.releaser
    broken, working = _Listener("broken", fails=True), _Listener("working")
    releaser.register(broken)
    releaser.register(working)
    stored = await desk.arrive_many([{"subject": f"held {n}"} for n in range(2)])
    ids = [m.id for m in stored]
    await services.db.execute("UPDATE message SET category_held_at = now() WHERE id = ANY($1::bigint[])", ids)
    assert await releaser.release([]) == 0
    with caplog.at_level(logging.ERROR, logger="plmail.assistant.release"):
        assert await releaser.release(ids) == 2
    assert broken.told == [ids] and working.told == [ids]
    assert [r.getMessage() for r in caplog.records] == ["release listener broken failed"]
    changes = await services.db.fetch(
        "SELECT entity_id FROM jmap_change_log WHERE object_type = 'Email' AND change_type = 'updated' "
        "AND account_id = $1", desk.account_id)
    assert {str(i) for i in ids} <= {r["entity_id"] for r in changes}
    assert await releaser.release(ids) == 0 and working.told == [ids]  # nothing held any more: nobody told


async def test_the_safety_net_counts_every_page_it_releases(desk: Desk) -> None:
    services = desk.services
    stored = await desk.arrive_many([{"subject": f"stuck {n}"} for n in range(1001)])  # more than one page
    await services.db.execute("UPDATE message SET category_held_at = now() - interval '10 minutes' "
                              "WHERE id = ANY($1::bigint[])", [m.id for m in stored])
    assert await services.assistant.releaser.release_overdue(60) == 1001
