"""Microsoft Graph change notifications: a subscription on every Microsoft account's messages, and the
endpoint Graph posts to.

Only with PLMAIL_PUBLIC_URL. Graph first checks the endpoint (`?validationToken=`, answered with the token as
text/plain within 10 seconds), then posts `{"value": [...]}` notifications carrying the subscription's id and the
`clientState` we gave it. Each subscription has its own random clientState; only its SHA-256 is stored, and a
notification is believed only when every item's clientState matches its subscription's. A subscription lasts
at most 10 080 minutes for messages; ours are asked for three days and renewed (PATCH) when less than two are
left, and created again when Graph has forgotten one (404).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.config import Settings
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.provider_push import ProviderPushRepository
from plmail.domain.enums import ProviderKind, QueueName
from plmail.domain.jobs import JobSpec
from plmail.domain.ports import PushAnswer, PushDelivery
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.errors import GraphNotFound

log = logging.getLogger(__name__)

GRAPH_PUSH_PATH = "/provider-push/graph"
SUBSCRIBED_RESOURCE = "me/messages"
CHANGE_TYPES = "created,updated,deleted"
SUBSCRIPTION_LIFETIME = timedelta(days=3)
RENEW_WHEN_LEFT = timedelta(days=2)
# Every 15 minutes: a new account gets its subscription soon; renewals happen when due.
GRAPH_RENEW_SUBSCRIPTIONS = JobSpec("graph_renew_subscriptions", QueueName.INGEST, cron="9,24,39,54 * * * *",
                                    timeout=900)

RequestSync = Callable[[int], Awaitable[None]]
Now = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _digest(client_state: str) -> str:
    return hashlib.sha256(client_state.encode()).hexdigest()


def _graph_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _parse_time(raw: str) -> datetime:
    return datetime.fromisoformat(raw.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class GraphPushConfig:
    notification_url: str

    @classmethod
    def from_settings(cls, settings: Settings | None) -> GraphPushConfig | None:
        if settings is None or not settings.public_url:
            return None
        return cls(settings.public_url + GRAPH_PUSH_PATH)


class GraphPushReceiver:
    """POST /provider-push/graph: the validation handshake and the change notifications."""

    name = "graph"

    def __init__(self, repo: ProviderPushRepository, request_sync: RequestSync) -> None:
        self.repo = repo
        self.request_sync = request_sync

    async def receive(self, delivery: PushDelivery) -> PushAnswer:
        token = delivery.query.get("validationToken")
        if token is not None:
            # Graph's handshake: the token back, URL-decoded, as text/plain (it refuses anything else).
            return PushAnswer(200, token)
        try:
            items = json.loads(delivery.body)["value"]
            if not isinstance(items, list) or not items:
                raise ValueError("no notifications")
        except (ValueError, KeyError, TypeError):
            return PushAnswer(400, "Graph change notifications are a JSON object with a non-empty value list.")
        accounts: set[int] = set()
        for item in items:
            account_id = await self._verified(item)
            if account_id is None:
                return PushAnswer(403, "A notification did not come from one of our subscriptions.")
            accounts.add(account_id)
        for account_id in sorted(accounts):
            await self.request_sync(account_id)
        return PushAnswer(202)

    async def _verified(self, item: Any) -> int | None:
        if not isinstance(item, dict):
            return None
        subscription_id, client_state = item.get("subscriptionId"), item.get("clientState")
        if not isinstance(subscription_id, str) or not isinstance(client_state, str):
            return None
        found = await self.repo.by_subscription(ProviderKind.GRAPH, subscription_id)
        if found is None:
            log.warning("Graph notification for unknown subscription %s refused", subscription_id)
            return None
        account_id, state = found
        if not hmac.compare_digest(_digest(client_state), str(state.get("client_state_sha256") or "")):
            log.warning("Graph notification for account %s with a wrong clientState refused", account_id)
            return None
        return account_id


class GraphSubscriptions:
    """Keeps one change-notification subscription on every synced Microsoft account's messages."""

    def __init__(self, config: GraphPushConfig, repo: ProviderPushRepository, admin: AccountAdminRepository,
                 client: GraphClient, now: Now = _utc_now) -> None:
        self.config = config
        self.repo = repo
        self.admin = admin
        self.client = client
        self.now = now

    async def ensure(self, account_id: int) -> str:
        """Create, renew or leave the account's subscription; returns what was done."""
        state = await self.repo.state(account_id)
        record = await self.admin.for_job(account_id)
        if record is None:
            return "gone"
        account = record.account
        usable = state is not None and state.get("notification_url") == self.config.notification_url \
            and isinstance(state.get("subscription_id"), str)
        if state is not None and usable:
            left = _parse_time(str(state["expiration"])) - self.now()
            if left > RENEW_WHEN_LEFT:
                return "kept"
            if left > timedelta(0):
                expiration = self.now() + SUBSCRIPTION_LIFETIME
                try:
                    response = await self.client.request(
                        account, "PATCH", f"subscriptions/{state['subscription_id']}",
                        json={"expirationDateTime": _graph_time(expiration)})
                except GraphNotFound:
                    log.info("Graph forgot the subscription of account %s; subscribing again", account_id)
                else:
                    renewed = response.json().get("expirationDateTime") or _graph_time(expiration)
                    await self.repo.save(account_id, {**state, "expiration": _parse_time(renewed).isoformat()})
                    return "renewed"
        return await self._create(account_id, account)

    async def _create(self, account_id: int, account: Any) -> str:
        client_state = secrets.token_urlsafe(32)  # Graph allows 128 characters
        expiration = self.now() + SUBSCRIPTION_LIFETIME
        response = await self.client.request(account, "POST", "subscriptions", json={
            "changeType": CHANGE_TYPES, "notificationUrl": self.config.notification_url,
            "resource": SUBSCRIBED_RESOURCE, "expirationDateTime": _graph_time(expiration),
            "clientState": client_state})
        data = response.json()
        await self.repo.save(account_id, {
            "subscription_id": str(data["id"]), "client_state_sha256": _digest(client_state),
            "notification_url": self.config.notification_url,
            "expiration": _parse_time(str(data.get("expirationDateTime") or _graph_time(expiration))).isoformat()})
        return "created"

    async def renew_all(self) -> int:
        """Every 15 minutes: subscribe new accounts, renew what expires within two days, re-create what Graph forgot."""
        changed = 0
        for account_id in await self.repo.watchable_ids(ProviderKind.GRAPH):
            try:
                changed += await self.ensure(account_id) in ("created", "renewed")
            except Exception as exc:  # one account's refusal must not leave the others without notifications
                log.warning("Graph subscription for account %s failed: %s", account_id, exc)
        return changed
