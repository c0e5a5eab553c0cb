"""Web sessions kept on the server: signing out deletes the row, so a copied cookie stops working at once.

The cookie carries 256 random bits; the table keeps their SHA-256 (the token cannot be guessed, so a fast hash
is enough, as for app passwords). A session ends after 14 idle days and at the latest 60 days after sign-in;
without "remember me" its cookie also ends with the browser.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from plmail.db.database import Database
from plmail.domain.errors import NotFoundError
from plmail.domain.models import TrustedDeviceRow, User, WebSessionRow
from plmail.users.repos.sessions import TrustedDeviceRepository, WebSessionRepository

IDLE_SECONDS: Final = 14 * 24 * 3600
ABSOLUTE_SECONDS: Final = 60 * 24 * 3600
TOUCH_INTERVAL_SECONDS: Final = 300
# After the password was given again, changes to how one signs in need no password for this long (issue 39).
REAUTHENTICATION_SECONDS: Final = 10 * 60
# A device cookie lives a year from the last sign-in; it only exempts from the throttle and (for 30 days after
# a code) from the second factor, so it is worth keeping across the sessions it outlives.
DEVICE_SECONDS: Final = 365 * 24 * 3600
REMEMBER_SECOND_FACTOR_SECONDS: Final = 30 * 24 * 3600
_MAX_AGENT = 300


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True, slots=True)
class NewSession:
    token: str  # for the cookie; only its hash is stored
    id: int
    max_age: int | None  # None: a browser-session cookie


@dataclass(frozen=True, slots=True)
class ActiveSession:
    session: WebSessionRow
    user: User


class SessionService:
    def __init__(self, db: Database) -> None:
        self.repo = WebSessionRepository(db)

    async def start(self, user: User, *, remember: bool, user_agent: str, client: str) -> NewSession:
        token = secrets.token_urlsafe(32)
        session_id = await self.repo.create(
            user_id=user.id, token_hash=token_hash(token), lifetime_seconds=ABSOLUTE_SECONDS, remember=remember,
            user_agent=user_agent[:_MAX_AGENT], client_address=client[:64],
        )
        return NewSession(token, session_id, ABSOLUTE_SECONDS if remember else None)

    async def resume(self, token: str | None, *, user_agent: str, client: str) -> ActiveSession | None:
        """The session a cookie names, or None when it ended (signed out, revoked, expired, user disabled)."""
        if not token or len(token) > 200:
            return None
        found = await self.repo.resume(token_hash(token), idle_seconds=IDLE_SECONDS,
                                       touch_interval_seconds=TOUCH_INTERVAL_SECONDS)
        if found is None:
            return None
        session, user, touch_due = found
        if touch_due:
            await self.repo.touch(session.id, user_agent=user_agent[:_MAX_AGENT], client_address=client[:64],
                                  min_interval_seconds=TOUCH_INTERVAL_SECONDS)
        return ActiveSession(session, user)

    async def reauthenticated(self, session_id: int) -> None:
        await self.repo.reauthenticated(session_id)

    @staticmethod
    def recently_reauthenticated(session: WebSessionRow | None) -> bool:
        """Whether this session gave the password again within the last REAUTHENTICATION_SECONDS."""
        stamp = session.reauthenticated_at if session is not None else None
        return stamp is not None and datetime.now(UTC) - stamp < timedelta(seconds=REAUTHENTICATION_SECONDS)

    async def end(self, token: str | None) -> None:
        if token:
            await self.repo.delete_by_token(token_hash(token))

    async def end_all(self, user_id: int, *, keep: int | None = None) -> int:
        """End every session of the user (but `keep`); returns how many ended."""
        return await self.repo.delete_all(user_id, keep=keep)

    async def revoke(self, user_id: int, session_id: int) -> None:
        if not await self.repo.delete(user_id, session_id):
            raise NotFoundError("No such session.")

    async def active(self, user_id: int) -> list[WebSessionRow]:
        return await self.repo.for_user(user_id, idle_seconds=IDLE_SECONDS)

    async def prune(self) -> int:
        return await self.repo.prune(idle_seconds=IDLE_SECONDS)


class TrustedDevices:
    """Browsers that signed in successfully before: the device cookie."""

    def __init__(self, db: Database) -> None:
        self.repo = TrustedDeviceRepository(db)

    async def find(self, token: str | None, user_id: int | None) -> TrustedDeviceRow | None:
        """The device a cookie names, when it belongs to this user."""
        if not token or user_id is None or len(token) > 200:
            return None
        device = await self.repo.find(token_hash(token), max_age_seconds=DEVICE_SECONDS)
        return device if device is not None and device.user_id == user_id else None

    async def signed_in(self, user_id: int, device: TrustedDeviceRow | None, *, user_agent: str) -> str | None:
        """After a complete sign-in: the new device token to set, or None when the browser's cookie stays."""
        if device is not None and device.user_id == user_id:
            await self.repo.touch(device.id)
            return None
        token = secrets.token_urlsafe(32)
        await self.repo.create(user_id=user_id, token_hash=token_hash(token), user_agent=user_agent[:_MAX_AGENT])
        return token

    async def remember_second_factor(self, user_id: int, token: str) -> None:
        device = await self.find(token, user_id)
        if device is not None:
            await self.repo.remember_second_factor(device.id, REMEMBER_SECOND_FACTOR_SECONDS)

    async def forget_second_factor(self, user_id: int) -> None:
        await self.repo.forget_second_factor(user_id)

    async def prune(self) -> int:
        return await self.repo.prune(max_age_seconds=DEVICE_SECONDS)
