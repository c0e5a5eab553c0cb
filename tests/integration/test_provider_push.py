"""Provider push with PLMAIL_PUBLIC_URL: Gmail's users.watch through Pub/Sub and Graph's change notifications
reach plmail's endpoint over real HTTP, are verified (Google's signed OIDC token; the subscription's
clientState), and ask for the account's sync at once; anything unverified is refused and triggers nothing.

plmail listens on a loopback port (uvicorn in this event loop) because the fakes call it themselves: Graph's
validation handshake during POST /subscriptions, and the notifications.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import socket
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import uvicorn

from plmail.app import create_app
from plmail.config import Settings
from plmail.db.repos.provider_push import ProviderPushRepository
from plmail.providers.gmail.push import GMAIL_RENEW_WATCHES
from plmail.providers.graph.push import GRAPH_RENEW_SUBSCRIPTIONS
from plmail.services import Services
from tests.conftest import browser, running_lifespan
from tests.integration.gmail.conftest import connect_account
from tests.integration.graph.conftest import connect as connect_graph
from tests.support.fakes import FakeServer, GmailFake, GraphFake, rfc822
from tests.support.jobs import queued, run_queued
from tests.support.repos import account_admin

TOPIC = "projects/plmail-test/topics/gmail"
PUSHER = "pubsub-push@plmail-test.iam.gserviceaccount.com"
SYNC = ["sync_account"]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock
    finally:
        sock.close()


@pytest.fixture
def public_url(listener: socket.socket) -> str:
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


@pytest.fixture
def gmail_server() -> Iterator[FakeServer[GmailFake]]:
    fake = GmailFake()
    fake.pubsub.create_topic(TOPIC)
    with FakeServer(fake) as server:
        yield server


@pytest.fixture
def graph_server() -> Iterator[FakeServer[GraphFake]]:
    with FakeServer(GraphFake()) as server:
        yield server


@pytest.fixture
def settings(settings: Settings, public_url: str, gmail_server: FakeServer[GmailFake],
             graph_server: FakeServer[GraphFake]) -> Settings:
    return dataclasses.replace(
        settings, public_url=public_url, gmail_pubsub_topic=TOPIC, gmail_push_service_account=PUSHER,
        google_base_url=gmail_server.url, google_client_id=gmail_server.app.client_id,
        google_client_secret=gmail_server.app.client_secret, microsoft_base_url=graph_server.url,
        microsoft_client_id=graph_server.app.client_id, microsoft_client_secret=graph_server.app.client_secret)


@pytest.fixture
async def served(settings: Settings, database_url: str, services: Services, listener: socket.socket
                 ) -> AsyncIterator[str]:
    """The real app on the listener's port, in this loop, sharing `services` (its workers: none; the tests run
    the queued jobs, so they see exactly what a notification asked for)."""
    app = create_app(settings, database_url, worker_queues=(), services=services)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)
    try:
        yield settings.public_url or ""
    finally:
        server.should_exit = True
        await task


async def _renew(services: Services, job: str) -> None:
    assert await run_queued_provider(services, job) >= 0


async def run_queued_provider(services: Services, job: str) -> int:
    """Run a provider's cron job the way the worker would: its function from the installed plugins."""
    for spec, function in services.provider_roles.jobs:
        if spec.name == job:
            return int(await function({}))
    raise AssertionError(f"{job} is not installed")


async def _gmail_account(services: Services, fake: GmailFake, email: str = "owner@example.org") -> int:
    user = await services.users.create_user(email, "correct horse", time_zone="Europe/Berlin")
    account_id = await connect_account(services, user, fake)
    await services.sync.run(account_id)  # the first sync and import, as after connecting
    while (progress := await services.importer.progress(account_id)) is not None and progress.importing:
        await services.importer.run_page(account_id, chain=False)
    await run_queued(services, SYNC)
    return account_id


