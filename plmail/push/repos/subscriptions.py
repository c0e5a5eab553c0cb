"""Rows of push_subscription: a device's Web Push endpoint, its keys, and what was last pushed to it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.threads import thread_tab
from plmail.domain.mailstore import PUSH_CHANNEL, unified_key
from plmail.domain.push import (
    NewMailNotice,
    NewPushSubscription,
    NotificationPreference,
    NotifyScope,
    PushedStates,
    PushSubscriptionRow,
)

_COLUMNS = ("id, user_id, app_password_id, device_client_id, url, p256dh, auth, types, expires_at, "
            "verification_code, verified, verification_sent_at, pushed_states, next_push_at, failures, web_session_id, "
            "notified_message_id")
# A subscription is live while it has not expired and its user and app password are in good standing (the
# triggers remove the rows at once; this also covers a row a concurrent transaction has not yet removed).
_LIVE = """p.expires_at > now()
       AND NOT EXISTS (SELECT 1 FROM app_user u WHERE u.id = p.user_id AND u.disabled_at IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM app_password w WHERE w.id = p.app_password_id AND w.revoked_at IS NOT NULL)"""


def _states(value: Any) -> PushedStates:
    loaded = json.loads(value) if isinstance(value, str) else value
    return {str(k): str(v) for k, v in (loaded or {}).items()}


def _row(r: asyncpg.Record) -> PushSubscriptionRow:
    return PushSubscriptionRow(
        id=r["id"], user_id=r["user_id"], app_password_id=r["app_password_id"],
        device_client_id=r["device_client_id"], url=r["url"], p256dh=r["p256dh"], auth=r["auth"],
        types=tuple(r["types"]) if r["types"] is not None else None, expires_at=r["expires_at"],
        verification_code=r["verification_code"], verified=r["verified"],
        verification_sent_at=r["verification_sent_at"], pushed_states=_states(r["pushed_states"]),
        next_push_at=r["next_push_at"], failures=r["failures"], web_session_id=r["web_session_id"],
        notified_message_id=r["notified_message_id"],
    )


class PushSubscriptionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, new: NewPushSubscription) -> PushSubscriptionRow:
        row = await self.db.fetchrow(
            f"""INSERT INTO push_subscription (user_id, app_password_id, device_client_id, url, p256dh, auth, types,
                                               expires_at, verification_code)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {_COLUMNS}""",
            new.user_id, new.app_password_id, new.device_client_id, new.url, new.p256dh, new.auth,
            list(new.types) if new.types is not None else None, new.expires_at, new.verification_code,
        )
        assert row is not None
        return _row(row)

    async def owned(self, user_id: int, app_password_id: int | None, ids: Sequence[int] | None = None
                    ) -> list[PushSubscriptionRow]:
        """The live subscriptions these credentials created (all of them, or those of `ids`)."""
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM push_subscription p
                 WHERE p.user_id = $1 AND p.app_password_id IS NOT DISTINCT FROM $2 AND p.web_session_id IS NULL
                   AND ($3::bigint[] IS NULL OR p.id = ANY($3::bigint[])) AND {_LIVE}
                 ORDER BY p.id""",
            user_id, app_password_id, list(ids) if ids is not None else None,
        )
        return [_row(r) for r in rows]

    async def live_for_users(self, user_ids: Sequence[int]) -> list[PushSubscriptionRow]:
        rows = await self.db.fetch(
            f"SELECT {_COLUMNS} FROM push_subscription p WHERE p.user_id = ANY($1::int[]) AND {_LIVE} ORDER BY p.id",
            list(user_ids),
        )
        return [_row(r) for r in rows]

    async def users_with_subscriptions(self, log_accounts: Sequence[int] | None = None) -> list[int]:
        """The users with a live subscription; given change-log account ids (an account's id, or minus a user's
        id for the unified account), only the users they belong to."""
        if log_accounts is None:
            rows = await self.db.fetch(f"SELECT DISTINCT p.user_id FROM push_subscription p WHERE {_LIVE}")
        else:
            accounts = [a for a in log_accounts if a > 0]
            users = [-a for a in log_accounts if a < 0]
            rows = await self.db.fetch(
                f"""SELECT DISTINCT p.user_id FROM push_subscription p
                     WHERE (p.user_id = ANY($2::int[])
                            OR p.user_id IN (SELECT a.user_id FROM account a WHERE a.id = ANY($1::int[])))
                       AND {_LIVE}""",
                accounts, users,
            )
        return [int(r["user_id"]) for r in rows]

    async def update(self, subscription_id: int, *, verified: bool | None = None, expires_at: datetime | None = None,
                     types: tuple[str, ...] | None = None, set_types: bool = False,
                     pushed_states: PushedStates | None = None) -> None:
        await self.db.execute(
            """UPDATE push_subscription
                  SET verified = coalesce($2, verified), expires_at = coalesce($3, expires_at),
                      types = CASE WHEN $5 THEN $4::text[] ELSE types END,
                      pushed_states = coalesce($6::jsonb, pushed_states)
                WHERE id = $1""",
            subscription_id, verified, expires_at, list(types) if types is not None else None, set_types,
            json.dumps(pushed_states) if pushed_states is not None else None,
        )

    async def destroy(self, subscription_id: int) -> bool:
        status = await self.db.execute("DELETE FROM push_subscription WHERE id = $1", subscription_id)
        return status.endswith(" 1")

    async def delete_expired(self) -> int:
        status = await self.db.execute("DELETE FROM push_subscription WHERE expires_at <= now()")
        return int(status.split()[-1])

    async def claim_verification(self, subscription_id: int) -> bool:
        """Takes the one PushVerification send of an unverified subscription (whichever process gets here first)."""
        status = await self.db.execute(
            """UPDATE push_subscription p SET verification_sent_at = now()
                WHERE p.id = $1 AND NOT p.verified AND p.verification_sent_at IS NULL AND p.next_push_at <= now()
                  AND """ + _LIVE, subscription_id)
        return status.endswith(" 1")

    async def claim_push(self, subscription_id: int, states: PushedStates, interval_seconds: float
                         ) -> tuple[bool, PushedStates, datetime | None]:
        """Claims the next push of a verified subscription when `states` differ from what it was sent last and
        its interval has passed: records `states` as sent and holds the next push back by the interval. Returns
        (claimed, the states sent before, when the next push may go; None when nothing is to be sent)."""
        result: tuple[bool, PushedStates, datetime | None] = (False, {}, None)
        async with self.db.transaction():
            row = await self.db.fetchrow(
                f"""SELECT p.pushed_states, p.next_push_at, now() AS now FROM push_subscription p
                     WHERE p.id = $1 AND p.verified AND {_LIVE} FOR UPDATE""", subscription_id)
            if row is not None:
                before = _states(row["pushed_states"])
                if all(before.get(k) == v for k, v in states.items()):
                    result = (False, before, None)
                elif row["next_push_at"] > row["now"]:
                    result = (False, before, row["next_push_at"])
                else:
                    await self.db.execute(
                        """UPDATE push_subscription SET pushed_states = pushed_states || $2::jsonb,
                                  next_push_at = now() + make_interval(secs => $3), last_pushed_at = now()
                            WHERE id = $1""", subscription_id, json.dumps(states), interval_seconds)
                    result = (True, before, None)
        return result

    async def delivered(self, subscription_id: int) -> None:
        await self.db.execute("UPDATE push_subscription SET failures = 0 WHERE id = $1 AND failures <> 0",
                              subscription_id)

    async def hold_back(self, subscription_id: int, seconds: float, *, restore_states: PushedStates | None,
                        verification: bool = False) -> datetime | None:
        """After a refused or failed delivery: the next try waits `seconds`, and what was not delivered is
        pending again (the states sent before, or the verification still to send)."""
        value = await self.db.fetchval(
            """UPDATE push_subscription
                  SET failures = failures + 1, next_push_at = now() + make_interval(secs => $2),
                      pushed_states = coalesce($3::jsonb, pushed_states),
                      verification_sent_at = CASE WHEN $4 THEN NULL ELSE verification_sent_at END
                WHERE id = $1 RETURNING next_push_at""",
            subscription_id, seconds, json.dumps(restore_states) if restore_states is not None else None,
            verification,
        )
        return value if isinstance(value, datetime) else None

    async def announce(self, user_id: int) -> None:
        """Wakes every process's dispatcher for this user (a subscription to verify), after commit."""
        await self.db.execute("SELECT pg_notify($1, $2)", PUSH_CHANNEL,
                              json.dumps([[unified_key(user_id), "PushSubscription"]]))

    async def contact_address(self) -> str | None:
        value = await self.db.fetchval(
            "SELECT email FROM app_user WHERE is_admin AND disabled_at IS NULL ORDER BY id LIMIT 1")
        return str(value) if value else None


