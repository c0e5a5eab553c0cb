"""Gmail push: `users.watch` on every Gmail account, and the endpoint Pub/Sub delivers the notifications to.

Only with PLMAIL_PUBLIC_URL, a Pub/Sub topic and the push subscription's service account. Pub/Sub signs each
push with a Google OIDC token; it is believed only when its signature checks against Google's published keys,
its issuer is accounts.google.com, its audience ours and its email the configured service account. A
notification names the mailbox (`emailAddress`) and nothing else: it asks for that account's sync, and the
sync reads what changed with the account's own token.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import jwt

from plmail.config import Settings
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.provider_push import ProviderPushRepository
from plmail.domain.enums import ProviderKind, QueueName
from plmail.domain.jobs import JobSpec
from plmail.domain.ports import PushAnswer, PushDelivery
from plmail.providers.gmail.client import GmailApi
from plmail.providers.gmail.pacer import GmailTime

log = logging.getLogger(__name__)

GMAIL_PUSH_PATH = "/provider-push/gmail"
GOOGLE_JWKS_URL = "https://www.googleapis.com/oauth2/v3/certs"
GOOGLE_ISSUERS = ("accounts.google.com", "https://accounts.google.com")
# Google: a watch lasts 7 days and "we recommend calling watch once per day".
WATCH_RENEW_AFTER = timedelta(days=1)
# Every 15 minutes, so a new account is watched soon; each watch is renewed once a day.
GMAIL_RENEW_WATCHES = JobSpec("gmail_renew_watches", QueueName.INGEST, cron="4,19,34,49 * * * *", timeout=900)
_KEYS_TTL = 3600.0  # Google rotates its signing keys over days; an unknown key id fetches them again sooner
_KEYS_REFETCH_MIN = 30.0

RequestSync = Callable[[int], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class GmailPushConfig:
    endpoint: str
    topic: str
    audience: str
    service_account: str
    jwks_url: str

    @classmethod
    def from_settings(cls, settings: Settings | None) -> GmailPushConfig | None:
        """None unless the public URL, the topic and the service account are all set."""
        if settings is None or not settings.public_url or not settings.gmail_pubsub_topic \
                or not settings.gmail_push_service_account:
            return None
        endpoint = settings.public_url + GMAIL_PUSH_PATH
        jwks = settings.google_jwks_url or (f"{settings.google_base_url.rstrip('/')}/oauth2/v3/certs"
                                            if settings.google_base_url else GOOGLE_JWKS_URL)
        return cls(endpoint, settings.gmail_pubsub_topic, settings.gmail_push_audience or endpoint,
                   settings.gmail_push_service_account, jwks)


class GoogleSigningKeys:
    """Google's published JWKS, fetched once an hour and again (at most every 30 s) for an unknown key id."""

    def __init__(self, url: str, http: httpx.AsyncClient) -> None:
        self.url = url
        self.http = http
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at = -_KEYS_TTL
        self._lock = asyncio.Lock()

    async def key(self, kid: str) -> jwt.PyJWK | None:
        if self._stale(kid):
            async with self._lock:
                if self._stale(kid):  # another request may have fetched them while we waited
                    await self._fetch()
        return self._keys.get(kid)

    def _stale(self, kid: str) -> bool:
        age = time.monotonic() - self._fetched_at
        return age > _KEYS_TTL or (kid not in self._keys and age > _KEYS_REFETCH_MIN)

    async def _fetch(self) -> None:
        try:
            response = await self.http.get(self.url)
            response.raise_for_status()
            keys = jwt.PyJWKSet.from_dict(response.json()).keys
        except (httpx.HTTPError, jwt.PyJWTError, ValueError) as exc:
            log.warning("Google's signing keys could not be read from %s: %s", self.url, exc)
            return
        self._keys = {key.key_id: key for key in keys if key.key_id}
        self._fetched_at = time.monotonic()


class InvalidPush(Exception):
    """A push whose token is not Google's for our subscription."""


