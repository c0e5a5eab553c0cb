"""One contract for every mail provider (issue 31), as Litestar runs one store test over every store: each
provider comes in as a `ProviderSide` over its real or published-API server (Dovecot for IMAP, the Gmail and
Graph fakes, a second plmail and Debian's Cyrus as JMAP upstreams), and
`tests/integration/providers/test_mail_contract.py` runs the same sync and propagate assertions over all of them. A
new provider adds one side class and one entry in `SIDES`; a new JMAP upstream only a `JmapPeer` and an entry."""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from email import message_from_bytes
from email import policy as email_policy
from pathlib import Path
from typing import Any, Protocol

import pytest

from plmail.config import Settings
from plmail.domain.models import User
from plmail.providers.jmap.accounts import JmapAccountInput, JmapAccountService
from plmail.services import Services
from tests.integration.gmail.conftest import connect_account as connect_gmail
from tests.integration.graph.conftest import connect as connect_graph
from tests.integration.jmap_accounts.conftest import (
    UpstreamServer,
    make_upstream_user,
    upstream_sends_through,
    upstream_server,
)
from tests.integration.sending.conftest import add_sending_account
from tests.support.cyrus import CyrusUser, cyrus, cyrus_user
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.fakes import FakeServer, GmailFake, GraphFake
from tests.support.jmap_peer import JmapPeer
from tests.support.smtp import SmtpServer, smtp, smtp_server

__all__ = ["cyrus", "cyrus_user", "dovecot", "dovecot_user", "smtp", "smtp_server", "upstream_server"]

Place = str  # "inbox" | "archive" | "trash" | "spam" | "other"


@dataclass(frozen=True)
class Remote:
    """One message as the provider holds it."""

    place: Place
    seen: bool
    starred: bool


class ProviderSide(Protocol):
    """What the contract needs of a provider's server, all keyed by the message's (unique) subject:

    - `deliver(raw)`: new mail arrives in the provider's inbox;
    - `remote(subject)`: where the provider holds it and its read/starred state, None once it is gone;
    - `mark(subject)`: another client marks it read and starred at the provider;
    - `delete(subject)`: another client deletes it for good at the provider;
    - `address`: the mailbox's own address, which plmail sends from;
    - `delivered(subject)`: (recipients, bytes they received) of each message the provider sent out.
    """

    name: str

    @property
    def address(self) -> str: ...

    def deliver(self, raw: bytes) -> None: ...

    def remote(self, subject: str) -> Remote | None: ...

    def mark(self, subject: str) -> None: ...

    def delete(self, subject: str) -> None: ...

    async def delivered(self, subject: str) -> list[tuple[set[str], bytes]]: ...


@dataclass
class Connected:
    services: Services
    user: User
    account_id: int
    side: ProviderSide


_IMAP_PLACES = {"INBOX": "inbox", "Archive": "archive", "Trash": "trash", "Junk": "spam"}


def _subject(raw: bytes) -> str | None:
    return message_from_bytes(raw, policy=email_policy.compat32)["Subject"]


async def _smtp_arrivals(smtp: SmtpServer, subject: str) -> list[tuple[set[str], bytes]]:
    """What the suite's SMTP server received with this subject, waiting a while for the first."""
    for _ in range(300):
        found = [({r.lower() for r in got.rcpt_to}, got.data) for got in list(smtp.received)
                 if _subject(got.data) == subject]
        if found:
            await asyncio.sleep(0.3)  # a second copy would come right after the first
            return [({r.lower() for r in got.rcpt_to}, got.data) for got in list(smtp.received)
                    if _subject(got.data) == subject]
        await asyncio.sleep(0.1)
    return []


@dataclass
class ImapSide:
    mail: DovecotUser
    smtp: SmtpServer
    name: str = "imap"

    @property
    def address(self) -> str:
        return f"{self.mail.name}@example.org"

    async def delivered(self, subject: str) -> list[tuple[set[str], bytes]]:
        return await _smtp_arrivals(self.smtp, subject)

    def _find(self, subject: str) -> tuple[str, int] | None:
        with self.mail.peer() as peer:
            for folder in _IMAP_PLACES:
                peer.select(folder, readonly=True)
                typ, data = peer.conn.uid("SEARCH", "HEADER", "Subject", f'"{subject}"')
                assert typ == "OK", data
                uids = [int(u) for u in data[0].split()]
                assert len(uids) <= 1, f"{subject} is in {folder} {len(uids)} times"
                if uids:
                    return folder, uids[0]
        return None

    def deliver(self, raw: bytes) -> None:
        self.mail.append([raw])

    def remote(self, subject: str) -> Remote | None:
        found = self._find(subject)
        if found is None:
            return None
        folder, uid = found
        with self.mail.peer() as peer:
            flags = peer.flags(uid, folder)
        return Remote(_IMAP_PLACES[folder], "\\Seen" in flags, "\\Flagged" in flags)

    def mark(self, subject: str) -> None:
        found = self._find(subject)
        assert found is not None
        with self.mail.peer() as peer:
            peer.store(found[1], "+FLAGS", "(\\Seen \\Flagged)", found[0])

    def delete(self, subject: str) -> None:
        found = self._find(subject)
        assert found is not None
        with self.mail.peer() as peer:
            peer.store(found[1], "+FLAGS", "(\\Deleted)", found[0])
            peer.expunge(found[0])


