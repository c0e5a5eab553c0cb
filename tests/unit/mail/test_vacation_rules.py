"""The automatic reply's rules (RFC 3834 §2, issue 30) on facts a provider can give that Dovecot cannot: Gmail keeps
one message under Inbox and Spam at once; the dates' minute boundaries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plmail.domain.outgoing import IncomingMail, VacationSettings
from plmail.mail.vacation import in_window, not_answered_because

NOW = datetime(2026, 12, 6, 12, 0, 30, tzinfo=UTC)
OWN = {"me@example.org"}


def _mail(**fields: object) -> IncomingMail:
    values: dict[str, object] = {"user_id": 1, "account_id": 1, "sender": "carl@example.net", "headers": {},
                                 "sent_at": NOW, "received_at": NOW, "recipients": ("me@example.org",),
                                 "is_draft": False, "in_inbox": True, "in_spam": False}
    values.update(fields)
    return IncomingMail(**values)  # type: ignore[arg-type]


def test_a_person_writing_to_the_user_is_answered_and_everything_else_is_not() -> None:
    assert not_answered_because(_mail(), OWN, NOW) is None
    assert not_answered_because(_mail(in_spam=True), OWN, NOW) == "spam"  # Gmail: Inbox and Spam at once
    assert not_answered_because(_mail(in_inbox=False), OWN, NOW) == "not in the Inbox"
    assert not_answered_because(_mail(is_draft=True), OWN, NOW) == "a draft"
    assert not_answered_because(_mail(sender=None), OWN, NOW) == "no sender"
    assert not_answered_because(_mail(sender="ME@example.org"), OWN, NOW) == "one of the user's own addresses"
    assert not_answered_because(_mail(recipients=()), OWN, NOW) == "not addressed to the user"
    assert not_answered_because(_mail(sent_at=NOW - timedelta(days=4, seconds=1)), OWN, NOW) == "old mail"
    assert not_answered_because(_mail(sent_at=NOW - timedelta(days=3, hours=23)), OWN, NOW) is None
    assert not_answered_because(_mail(sent_at=None, received_at=None), OWN, NOW) == "old mail"
    assert not_answered_because(_mail(headers={"X-Auto-Response-Suppress": "All"}), OWN, NOW) == \
        "the sender asked for no automatic replies"
    assert not_answered_because(_mail(headers={"Return-Path": "<>"}), OWN, NOW) == "a bounce"
    assert not_answered_because(_mail(headers={"Auto-Submitted": "No; comment"}), OWN, NOW) is None
    assert not_answered_because(_mail(headers={"list-archive": "<https://lists.example/>"}), OWN, NOW) == \
        "mail from a list"


def test_the_dates_hold_to_the_minute() -> None:
    away = VacationSettings(True, datetime(2026, 12, 6, 10, 0, 45, tzinfo=UTC),
                            datetime(2026, 12, 6, 12, 0, 10, tzinfo=UTC))
    assert not in_window(away, datetime(2026, 12, 6, 9, 59, 59, tzinfo=UTC))
    assert in_window(away, datetime(2026, 12, 6, 10, 0, 0, tzinfo=UTC))  # the minute it starts counts whole
    assert in_window(away, datetime(2026, 12, 6, 11, 59, 59, tzinfo=UTC))
    assert not in_window(away, datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC))  # the minute it ends is over
    assert not in_window(VacationSettings(False), NOW)
    assert in_window(VacationSettings(True), NOW)