class GmailPushVerifier:
    def __init__(self, config: GmailPushConfig, keys: GoogleSigningKeys) -> None:
        self.config = config
        self.keys = keys

    async def verify(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidPush(f"not a JWT: {exc}") from None
        if header.get("alg") != "RS256":
            raise InvalidPush(f"signed with {header.get('alg')!r}, not RS256")
        key = await self.keys.key(str(header.get("kid") or ""))
        if key is None:
            raise InvalidPush(f"signed with an unknown key {header.get('kid')!r}")
        try:
            claims: dict[str, Any] = jwt.decode(
                token, key, algorithms=["RS256"], audience=self.config.audience, issuer=GOOGLE_ISSUERS,
                options={"require": ["exp", "iat", "iss", "aud", "email"]}, leeway=30)
        except jwt.PyJWTError as exc:
            raise InvalidPush(str(exc)) from None
        if claims.get("email") != self.config.service_account or claims.get("email_verified") is not True:
            raise InvalidPush(f"signed for {claims.get('email')!r}, not the push subscription's service account")
        return claims


def notified_address(body: bytes) -> str | None:
    """The mailbox a Pub/Sub push names: `message.data` is base64 JSON `{"emailAddress", "historyId"}`."""
    try:
        envelope = json.loads(body)
        data = json.loads(base64.b64decode(envelope["message"]["data"], validate=False))
        address = data["emailAddress"]
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None
    return address if isinstance(address, str) and "@" in address else None


class GmailPushReceiver:
    """POST /provider-push/gmail: Pub/Sub's push with its OIDC token."""

    name = "gmail"

    def __init__(self, verifier: GmailPushVerifier, repo: ProviderPushRepository, request_sync: RequestSync) -> None:
        self.verifier = verifier
        self.repo = repo
        self.request_sync = request_sync

    async def receive(self, delivery: PushDelivery) -> PushAnswer:
        header = delivery.headers.get("authorization", "")
        if not header.lower().startswith("bearer "):
            return PushAnswer(401, "A Pub/Sub push carries its token in the Authorization header.")
        try:
            await self.verifier.verify(header[7:].strip())
        except InvalidPush as exc:
            log.warning("Gmail push refused: %s", exc)
            return PushAnswer(403, "This push was not signed for this endpoint.")
        address = notified_address(delivery.body)
        if address is None:
            return PushAnswer(400, "The push names no mailbox.")
        for account_id in await self.repo.watched_by_address(ProviderKind.GMAIL, address):
            await self.request_sync(account_id)
        return PushAnswer(204)  # acknowledged; an address we do not watch is dropped, not redelivered


class GmailWatches:
    """Keeps a users.watch on every synced Gmail account, renewed once a day."""

    def __init__(self, config: GmailPushConfig, repo: ProviderPushRepository, admin: AccountAdminRepository,
                 api: GmailApi, clock: GmailTime) -> None:
        self.config = config
        self.repo = repo
        self.admin = admin
        self.api = api
        self.clock = clock

    def due(self, state: dict[str, Any] | None) -> bool:
        if not state or state.get("topic") != self.config.topic:
            return True
        now = self.clock.now()
        renewed = datetime.fromisoformat(str(state.get("renewed_at")))
        expiration = datetime.fromisoformat(str(state.get("expiration")))
        return now - renewed >= WATCH_RENEW_AFTER or expiration <= now

    async def ensure(self, account_id: int) -> bool:
        """Watch the account's mailbox if it has no watch or its watch is a day old; returns whether it called."""
        if not self.due(await self.repo.state(account_id)):
            return False
        record = await self.admin.for_job(account_id)
        if record is None:
            return False
        session = await self.api.session(record.account)
        watch = await session.watch(self.config.topic)
        await self.repo.save(account_id, {"topic": self.config.topic, "history_id": watch.history_id,
                                          "renewed_at": self.clock.now().isoformat(),
                                          "expiration": watch.expiration.isoformat()})
        return True

    async def renew_all(self) -> int:
        """Every 15 minutes: watch new accounts, and renew each watch once it is a day old."""
        renewed = 0
        for account_id in await self.repo.watchable_ids(ProviderKind.GMAIL):
            try:
                renewed += await self.ensure(account_id)
            except Exception as exc:  # one account's refusal must not leave the others unwatched
                log.warning("Gmail watch for account %s failed: %s", account_id, exc)
        return renewed