async def _stored(services: Services, account_id: int, subject: str) -> int:
    return int(await services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND subject = $2", account_id, subject))


# --- Gmail ----------------------------------------------------------------------------------------------------
async def test_gmail_watch_is_registered_and_a_signed_push_syncs_the_new_message(
        services: Services, served: str, gmail_server: FakeServer[GmailFake]) -> None:
    fake = gmail_server.app
    fake.pubsub.subscribe_push(TOPIC, f"{served}/provider-push/gmail", service_account=PUSHER)
    account_id = await _gmail_account(services, fake)
    assert fake.watches == {}

    await _renew(services, GMAIL_RENEW_WATCHES.name)
    watch = fake.watches[fake.mailbox.email]
    assert watch.topic == TOPIC
    # Google: a watch lasts 7 days
    assert abs(watch.expiration_ms / 1000 - (datetime.now(UTC) + timedelta(days=7)).timestamp()) < 60

    fake.mailbox.add_message(rfc822("Pushed to us", message_id="<pushed@example.org>"), label_ids=("INBOX",))
    response = await fake.notify()
    assert response is not None and response.status_code in (200, 201, 202, 204)  # Pub/Sub's acknowledgements
    assert [kwargs for _, kwargs in await queued(services, SYNC)] == [{"account_id": account_id}]
    await run_queued(services, SYNC)
    assert await _stored(services, account_id, "Pushed to us") == 1


async def test_gmail_watches_are_renewed_daily_not_every_hour(
        services: Services, served: str, gmail_server: FakeServer[GmailFake]) -> None:
    fake = gmail_server.app
    account_id = await _gmail_account(services, fake)
    await _renew(services, GMAIL_RENEW_WATCHES.name)
    await _renew(services, GMAIL_RENEW_WATCHES.name)  # the next hour's run: the watch is fresh
    assert sum(1 for c in fake.calls if c.method == "users.watch") == 1
    repo = ProviderPushRepository(services.db)
    state = await repo.state(account_id)
    assert state is not None
    day_ago = (datetime.now(UTC) - timedelta(days=1, minutes=1)).isoformat()
    await repo.save(account_id, {**state, "renewed_at": day_ago})  # a day has passed
    await _renew(services, GMAIL_RENEW_WATCHES.name)
    assert sum(1 for c in fake.calls if c.method == "users.watch") == 2


async def test_the_15_minute_poll_leaves_watched_accounts_to_push_with_an_hourly_net(
        services: Services, served: str, gmail_server: FakeServer[GmailFake]) -> None:
    account_id = await _gmail_account(services, gmail_server.app)
    assert await account_admin(services).syncable_ids() == [account_id]  # no watch yet: polled
    await _renew(services, GMAIL_RENEW_WATCHES.name)
    assert await account_admin(services).syncable_ids() == []  # watched and synced just now: push does it
    await services.db.execute("UPDATE account SET last_synced_at = now() - interval '61 minutes' WHERE id = $1",
                              account_id)
    assert await account_admin(services).syncable_ids() == [account_id]  # an hour without a sync: polled again


@pytest.mark.parametrize("forgery", ["no token", "wrong audience", "other service account", "foreign key",
                                     "expired", "other issuer"])
async def test_a_gmail_push_without_googles_token_for_us_is_refused_and_syncs_nothing(
        services: Services, served: str, gmail_server: FakeServer[GmailFake], forgery: str) -> None:
    from tests.support.fakes.pubsub import SigningKey

    fake = gmail_server.app
    endpoint = f"{served}/provider-push/gmail"
    fake.pubsub.subscribe_push(TOPIC, endpoint, service_account=PUSHER)
    await _gmail_account(services, fake)
    await _renew(services, GMAIL_RENEW_WATCHES.name)
    fake.mailbox.add_message(rfc822("Forged"), label_ids=("INBOX",))
    token = {
        "no token": "",
        "wrong audience": fake.pubsub.token("https://elsewhere.example/provider-push/gmail", PUSHER),
        "other service account": fake.pubsub.token(endpoint, "attacker@evil.iam.gserviceaccount.com"),
        "foreign key": fake.pubsub.token(endpoint, PUSHER, key=SigningKey("fake-google-1")),
        "expired": fake.pubsub.token(endpoint, PUSHER, expires_in=-3600),
        "other issuer": fake.pubsub.token(endpoint, PUSHER, issuer="https://evil.example"),
    }[forgery]
    if token:
        response = await fake.notify(token=token)
        assert response is not None and response.status_code == 403
    else:
        data = {"emailAddress": fake.mailbox.email, "historyId": fake.mailbox.history_id}
        async with httpx.AsyncClient() as http:
            response = await http.post(endpoint, json={"message": {
                "data": base64.b64encode(json.dumps(data).encode()).decode(), "messageId": "1"}})
        assert response.status_code == 401
    assert await queued(services, SYNC) == []


async def test_without_a_public_url_nothing_is_watched_and_the_endpoints_are_not_there(
        settings: Settings, database_url: str, gmail_server: FakeServer[GmailFake],
        graph_server: FakeServer[GraphFake]) -> None:
    from plmail.services import open_services

    plain = dataclasses.replace(settings, public_url=None)
    opened = await open_services(plain, database_url)
    try:
        names = {spec.name for spec, _ in opened.provider_roles.jobs}
        assert GMAIL_RENEW_WATCHES.name not in names and GRAPH_RENEW_SUBSCRIPTIONS.name not in names
        assert opened.provider_roles.push_receivers == {}
        app = create_app(plain, database_url, worker_queues=(), services=opened)
        async with running_lifespan(app), browser(app) as http:
            for provider in ("gmail", "graph"):
                answer = await http.post(f"/provider-push/{provider}", params={"validationToken": "x"})
                assert answer.status_code == 404
    finally:
        await opened.close()
    assert gmail_server.app.watches == {}
    assert graph_server.app.subscriptions == {}


# --- Microsoft Graph --------------------------------------------------------------------------------------------
async def _graph_account(services: Services, server: FakeServer[GraphFake]) -> int:
    user = await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await connect_graph(services, user, server, server.app.mailbox.user_principal_name)
    await services.sync.run(account_id)
    while (progress := await services.importer.progress(account_id)) is not None and progress.importing:
        await services.importer.run_page(account_id, chain=False)
    await services.sync.run(account_id)
    await run_queued(services, SYNC)
    return account_id


async def test_graph_subscription_passes_the_validation_handshake_and_a_notification_syncs(
        services: Services, served: str, graph_server: FakeServer[GraphFake]) -> None:
    fake = graph_server.app
    account_id = await _graph_account(services, graph_server)
    assert fake.subscriptions == {}
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)  # POST /subscriptions: the fake validated our endpoint
    (subscription,) = fake.subscriptions.values()
    assert subscription.notification_url == f"{served}/provider-push/graph"
    assert subscription.change_type == "created,updated,deleted" and subscription.resource == "me/messages"
    assert subscription.client_state and len(subscription.client_state) >= 32

    message = fake.mailbox.add_message(rfc822("Graph pushed", message_id="<graph-pushed@example.org>"), "inbox")
    (response,) = await fake.notify("created", message)
    assert response.status_code == 202
    assert [kwargs for _, kwargs in await queued(services, SYNC)] == [{"account_id": account_id}]
    await run_queued(services, SYNC)
    assert await _stored(services, account_id, "Graph pushed") == 1