@dataclass
class GmailSide:
    server: FakeServer[GmailFake]
    name: str = "gmail"

    @property
    def address(self) -> str:
        return self.server.app.mailbox.email

    async def delivered(self, subject: str) -> list[tuple[set[str], bytes]]:
        return [(set(d.recipients), d.received) for d in self.server.app.mailbox.deliveries
                if _subject(d.received) == subject]

    def _id(self, subject: str) -> str | None:
        found = [m.id for m in self.server.app.mailbox.messages.values() if m.header("Subject") == subject]
        assert len(found) <= 1, f"{subject} is at Gmail {len(found)} times"
        return found[0] if found else None

    def deliver(self, raw: bytes) -> None:
        self.server.app.mailbox.add_message(raw, label_ids=("INBOX", "UNREAD"))

    def remote(self, subject: str) -> Remote | None:
        gmail_id = self._id(subject)
        if gmail_id is None:
            return None
        labels = set(self.server.app.mailbox.messages[gmail_id].label_ids)
        place = ("trash" if "TRASH" in labels else "spam" if "SPAM" in labels else "inbox" if "INBOX" in labels
                 else "archive")
        return Remote(place, "UNREAD" not in labels, "STARRED" in labels)

    def mark(self, subject: str) -> None:
        gmail_id = self._id(subject)
        assert gmail_id is not None
        self.server.app.mailbox.modify(gmail_id, add=["STARRED"], remove=["UNREAD"])

    def delete(self, subject: str) -> None:
        gmail_id = self._id(subject)
        assert gmail_id is not None
        self.server.app.mailbox.delete(gmail_id)


_GRAPH_PLACES = {"inbox": "inbox", "archive": "archive", "deleteditems": "trash", "junkemail": "spam"}


@dataclass
class GraphSide:
    server: FakeServer[GraphFake]
    name: str = "graph"

    @property
    def address(self) -> str:
        return self.server.app.mailbox.user_principal_name

    async def delivered(self, subject: str) -> list[tuple[set[str], bytes]]:
        with self.server.app.lock:
            return [(set(d.recipients), d.received) for d in self.server.app.mailbox.deliveries
                    if _subject(d.received) == subject]

    def _id(self, subject: str) -> str | None:
        with self.server.app.lock:
            found = [m.id for m in self.server.app.mailbox.messages.values() if m.subject == subject]
        assert len(found) <= 1, f"{subject} is at Graph {len(found)} times"
        return found[0] if found else None

    def deliver(self, raw: bytes) -> None:
        self.server.app.mailbox.add_message(raw, "inbox")

    def remote(self, subject: str) -> Remote | None:
        graph_id = self._id(subject)
        if graph_id is None:
            return None
        mailbox = self.server.app.mailbox
        with self.server.app.lock:
            message = mailbox.messages[graph_id]
            well_known = mailbox.folders[message.folder_id].well_known
            return Remote(_GRAPH_PLACES.get(well_known or "", "other"), message.is_read,
                          message.flag_status == "flagged")

    def mark(self, subject: str) -> None:
        graph_id = self._id(subject)
        assert graph_id is not None
        self.server.app.mailbox.update(graph_id, is_read=True, flag_status="flagged")

    def delete(self, subject: str) -> None:
        graph_id = self._id(subject)
        assert graph_id is not None
        self.server.app.mailbox.delete(graph_id)


@dataclass
class JmapSide:
    """Any JMAP upstream, seen through another JMAP client of it."""

    up: JmapPeer
    address: str
    smtp: SmtpServer
    name: str = "jmap"

    async def delivered(self, subject: str) -> list[tuple[set[str], bytes]]:
        """The upstream's EmailSubmission hands it to an SMTP server of its own, the suite's."""
        return await _smtp_arrivals(self.smtp, subject)

    def _email(self, subject: str) -> dict[str, Any] | None:
        return self.up.emails().get(subject)

    def deliver(self, raw: bytes) -> None:
        self.up.deliver(raw)

    def remote(self, subject: str) -> Remote | None:
        email = self._email(subject)
        if email is None:
            return None
        roles = {m["id"]: (m.get("role") or "other") for m in self.up.mailboxes().values()}
        places = {roles[m] for m, on in email["mailboxIds"].items() if on}
        assert len(places) == 1, f"{subject} is in {places}"
        place = places.pop()
        keywords = email.get("keywords") or {}
        return Remote(place if place in ("inbox", "archive", "trash") else "spam" if place == "junk" else place,
                      bool(keywords.get("$seen")), bool(keywords.get("$flagged")))

    def mark(self, subject: str) -> None:
        email = self._email(subject)
        assert email is not None
        self.up.call("Email/set", {"update": {email["id"]: {"keywords/$seen": True, "keywords/$flagged": True}}})

    def delete(self, subject: str) -> None:
        email = self._email(subject)
        assert email is not None
        answer = self.up.call("Email/set", {"destroy": [email["id"]]})
        assert answer.get("destroyed") == [email["id"]], answer


