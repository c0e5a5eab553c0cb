"""Users and their sign-in bookkeeping."""

from __future__ import annotations

import json
from datetime import datetime

import asyncpg

from plmail.db.database import Database
from plmail.domain.enums import Locale
from plmail.domain.mailstore import PUSH_CHANNEL
from plmail.domain.models import Appearance, SecondFactorState, ThrottleState, User, UserCredentials

_USER_COLUMNS = ("id, email, display_name, is_admin, locale, time_zone, created_at, settings, "
                 "disabled_at IS NOT NULL AS disabled, totp_enabled_at IS NOT NULL AS two_factor")


def prefixed_user_columns(alias: str, prefix: str) -> str:
    """The user columns of table `alias`, each named `prefix` + column, for joins whose other table shares names."""
    return ", ".join(
        f"{alias}.{name} AS {prefix}{name}"
        for name in ("id", "email", "display_name", "is_admin", "locale", "time_zone", "created_at", "settings")
    ) + (f", {alias}.disabled_at IS NOT NULL AS {prefix}disabled"
         f", {alias}.totp_enabled_at IS NOT NULL AS {prefix}two_factor")


def user_from_row(row: asyncpg.Record, prefix: str = "") -> User:
    locale = row[f"{prefix}locale"]
    return User(
        id=row[f"{prefix}id"],
        email=row[f"{prefix}email"],
        display_name=row[f"{prefix}display_name"],
        is_admin=row[f"{prefix}is_admin"],
        locale=Locale(locale) if locale in Locale._value2member_map_ else Locale.EN,
        time_zone=row[f"{prefix}time_zone"],
        created_at=row[f"{prefix}created_at"],
        disabled=row[f"{prefix}disabled"],
        two_factor=row[f"{prefix}two_factor"],
        appearance=_appearance(row[f"{prefix}settings"]),
    )


def _appearance(value: object) -> Appearance:
    loaded = json.loads(value) if isinstance(value, str) else value
    stored = loaded.get("appearance") if isinstance(loaded, dict) else None
    if not isinstance(stored, dict):
        return Appearance()
    default = Appearance()
    theme, density, cycle = stored.get("theme"), stored.get("density"), stored.get("hour_cycle")
    return Appearance(
        theme=theme if theme in Appearance.THEMES else default.theme,
        density=density if density in Appearance.DENSITIES else default.density,
        hour_cycle=cycle if cycle in Appearance.HOUR_CYCLES else default.hour_cycle,
        shortcuts=stored.get("shortcuts") is not False,
    )


_user = user_from_row


class UserRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def count(self) -> int:
        return int(await self.db.fetchval("SELECT count(*) FROM app_user"))

    async def lock_for_first_user(self) -> None:
        """Serialises first-run setup, so two browsers racing cannot both become the first admin."""
        await self.db.execute("SELECT pg_advisory_xact_lock(hashtext('plmail:first-user'))")

    async def insert(
        self, *, email: str, display_name: str, password_hash: str, is_admin: bool, locale: Locale, time_zone: str
    ) -> User | None:
        """Returns None when the address is already taken."""
        row = await self.db.fetchrow(
            f"""INSERT INTO app_user (email, display_name, password_hash, is_admin, locale, time_zone,
                                       created_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, now(), now())
                ON CONFLICT (email) DO NOTHING
                RETURNING {_USER_COLUMNS}""",
            email, display_name, password_hash, is_admin, locale.value, time_zone,
        )
        return _user(row) if row else None

    async def by_id(self, user_id: int) -> User | None:
        row = await self.db.fetchrow(f"SELECT {_USER_COLUMNS} FROM app_user WHERE id = $1", user_id)
        return _user(row) if row else None

    async def by_email(self, email: str) -> User | None:
        row = await self.db.fetchrow(f"SELECT {_USER_COLUMNS} FROM app_user WHERE email = $1", email.strip().lower())
        return _user(row) if row else None

    async def credentials_by_email(self, email: str) -> UserCredentials | None:
        row = await self.db.fetchrow(
            f"SELECT {_USER_COLUMNS}, password_hash FROM app_user WHERE email = $1", email
        )
        return UserCredentials(_user(row), row["password_hash"]) if row else None

    async def password_hash(self, user_id: int) -> str | None:
        value = await self.db.fetchval("SELECT password_hash FROM app_user WHERE id = $1", user_id)
        return str(value) if value is not None else None

    async def all(self) -> list[User]:
        rows = await self.db.fetch(f"SELECT {_USER_COLUMNS} FROM app_user ORDER BY id")
        return [_user(r) for r in rows]

    async def record_login(self, user_id: int) -> None:
        await self.db.execute("UPDATE app_user SET last_login_at = now() WHERE id = $1", user_id)

    async def set_password_hash(self, user_id: int, password_hash: str) -> None:
        await self.db.execute("UPDATE app_user SET password_hash = $2, updated_at = now() WHERE id = $1",
                              user_id, password_hash)

    async def set_disabled(self, user_id: int, disabled: bool) -> bool:
        status = await self.db.execute(
            """UPDATE app_user SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, now()) END,
                      updated_at = now()
               WHERE id = $1""",
            user_id, disabled,
        )
        if disabled and status.endswith(" 1"):
            # Wakes the user's open push streams (they watch the unified account), which then find it disabled.
            await self.db.execute(
                "SELECT pg_notify($1, json_build_array(json_build_array(-$2::bigint, 'Principal'))::text)",
                PUSH_CHANNEL, user_id)
        return status.endswith(" 1")

    async def second_factor(self, user_id: int) -> SecondFactorState:
        row = await self.db.fetchrow("SELECT totp_secret, totp_last_step FROM app_user WHERE id = $1", user_id)
        if row is None:
            return SecondFactorState(None, None)
        return SecondFactorState(bytes(row["totp_secret"]) if row["totp_secret"] is not None else None,
                                 row["totp_last_step"])

    async def set_second_factor(self, user_id: int, sealed_secret: bytes | None, *, last_step: int | None = None
                                ) -> None:
        """Store a confirmed secret (None removes the second factor)."""
        await self.db.execute(
            """UPDATE app_user SET totp_secret = $2, totp_last_step = $3,
                      totp_enabled_at = CASE WHEN $2::bytea IS NULL THEN NULL ELSE now() END, updated_at = now()
               WHERE id = $1""",
            user_id, sealed_secret, last_step,
        )

    async def accept_step(self, user_id: int, step: int) -> bool:
        """Record that a code of this time step was used; False when it (or a later one) was used already."""
        value = await self.db.fetchval(
            """UPDATE app_user SET totp_last_step = $2
                WHERE id = $1 AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)
            RETURNING id""",
            user_id, step,
        )
        return value is not None

    async def settings(self, user_id: int) -> dict[str, object]:
        value = await self.db.fetchval("SELECT settings FROM app_user WHERE id = $1", user_id)
        loaded = json.loads(value) if isinstance(value, str) else value
        return loaded if isinstance(loaded, dict) else {}

    async def merge_settings(self, user_id: int, patch: dict[str, object]) -> None:
        await self.db.execute(
            "UPDATE app_user SET settings = settings || $2::jsonb, updated_at = now() WHERE id = $1",
            user_id, json.dumps(patch),
        )

    async def update_preferences(self, user_id: int, *, display_name: str, locale: Locale, time_zone: str) -> None:
        await self.db.execute(
            """UPDATE app_user SET display_name = $2, locale = $3, time_zone = $4, updated_at = now()
               WHERE id = $1""",
            user_id, display_name, locale.value, time_zone,
        )


