"""The user service: the one place that creates users and decides whether a sign-in succeeds."""

from __future__ import annotations

import re
import secrets
import zoneinfo
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from plmail.db.database import Database
from plmail.db.repos.labels import LabelRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.enums import Locale
from plmail.domain.errors import (
    AuthenticationError,
    NotFoundError,
    ReauthenticationRequiredError,
    SetupAlreadyDoneError,
    ValidationError,
)
from plmail.domain.models import Appearance, TrustedDeviceRow, User, WebSessionRow
from plmail.users.passwords import (
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    hash_password,
    needs_rehash,
    verify_password,
)
from plmail.users.sessions import NewSession, SessionService, TrustedDevices
from plmail.users.throttle import Attempt, LoginThrottle, ThrottlePolicy
from plmail.users.two_factor import TwoFactorService

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


@dataclass(frozen=True, slots=True)
class Browser:
    """What the web layer knows about who is signing in: the client address, the user agent, the device cookie."""

    client: str
    user_agent: str = ""
    device_token: str | None = None


@dataclass(frozen=True, slots=True)
class SignInResult:
    user: User
    session: NewSession | None  # None: the password was right, and a second-factor code is needed next
    device_token: str | None = None  # a new device cookie to set (None: keep the browser's)
    code_attempt: str | None = None  # with a code still owed: names this sign-in attempt's count of wrong codes