async def _new_user(services: Services) -> User:
    return await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")


async def _imap(request: pytest.FixtureRequest, services: Services) -> Connected:
    mail: DovecotUser = request.getfixturevalue("dovecot_user")
    smtp: SmtpServer = request.getfixturevalue("smtp")
    user = await _new_user(services)
    return Connected(services, user, await add_sending_account(services, user, mail, smtp), ImapSide(mail, smtp))


async def _gmail(request: pytest.FixtureRequest, services: Services) -> Connected:
    server: FakeServer[GmailFake] = request.getfixturevalue("gmail_server")
    user = await _new_user(services)
    return Connected(services, user, await connect_gmail(services, user, server.app), GmailSide(server))


async def _graph(request: pytest.FixtureRequest, services: Services) -> Connected:
    server: FakeServer[GraphFake] = request.getfixturevalue("graph_server")
    user = await _new_user(services)
    account_id = await connect_graph(services, user, server, server.app.mailbox.user_principal_name)
    return Connected(services, user, account_id, GraphSide(server))


async def _jmap(request: pytest.FixtureRequest, services: Services) -> Connected:
    upstream: UpstreamServer = request.getfixturevalue("upstream_server")
    tmp_path: Path = request.getfixturevalue("tmp_path")
    # one message first: the upstream keeps imported mail in an account its import makes
    up = make_upstream_user(upstream, tmp_path, inbox=1, projects=0)
    # the upstream sends through an IMAP account of its own, whose SMTP server is the suite's
    smtp: SmtpServer = request.getfixturevalue("smtp")
    sender = upstream_sends_through(upstream, up, request.getfixturevalue("dovecot_user"), smtp)
    user = await _new_user(services)
    account_id = await services.providers.get(JmapAccountService).add(
        user.id, JmapAccountInput(email=up.email, secret=up.token, server=up.url))
    return Connected(services, user, account_id, JmapSide(up, sender, smtp))


async def _jmap_cyrus(request: pytest.FixtureRequest, services: Services) -> Connected:
    """A Cyrus user signs in with its address and password (HTTP Basic); the server is given by its bare address,
    as a person types it, so the session is found through Cyrus's /.well-known/jmap redirect. Cyrus relays what
    it sends to the suite's SMTP server itself (`smtp_backend: host`)."""
    up: CyrusUser = request.getfixturevalue("cyrus_user")
    smtp: SmtpServer = request.getfixturevalue("smtp")
    user = await _new_user(services)
    account_id = await services.providers.get(JmapAccountService).add(
        user.id, JmapAccountInput(email=up.email, secret=up.password, server=up.url))
    return Connected(services, user, account_id, JmapSide(up, up.email, smtp, name="jmap-cyrus"))


SIDES: dict[str, Callable[[pytest.FixtureRequest, Services], Any]] = {
    "imap": _imap, "gmail": _gmail, "graph": _graph, "jmap": _jmap, "jmap-cyrus": _jmap_cyrus}


@pytest.fixture(params=sorted(SIDES))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def gmail_server() -> Iterator[FakeServer[GmailFake]]:
    with FakeServer(GmailFake()) as server:
        yield server


@pytest.fixture
async def graph_server() -> AsyncIterator[FakeServer[GraphFake]]:
    async with FakeServer(GraphFake()) as server:
        yield server


def _gmail_hosts(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    gmail: FakeServer[GmailFake] = request.getfixturevalue("gmail_server")
    return dataclasses.replace(settings, google_base_url=gmail.url, google_client_id=gmail.app.client_id,
                               google_client_secret=gmail.app.client_secret)


def _graph_hosts(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    graph: FakeServer[GraphFake] = request.getfixturevalue("graph_server")
    return dataclasses.replace(settings, microsoft_base_url=graph.url, microsoft_client_id=graph.app.client_id,
                               microsoft_client_secret=graph.app.client_secret)


def _loopback_allowed(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The JMAP upstream listens on loopback, which a typed server address may reach only in tests."""
    return dataclasses.replace(settings, test_fetch_allow=(ipaddress.ip_network("127.0.0.0/8"),))


HOSTS: dict[str, Callable[[Settings, pytest.FixtureRequest], Settings]] = {
    "gmail": _gmail_hosts, "graph": _graph_hosts, "jmap": _loopback_allowed, "jmap-cyrus": _loopback_allowed}


@pytest.fixture
def settings(settings: Settings, provider: str, request: pytest.FixtureRequest) -> Settings:
    """Each provider's hosts pointed at its local server, as the per-provider suites do."""
    configure = HOSTS.get(provider)
    return configure(settings, request) if configure else settings


@pytest.fixture
async def connected(provider: str, services: Services, request: pytest.FixtureRequest) -> Connected:
    made: Connected = await SIDES[provider](request, services)
    return made
