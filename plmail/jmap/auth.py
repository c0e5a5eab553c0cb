"""App passwords: how a phone proves who it is, and what it may then reach.

A secret is 256 random bits, so a fast SHA-256 is the right hash (argon2 protects guessable
passwords; nobody guesses 2^256). Failures count against the same throttle as web sign-in, under
keys of their own, so a phone with a revoked password cannot lock its owner out of the web UI.
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
from plmail.db.repos.jmap_auth import AccountRow, AppPasswordRepository, AppPasswordRow
from plmail.db.repos.users import LoginThrottleRepository, UserRepository
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.jmap.errors import RequestError
from plmail.users.service import ThrottlePolicy

CREDENTIAL_PREFIX: Final = "plmail_"
REALM: Final = 'Basic realm="plmail JMAP"'
TOUCH_INTERVAL_SECONDS: Final = 300
_SECRET = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class Principal:
    """The user behind a request, and the mail accounts (= JMAP accounts) it may reach."""

    user_id: int
    email: str
    display_name: str
    password_id: int
    accounts: tuple[AccountRow, ...]

    def account(self, account_id: object) -> AccountRow | None:
        for account in self.accounts:
            if isinstance(account_id, str) and account_id == str(account.id):
                return account
        return None


@dataclass(frozen=True, slots=True)
class NewAppPassword:
    id: int
    name: str
    token: str  # shown once; only its hash is stored


def unauthorized(detail: str) -> RequestError:
    return RequestError("unauthorized", detail, status=401, headers={"WWW-Authenticate": REALM})


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _secret_of(value: str) -> str | None:
    secret = value.removeprefix(CREDENTIAL_PREFIX)
    return secret if _SECRET.match(secret) else None


class AppPasswordService:
    def __init__(self, db: Database, policy: ThrottlePolicy | None = None) -> None:
        self.repo = AppPasswordRepository(db)
        self.users = UserRepository(db)
        self.throttle = LoginThrottleRepository(db)
        self.policy = policy or ThrottlePolicy()

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

    async def authenticate(self, authorization: str | None, *, client: str) -> Principal:
        """Bearer plmail_<secret>, or Basic email:secret whose email must be the owner's."""
        scheme, _, credentials = (authorization or "").strip().partition(" ")
        scheme = scheme.lower()
        if scheme not in ("bearer", "basic") or not credentials.strip():
            raise unauthorized("Send an app password as Bearer or Basic credentials.")
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
        keys = [f"jmap:ip:{client}"] + ([f"jmap:email:{username}"] if username else [])
        await self._refuse_when_locked(keys)
        match = await self.repo.match(_hash(secret)) if secret else None
        if match is None or (username is not None and not hmac.compare_digest(username, match.email)):
            await self._record_failure(keys)
            raise unauthorized("The app password is wrong, revoked, or belongs to someone else.")
        if username:
            await self.throttle.clear(keys[1])
        if match.last_used_at is None or datetime.now(UTC) - match.last_used_at > timedelta(
                seconds=TOUCH_INTERVAL_SECONDS):
            await self.repo.touch(match.password_id, TOUCH_INTERVAL_SECONDS)
        accounts = await self.repo.accounts(match.user_id)
        return Principal(match.user_id, match.email, match.display_name, match.password_id, tuple(accounts))

    async def _refuse_when_locked(self, keys: list[str]) -> None:
        state = await self.throttle.state(keys)
        now = datetime.now(UTC)
        if state.locked_until is not None and state.locked_until > now:
            retry = max(1, int((state.locked_until - now).total_seconds() + 0.999))
            raise RequestError("about:blank", f"Too many failed attempts. Try again in {retry} seconds.",
                               status=429, headers={"Retry-After": str(retry)})

    async def _record_failure(self, keys: list[str]) -> None:
        thresholds = [self.policy.ip_threshold, self.policy.email_threshold]
        for key, threshold in zip(keys, thresholds, strict=False):  # the ip key, then the email key if any
            failures = await self.throttle.record_failure(key, window_seconds=self.policy.window_seconds)
            if failures >= threshold:
                until = datetime.now(UTC) + timedelta(seconds=self.policy.lock_seconds(failures, threshold))
                await self.throttle.lock(key, until)
