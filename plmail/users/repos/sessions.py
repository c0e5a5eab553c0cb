"""Signed-in browsers (web sessions), the browsers that signed in before (trusted devices), recovery codes."""

from __future__ import annotations

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.users import prefixed_user_columns, user_from_row
from plmail.domain.models import TrustedDeviceRow, User, WebSessionRow

_SESSION_COLUMNS = "s.id, s.user_id, s.created_at, s.last_seen_at, s.expires_at, s.remember, s.user_agent, " \
                   "s.client_address, s.reauthenticated_at"


def _session(row: asyncpg.Record) -> WebSessionRow:
    return WebSessionRow(row["id"], row["user_id"], row["created_at"], row["last_seen_at"], row["expires_at"],
                         row["remember"], row["user_agent"], row["client_address"], row["reauthenticated_at"])


class WebSessionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, *, user_id: int, token_hash: str, lifetime_seconds: int, remember: bool,
                     user_agent: str, client_address: str) -> int:
        return int(await self.db.fetchval(
            """INSERT INTO web_session (user_id, token_hash, created_at, last_seen_at, expires_at, remember,
                                        user_agent, client_address)
               VALUES ($1, $2, now(), now(), now() + make_interval(secs => $3), $4, $5, $6) RETURNING id""",
            user_id, token_hash, lifetime_seconds, remember, user_agent, client_address,
        ))

    async def resume(self, token_hash: str, *, idle_seconds: int, touch_interval_seconds: int
                     ) -> tuple[WebSessionRow, User, bool] | None:
        """The live session with this token and its user: not past its end, not idle too long, user enabled; and
        whether its last activity is older than `touch_interval_seconds` (by the database's clock, as `touch`
        decides), so a request that need not record activity makes no second round trip."""
        row = await self.db.fetchrow(
            f"""SELECT {_SESSION_COLUMNS}, {prefixed_user_columns("u", "u_")},
                       s.last_seen_at < now() - make_interval(secs => $3) AS touch_due
                  FROM web_session s JOIN app_user u ON u.id = s.user_id
                 WHERE s.token_hash = $1 AND s.expires_at > now()
                   AND s.last_seen_at > now() - make_interval(secs => $2) AND u.disabled_at IS NULL""",
            token_hash, idle_seconds, touch_interval_seconds,
        )
        if row is None:
            return None
        return _session(row), user_from_row(row, "u_"), bool(row["touch_due"])

    async def touch(self, session_id: int, *, user_agent: str, client_address: str, min_interval_seconds: int
                    ) -> None:
        """Record activity, at most once per interval: pages poll every few seconds."""
        await self.db.execute(
            """UPDATE web_session SET last_seen_at = now(), user_agent = $2, client_address = $3
                WHERE id = $1 AND last_seen_at < now() - make_interval(secs => $4)""",
            session_id, user_agent, client_address, min_interval_seconds,
        )

    async def reauthenticated(self, session_id: int) -> None:
        await self.db.execute("UPDATE web_session SET reauthenticated_at = now() WHERE id = $1", session_id)

    async def for_user(self, user_id: int, *, idle_seconds: int) -> list[WebSessionRow]:
        rows = await self.db.fetch(
            f"""SELECT {_SESSION_COLUMNS} FROM web_session s
                 WHERE s.user_id = $1 AND s.expires_at > now() AND s.last_seen_at > now() - make_interval(secs => $2)
                 ORDER BY s.last_seen_at DESC, s.id DESC""",
            user_id, idle_seconds,
        )
        return [_session(r) for r in rows]

    async def delete_by_token(self, token_hash: str) -> None:
        await self.db.execute("DELETE FROM web_session WHERE token_hash = $1", token_hash)

    async def delete(self, user_id: int, session_id: int) -> bool:
        status = await self.db.execute("DELETE FROM web_session WHERE id = $1 AND user_id = $2", session_id, user_id)
        return status.endswith(" 1")

    async def delete_all(self, user_id: int, *, keep: int | None = None) -> int:
        status = await self.db.execute(
            "DELETE FROM web_session WHERE user_id = $1 AND ($2::bigint IS NULL OR id <> $2)", user_id, keep)
        return int(status.split()[-1])

    async def prune(self, *, idle_seconds: int) -> int:
        status = await self.db.execute(
            "DELETE FROM web_session WHERE expires_at < now() OR last_seen_at < now() - make_interval(secs => $1)",
            idle_seconds,
        )
        return int(status.split()[-1])


class TrustedDeviceRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, *, user_id: int, token_hash: str, user_agent: str) -> int:
        return int(await self.db.fetchval(
            """INSERT INTO trusted_device (user_id, token_hash, created_at, last_seen_at, user_agent)
               VALUES ($1, $2, now(), now(), $3) RETURNING id""",
            user_id, token_hash, user_agent,
        ))

    async def find(self, token_hash: str, *, max_age_seconds: int) -> TrustedDeviceRow | None:
        row = await self.db.fetchrow(
            """SELECT id, user_id, last_seen_at, second_factor_until FROM trusted_device
                WHERE token_hash = $1 AND last_seen_at > now() - make_interval(secs => $2)""",
            token_hash, max_age_seconds,
        )
        return TrustedDeviceRow(row["id"], row["user_id"], row["last_seen_at"], row["second_factor_until"]) \
            if row else None

    async def touch(self, device_id: int) -> None:
        await self.db.execute("UPDATE trusted_device SET last_seen_at = now() WHERE id = $1", device_id)

    async def remember_second_factor(self, device_id: int, seconds: int) -> None:
        await self.db.execute(
            "UPDATE trusted_device SET second_factor_until = now() + make_interval(secs => $2) WHERE id = $1",
            device_id, seconds,
        )

    async def forget_second_factor(self, user_id: int) -> None:
        await self.db.execute("UPDATE trusted_device SET second_factor_until = NULL WHERE user_id = $1", user_id)

    async def delete(self, device_id: int) -> None:
        await self.db.execute("DELETE FROM trusted_device WHERE id = $1", device_id)

    async def prune(self, *, max_age_seconds: int) -> int:
        status = await self.db.execute(
            "DELETE FROM trusted_device WHERE last_seen_at < now() - make_interval(secs => $1)", max_age_seconds)
        return int(status.split()[-1])


class RecoveryCodeRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def replace(self, user_id: int, code_hashes: list[str]) -> None:
        async with self.db.transaction():
            await self.db.execute("DELETE FROM recovery_code WHERE user_id = $1", user_id)
            await self.db.execute(
                """INSERT INTO recovery_code (user_id, code_hash, created_at)
                   SELECT $1, h, now() FROM unnest($2::text[]) AS h""",
                user_id, code_hashes,
            )

    async def use(self, user_id: int, code_hash: str) -> bool:
        """Spend an unused code; False when there is none with this hash (or it was spent already)."""
        value = await self.db.fetchval(
            """UPDATE recovery_code SET used_at = now()
                WHERE id = (SELECT id FROM recovery_code WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL
                             LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING id""",
            user_id, code_hash,
        )
        return value is not None

    async def remaining(self, user_id: int) -> int:
        return int(await self.db.fetchval(
            "SELECT count(*) FROM recovery_code WHERE user_id = $1 AND used_at IS NULL", user_id))

    async def delete(self, user_id: int) -> None:
        await self.db.execute("DELETE FROM recovery_code WHERE user_id = $1", user_id)
