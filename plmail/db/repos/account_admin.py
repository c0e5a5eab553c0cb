"""Accounts as sync and settings see them: connection settings, status, import bookkeeping, locks.

Reads for the user's pages are scoped by the user; the `*_for_job` reads serve jobs, which carry an
account id and act for that account's owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import UNFLUSHED_COMMIT, Database
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.mailstore import PUSH_CHANNEL
from plmail.domain.models import Account

# Session advisory lock namespaces (first key of the two-key form).
SYNC_LOCK = 0x706C7301
IMPORT_LOCK = 0x706C7302
IDLE_LEADER_LOCK = 0x706C7303
IDLE_POKE_CHANNEL = "plmail_idle_poke"  # any node asks the IDLE leader (maybe on another node) to look again

_COLUMNS = ("id, user_id, provider_kind, name, email, username, credentials, settings, sync_state, status, "
            "status_detail, is_active, last_synced_at, updated_at")


def _json(value: Any) -> dict[str, Any]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return loaded if isinstance(loaded, dict) else {}


@dataclass(frozen=True, slots=True)
class AccountRecord:
    """An account with everything connecting to it needs; `credentials` is the sealed box, never plaintext."""

    id: int
    user_id: int
    provider_kind: ProviderKind
    name: str
    email: str
    username: str
    credentials: bytes | None
    settings: dict[str, Any]
    sync_state: dict[str, Any]
    status: AccountStatus
    status_detail: str
    is_active: bool
    last_synced_at: datetime | None
    updated_at: datetime

    @property
    def account(self) -> Account:
        return Account(self.id, self.user_id, self.provider_kind, self.name, self.email, self.status,
                       self.is_active, self.last_synced_at)

    @property
    def imap(self) -> dict[str, Any]:
        value = self.settings.get("imap")
        return value if isinstance(value, dict) else {}


def _record(row: asyncpg.Record) -> AccountRecord:
    return AccountRecord(
        id=row["id"], user_id=row["user_id"], provider_kind=ProviderKind(row["provider_kind"]), name=row["name"],
        email=row["email"], username=row["username"], credentials=row["credentials"],
        settings=_json(row["settings"]), sync_state=_json(row["sync_state"]), status=AccountStatus(row["status"]),
        status_detail=row["status_detail"], is_active=row["is_active"], last_synced_at=row["last_synced_at"],
        updated_at=row["updated_at"],
    )


class AccountAdminRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- reads -----------------------------------------------------------------------------------------

    async def for_job(self, account_id: int) -> AccountRecord | None:
        row = await self.db.fetchrow(f"SELECT {_COLUMNS} FROM account WHERE id = $1", account_id)
        return _record(row) if row else None

    async def owned(self, user_id: int, account_id: int) -> AccountRecord | None:
        row = await self.db.fetchrow(f"SELECT {_COLUMNS} FROM account WHERE id = $1 AND user_id = $2",
                                     account_id, user_id)
        return _record(row) if row else None

    async def syncable_ids(self) -> list[int]:
        """Accounts the fallback poll syncs: active, not waiting for new credentials, with a provider. One whose
        provider pushes its changes (a live Gmail watch or Graph subscription, providers/*/push.py) is left out
        while it synced within the hour: push syncs it, and the hourly poll stays as the net for a lost push."""
        rows = await self.db.fetch(
            """SELECT id FROM account WHERE is_active AND status = $1 AND provider_kind <> $2
                  AND NOT (coalesce((sync_state -> 'push' ->> 'expiration')::timestamptz > now(), false)
                           AND last_synced_at > now() - interval '1 hour')
                ORDER BY id""",
            AccountStatus.OK.value, ProviderKind.LOCAL.value,
        )
        return [r["id"] for r in rows]

    # -- writes ----------------------------------------------------------------------------------------

    async def create(
        self, *, user_id: int, provider_kind: ProviderKind, name: str, email: str, username: str,
        credentials: bytes, settings: dict[str, Any],
    ) -> int:
        return int(await self.db.fetchval(
            """INSERT INTO account (user_id, provider_kind, name, email, username, credentials, settings, sync_state,
                                    status, status_detail, is_active, sort_order, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, '{}'::jsonb, 'ok', '', true,
                       (SELECT coalesce(max(sort_order), 0) + 1 FROM account WHERE user_id = $1), now(), now())
               RETURNING id""",
            user_id, provider_kind.value, name, email.strip().lower(), username, credentials, json.dumps(settings),
        ))

    async def update_connection(
        self, user_id: int, account_id: int, *, name: str, email: str, username: str, settings: dict[str, Any],
        credentials: bytes | None,
    ) -> bool:
        """New connection settings; `credentials` None keeps the stored ones. The account is given another
        chance: status back to ok, so syncing resumes."""
        status = await self.db.execute(
            """UPDATE account SET name = $3, email = $4, username = $5, settings = settings || $6::jsonb,
                                  credentials = coalesce($7, credentials), status = 'ok', status_detail = '',
                                  updated_at = now()
                WHERE id = $1 AND user_id = $2""",
            account_id, user_id, name, email.strip().lower(), username, json.dumps(settings), credentials,
        )
        return status.endswith(" 1")

    async def set_active(self, user_id: int, account_id: int, active: bool) -> bool:
        status = await self.db.execute(
            "UPDATE account SET is_active = $3, updated_at = now() WHERE id = $1 AND user_id = $2",
            account_id, user_id, active,
        )
        return status.endswith(" 1")

    async def delete(self, user_id: int, account_id: int) -> bool:
        """The account and, through its foreign keys, its folders, mail, threads and bindings. The user's unified
        JMAP account keeps counting on the change log, whose rows of this account no longer count: its mail,
        threads, identities and submissions are logged as destroyed there, and every label as updated."""
        async with self.db.transaction():
            exists = await self.db.fetchval("SELECT 1 FROM account WHERE id = $1 AND user_id = $2 FOR UPDATE",
                                            account_id, user_id)
            if exists is None:
                return False
            await self.db.execute(
                """INSERT INTO jmap_change_log (account_id, object_type, entity_id, change_type, created_at)
                   SELECT -$2::bigint, kind, entity, change, now() FROM (
                       SELECT 1 AS o, 'Email' AS kind, id::text AS entity, 'destroyed' AS change
                         FROM message WHERE account_id = $1
                       UNION ALL SELECT 2, 'Thread', id::text, 'destroyed' FROM message_thread WHERE account_id = $1
                       UNION ALL SELECT 3, 'Identity', id::text, 'destroyed' FROM identity WHERE account_id = $1
                       UNION ALL SELECT 4, 'EmailSubmission', id::text, 'destroyed' FROM submission
                                  WHERE account_id = $1
                       UNION ALL SELECT 5, 'Mailbox', id::text, 'updated' FROM label WHERE user_id = $2) x
                    ORDER BY o, entity""",
                account_id, user_id,
            )
            await self.db.execute("DELETE FROM account WHERE id = $1 AND user_id = $2", account_id, user_id)
            await self.db.execute(
                "SELECT pg_notify($1, json_build_array(json_build_array(-$2::bigint, 'Email'))::text)",
                                  PUSH_CHANNEL, user_id)
        return True

    async def set_status(self, account_id: int, status: AccountStatus, detail: str = "") -> None:
        await self.db.execute(
            "UPDATE account SET status = $2, status_detail = $3, updated_at = now() WHERE id = $1",
            account_id, status.value, detail[:2000],
        )

    async def note_problem(self, account_id: int, detail: str) -> None:
        """A passing problem (the server was unreachable): shown, but the account keeps syncing."""
        await self.db.execute("UPDATE account SET status_detail = $2 WHERE id = $1", account_id, detail[:2000])

    async def set_send_problem(self, account_id: int, detail: str | None) -> None:
        """Why sending cannot sign in (kept until a send works or the settings change); None clears it. Apart
        from the sync status: the account still reads mail."""
        await self.db.execute(
            "UPDATE account SET settings = settings || jsonb_build_object('send_problem', $2::text), "
            "updated_at = now() WHERE id = $1", account_id, detail[:2000] if detail else None)

    async def synced(self, account_id: int) -> None:
        await self.db.execute(
            "UPDATE account SET last_synced_at = now(), status_detail = '' WHERE id = $1 AND status = 'ok'",
            account_id,
        )

    # -- sync bookkeeping in sync_state -----------------------------------------------------------------

    async def merge_state(self, account_id: int, key: str, values: dict[str, Any], *, flush: bool = True) -> None:
        """Merge `values` into sync_state[key] (a JSON object). With `flush=False`, for a note whose loss in a
        crash costs nothing (outside a transaction), the commit does not wait for the disk."""
        unflushed = not flush and not self.db.in_transaction()
        await self.db.execute(
            (f"WITH unflushed AS ({UNFLUSHED_COMMIT}) " if unflushed else "")
            + """UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text],
                                                         coalesce(sync_state -> $2, '{}'::jsonb) || $3::jsonb) """
            + ("FROM unflushed " if unflushed else "") + "WHERE account.id = $1",
            account_id, key, json.dumps(values),
        )

    async def request_resync(self, account_id: int) -> None:
        await self.db.execute(
            "UPDATE account SET sync_state = sync_state || '{\"resync\": true}'::jsonb WHERE id = $1", account_id
        )

    async def take_resync(self, account_id: int) -> bool:
        """Clear the "sync again" flag; returns whether it was set."""
        value = await self.db.fetchval(
            """UPDATE account a SET sync_state = a.sync_state - 'resync'
                 FROM (SELECT id, coalesce((sync_state ->> 'resync')::boolean, false) AS was
                         FROM account WHERE id = $1 FOR UPDATE) old
                WHERE a.id = old.id RETURNING old.was""",
            account_id,
        )
        return bool(value)

    async def resync_requested(self, account_id: int) -> bool:
        return bool(await self.db.fetchval(
            "SELECT coalesce((sync_state ->> 'resync')::boolean, false) FROM account WHERE id = $1", account_id
        ))

    # -- locks ---------------------------------------------------------------------------------------------

    async def announce(self, channel: str) -> None:
        """A NOTIFY without payload: every process listening on `channel` is told to look again."""
        await self.db.execute("SELECT pg_notify($1, '')", channel)

    @asynccontextmanager
    async def session_lock(self, namespace: int, key: int, *, wait: float = 0.0,
                           still_wanted: Callable[[], Awaitable[bool]] | None = None) -> AsyncIterator[HeldLock]:
        """A session advisory lock on a connection of its own, held across many transactions and network waits;
        it dies with the connection, so a killed process never leaves it behind. Tries for up to `wait`
        seconds, and stops early once `still_wanted` says no; `taken` says whether it got it."""
        pool = self.db.engine.pool
        if pool is None:
            raise RuntimeError("database pool is not open")
        async with pool.acquire() as conn:
            deadline = time.monotonic() + wait
            try:
                while True:
                    taken = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", namespace, key))
                    if taken or time.monotonic() >= deadline:
                        break
                    await asyncio.sleep(0.2)
                    if still_wanted is not None and not await still_wanted():
                        break
            except BaseException:
                # Cancelled (or failed) while asking: the server may have granted the lock without our hearing
                # of it, and the pool does not reset connections, so a lock kept there would refuse every later
                # caller until the process ended. The connection ends instead, and any lock goes with it.
                conn.terminate()
                raise
            held = HeldLock(conn, taken)
            try:
                yield held
            finally:
                try:
                    closed = conn.is_closed()
                except asyncpg.InterfaceError:  # the database dropped it (a restart) and the pool took it back
                    closed = True
                if held.taken and not closed:
                    # The pool does not reset returned connections, so a lock that could not be given back
                    # ends its connection: a connection that goes away takes the lock with it.
                    released = False
                    try:
                        with contextlib.suppress(asyncpg.PostgresError, OSError):
                            released = bool(await conn.fetchval("SELECT pg_advisory_unlock($1, $2)", namespace, key))
                    finally:
                        if not released:
                            conn.terminate()


class HeldLock:
    def __init__(self, conn: asyncpg.Connection, taken: bool) -> None:
        self._conn = conn
        self.taken = taken

    async def listen(self, channel: str, callback: Callable[[], None]) -> Callable[[], Awaitable[None]]:
        """LISTEN on the lock's own connection while the lock is held; returns how to stop listening."""

        def heard(_conn: object, _pid: int, _channel: str, _payload: str) -> None:
            callback()

        await self._conn.add_listener(channel, heard)

        async def stop() -> None:
            if not self._conn.is_closed():
                with contextlib.suppress(asyncpg.PostgresError, OSError):
                    await self._conn.remove_listener(channel, heard)

        return stop

    async def still_held(self) -> bool:
        """False once the lock's connection is gone (and with it the lock)."""
        if not self.taken or self._conn.is_closed():
            return False
        try:
            await self._conn.fetchval("SELECT 1")
        except (asyncpg.PostgresError, OSError):
            return False
        return True
