"""Push subscriptions as a JMAP client manages them (RFC 8620 §7.2): made, verified, renewed and destroyed by the
credentials that created them, and seen by no other."""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.hazmat.primitives.asymmetric import ec

from plmail.db.database import Database
from plmail.db.repos.jmap_auth import AppPasswordRepository
from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import ConflictError, NotFoundError, ValidationError
from plmail.domain.mailstore import MailScope
from plmail.domain.push import (
    MAX_SUBSCRIPTION_LIFETIME,
    PUSHABLE_TYPES,
    NewPushSubscription,
    PushedStates,
    PushSubscriptionRow,
    state_key,
)
from plmail.mail.states import ChangeLog
from plmail.push.addresses import check_push_url
from plmail.push.repos.subscriptions import PushSubscriptionRepository

MAX_DEVICE_CLIENT_ID = 255
MAX_URL = 2048
# Each new subscription makes the server POST to a URL the client chose: a bound keeps a stolen app password
# from turning the installation into a request cannon (and a person has a handful of devices, not hundreds).
MAX_SUBSCRIPTIONS_PER_USER = 25


@dataclass(frozen=True, slots=True)
class Credentials:
    """Who asks: the user and the app password a JMAP request signed in with."""

    user_id: int
    app_password_id: int | None


def _b64url(value: str, name: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise ValidationError(f"keys/{name} must be base64url.", field="keys") from None


def check_keys(p256dh: str, auth: str) -> None:
    """RFC 8291 §3: p256dh is an uncompressed P-256 point, auth a 16-byte secret."""
    point = _b64url(p256dh, "p256dh")
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        raise ValidationError("keys/p256dh is not a P-256 public key (65 bytes, uncompressed).",
                              field="keys") from None
    if len(point) != 65:
        raise ValidationError("keys/p256dh is not a P-256 public key (65 bytes, uncompressed).", field="keys")
    if len(_b64url(auth, "auth")) != 16:
        raise ValidationError("keys/auth must be 16 bytes (RFC 8291 §3.2).", field="keys")


def capped_expiry(asked: datetime | None, now: datetime) -> datetime:
    """At most seven days ahead; none asked for is the longest."""
    latest = now + MAX_SUBSCRIPTION_LIFETIME
    if asked is None or asked > latest:
        return latest
    if asked <= now:
        raise ValidationError("'expires' must be in the future.", field="expires")
    return asked


async def user_states(changes: ChangeLog, accounts: AppPasswordRepository, user_id: int,
                      kinds: Sequence[JmapObjectType] = PUSHABLE_TYPES) -> PushedStates:
    """The states of every JMAP account of the user (the unified one and each connected account) for `kinds`."""
    rows = await accounts.accounts(user_id)
    scopes = [(f"u{user_id}", MailScope(user_id, tuple(a.id for a in rows), unified=True)),
              *((str(a.id), MailScope.single(user_id, a.id)) for a in rows)]
    pairs = [(jmap_id, scope, kind) for jmap_id, scope in scopes for kind in kinds]
    found = await changes.reader().snapshot([(scope, kind) for _, scope, kind in pairs])
    return {state_key(jmap_id, kind.value): found[(scope, kind)] for jmap_id, scope, kind in pairs}


class PushSubscriptionService:
    def __init__(self, db: Database, changes: ChangeLog, *, allow_loopback: bool = False) -> None:
        self.repo = PushSubscriptionRepository(db)
        self.accounts = AppPasswordRepository(db)
        self.changes = changes
        self.allow_loopback = allow_loopback

    async def owned(self, who: Credentials, ids: Sequence[int] | None = None) -> list[PushSubscriptionRow]:
        return await self.repo.owned(who.user_id, who.app_password_id, ids)

    async def _one(self, who: Credentials, subscription_id: int) -> PushSubscriptionRow:
        found = await self.repo.owned(who.user_id, who.app_password_id, [subscription_id])
        if not found:
            raise NotFoundError(f"No push subscription {subscription_id}.")
        return found[0]

    async def create(self, who: Credentials, *, device_client_id: str, url: str, p256dh: str, auth: str,
                     types: tuple[str, ...] | None, expires: datetime | None) -> PushSubscriptionRow:
        """Stores it unverified; the dispatcher sends the PushVerification at once, and nothing else until the
        client has set the code it carries."""
        if not device_client_id.strip() or len(device_client_id) > MAX_DEVICE_CLIENT_ID:
            raise ValidationError("'deviceClientId' must be 1 to 255 characters.", field="deviceClientId")
        if len(url) > MAX_URL:
            raise ValidationError(f"The push URL is longer than {MAX_URL} characters.", field="url")
        check_keys(p256dh, auth)
        await check_push_url(url, allow_loopback=self.allow_loopback)
        if len(await self.repo.live_for_users([who.user_id])) >= MAX_SUBSCRIPTIONS_PER_USER:
            raise ConflictError(f"You have {MAX_SUBSCRIPTIONS_PER_USER} push subscriptions already; destroy one "
                                f"first.", reason="overQuota")
        now = datetime.now(UTC)
        row = await self.repo.create(NewPushSubscription(
            user_id=who.user_id, app_password_id=who.app_password_id, device_client_id=device_client_id, url=url,
            p256dh=p256dh, auth=auth, types=types, expires_at=capped_expiry(expires, now),
            verification_code=secrets.token_urlsafe(24),
        ))
        await self.repo.announce(who.user_id)
        return row

    async def update(self, who: Credentials, subscription_id: int, *, verification_code: str | None = None,
                     expires: datetime | None = None, renew: bool = False, types: tuple[str, ...] | None = None,
                     set_types: bool = False) -> PushSubscriptionRow:
        """Sets the verification code (a wrong one is refused), renews (`expires`, capped again) or changes the
        types. Once verified, pushes report what moves from now on."""
        current = await self._one(who, subscription_id)
        verified: bool | None = None
        if verification_code is not None:
            if not secrets.compare_digest(verification_code, current.verification_code):
                raise ValidationError("The verification code does not match the one pushed.",
                                      field="verificationCode")
            verified = True
        baseline = None
        if (verified and not current.verified) or set_types:
            baseline = await user_states(self.changes, self.accounts, who.user_id)
        await self.repo.update(subscription_id, verified=verified,
                               expires_at=capped_expiry(expires, datetime.now(UTC)) if renew else None,
                               types=types, set_types=set_types, pushed_states=baseline)
        return await self._one(who, subscription_id)

    async def destroy(self, who: Credentials, subscription_id: int) -> None:
        await self._one(who, subscription_id)
        await self.repo.destroy(subscription_id)
