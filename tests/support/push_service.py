"""A Web Push service for the suite (RFC 8030 §5), on loopback, standing in for Mozilla's or Google's.

Each device made here has a real P-256 key pair and auth secret (RFC 8291 §3, as a browser's PushManager makes
them). A push request is accepted only with a valid VAPID JWT (RFC 8292 §2-3: ES256, `aud` the endpoint's
origin, `exp` within 24 hours, a `sub` contact) signed by the key the JMAP session advertised (RFC 9749), and its
aes128gcm body (RFC 8188) is decrypted with the device's private key: what a test reads is what the phone would
read. A test can script the next answers (410, 429 with Retry-After, 503) to see what the server does with them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import http_ece
from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from tests.support.net import free_port


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    at: float  # time.monotonic() when the push service accepted it
    message: dict[str, Any]


@dataclass
class Attempt:
    at: float
    status: int
    problem: str = ""


@dataclass
class Device:
    """One browser or phone: its subscription's endpoint and keys, and what reached it."""

    token: str
    url: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes
    received: list[Received] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    answers: deque[tuple[int, dict[str, str]]] = field(default_factory=deque)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _read: int = 0  # how many messages next() has handed out

    @property
    def keys(self) -> dict[str, str]:
        """As PushSubscription.toJSON() gives them (and as JMAP's `keys` takes them)."""
        public = self.private_key.public_key().public_bytes(serialization.Encoding.X962,
                                                            serialization.PublicFormat.UncompressedPoint)
        return {"p256dh": b64url(public), "auth": b64url(self.auth)}

    def answer(self, status: int, **headers: str) -> None:
        """The next push gets this answer instead of 201 Created (and is not delivered)."""
        self.answers.append((status, headers))

    async def next(self, timeout: float = 5.0) -> Received:
        """The next message not yet handed out, waiting for it up to `timeout` seconds."""
        index = self._read
        deadline = time.monotonic() + timeout
        while len(self.received) <= index:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no push message #{index + 1} within {timeout} s; attempts: {self.attempts}"
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), remaining)
            except TimeoutError:
                continue
        self._read = index + 1
        return self.received[index]

    def state_changes(self) -> list[dict[str, Any]]:
        return [r.message for r in self.received if r.message.get("@type") == "StateChange"]


class PushService:
    """The RFC 8030 push resource: POST /push/<token> with an encrypted, VAPID-signed message."""

    def __init__(self) -> None:
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.devices: dict[str, Device] = {}
        self.vapid_key: str | None = None  # the applicationServerKey the JMAP session advertised
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> PushService:
        app = web.Application()
        app.router.add_post("/push/{token}", self._push)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def device(self) -> Device:
        token = secrets.token_urlsafe(16)
        device = Device(token, f"{self.origin}/push/{token}", ec.generate_private_key(ec.SECP256R1()),
                        secrets.token_bytes(16))
        self.devices[token] = device
        return device

    def _check_vapid(self, authorization: str) -> str:
        """The problem with the request's VAPID credentials, or "" when they hold (RFC 8292 §2-3)."""
        scheme, _, params = authorization.partition(" ")
        if scheme.lower() != "vapid":
            return f"scheme {scheme!r} is not vapid"
        fields = dict(part.strip().split("=", 1) for part in params.split(",") if "=" in part)
        token, key = fields.get("t", ""), fields.get("k", "")
        if self.vapid_key is None or key != self.vapid_key:
            return "k is not the key the JMAP session advertised"
        try:
            header_b64, claims_b64, signature_b64 = token.split(".")
            header, claims = json.loads(unb64url(header_b64)), json.loads(unb64url(claims_b64))
            signature = unb64url(signature_b64)
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
            public.verify(encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                               int.from_bytes(signature[32:], "big")),
                          f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
        except (ValueError, InvalidSignature):
            return "the JWT is malformed or its signature does not verify"
        if header.get("alg") != "ES256":
            return f"alg {header.get('alg')!r} is not ES256"
        if claims.get("aud") != self.origin:
            return f"aud {claims.get('aud')!r} is not {self.origin}"
        if not time.time() < int(claims.get("exp", 0)) <= time.time() + 86400:
            return "exp is not within the next 24 hours"
        if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            return "sub is no contact"
        return ""

    async def _push(self, request: web.Request) -> web.Response:
        device = self.devices.get(request.match_info["token"])
        if device is None:
            return web.Response(status=404)
        body = await request.read()
        problem = self._check_vapid(request.headers.get("Authorization", ""))
        if not problem and request.headers.get("Content-Encoding") != "aes128gcm":
            problem = "Content-Encoding is not aes128gcm"
        if not problem and not request.headers.get("TTL", "").isdigit():
            problem = "no TTL header (RFC 8030 §5.2)"
        if problem:
            device.attempts.append(Attempt(time.monotonic(), 401, problem))
            return web.Response(status=401, text=problem)
        if device.answers:
            status, headers = device.answers.popleft()
            device.attempts.append(Attempt(time.monotonic(), status))
            return web.Response(status=status, headers=headers)
        try:
            plain = http_ece.decrypt(body, private_key=device.private_key, auth_secret=device.auth,
                                     version="aes128gcm")
            message = json.loads(plain)
        except Exception as exc:  # the test sees it in attempts: the server sent what the phone cannot read
            device.attempts.append(Attempt(time.monotonic(), 400, f"cannot decrypt: {exc!r}"))
            return web.Response(status=400)
        device.attempts.append(Attempt(time.monotonic(), 201))
        device.received.append(Received(time.monotonic(), message))
        device.arrived.set()
        return web.Response(status=201, headers={"Location": f"{self.origin}/message/{secrets.token_hex(8)}"})