class UserService:
    def __init__(self, db: Database, throttle: LoginThrottle, *, sessions: SessionService, devices: TrustedDevices,
                 two_factor: TwoFactorService) -> None:
        self.db = db
        self.users = UserRepository(db)
        self.labels = LabelRepository(db)
        self.throttle = throttle
        self.sessions = sessions
        self.devices = devices
        self.two_factor = two_factor
        # What else stops when a user is disabled (scheduled sends: services.py adds the outbox's).
        self.on_disabled: list[Callable[[int], Awaitable[object]]] = []

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

    async def sign_in(self, email: str, password: str, browser: Browser, *, remember: bool = False
                      ) -> SignInResult:
        """Check a password (throttled before any hashing); with a second factor and no remembered device, the
        result has no session yet and `sign_in_with_code` finishes the sign-in."""
        address = email.strip().lower()
        credentials = await self.users.credentials_by_email(address) if len(password) <= MAX_PASSWORD_LENGTH else None
        device = await self.devices.find(browser.device_token, credentials.user.id if credentials else None)
        attempt = Attempt("web", address, browser.client, device.id if device else None,
                          known=credentials is not None)
        waiting = await self.throttle.admit(attempt)
        stored_hash = credentials.password_hash if credentials else None
        if credentials is None or not await verify_password(stored_hash, password):
            await self.throttle.failed(attempt)
            if waiting is not None:  # a client that tried made-up addresses: a wrong password waits like any other
                raise waiting
            raise AuthenticationError("The email address or password is wrong.")
        user = credentials.user
        if user.disabled:
            raise AuthenticationError("This account is disabled. Ask your administrator.")
        await self.throttle.succeeded(attempt)
        if stored_hash and needs_rehash(stored_hash):
            await self.users.set_password_hash(user.id, await hash_password(password))
        if user.two_factor and not _remembers_second_factor(device):
            return SignInResult(user, None, code_attempt=secrets.token_urlsafe(18))
        return await self._complete(user, device, browser, remember=remember)

    async def sign_in_with_code(self, user_id: int, code: str, browser: Browser, *, code_attempt: str,
                                remember: bool = False, remember_device: bool = False) -> SignInResult:
        """The second step: a TOTP or recovery code. Wrong codes count against the user from every address and
        against this sign-in attempt (`code_attempt`, from the password step), never cleared by a password."""
        user = await self.by_id(user_id)
        device = await self.devices.find(browser.device_token, user.id)
        await self.throttle.admit_code(user.id, code_attempt)
        if user.disabled or not await self.two_factor.verify(user.id, code):
            await self.throttle.code_failed(user.id, code_attempt)
            raise AuthenticationError("That code is wrong or was used already.")
        result = await self._complete(user, device, browser, remember=remember)
        if remember_device:
            await self.devices.remember_second_factor(user.id, result.device_token or browser.device_token or "")
        return result

    async def start_session(self, user: User, browser: Browser, *, remember: bool = False) -> SignInResult:
        """A session without a password check: for the user who just set plmail up."""
        return await self._complete(user, None, browser, remember=remember)

    async def _complete(self, user: User, device: TrustedDeviceRow | None, browser: Browser, *, remember: bool
                        ) -> SignInResult:
        session = await self.sessions.start(user, remember=remember, user_agent=browser.user_agent,
                                            client=browser.client)
        token = await self.devices.signed_in(user.id, device, user_agent=browser.user_agent)
        await self.users.record_login(user.id)
        return SignInResult(user, session, token)

    async def by_id(self, user_id: int) -> User:
        user = await self.users.by_id(user_id)
        if user is None:
            raise NotFoundError("No such user.")
        return user

    async def by_email(self, email: str) -> User:
        user = await self.users.by_email(email)
        if user is None:
            raise NotFoundError(f"No user with the address {email.strip().lower()}.")
        return user

    async def all_users(self) -> list[User]:
        return await self.users.all()

    async def check_password(self, user: User, password: str, browser: Browser) -> None:
        """For changes a signed-in user confirms with the password (a stolen session alone cannot make them);
        throttled like a sign-in, so a session cannot be used to guess the password either."""
        device = await self.devices.find(browser.device_token, user.id)
        attempt = Attempt("web", user.email, browser.client, device.id if device else None)
        await self.throttle.admit(attempt)
        if len(password) > MAX_PASSWORD_LENGTH or \
                not await verify_password(await self.users.password_hash(user.id), password):
            await self.throttle.failed(attempt)
            raise AuthenticationError("The current password is wrong.")
        await self.throttle.succeeded(attempt)

    async def reauthenticate(self, user: User, session: WebSessionRow | None, password: str, browser: Browser
                             ) -> None:
        """Before turning the second factor on or off, new recovery codes or a new app password: the current
        password, unless this session gave it within the last ten minutes (then an empty one will do)."""
        if not password and self.sessions.recently_reauthenticated(session):
            return
        if not password:
            raise ReauthenticationRequiredError("Enter your current password to make this change.")
        await self.check_password(user, password, browser)
        if session is not None:
            await self.sessions.reauthenticated(session.id)

    async def change_password(self, user: User, current: str, new: str, browser: Browser, *, remember: bool
                              ) -> SignInResult:
        """Ends every session, this one too: a password change is how people lock out a stolen cookie, and a copy of
        this browser's cookie is one. The browser that changed it gets a new session. Always asks for the current
        password."""
        await self.check_password(user, current, browser)
        check_password_rules(new)
        await self.users.set_password_hash(user.id, await hash_password(new))
        await self.sessions.end_all(user.id)
        return await self.start_session(user, browser, remember=remember)

    async def set_disabled(self, admin: User, user_id: int, disabled: bool) -> None:
        """An administrator switches a user off (every session ends at once) or on again."""
        if disabled and user_id == admin.id:
            raise ValidationError("You cannot disable your own account.")
        if not await self.users.set_disabled(user_id, disabled):
            raise NotFoundError("No such user.")
        if disabled:
            await self.sessions.end_all(user_id)
            for stop in self.on_disabled:
                await stop(user_id)

    async def reset_second_factor(self, user_id: int) -> None:
        """An administrator removes a user's second factor (lost phone, no recovery codes left)."""
        await self.by_id(user_id)
        await self.two_factor.remove(user_id)
        await self.devices.forget_second_factor(user_id)

    async def disable_second_factor(self, user: User) -> None:
        """After `reauthenticate`: the user switches the second factor off."""
        await self.two_factor.remove(user.id)
        await self.devices.forget_second_factor(user.id)

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
        """Housekeeping: old throttle counters, ended sessions, devices not seen for a year."""
        pruned = await self.throttle.prune()
        pruned += await self.sessions.prune()
        pruned += await self.devices.prune()
        return pruned


def _remembers_second_factor(device: TrustedDeviceRow | None) -> bool:
    return device is not None and device.second_factor_until is not None and \
        device.second_factor_until > datetime.now(UTC)