async def test_graph_handshake_answers_the_token_as_plain_text(served: str) -> None:
    token = "Validation: Testing client application reachability for subscription Request-Id: 1 & <2>"
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{served}/provider-push/graph", params={"validationToken": token})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.text == token


async def test_graph_notification_with_a_wrong_client_state_is_refused(
        services: Services, served: str, graph_server: FakeServer[GraphFake]) -> None:
    fake = graph_server.app
    await _graph_account(services, graph_server)
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)
    message = fake.mailbox.add_message(rfc822("Forged for Graph"), "inbox")
    (response,) = await fake.notify("created", message, client_state="guessed")
    assert response.status_code == 403
    async with httpx.AsyncClient() as http:  # an unknown subscription id with some clientState
        answer = await http.post(f"{served}/provider-push/graph", json={"value": [{
            "subscriptionId": "00000000-0000-0000-0000-000000000000", "clientState": "x", "changeType": "created",
            "resource": "Users/x/Messages/y"}]})
    assert answer.status_code == 403
    assert await queued(services, SYNC) == []


async def test_graph_subscription_is_renewed_before_expiry_and_recreated_when_gone(
        services: Services, served: str, graph_server: FakeServer[GraphFake]) -> None:
    fake = graph_server.app
    account_id = await _graph_account(services, graph_server)
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)
    (first,) = fake.subscriptions.values()
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)  # three days left: nothing to do
    assert first.renewals == 0 and list(fake.subscriptions) == [first.id]

    # A day and a half later fewer than two days are left: PATCH extends it.
    repo = ProviderPushRepository(services.db)
    state = await repo.state(account_id)
    assert state is not None
    soon = datetime.now(UTC) + timedelta(hours=36)
    await repo.save(account_id, {**state, "expiration": soon.isoformat()})
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)
    assert first.renewals == 1 and list(fake.subscriptions) == [first.id]
    assert first.expiration > datetime.now(UTC) + timedelta(days=2)

    # Graph forgets it (404 on PATCH): a new one is made, and its notifications are believed.
    fake.forget_subscriptions()
    state = await repo.state(account_id)
    assert state is not None
    await repo.save(account_id, {**state, "expiration": soon.isoformat()})
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)
    (second,) = fake.subscriptions.values()
    assert second.id != first.id
    message = fake.mailbox.add_message(rfc822("After re-subscribing"), "inbox")
    (response,) = await fake.notify("created", message)
    assert response.status_code == 202
    await run_queued(services, SYNC)
    assert await _stored(services, account_id, "After re-subscribing") == 1


