"""A user with a local account, an app password and helpers to speak raw JMAP over the ASGI app."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from plmail.config import Settings
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.ingest import IngestedMessage, PostIngestResult
from plmail.domain.models import User
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

CORE = "urn:ietf:params:jmap:core"
MAIL = "urn:ietf:params:jmap:mail"
USING = [CORE, MAIL]


@dataclass
class JmapBox:
    services: Services
    http: httpx.AsyncClient
    user: User
    account_id: int
    token: str
    roles: dict[LabelRole, int]

    @property
    def account(self) -> str:
        return str(self.account_id)

    @property
    def primary(self) -> str:
        """The user's unified account: the primary account for mail, submission and calendars."""
        return f"u{self.user.id}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def message(self, raw: bytes, *, role: LabelRole = LabelRole.INBOX, **facts: object) -> IngestedMessage:
        facts.setdefault("label_ids", (self.roles[role],))
        return parse_message(raw, account_id=self.account_id, **facts)

    async def ingest(self, *raws: bytes, **facts: object) -> PostIngestResult:
        return await self.services.pipeline.ingest([self.message(raw, **facts) for raw in raws])

    async def request(self, calls: Sequence[Sequence[Any]], *, using: Sequence[str] = USING,
                      token: str | None = None, **extra: Any) -> httpx.Response:
        body = {"using": list(using), "methodCalls": [list(c) for c in calls], **extra}
        return await self.http.post("/jmap/api", json=body,
                                    headers={"Authorization": f"Bearer {token or self.token}"})

    async def call(self, name: str, arguments: dict[str, Any], *, using: Sequence[str] = USING
                   ) -> dict[str, Any]:
        """One method call; returns its arguments, asserting it did not fail."""
        response = await self.request([[name, {"accountId": self.account, **arguments}, "c0"]], using=using)
        assert response.status_code == 200, response.text
        result_name, result, _ = response.json()["methodResponses"][0]
        assert result_name == name, result
        return dict(result)

    async def error(self, name: str, arguments: dict[str, Any], *, using: Sequence[str] = USING) -> dict[str, Any]:
        response = await self.request([[name, arguments, "c0"]], using=using)
        assert response.status_code == 200, response.text
        result_name, result, _ = response.json()["methodResponses"][0]
        assert result_name == "error", result
        return dict(result)

    async def mailbox_id(self, role: LabelRole) -> str:
        listed = await self.call("Mailbox/get", {"ids": None})
        found = [m["id"] for m in listed["list"] if m["role"] == {"spam": "junk"}.get(role.value, role.value)]
        assert found, listed
        return str(found[0])

    async def state(self, kind: str) -> str:
        return str((await self.call(f"{kind}/get", {"ids": []}))["state"])


async def make_box(services: Services, http: httpx.AsyncClient, email: str = "reader@example.org") -> JmapBox:
    user = await services.users.create_user(email, "correct horse", display_name="Rea Der")
    account_id = await account_rows(services).create(
        user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Archive", email=email,
        settings={"aliases": [f"alias.{email}"]},
    )
    token = (await services.app_passwords.create(user.id, "Phone")).token
    return JmapBox(services, http, user, account_id, token, await services.labels.role_ids(user.id))


@pytest.fixture
async def box(services: Services, client: httpx.AsyncClient) -> JmapBox:
    return await make_box(services, client)


@pytest.fixture
def live(settings: Settings, database_url: str) -> Iterator[ServeProcess]:
    """A real `plmail serve` (pages and JMAP, no workers) on the test database and data directory."""
    server = ServeProcess(settings.data_dir, database_url=database_url, args=["--queues", ""]).start()
    try:
        server.wait_healthy()
        yield server
    finally:
        server.terminate()


@dataclass
class SseEvent:
    event: str
    data: dict[str, Any]
    id: str | None


class EventReader:
    """Reads an EventSource response in a task of its own, so waiting with a timeout never cuts a stream."""

    def __init__(self, response: httpx.Response) -> None:
        self.events: asyncio.Queue[SseEvent] = asyncio.Queue()
        self.task = asyncio.create_task(self._read(response))

    async def _read(self, response: httpx.Response) -> None:
        fields: dict[str, str] = {}
        try:
            async for line in response.aiter_lines():
                if line:
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
                elif "data" in fields:
                    await self.events.put(SseEvent(fields.get("event", "message"), json.loads(fields["data"]),
                                                   fields.get("id")))
                    fields = {}
        except httpx.HTTPError:
            pass  # the connection went away; the test sees the stream as closed
        finally:
            await self.events.put(SseEvent("closed", {}, None))  # the server ended the stream

    async def next(self, timeout: float) -> SseEvent | None:
        try:
            return await asyncio.wait_for(self.events.get(), timeout)
        except TimeoutError:
            return None

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
            await self.task
