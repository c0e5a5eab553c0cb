"""A Microsoft 365 account on the fake Graph server, connected the way a user connects one.

`settings` points Microsoft's hosts at the fake, so the app's own OAuth client (consent with PKCE, token
refresh) and Graph client talk to it over HTTP. `graph_fake` can be parametrized indirectly with
`{"immutable_ids": False}` for a private outlook.com mailbox, whose ids change when mail moves.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from plmail.config import Settings
from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.models import User
from plmail.domain.providers import PageRun
from plmail.mail.mime import message_ids
from plmail.providers.oauth_accounts import OAuthServices
from plmail.services import Services
from tests.support.fakes import FakeServer, GraphFake, GraphMailbox, GraphMessage, rfc822

LONG_AGO = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
WELL_KNOWN_ROLES = {"inbox": "inbox", "sentitems": "sent", "drafts": "drafts", "deleteditems": "trash",
                    "junkemail": "spam", "archive": "archive"}


@pytest.fixture
def graph_fake(request: pytest.FixtureRequest) -> GraphFake:
    options: dict[str, Any] = getattr(request, "param", None) or {}
    return GraphFake(**options)


@pytest.fixture
async def graph_server(graph_fake: GraphFake) -> AsyncIterator[FakeServer[GraphFake]]:
    async with FakeServer(graph_fake) as server:
        yield server


@pytest.fixture
def settings(settings: Settings, graph_server: FakeServer[GraphFake]) -> Settings:
    return dataclasses.replace(settings, microsoft_base_url=graph_server.url,
                               microsoft_client_id=graph_server.app.client_id,
                               microsoft_client_secret=graph_server.app.client_secret)


def old_message(mailbox: GraphMailbox, folder: str, index: int, *, subject: str | None = None,
                **options: Any) -> GraphMessage:
    """A message received long ago (history, not new mail), one minute per index apart."""
    raw = rfc822(subject or f"{folder} message {index}", message_id=f"<{folder}-{index}@example.org>",
                 date=LONG_AGO + timedelta(minutes=index))
    return mailbox.add_message(raw, folder, received=LONG_AGO + timedelta(minutes=index), **options)


def rfc_id(message: GraphMessage) -> str:
    found = message_ids(message.internet_message_id)
    assert found, message.internet_message_id
    return found[0]


@dataclass
class GraphSetup:
    services: Services
    user: User
    server: FakeServer[GraphFake]
    account_id: int

    @property
    def fake(self) -> GraphFake:
        return self.server.app

    @property
    def mailbox(self) -> GraphMailbox:
        return self.server.app.mailbox

    async def sync(self) -> list[int]:
        return await self.services.sync.run(self.account_id)

    async def import_page(self) -> PageRun:
        run = await self.services.importer.run_page(self.account_id, chain=False)
        if run.page.wait_until is not None:  # the job would be scheduled for then
            await asyncio.sleep(max((run.page.wait_until - datetime.now(UTC)).total_seconds(), 0.0))
        return run

    async def import_all(self, limit: int = 500) -> list[PageRun]:
        runs: list[PageRun] = []
        while True:
            progress = await self.services.importer.progress(self.account_id)
            if progress is None or not progress.importing:
                return runs
            runs.append(await self.import_page())
            assert len(runs) < limit, "the import does not finish"

    async def sync_all(self) -> None:
        await self.sync()
        await self.import_all()
        await self.sync()  # held removals are judged once every folder has answered

    async def propagate(self) -> int:
        return await self.services.propagation.run(self.account_id)

    async def state(self) -> dict[str, Any]:
        value = await self.services.db.fetchval("SELECT sync_state FROM account WHERE id = $1", self.account_id)
        loaded = json.loads(value) if isinstance(value, str) else value
        assert isinstance(loaded, dict)
        return loaded

    async def importing(self) -> bool:
        return await self.services.import_state.is_importing(ProviderKind.GRAPH, self.account_id)

    def folder_name(self, folder_id: str) -> str:
        """The fake's folder as a label name: the role for a well-known folder, else its path."""
        folder = self.mailbox.folders[folder_id]
        if folder.well_known in WELL_KNOWN_ROLES:
            return WELL_KNOWN_ROLES[folder.well_known]
        names: list[str] = []
        current = folder
        while current.parent_id is not None and current.well_known != "msgfolderroot":
            parent = self.mailbox.folders[current.parent_id]
            if parent.well_known in WELL_KNOWN_ROLES:
                names.append(current.display_name)
                names.append(WELL_KNOWN_ROLES[parent.well_known])
                break
            names.append(current.display_name)
            current = parent
        return "/".join(reversed(names))

    def server_view(self) -> dict[str, tuple[str, bool, bool, frozenset[str]]]:
        """Message-ID -> (folder as a label name, read, flagged, categories) at the fake."""
        with self.fake.lock:
            return {rfc_id(m): (self.folder_name(m.folder_id), m.is_read, m.flag_status == "flagged",
                                frozenset(m.categories))
                    for m in self.mailbox.messages.values() if self.mailbox.folders[m.folder_id].well_known != "outbox"}

    async def stored_view(self) -> dict[str, tuple[str, bool, bool, frozenset[str]]]:
        """The same, as plmail holds it: the message's folder label, seen, starred, its category labels."""
        rows = await self.services.db.fetch(
            """WITH RECURSIVE paths AS (
                   SELECT id, coalesce(role, name) AS path, parent_id FROM label WHERE parent_id IS NULL
                   UNION ALL
                   SELECT l.id, p.path || '/' || l.name, l.parent_id FROM label l JOIN paths p ON p.id = l.parent_id)
               SELECT m.rfc_message_id, m.seen_at IS NOT NULL AS seen, m.starred_at IS NOT NULL AS starred,
                      array_agg(p.path) FILTER (WHERE b.provider_key IS NOT NULL) AS folders,
                      array_agg(b.provider_tag) FILTER (WHERE b.provider_tag IS NOT NULL
                                                         AND b.provider_key IS NULL) AS categories
                 FROM message m
                 LEFT JOIN message_label ml ON ml.message_id = m.id
                 LEFT JOIN label_binding b ON b.label_id = ml.label_id AND b.account_id = m.account_id
                 LEFT JOIN paths p ON p.id = ml.label_id
                WHERE m.account_id = $1
                GROUP BY m.id""",
            self.account_id,
        )
        view: dict[str, tuple[str, bool, bool, frozenset[str]]] = {}
        for r in rows:
            folders = r["folders"] or []
            assert len(folders) == 1, f"{r['rfc_message_id']} is in {folders}"
            assert r["rfc_message_id"] not in view, f"{r['rfc_message_id']} is stored twice"
            view[r["rfc_message_id"]] = (folders[0], r["seen"], r["starred"], frozenset(r["categories"] or []))
        return view

    async def assert_matches_server(self) -> None:
        stored = await self.stored_view()
        server = self.server_view()
        assert stored.keys() == server.keys(), (sorted(stored.keys() - server.keys()),
                                                sorted(server.keys() - stored.keys()))
        assert stored == server
        graph_ids = {r["graph_id"] for r in await self.services.db.fetch(
            "SELECT provider_key AS graph_id FROM message WHERE account_id = $1", self.account_id)}
        with self.fake.lock:
            assert graph_ids == {m.id for m in self.mailbox.messages.values()
                                 if self.mailbox.folders[m.folder_id].well_known != "outbox"}

    async def row(self, rfc: str) -> dict[str, Any]:
        row = await self.services.db.fetchrow(
            "SELECT m.id, m.provider_key AS graph_id, g.folder_id AS graph_folder_id, m.thread_id, m.raw_path "
            "FROM message m LEFT JOIN graph_message g ON g.message_id = m.id "
            "WHERE m.account_id = $1 AND m.rfc_message_id = $2", self.account_id, rfc)
        assert row is not None, f"{rfc} is not stored"
        return dict(row)

    async def labels_of(self, rfc: str) -> set[str]:
        rows = await self.services.db.fetch(
            """SELECT coalesce(l.role, l.name) AS n FROM message m JOIN message_label ml ON ml.message_id = m.id
                 JOIN label l ON l.id = ml.label_id WHERE m.account_id = $1 AND m.rfc_message_id = $2""",
            self.account_id, rfc)
        return {r["n"] for r in rows}

    async def role_label(self, role: LabelRole) -> int:
        return (await self.services.labels.role_ids(self.user.id))[role]

    def delta_calls(self, folder: str | None = None) -> list[Any]:
        calls = [c for c in self.fake.calls if c.path.lower().endswith("/messages/delta")]
        if folder is not None:
            folder_id = self.mailbox.folder(folder).id
            calls = [c for c in calls if folder_id in c.path]
        return calls


async def connect(services: Services, user: User, server: FakeServer[GraphFake], login: str) -> int:
    """Consent at the fake's Microsoft identity platform (PKCE), as the web flow does, and connect."""
    oauth = services.providers.get(OAuthServices)
    start = await oauth.flow.start(OAuthProvider.MICROSOFT, "http://plmail.test/accounts/oauth/callback",
                                   login_hint=login)
    async with httpx.AsyncClient() as http:
        response = await http.get(start.url, follow_redirects=False)
    assert response.status_code == 302, response.text
    params = dict(parse_qsl(urlsplit(response.headers["location"]).query))
    identity = await oauth.flow.finish(start.pending, params)
    outcome = await oauth.connect.connect(user.id, identity)
    return outcome.account_id


@pytest.fixture
async def graph(services: Services, graph_server: FakeServer[GraphFake]) -> GraphSetup:
    user = await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await connect(services, user, graph_server, graph_server.app.mailbox.user_principal_name)
    return GraphSetup(services, user, graph_server, account_id)
