"""A phone on the unified account (issue 20), with jmapc as the client against a running `plmail serve`: a user
with an IMAP account on the suite's Dovecot and a Gmail account on the fake sees one primary account whose
Inbox holds both accounts' inbox mail; flagging, moving to a label and destroying from it reach the right
provider (checked with a second IMAP connection and the fake's mailbox); a second client sees the changes
through Email/changes and over RFC 8887 WebSocket push, and asks over the same socket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from jmapc import Ref
from jmapc.methods import EmailChanges, EmailGet, EmailQuery, EmailSet, MailboxGet, MailboxSet
from jmapc.models import EmailQueryFilterCondition, Mailbox
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Subprotocol

from plmail.config import Settings
from plmail.providers.oauth import GOOGLE_SCOPES
from plmail.services import Services
from tests.e2e.test_jmap_client import LoopbackClient
from tests.integration.gmail.conftest import FakeTime, GmailSetup, clock, connect_account, gmail_server, gmail_stack
from tests.integration.gmail.conftest import settings as gmail_settings
from tests.integration.imap_sync.conftest import ImapSetup, add_account, message_ids
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.fakes import FakeServer, GmailFake, ManualClock, rfc822
from tests.support.imap_mail import message
from tests.support.serve import ServeProcess

__all__ = ["clock", "dovecot", "dovecot_user", "gmail_server"]

settings = gmail_settings  # Google's hosts are the fake: the propagation job reaches it


@pytest.fixture
def live(settings: Settings, database_url: str) -> Iterator[ServeProcess]:
    server = ServeProcess(settings.data_dir, database_url=database_url, args=["--queues", ""]).start()
    try:
        server.wait_healthy()
        yield server
    finally:
        server.terminate()


async def _next_state(socket: ClientConnection, account: str, timeout: float = 15.0) -> dict[str, Any]:
    """The next StateChange naming `account` (others, of the per-provider accounts alone, are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            data = json.loads(await socket.recv())
            if data.get("@type") == "StateChange" and account in data["changed"]:
                return data


async def test_one_unified_account_over_imap_and_gmail(services: Services, dovecot_user: DovecotUser,
                                                       gmail_server: FakeServer[GmailFake], clock: ManualClock,
                                                       live: ServeProcess) -> None:
    user = await services.users.create_user("phone@example.org", "correct horse")
    imap = ImapSetup(services, user, dovecot_user, await add_account(services, user, dovecot_user))
    gmail_account = await connect_account(services, user, gmail_server.app, scope=" ".join(GOOGLE_SCOPES))
    stack, importer, sync = gmail_stack(services, FakeTime(clock))
    gmail = GmailSetup(services, user, gmail_server, gmail_account, FakeTime(clock), stack, importer, sync)
    try:
        dovecot_user.deliver([message(n) for n in (1, 2, 3)])
        dovecot_user.create_folder("Projects")  # the IMAP folder behind the user's label Projects
        fake = gmail_server.app.mailbox
        g = {n: fake.add_message(rfc822(f"Gmail {n}", message_id=f"<g{n}@gmail.test>"),
                                 label_ids=("INBOX", "UNREAD")).id for n in (1, 2, 3)}
        await imap.sync_all()
        await gmail.sync()
        await gmail.import_all()
        i = {n: await imap.message_id_of(f"seq-{n}@plmail.test") for n in (1, 2, 3)}
        gm = {n: await gmail.message_id(g[n]) for n in (1, 2, 3)}
        token = (await services.app_passwords.create(user.id, "Phone")).token

        phone = LoopbackClient.create_with_api_token(host=f"127.0.0.1:{live.port}", api_token=token)
        unified = f"u{user.id}"
        assert await asyncio.to_thread(lambda: phone.account_id) == unified  # jmapc works on the primary account
        async with httpx.AsyncClient(base_url=live.url, headers={"Authorization": f"Bearer {token}"}) as http:
            session = (await http.get("/jmap/session")).json()  # jmapc's Session model leaves accounts out
        assert set(session["accounts"]) == {unified, str(imap.account_id), str(gmail_account)}
        names = [a["name"] for a in session["accounts"].values()]
        assert len(set(names)) == 3, names  # each account has a name of its own
        assert session["primaryAccounts"]["urn:ietf:params:jmap:submission"] == unified
        ws_url = session["capabilities"]["urn:ietf:params:jmap:websocket"]["url"]

        boxes = (await asyncio.to_thread(phone.request, MailboxGet(ids=None))).data
        inbox = next(b for b in boxes if b.role == "inbox")
        assert inbox.total_emails == 6 and inbox.unread_emails == 6  # both accounts' Inbox mail
        query, got = await asyncio.to_thread(phone.request, [
            EmailQuery(filter=EmailQueryFilterCondition(in_mailbox=inbox.id), limit=50),
            EmailGet(ids=Ref("/ids"), properties=["subject", "mailboxIds", "keywords"])])
        assert set(query.response.ids) == {str(x) for x in (*i.values(), *gm.values())}
        assert {e.subject for e in got.response.data} == {"Test 1", "Test 2", "Test 3", "Gmail 1", "Gmail 2",
                                                          "Gmail 3"}
        state = got.response.state
        assert state is not None

        second = LoopbackClient.create_with_api_token(host=f"127.0.0.1:{live.port}", api_token=token)
        with pytest.raises(InvalidStatus) as refused:  # authenticated like the API: no app password, no socket
            async with connect(ws_url, subprotocols=[Subprotocol("jmap")]):
                pass
        assert refused.value.response.status_code == 401
        async with connect(ws_url, subprotocols=[Subprotocol("jmap")],
                           additional_headers={"Authorization": f"Bearer {token}"}) as socket:
            assert socket.subprotocol == "jmap"
            await socket.send(json.dumps({"@type": "WebSocketPushEnable", "dataTypes": ["Email", "Mailbox"]}))
            await socket.send(json.dumps({"@type": "Request", "id": "r1", "using": [
                "urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], "methodCalls": [
                ["Email/get", {"accountId": unified, "ids": [str(gm[1])], "properties": ["subject"]}, "0"]]}))
            async with asyncio.timeout(5):
                answer = json.loads(await socket.recv())
            assert answer["@type"] == "Response" and answer["requestId"] == "r1"
            assert answer["methodResponses"][0][1]["list"] == [{"id": str(gm[1]), "subject": "Gmail 1"}]

            made = await asyncio.to_thread(phone.request, MailboxSet(create={"p": Mailbox(name="Later")}))
            assert made.created is not None and made.created["p"].id is not None
            pushed = await _next_state(socket, unified)  # a new label is a Mailbox of the unified account
            assert "Mailbox" in pushed["changed"][unified]
            projects = next(b.id for b in boxes if b.name == "Projects")

            done = await asyncio.to_thread(phone.request, EmailSet(
                update={str(i[1]): {"keywords/$flagged": True}, str(gm[1]): {"keywords/$flagged": True},
                        str(i[2]): {f"mailboxIds/{inbox.id}": None, f"mailboxIds/{projects}": True},
                        str(gm[2]): {f"mailboxIds/{inbox.id}": None, f"mailboxIds/{projects}": True}},
                destroy=[str(i[3]), str(gm[3])]))
            assert done.updated is not None and set(done.updated) == {str(x) for x in (i[1], gm[1], i[2], gm[2])}
            assert sorted(done.destroyed or []) == sorted([str(i[3]), str(gm[3])])
            # the writes commit one by one, so a push may come per write: the last names the state the set answered
            # generous: the push must come, how fast is not what this test is about (a loaded CI machine)
            async with asyncio.timeout(15):
                while (pushed := await _next_state(socket, unified))["changed"][unified].get("Email") \
                        != done.new_state:
                    continue
            assert pushed["pushState"]

        changes = await asyncio.to_thread(second.request, EmailChanges(since_state=state))
        assert set(changes.updated) == {str(x) for x in (i[1], gm[1], i[2], gm[2])}
        assert set(changes.destroyed) == {str(i[3]), str(gm[3])} and changes.created == []
        seen = await asyncio.to_thread(second.request, EmailGet(ids=[str(i[2]), str(gm[2])],
                                                                properties=["mailboxIds"]))
        assert all(e.mailbox_ids == {projects: True} for e in seen.data)

        await imap.propagate()
        await gmail.propagate()
        with dovecot_user.peer() as peer:  # another IMAP client sees what the phone did
            uid = next(u for u in peer.uids("INBOX") if b"seq-1@plmail.test" in peer.raw(u, "INBOX"))
            assert "\\Flagged" in peer.flags(uid, "INBOX")
            inbox_ids = message_ids(peer.conn, "INBOX")
            assert "seq-2@plmail.test" not in inbox_ids and "seq-3@plmail.test" not in inbox_ids
            assert "seq-2@plmail.test" in message_ids(peer.conn, "Projects")
        assert "STARRED" in fake.messages[g[1]].label_ids
        projects_label = next(label.id for label in fake.labels.values() if label.name == "Projects")
        assert set(fake.messages[g[2]].label_ids) == {projects_label, "UNREAD"}  # out of INBOX, into Projects
        assert g[3] not in fake.messages  # deleted for good at Gmail, not trashed

        await imap.sync_all()
        await gmail.sync()
        assert await imap.count("rfc_message_id = 'seq-3@plmail.test'") == 0  # the next sync keeps it gone
        assert g[3] not in await gmail.gmail_ids()
    finally:
        await stack.close()
