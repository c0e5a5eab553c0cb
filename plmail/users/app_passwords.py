"""App passwords: how a phone (a JMAP client) proves who it is, and what it may then reach.

A secret is 256 random bits, so a fast SHA-256 is the right hash (argon2 protects guessable
passwords; nobody guesses 2^256). For the same reason a valid app password is never refused: the one sign-in
throttle only slows down requests carrying a wrong one, under keys of their own, so a phone with a revoked
password cannot lock its owner out of the web UI either.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from plmail.db.database import Database
from plmail.db.repos.jmap_auth import AppPasswordRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.errors import AuthenticationError, NotFoundError, ValidationError
from plmail.domain.models import AppPasswordRow, Principal
from plmail.users.throttle import Attempt, LoginThrottle

CREDENTIAL_PREFIX: Final = "plmail_"
TOUCH_INTERVAL_SECONDS: Final = 300
_SECRET = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class NewAppPassword:
    id: int
    name: str
    token: str  # shown once; only its hash is stored


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _secret_of(value: str) -> str | None:
    secret = value.removeprefix(CREDENTIAL_PREFIX)
    return secret if _SECRET.match(secret) else None


class AppPasswordService:
    def __init__(self, db: Database, throttle: LoginThrottle) -> None:
        self.repo = AppPasswordRepository(db)
        self.users = UserRepository(db)
        self.throttle = throttle

    async def create(self, user_id: int, name: str) -> NewAppPassword:
        clean = " ".join(name.split())[:100]
        if not clean:
            raise ValidationError("Name the device, for example “Phone”.")
        secret = secrets.token_hex(32)
        password_id = await self.repo.create(user_id, clean, _hash(secret), f"…{secret[-4:]}")
        return NewAppPassword(password_id, clean, CREDENTIAL_PREFIX + secret)

    async def create_for_email(self, email: str, name: str) -> NewAppPassword:
        user = await self.users.by_email(email)
        if user is None:
            raise NotFoundError(f"No user with the address {email.strip().lower()}.")
        return await self.create(user.id, name)

    async def active(self, user_id: int) -> list[AppPasswordRow]:
        return await self.repo.active(user_id)

    async def revoke(self, user_id: int, password_id: int) -> None:
        if not await self.repo.revoke(user_id, password_id):
            raise NotFoundError("No such app password.")

    async def belongs_to(self, user_id: int, token: str) -> bool:
        """Whether `token` is one of this user's live app passwords (the phone set-up hands it to a device)."""
        secret = _secret_of(token.strip())
        match = await self.repo.match(_hash(secret)) if secret else None
        return match is not None and match.user_id == user_id

    async def still_valid(self, principal: Principal) -> bool:
        """Whether a connection opened with this principal may go on (push streams, the WebSocket): the app
        password was not revoked and its owner not disabled since."""
        return await self.repo.live(principal.password_id)

    async def authenticate(self, authorization: str | None, *, client: str) -> Principal:
        """Bearer plmail_<secret>, or Basic email:secret whose email must be the owner's. Raises
        AuthenticationError for wrong credentials (LoginThrottledError when this client has guessed wrong too
        often lately); a valid app password always works."""
        scheme, _, credentials = (authorization or "").strip().partition(" ")
        scheme = scheme.lower()
        if scheme not in ("bearer", "basic") or not credentials.strip():
            raise AuthenticationError("Send an app password as Bearer or Basic credentials.")
        username: str | None = None
        secret: str | None
        if scheme == "bearer":
            secret = _secret_of(credentials.strip()) if credentials.strip().startswith(CREDENTIAL_PREFIX) else None
        else:
            try:
                decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            user_part, _, password_part = decoded.partition(":")
            username = user_part.strip().lower()
            secret = _secret_of(password_part.strip())
        attempt = Attempt("jmap", username or None, client)
        match = await self.repo.match(_hash(secret)) if secret else None
        if match is None or (username is not None and not hmac.compare_digest(username, match.email)):
            await self.throttle.refuse_if_waiting(attempt)
            await self.throttle.failed(attempt)
            raise AuthenticationError("The app password is wrong, revoked, or belongs to someone else.")
        if username:
            await self.throttle.succeeded(attempt)
        if match.last_used_at is None or datetime.now(UTC) - match.last_used_at > timedelta(
                seconds=TOUCH_INTERVAL_SECONDS):
            await self.repo.touch(match.password_id, TOUCH_INTERVAL_SECONDS)
        return Principal(match.user_id, match.email, match.display_name, match.password_id, match.accounts)
