"""The user service: the one place that creates users and decides whether a sign-in succeeds."""

from __future__ import annotations

import re
import zoneinfo

from plmail.db.database import Database
from plmail.db.repos.labels import LabelRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.enums import Locale
from plmail.domain.errors import (
    AuthenticationError,
    NotFoundError,
    SetupAlreadyDoneError,
    ValidationError,
)
from plmail.domain.models import Appearance, User
from plmail.users.passwords import (
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    hash_password,
    needs_rehash,
    verify_password,
)
from plmail.users.throttle import LoginThrottle, ThrottlePolicy

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def normalise_email(email: str) -> str:
    value = email.strip().lower()
    if not _EMAIL.match(value) or len(value) > 320:
        raise ValidationError("Enter a valid email address.")
    return value


def check_password_rules(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValidationError(f"The password must have at least {MIN_PASSWORD_LENGTH} characters.")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise ValidationError(f"The password must have at most {MAX_PASSWORD_LENGTH} characters.")


def check_time_zone(name: str) -> str:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"Unknown time zone {name!r}; use a name such as Europe/Berlin.") from None
    return name


class UserService:
    def __init__(self, db: Database, throttle: LoginThrottle | None = None) -> None:
        self.db = db
        self.users = UserRepository(db)
        self.labels = LabelRepository(db)
        self.throttle = throttle or LoginThrottle(db)

    @property
    def policy(self) -> ThrottlePolicy:
        return self.throttle.policy

    async def setup_needed(self) -> bool:
        return await self.users.count() == 0

    async def create_user(
        self,
        email: str,
        password: str,
        *,
        display_name: str = "",
        is_admin: bool = False,
        locale: Locale = Locale.EN,
        time_zone: str = "UTC",
        first_run: bool = False,
    ) -> User:
        """Create a user with the system labels; with `first_run`, only while no user exists yet."""
        address = normalise_email(email)
        check_password_rules(password)
        check_time_zone(time_zone)
        password_hash = await hash_password(password)
        async with self.db.transaction():
            if first_run:
                await self.users.lock_for_first_user()
                if await self.users.count() > 0:
                    raise SetupAlreadyDoneError("plmail is already set up; sign in instead.")
            user = await self.users.insert(
                email=address,
                display_name=display_name.strip(),
                password_hash=password_hash,
                is_admin=is_admin or first_run,
                locale=locale,
                time_zone=time_zone,
            )
            if user is None:
                raise ValidationError(f"A user with the address {address} already exists.")
            created: User = user
            await self.labels.ensure_system_labels(created.id)
        return created

    async def authenticate(self, email: str, password: str, *, client: str) -> User:
        """Check a sign-in; throttled per address and per client before any hashing happens."""
        address = email.strip().lower()
        keys = [f"email:{address}", f"ip:{client}"]
        await self.throttle.refuse_when_locked(keys)
        credentials = await self.users.credentials_by_email(address) if len(password) <= MAX_PASSWORD_LENGTH else None
        stored_hash = credentials.password_hash if credentials else None
        if credentials is None or not await verify_password(stored_hash, password):
            await self.throttle.failed([(keys[0], self.policy.email_threshold), (keys[1], self.policy.ip_threshold)])
            raise AuthenticationError("The email address or password is wrong.")
        await self.throttle.succeeded(keys[0])
        if stored_hash and needs_rehash(stored_hash):
            await self.users.set_password_hash(credentials.user.id, await hash_password(password), end_sessions=False)
        await self.users.record_login(credentials.user.id)
        return credentials.user

    async def by_id(self, user_id: int) -> User:
        user = await self.users.by_id(user_id)
        if user is None:
            raise NotFoundError("No such user.")
        return user

    async def session_user(self, user_id: int, epoch: int) -> User | None:
        """The user a session cookie names, or None when the user is gone or the session was ended."""
        user = await self.users.by_id(user_id)
        if user is None or user.session_epoch != epoch:
            return None
        return user

    async def by_email(self, email: str) -> User:
        user = await self.users.by_email(email)
        if user is None:
            raise NotFoundError(f"No user with the address {email.strip().lower()}.")
        return user

    async def all_users(self) -> list[User]:
        return await self.users.all()

    async def change_password(self, user: User, current: str, new: str) -> None:
        if not await verify_password(await self.users.password_hash(user.id), current):
            raise AuthenticationError("The current password is wrong.")
        check_password_rules(new)
        # Ends every other session: a password change is how people lock out a stolen cookie.
        await self.users.set_password_hash(user.id, await hash_password(new), end_sessions=True)

    async def update_preferences(self, user: User, *, display_name: str, locale: str, time_zone: str) -> None:
        if locale not in Locale._value2member_map_:
            raise ValidationError("Choose English or Deutsch.")
        await self.users.update_preferences(
            user.id,
            display_name=display_name.strip()[:200],
            locale=Locale(locale),
            time_zone=check_time_zone(time_zone),
        )

    async def save_appearance(self, user: User, *, theme: str, density: str, hour_cycle: str,
                              shortcuts: bool) -> None:
        if theme not in Appearance.THEMES or density not in Appearance.DENSITIES or \
                hour_cycle not in Appearance.HOUR_CYCLES:
            raise ValidationError("Choose one of the offered settings.")
        await self.users.merge_settings(user.id, {"appearance": {
            "theme": theme, "density": density, "hour_cycle": hour_cycle, "shortcuts": shortcuts}})

    async def prune_throttle(self) -> int:
        return await self.throttle.prune()
