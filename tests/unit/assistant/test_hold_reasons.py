"""ClassificationHold: "eine Liste von Gründen, nicht zurückzuhalten" — each reason on its own keeps mail from
waiting, and mail waits only when none applies."""

from __future__ import annotations

import dataclasses

import pytest

from plmail.assistant.hold import ClassificationHold, NoHold, reasons_not_to_hold
from plmail.domain.ingest import HoldQuestion

WAITS = HoldQuestion(holding_enabled=True, user_sorts_by_rules=False, live=True, recent=True, own_sent_copy=False,
                     verdict_could_decide=True)

CASES = [
    ({"holding_enabled": False}, NoHold.SWITCHED_OFF),
    ({"user_sorts_by_rules": True}, NoHold.USER_SORTS_BY_RULES),
    ({"live": False}, NoHold.IMPORT),
    ({"recent": False}, NoHold.OLD),
    ({"own_sent_copy": True}, NoHold.OWN_SENT_COPY),
    ({"verdict_could_decide": False}, NoHold.ALREADY_DECIDED),
]


def test_mail_waits_when_no_reason_applies() -> None:
    assert reasons_not_to_hold(WAITS) == []
    assert ClassificationHold(settings=None).should_hold(WAITS) is True  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "reason"), CASES, ids=[r.value for _, r in CASES])
def test_each_reason_on_its_own_keeps_mail_from_waiting(change: dict[str, bool], reason: NoHold) -> None:
    question = dataclasses.replace(WAITS, **change)
    assert reasons_not_to_hold(question) == [reason]
    assert ClassificationHold(settings=None).should_hold(question) is False  # type: ignore[arg-type]


def test_every_reason_is_listed_in_order() -> None:
    none_apply = HoldQuestion(holding_enabled=False, user_sorts_by_rules=True, live=False, recent=False,
                              own_sent_copy=True, verdict_could_decide=False)
    assert reasons_not_to_hold(none_apply) == [r for _, r in CASES]
    assert [r.value for _, r in CASES] == ["switched_off", "rules_only", "import", "old", "own_sent_copy",
                                           "already_decided"]