class LoginThrottleRepository:
    """Event counters within a window, keyed by what they count (see users/throttle.py for the keys)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def state(self, keys: list[str]) -> ThrottleState:
        row = await self.db.fetchrow(
            "SELECT coalesce(max(failures), 0) AS failures, max(locked_until) AS locked_until "
            "FROM login_throttle WHERE key = ANY($1::text[])",
            keys,
        )
        assert row is not None
        return ThrottleState(failures=row["failures"], locked_until=row["locked_until"])

    async def record_failure(self, key: str, *, window_seconds: int) -> int:
        """Count one more failure in the current window (a stale window starts over); returns the count."""
        value = await self.db.fetchval(
            """INSERT INTO login_throttle (key, failures, window_started_at, locked_until)
               VALUES ($1, 1, now(), NULL)
               ON CONFLICT (key) DO UPDATE SET
                   failures = CASE WHEN login_throttle.window_started_at < now() - make_interval(secs => $2)
                                   THEN 1 ELSE login_throttle.failures + 1 END,
                   window_started_at = CASE WHEN login_throttle.window_started_at < now() - make_interval(secs => $2)
                                   THEN now() ELSE login_throttle.window_started_at END
               RETURNING failures""",
            key, window_seconds,
        )
        return int(value)

    async def record_failure_since(self, key: str, *, window_seconds: int) -> tuple[int, datetime]:
        """As record_failure, with the start of the window it counted in (a wait can then end with the window)."""
        row = await self.db.fetchrow(
            """INSERT INTO login_throttle (key, failures, window_started_at, locked_until)
               VALUES ($1, 1, now(), NULL)
               ON CONFLICT (key) DO UPDATE SET
                   failures = CASE WHEN login_throttle.window_started_at < now() - make_interval(secs => $2)
                                   THEN 1 ELSE login_throttle.failures + 1 END,
                   window_started_at = CASE WHEN login_throttle.window_started_at < now() - make_interval(secs => $2)
                                   THEN now() ELSE login_throttle.window_started_at END
               RETURNING failures, window_started_at""",
            key, window_seconds,
        )
        assert row is not None
        return int(row["failures"]), row["window_started_at"]

    async def lock(self, key: str, until: datetime) -> None:
        await self.db.execute(
            "UPDATE login_throttle SET locked_until = greatest(coalesce(locked_until, $2), $2) WHERE key = $1",
            key, until,
        )

    async def clear(self, key: str) -> None:
        await self.db.execute("DELETE FROM login_throttle WHERE key = $1", key)

    async def prune(self, older_than_seconds: int) -> int:
        status = await self.db.execute(
            """DELETE FROM login_throttle
               WHERE window_started_at < now() - make_interval(secs => $1)
                 AND (locked_until IS NULL OR locked_until < now())""",
            older_than_seconds,
        )
        return int(status.split()[-1])