class BrowserPushRepository:
    """A browser's subscription (one per endpoint and user, owned by the web session that made it), the user's
    notification preference, the new messages a browser is told about, and the actions already applied."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def locale(self, user_id: int) -> str:
        return str(await self.db.fetchval("SELECT locale FROM app_user WHERE id = $1", user_id) or "en")

    async def users_with_browsers(self) -> list[int]:
        rows = await self.db.fetch(
            f"SELECT DISTINCT p.user_id FROM push_subscription p WHERE p.web_session_id IS NOT NULL AND {_LIVE}")
        return [int(r["user_id"]) for r in rows]

    async def time_zone(self, user_id: int) -> str:
        return str(await self.db.fetchval("SELECT time_zone FROM app_user WHERE id = $1", user_id) or "UTC")

    async def newest_message_id(self, user_id: int) -> int:
        value = await self.db.fetchval(
            "SELECT max(m.id) FROM message m JOIN account a ON a.id = m.account_id WHERE a.user_id = $1", user_id)
        return int(value or 0)

    async def subscribe(self, user_id: int, web_session_id: int, url: str, p256dh: str, auth: str,
                        expires_at: datetime) -> PushSubscriptionRow:
        """Verified at once (the browser subscribed with this server's key itself); announces only mail newer
        than now. The same endpoint subscribed again (a new session, new keys) replaces its row."""
        row = await self.db.fetchrow(
            f"""INSERT INTO push_subscription AS p (user_id, web_session_id, device_client_id, url, p256dh, auth,
                                                 types, expires_at, verification_code, verified,
                                                 notified_message_id)
                VALUES ($1, $2, 'browser', $3, $4, $5, ARRAY[]::text[], $6, '', true,
                        (SELECT max(m.id) FROM message m JOIN account a ON a.id = m.account_id
                          WHERE a.user_id = $1))
                ON CONFLICT (user_id, url) WHERE web_session_id IS NOT NULL
                DO UPDATE SET web_session_id = EXCLUDED.web_session_id, p256dh = EXCLUDED.p256dh,
                              auth = EXCLUDED.auth, expires_at = EXCLUDED.expires_at, failures = 0,
                              next_push_at = now(), notified_message_id = EXCLUDED.notified_message_id
                RETURNING {_COLUMNS}""",
            user_id, web_session_id, url, p256dh, auth, expires_at)
        assert row is not None
        return _row(row)

    async def for_session(self, user_id: int, web_session_id: int) -> list[PushSubscriptionRow]:
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM push_subscription p
                 WHERE p.user_id = $1 AND p.web_session_id = $2 AND {_LIVE} ORDER BY p.id""",
            user_id, web_session_id)
        return [_row(r) for r in rows]

    async def live(self, subscription_id: int) -> PushSubscriptionRow | None:
        row = await self.db.fetchrow(
            f"""SELECT {_COLUMNS} FROM push_subscription p
                 WHERE p.id = $1 AND p.web_session_id IS NOT NULL AND {_LIVE}""", subscription_id)
        return _row(row) if row is not None else None

    async def unsubscribe(self, user_id: int, web_session_id: int) -> int:
        status = await self.db.execute(
            "DELETE FROM push_subscription WHERE user_id = $1 AND web_session_id = $2", user_id, web_session_id)
        return int(status.split()[-1])

    async def preference(self, user_id: int) -> NotificationPreference:
        row = await self.db.fetchrow(
            """SELECT p.scope, p.show_content, p.quiet_from, p.quiet_to, p.reminders,
                      ARRAY(SELECT label_id FROM notification_label WHERE user_id = $1 ORDER BY label_id) AS labels,
                      ARRAY(SELECT account_id FROM notification_account WHERE user_id = $1 ORDER BY account_id)
                        AS accounts,
                      ARRAY(SELECT address FROM vip_sender WHERE user_id = $1 ORDER BY address) AS vips
                 FROM (SELECT $1::integer AS user_id) u
                 LEFT JOIN notification_preference p ON p.user_id = u.user_id""", user_id)
        assert row is not None
        return NotificationPreference(
            scope=NotifyScope(row["scope"] or NotifyScope.GENERAL),
            show_content=row["show_content"] if row["show_content"] is not None else True,
            label_ids=tuple(row["labels"]), account_ids=tuple(row["accounts"]), vip_senders=tuple(row["vips"]),
            quiet_from=row["quiet_from"], quiet_to=row["quiet_to"],
            reminders=row["reminders"] if row["reminders"] is not None else True)

    async def set_preference(self, user_id: int, preference: NotificationPreference) -> None:
        """The scope and what a notification shows, and the chosen labels and accounts (only the user's own are
        kept); the VIP senders are kept apart (`add_vip`, `remove_vip`)."""
        async with self.db.transaction():
            await self.db.execute(
                """INSERT INTO notification_preference (user_id, scope, show_content, quiet_from, quiet_to,
                                                        reminders)
                   VALUES ($1, $2, $3, $4, $5, $6)
                   ON CONFLICT (user_id) DO UPDATE SET scope = EXCLUDED.scope,
                                                       show_content = EXCLUDED.show_content,
                                                       quiet_from = EXCLUDED.quiet_from,
                                                       quiet_to = EXCLUDED.quiet_to,
                                                       reminders = EXCLUDED.reminders""",
                user_id, preference.scope.value, preference.show_content, preference.quiet_from,
                preference.quiet_to, preference.reminders)
            await self.db.execute("DELETE FROM notification_label WHERE user_id = $1", user_id)
            await self.db.execute(
                """INSERT INTO notification_label (user_id, label_id)
                   SELECT $1, id FROM label WHERE user_id = $1 AND id = ANY($2::integer[])""",
                user_id, list(preference.label_ids))
            await self.db.execute("DELETE FROM notification_account WHERE user_id = $1", user_id)
            await self.db.execute(
                """INSERT INTO notification_account (user_id, account_id)
                   SELECT $1, id FROM account WHERE user_id = $1 AND id = ANY($2::integer[])""",
                user_id, list(preference.account_ids))

    async def add_vip(self, user_id: int, address: str, *, limit: int) -> bool:
        """False when the list is full (the address is not added)."""
        status = await self.db.execute(
            """INSERT INTO vip_sender (user_id, address)
               SELECT $1, $2 WHERE (SELECT count(*) FROM vip_sender WHERE user_id = $1) < $3
               ON CONFLICT DO NOTHING""", user_id, address, limit)
        return status.endswith(" 1") or await self.db.fetchval(
            "SELECT EXISTS (SELECT 1 FROM vip_sender WHERE user_id = $1 AND address = $2)", user_id, address)

    async def remove_vip(self, user_id: int, address: str) -> None:
        await self.db.execute("DELETE FROM vip_sender WHERE user_id = $1 AND address = $2", user_id, address)

    async def new_mail(self, user_id: int, after_id: int, up_to_id: int, *, scope: NotifyScope, limit: int
                       ) -> list[NewMailNotice]:
        """Unread messages that arrived after `after_id` (up to `up_to_id`) and that the user's choice lets
        notify: in the inbox's General tab, anywhere in the inbox, in the inbox of a chosen account, or in a
        chosen label (in the inbox or not); a VIP sender's mail in the inbox always. The newest per
        conversation, newest conversations first."""
        rows = await self.db.fetch(
            f"""SELECT DISTINCT ON (m.thread_id) m.id, m.thread_id, coalesce(nullif(m.from_name, ''),
                       m.from_address, '') AS sender, coalesce(m.subject, '') AS subject
                  FROM message m JOIN account a ON a.id = m.account_id
                  JOIN message_thread t ON t.id = m.thread_id
                 WHERE a.user_id = $1 AND m.id > $2 AND m.id <= $3 AND m.seen_at IS NULL
                   AND ((EXISTS (SELECT 1 FROM thread_label tl JOIN label l ON l.id = tl.label_id
                                  WHERE tl.thread_id = m.thread_id AND l.user_id = $1 AND l.role = 'inbox')
                         AND ($4 = 'all'
                              OR ($4 = 'primary' AND {thread_tab("t")} = 'primary')
                              OR ($4 = 'accounts' AND m.account_id IN (SELECT account_id FROM notification_account
                                                                        WHERE user_id = $1))
                              OR lower(m.from_address) IN (SELECT address FROM vip_sender WHERE user_id = $1)))
                        OR ($4 = 'labels' AND EXISTS (
                              SELECT 1 FROM thread_label tl
                                JOIN notification_label n ON n.label_id = tl.label_id AND n.user_id = $1
                               WHERE tl.thread_id = m.thread_id)))
                 ORDER BY m.thread_id, m.id DESC""",
            user_id, after_id, up_to_id, scope.value)
        notices = sorted((NewMailNotice(r["id"], r["thread_id"], r["sender"], r["subject"]) for r in rows),
                         key=lambda n: n.message_id, reverse=True)
        return notices[:limit]

    async def rewind_notified(self, subscription_id: int, claimed: int, announced: int) -> None:
        """After a delivery the push service refused for now: the messages after `announced` are new to this
        browser again (unless another round has moved on since)."""
        await self.db.execute(
            """UPDATE push_subscription SET notified_message_id = $3
                WHERE id = $1 AND notified_message_id = $2""", subscription_id, claimed, announced)

    async def claim_notified(self, subscription_id: int, before: int | None, newest: int) -> bool:
        """Moves the subscription's newest announced message on, if no other process has: each message is
        announced once."""
        status = await self.db.execute(
            """UPDATE push_subscription SET notified_message_id = $3, last_pushed_at = now()
                WHERE id = $1 AND notified_message_id IS NOT DISTINCT FROM $2""", subscription_id, before, newest)
        return status.endswith(" 1")
