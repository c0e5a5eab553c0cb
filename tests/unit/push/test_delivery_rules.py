"""What a push service's answer means (RFC 8620 §7.2, RFC 8030, RFC 9110 Retry-After), which addresses a push
may go to, and the limits on a subscription's keys and expiry (RFC 8291 §3, issue 33's seven days)."""

from __future__ import annotations

import base64
import ipaddress
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from plmail.domain.errors import ValidationError
from plmail.domain.push import PushOutcome
from plmail.push.addresses import address_refused
from plmail.push.dispatcher import backoff_seconds, state_change
from plmail.push.sender import outcome_of, retry_after_seconds
from plmail.push.subscriptions import capped_expiry, check_keys


@pytest.mark.parametrize(("status", "outcome"), [
    (201, PushOutcome.DELIVERED), (202, PushOutcome.DELIVERED), (200, PushOutcome.DELIVERED),
    (404, PushOutcome.GONE), (410, PushOutcome.GONE),  # the subscription is gone (RFC 8030 §7.3)
    (400, PushOutcome.GONE), (403, PushOutcome.GONE), (413, PushOutcome.GONE),  # "any other 4xx": permanent
    (301, PushOutcome.GONE), (307, PushOutcome.GONE),  # redirects are not followed
    (429, PushOutcome.RETRY), (500, PushOutcome.RETRY), (503, PushOutcome.RETRY), (None, PushOutcome.RETRY),
])
def test_what_an_answer_means(status: int | None, outcome: PushOutcome) -> None:
    assert outcome_of(status).outcome is outcome


def test_retry_after_as_seconds_or_as_a_date() -> None:
    assert retry_after_seconds("120") == 120.0
    now = datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC).timestamp()
    assert retry_after_seconds("Sun, 06 Dec 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Sun, 06 Dec 2026 11:00:00 GMT", now) == 0.0  # in the past: at once
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    assert outcome_of(429, "7").retry_after == 7.0


def test_backoff_honours_retry_after_and_otherwise_doubles_up_to_an_hour() -> None:
    assert backoff_seconds(0, 7.0) == 7.0
    assert backoff_seconds(0, 0.0) == 1.0
    assert backoff_seconds(5, 10_000_000.0) == 3600.0
    assert [backoff_seconds(n, None) for n in range(4)] == [2.0, 4.0, 8.0, 16.0]
    assert backoff_seconds(40, None) == 3600.0


@pytest.mark.parametrize("address", ["10.1.2.3", "172.16.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1",
                                     "0.0.0.0", "224.0.0.1", "fd00::1", "fe80::1", "::", "::ffff:10.0.0.1",  # noqa: S104
                                     "127.0.0.1", "::1", "240.0.0.1"])
def test_private_and_special_addresses_are_refused(address: str) -> None:
    assert address_refused(ipaddress.ip_address(address), allow_loopback=False)


def test_loopback_only_with_the_test_setting_and_public_addresses_always() -> None:
    assert not address_refused(ipaddress.ip_address("127.0.0.1"), allow_loopback=True)
    assert not address_refused(ipaddress.ip_address("::1"), allow_loopback=True)
    assert address_refused(ipaddress.ip_address("10.0.0.1"), allow_loopback=True)
    assert not address_refused(ipaddress.ip_address("8.8.8.8"), allow_loopback=False)
    assert not address_refused(ipaddress.ip_address("2001:4860:4860::8888"), allow_loopback=False)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_keys_must_be_a_p256_point_and_a_16_byte_secret() -> None:
    point = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    check_keys(_b64(point), _b64(b"0123456789abcdef"))
    for p256dh, auth in [(_b64(point[:33]), _b64(b"0123456789abcdef")), (_b64(b"\x04" + b"\x01" * 64),
                                                                         _b64(b"0123456789abcdef")),
                         (_b64(point), _b64(b"short")), ("not base64!", _b64(b"0123456789abcdef"))]:
        with pytest.raises(ValidationError) as refused:
            check_keys(p256dh, auth)
        assert refused.value.field == "keys"


def test_expiry_is_capped_at_seven_days_and_must_lie_ahead() -> None:
    now = datetime(2026, 12, 6, tzinfo=UTC)
    assert capped_expiry(None, now) == now + timedelta(days=7)
    assert capped_expiry(now + timedelta(days=30), now) == now + timedelta(days=7)
    assert capped_expiry(now + timedelta(hours=2), now) == now + timedelta(hours=2)
    with pytest.raises(ValidationError):
        capped_expiry(now - timedelta(seconds=1), now)


def test_state_change_groups_states_by_account() -> None:
    assert state_change({"u1/Email": "9", "u1/Mailbox": "4", "12/Email": "7"}) == {
        "@type": "StateChange", "changed": {"12": {"Email": "7"}, "u1": {"Email": "9", "Mailbox": "4"}}}
