"""Google Cloud Pub/Sub as Gmail's `users.watch` uses it: topics, a push subscription per topic, and the OIDC
token Pub/Sub signs each push with (Google's keys served as a JWKS by the Gmail fake at /oauth2/v3/certs).

    fake.pubsub.create_topic("projects/p/topics/mail")
    fake.pubsub.subscribe_push("projects/p/topics/mail", "http://127.0.0.1:8025/provider-push/gmail",
                               service_account="push@p.iam.gserviceaccount.com")
    await fake.notify("alice@gmail.com")     # the push Gmail's watch makes Pub/Sub deliver

Pushes are made the published way: `POST endpoint` with `Authorization: Bearer <JWT>` (RS256, iss
https://accounts.google.com, aud the subscription's audience or else the endpoint, email the service account)
and the body `{"message": {"data": base64 JSON, "messageId", "publishTime"}, "subscription"}`.
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

# The service account Gmail publishes as; a topic must grant it the Publisher role.
GMAIL_PUBLISHER = "gmail-api-push@system.gserviceaccount.com"


@dataclass
class PushSubscription:
    name: str
    endpoint: str
    audience: str
    service_account: str


@dataclass
class Topic:
    name: str
    publishers: set[str] = field(default_factory=set)
    subscription: PushSubscription | None = None


class SigningKey:
    def __init__(self, kid: str) -> None:
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self) -> dict[str, Any]:
        public: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        return {**public, "kid": self.kid, "alg": "RS256", "use": "sig"}


class GooglePubSub:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keys = [SigningKey("fake-google-1")]
        self.topics: dict[str, Topic] = {}
        self._ids = itertools.count(1000)
        self.pushes: list[tuple[str, int]] = []  # (endpoint, status) of every delivery

    def jwks(self) -> dict[str, Any]:
        return {"keys": [key.jwk() for key in self.keys]}

    def create_topic(self, name: str, *, grant_gmail: bool = True) -> Topic:
        with self.lock:
            topic = self.topics[name] = Topic(name, {GMAIL_PUBLISHER} if grant_gmail else set())
            return topic

    def subscribe_push(self, topic: str, endpoint: str, *, service_account: str,
                       audience: str | None = None) -> PushSubscription:
        with self.lock:
            project = topic.split("/")[1]
            subscription = PushSubscription(f"projects/{project}/subscriptions/plmail-push", endpoint,
                                            audience or endpoint, service_account)
            self.topics[topic].subscription = subscription
            return subscription

    def token(self, audience: str, email: str, *, issuer: str = "https://accounts.google.com",
              key: SigningKey | None = None, expires_in: int = 3600, email_verified: bool = True) -> str:
        """The OIDC token Pub/Sub puts on a push (Google signs with real time, not a mailbox's clock)."""
        now = int(time.time())
        claims = {"iss": issuer, "aud": audience, "azp": "113774264463038321964", "sub": "113774264463038321964",
                  "email": email, "email_verified": email_verified, "iat": now, "exp": now + expires_in}
        signer = key or self.keys[0]
        return jwt.encode(claims, signer.private, algorithm="RS256", headers={"kid": signer.kid})

    def envelope(self, subscription: PushSubscription, data: dict[str, Any]) -> bytes:
        message_id = str(next(self._ids))
        return json.dumps({
            "message": {"data": base64.b64encode(json.dumps(data).encode()).decode(), "messageId": message_id,
                        "message_id": message_id,
                        "publishTime": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")},
            "subscription": subscription.name,
        }).encode()

    async def publish(self, topic_name: str, data: dict[str, Any], *, token: str | None = None
                      ) -> httpx.Response | None:
        """Deliver `data` to the topic's push subscription as Pub/Sub does; None without a subscription."""
        with self.lock:
            topic = self.topics.get(topic_name)
            subscription = topic.subscription if topic is not None else None
        if subscription is None:
            return None
        bearer = token if token is not None else self.token(subscription.audience, subscription.service_account)
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.post(subscription.endpoint, content=self.envelope(subscription, data),
                                       headers={"Authorization": f"Bearer {bearer}",
                                                "Content-Type": "application/json",
                                                "User-Agent": "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)"})
        with self.lock:
            self.pushes.append((subscription.endpoint, response.status_code))
        return response
