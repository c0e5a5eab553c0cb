"""Sending one push message: encrypted for the device (RFC 8291, aes128gcm of RFC 8188) and signed with the
server's VAPID key (RFC 8292), by pywebpush (which uses http_ece and py_vapid), over an aiohttp session that only
connects to public addresses and never follows a redirect (a push endpoint that moves is gone)."""

from __future__ import annotations

import email.utils
import json
import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from plmail.domain.push import PushOutcome, PushResult, PushSubscriptionRow
from plmail.keys import VapidKey
from plmail.push.addresses import address_refused, literal_address

if TYPE_CHECKING:
    # aiohttp and pywebpush are imported when the first push goes out, not by every `plmail` command that builds
    # the services: they were an eighth of a command's start-up
    import aiohttp

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10.0
VAPID_LIFETIME_SECONDS = 12 * 3600  # RFC 8292 §2: no more than 24 hours
# A StateChange is worth a day: a phone that was off still learns that something moved (RFC 8030 §5.2).
TTL_SECONDS = 86400


class _NoRedirects:
    """What pywebpush calls on its aiohttp session, with redirects off and plmail's timeout."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def post(self, url: str, **kwargs: Any) -> aiohttp.ClientResponse:
        import aiohttp

        kwargs["timeout"] = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
        return await self.session.post(url, allow_redirects=False, **kwargs)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds or as an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def outcome_of(status: int | None, retry_after: str | None = None) -> PushResult:
    """RFC 8620 §7.2: 2xx delivered; 404/410 and any other 4xx are permanent (the subscription goes); 429 and 5xx
    are tried again later (issue 33: back off, honouring Retry-After); a redirect is not followed, so it is gone."""
    if status is not None and 200 <= status < 300:
        return PushResult(PushOutcome.DELIVERED, status)
    if status is None or status == 429 or status >= 500:
        return PushResult(PushOutcome.RETRY, status, retry_after_seconds(retry_after))
    return PushResult(PushOutcome.GONE, status)


class WebPushSender:
    def __init__(self, vapid: VapidKey, *, allow_loopback: bool) -> None:
        self.vapid = vapid
        self.allow_loopback = allow_loopback
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        import aiohttp

        from plmail.push.public_resolver import PublicOnlyResolver

        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(resolver=PublicOnlyResolver(allow_loopback=self.allow_loopback),
                                             limit=32)
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, subscription: PushSubscriptionRow, payload: dict[str, Any], *, contact: str,
                   urgency: str = "normal") -> PushResult:
        import aiohttp
        from pywebpush import WebPushException, webpush_async

        parts = urlsplit(subscription.url)
        host = parts.hostname or ""
        literal = literal_address(host)
        if literal is not None and address_refused(literal, allow_loopback=self.allow_loopback):
            return PushResult(PushOutcome.GONE, None, detail="the endpoint is in the server's own network")
        claims: dict[str, str | int] = {"sub": contact, "aud": f"{parts.scheme}://{parts.netloc}",
                                        "exp": int(datetime.now(UTC).timestamp()) + VAPID_LIFETIME_SECONDS}
        try:
            response = await webpush_async(
                subscription_info={"endpoint": subscription.url,
                                   "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth}},
                data=json.dumps(payload, separators=(",", ":")),
                vapid_private_key=self.vapid.vapid, vapid_claims=claims, content_encoding="aes128gcm",
                ttl=TTL_SECONDS, headers={"Urgency": urgency},
                aiohttp_session=cast(aiohttp.ClientSession, _NoRedirects(self._client())),
            )
        except WebPushException as exc:
            result = outcome_of(exc.status_code, exc.retry_after)
            log.info("push to subscription %s answered %s", subscription.id, exc.status_code)
            return result
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.info("push to subscription %s failed: %s", subscription.id, exc)
            return PushResult(PushOutcome.RETRY, None, detail=str(exc))
        status = getattr(response, "status", None)
        return outcome_of(status if isinstance(status, int) else None)