async def test_a_notification_never_syncs_another_users_account(
        services: Services, served: str, graph_server: FakeServer[GraphFake], gmail_server: FakeServer[GmailFake]
) -> None:
    """Bob's Graph subscription id with a clientState made up for it cannot wake Alice's account, and Alice's
    Gmail push syncs only accounts of that address."""
    fake = graph_server.app
    alice_graph = await _graph_account(services, graph_server)
    gmail = gmail_server.app
    gmail.pubsub.subscribe_push(TOPIC, f"{served}/provider-push/gmail", service_account=PUSHER)
    bob_gmail = await _gmail_account(services, gmail, "bob@example.org")
    await _renew(services, GRAPH_RENEW_SUBSCRIPTIONS.name)
    await _renew(services, GMAIL_RENEW_WATCHES.name)
    (response,) = await fake.notify("created", fake.mailbox.add_message(rfc822("For Alice"), "inbox"))
    assert response.status_code == 202
    gmail_push = await gmail.notify()
    assert gmail_push is not None and gmail_push.status_code == 204
    synced = sorted(kwargs["account_id"] for _, kwargs in await queued(services, SYNC))
    assert synced == sorted([alice_graph, bob_gmail])
    # an authentic push for an address no account watches triggers nothing
    await run_queued(services, SYNC)
    stranger = gmail.add_mailbox("stranger@gmail.com")
    gmail.watches[stranger.email] = dataclasses.replace(gmail.watches[gmail.mailbox.email])
    other = await gmail.notify("stranger@gmail.com")
    assert other is not None and other.status_code == 204
    assert await queued(services, SYNC) == []


def test_public_url_setting_is_checked() -> None:
    from plmail.domain.errors import ConfigurationError

    base = {"PLMAIL_DATA_DIR": "/tmp/x"}
    assert Settings.from_env(base).public_url is None
    assert Settings.from_env({**base, "PLMAIL_PUBLIC_URL": "https://mail.example.org/"}).public_url \
        == "https://mail.example.org"
    for bad in ("mail.example.org", "ftp://mail.example.org", "https://mail.example.org/?x=1"):
        with pytest.raises(ConfigurationError):
            Settings.from_env({**base, "PLMAIL_PUBLIC_URL": bad})
    with pytest.raises(ConfigurationError):
        Settings.from_env({**base, "PLMAIL_GMAIL_PUBSUB_TOPIC": "gmail"})
