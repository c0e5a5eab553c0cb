"""The fakes' push APIs over real HTTP, errors included: Gmail's users.watch/users.stop with Pub/Sub's signed
pushes (the keys served as Google's JWKS), and Graph's /subscriptions with its validation handshake."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt
import pytest

from tests.support.fakes import FakeServer, GmailFake, GraphFake, ManualClock
from tests.support.fakes._asgi import AsgiApp, Request, Response

TOPIC = "projects/p/topics/mail"


class Endpoint(AsgiApp):
    """A notification endpoint that answers Graph's handshake rightly (or, with `echo=False`, wrongly)."""

    def __init__(self) -> None:
        super().__init__()
        self.echo = True
        self.received: list[tuple[dict[str, list[str]], bytes, dict[str, str]]] = []
        self.router.add("POST", "/hook", self._hook)

    async def _hook(self, request: Request) -> Response:
        self.received.append((request.query, request.body, dict(request.headers)))
        if "validationToken" in request.query:
            text = request.query["validationToken"][0] if self.echo else "nope"
            return Response(200, text.encode(), [("content-type", "text/plain")])
        return Response(202)


@pytest.fixture
def endpoint() -> Iterator[FakeServer[Endpoint]]:
    with FakeServer(Endpoint()) as server:
        yield server


def _graph_time(clock: ManualClock, delta: timedelta) -> str:
    return (datetime.fromtimestamp(clock(), UTC) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def _subscribe(http: httpx.Client, url: str, clock: ManualClock, **changes: Any) -> httpx.Response:
    body = {"changeType": "created,updated,deleted", "notificationUrl": url, "resource": "me/messages",
            "expirationDateTime": _graph_time(clock, timedelta(days=2)), "clientState": "s3cret", **changes}
    return http.post("/subscriptions", json=body)


def test_graph_subscription_is_validated_renewed_and_deleted(
        graph: FakeServer[GraphFake], graph_http: httpx.Client, endpoint: FakeServer[Endpoint],
        clock: ManualClock) -> None:
    url = f"{endpoint.url}/hook"
    created = _subscribe(graph_http, url, clock)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["notificationUrl"] == url and body["clientState"] == "s3cret"
    (query, _body, _headers), = endpoint.app.received
    assert query["validationToken"][0].startswith("Validation: Testing client application reachability")

    renewed = graph_http.patch(f"/subscriptions/{body['id']}",
                               json={"expirationDateTime": _graph_time(clock, timedelta(days=3))})
    assert renewed.status_code == 200
    assert renewed.json()["expirationDateTime"] == _graph_time(clock, timedelta(days=3))
    assert graph_http.delete(f"/subscriptions/{body['id']}").status_code == 204
    gone = graph_http.patch(f"/subscriptions/{body['id']}",
                            json={"expirationDateTime": _graph_time(clock, timedelta(days=3))})
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "ResourceNotFound"


def test_graph_refuses_subscriptions_it_would_refuse(
        graph: FakeServer[GraphFake], graph_http: httpx.Client, endpoint: FakeServer[Endpoint],
        clock: ManualClock) -> None:
    url = f"{endpoint.url}/hook"
    not_https = _subscribe(graph_http, "http://mail.example.org/hook", clock)
    assert not_https.status_code == 400 and "https" in not_https.json()["error"]["message"]
    # Outlook messages: at most 10,080 minutes
    too_long = _subscribe(graph_http, url, clock, expirationDateTime=_graph_time(clock, timedelta(minutes=10_081)))
    assert too_long.status_code == 400
    past = _subscribe(graph_http, url, clock, expirationDateTime=_graph_time(clock, timedelta(minutes=-1)))
    assert past.status_code == 400
    endpoint.app.echo = False
    unvalidated = _subscribe(graph_http, url, clock)
    assert unvalidated.status_code == 400 and unvalidated.json()["error"]["code"] == "ValidationError"
    assert graph.app.subscriptions == {}
    anonymous = httpx.post(f"{graph.url}/v1.0/subscriptions", json={})
    assert anonymous.status_code == 401


async def test_graph_notification_carries_the_subscription_and_client_state(
        graph: FakeServer[GraphFake], graph_http: httpx.Client, endpoint: FakeServer[Endpoint],
        clock: ManualClock) -> None:
    from tests.support.fakes import rfc822

    created = _subscribe(graph_http, f"{endpoint.url}/hook", clock).json()
    message = graph.app.mailbox.add_message(rfc822("Hello"), "inbox")
    (response,) = await graph.app.notify("created", message)
    assert response.status_code == 202
    _query, body, _headers = endpoint.app.received[-1]
    (item,) = json.loads(body)["value"]
    assert item["subscriptionId"] == created["id"] and item["clientState"] == "s3cret"
    assert item["changeType"] == "created" and item["resourceData"]["id"] == message.id


def test_gmail_watch_errors_and_expiry(gmail: FakeServer[GmailFake], gmail_http: httpx.Client,
                                       clock: ManualClock) -> None:
    bad = gmail_http.post("/watch", json={"topicName": "mail"})
    assert bad.status_code == 400
    unknown = gmail_http.post("/watch", json={"topicName": TOPIC})
    assert unknown.status_code == 404
    gmail.app.pubsub.create_topic(TOPIC, grant_gmail=False)
    ungranted = gmail_http.post("/watch", json={"topicName": TOPIC})
    assert ungranted.status_code == 403 and "not authorized" in ungranted.json()["error"]["message"]
    gmail.app.pubsub.create_topic(TOPIC)
    watched = gmail_http.post("/watch", json={"topicName": TOPIC})
    assert watched.status_code == 200
    assert int(watched.json()["expiration"]) == int((clock() + 7 * 86400) * 1000)  # a watch lasts 7 days
    assert watched.json()["historyId"] == str(gmail.app.mailbox.history_id)
    assert gmail_http.post("/stop").status_code == 204
    assert gmail.app.watches == {}


async def test_gmail_push_is_signed_with_the_keys_the_fake_publishes(
        gmail: FakeServer[GmailFake], gmail_http: httpx.Client, endpoint: FakeServer[Endpoint]) -> None:
    gmail.app.pubsub.create_topic(TOPIC)
    gmail.app.pubsub.subscribe_push(TOPIC, f"{endpoint.url}/hook", service_account="push@p.iam.gserviceaccount.com")
    assert await gmail.app.notify() is None  # no watch yet: nothing published
    assert gmail_http.post("/watch", json={"topicName": TOPIC}).status_code == 200
    response = await gmail.app.notify()
    assert response is not None and response.status_code == 202
    _query, body, headers = endpoint.app.received[-1]
    keys = jwt.PyJWKSet.from_dict(httpx.get(f"{gmail.url}/oauth2/v3/certs").json())
    token = headers["authorization"].removeprefix("Bearer ")
    key = next(k for k in keys.keys if k.key_id == jwt.get_unverified_header(token)["kid"])
    claims = jwt.decode(token, key, algorithms=["RS256"], audience=f"{endpoint.url}/hook",
                        issuer="https://accounts.google.com")
    assert claims["email"] == "push@p.iam.gserviceaccount.com" and claims["email_verified"] is True
    envelope = json.loads(body)
    data = json.loads(base64.b64decode(envelope["message"]["data"]))
    assert data == {"emailAddress": gmail.app.mailbox.email, "historyId": gmail.app.mailbox.history_id}
    assert envelope["subscription"] == "projects/p/subscriptions/plmail-push"
