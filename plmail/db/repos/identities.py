"""Sending identities: a user's, an account's, one of them; keeping an account's provider-listed ones in step."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.messages import Address
from plmail.domain.outgoing import Identity, IdentityOrigin, ProvidedIdentity

_COLUMNS = ("i.id, i.account_id, i.email, i.name, i.reply_to, i.bcc, i.text_signature, i.html_signature, "
            "i.is_primary, i.origin, i.updated_at, i.verified_at, i.verify_sent_at")


def _addresses(value: Any) -> tuple[Address, ...]:
    loaded = json.loads(value) if isinstance(value, str) else value
    if not isinstance(loaded, list):
        return ()
    return tuple(Address(str(a.get("name") or ""), str(a.get("email") or "")) for a in loaded
                 if isinstance(a, dict) and a.get("email"))


def _dump(addresses: Sequence[Address]) -> str:
    return json.dumps([{"name": a.name, "email": a.address} for a in addresses])


def _identity(row: asyncpg.Record) -> Identity:
    return Identity(
        id=row["id"], account_id=row["account_id"], email=row["email"], name=row["name"] or "",
        reply_to=_addresses(row["reply_to"]), bcc=_addresses(row["bcc"]), text_signature=row["text_signature"] or "",
        html_signature=row["html_signature"] or "", is_primary=row["is_primary"], origin=IdentityOrigin(row["origin"]),
        updated_at=row["updated_at"], verified=row["verified_at"] is not None,
        verification_sent_at=row["verify_sent_at"],
    )


class IdentityRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def for_user(self, user_id: int) -> list[Identity]:
        """The user's identities over all active accounts: each account's primary first, then by address."""
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM identity i JOIN account a ON a.id = i.account_id
                 WHERE a.user_id = $1 AND a.is_active
                 ORDER BY a.sort_order, a.id, i.is_primary DESC, lower(i.email)""",
            user_id,
        )
        return [_identity(r) for r in rows]

    async def for_account(self, account_id: int) -> list[Identity]:
        rows = await self.db.fetch(
            f"SELECT {_COLUMNS} FROM identity i WHERE i.account_id = $1 ORDER BY i.is_primary DESC, lower(i.email)",
            account_id,
        )
        return [_identity(r) for r in rows]

    async def owned(self, user_id: int, identity_id: int) -> Identity | None:
        row = await self.db.fetchrow(
            f"""SELECT {_COLUMNS} FROM identity i JOIN account a ON a.id = i.account_id
                 WHERE i.id = $2 AND a.user_id = $1""",
            user_id, identity_id,
        )
        return _identity(row) if row else None

    async def by_address(self, user_id: int, email: str) -> list[Identity]:
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM identity i JOIN account a ON a.id = i.account_id
                 WHERE a.user_id = $1 AND lower(i.email) = lower($2) AND a.is_active
                 ORDER BY i.is_primary DESC, i.id""",
            user_id, email,
        )
        return [_identity(r) for r in rows]

    async def create(self, account_id: int, email: str, *, name: str = "", origin: IdentityOrigin,
                     is_primary: bool = False, reply_to: Sequence[Address] = (), text_signature: str = "",
                     html_signature: str = "", verified: bool) -> int | None:
        """The new identity's id; None when the account has that address already."""
        value = await self.db.fetchval(
            """INSERT INTO identity (account_id, email, name, reply_to, bcc, text_signature, html_signature,
                                     is_primary, origin, verified_at, created_at, updated_at)
               VALUES ($1, $2, $3, $4::jsonb, '[]', $5, $6,
                       $7 AND NOT EXISTS (SELECT 1 FROM identity WHERE account_id = $1 AND is_primary),
                       $8, CASE WHEN $9 THEN now() END, now(), now())
               ON CONFLICT (account_id, lower(email)) DO NOTHING RETURNING id""",
            account_id, email, name, _dump(reply_to), text_signature, html_signature, is_primary, origin.value,
            verified,
        )
        return int(value) if value is not None else None

    async def update(self, identity_id: int, *, name: str | None = None, reply_to: Sequence[Address] | None = None,
                     bcc: Sequence[Address] | None = None, text_signature: str | None = None,
                     html_signature: str | None = None) -> bool:
        status = await self.db.execute(
            """UPDATE identity SET name = coalesce($2, name), reply_to = coalesce($3::jsonb, reply_to),
                                   bcc = coalesce($4::jsonb, bcc), text_signature = coalesce($5, text_signature),
                                   html_signature = coalesce($6, html_signature), updated_at = now()
                WHERE id = $1""",
            identity_id, name, _dump(reply_to) if reply_to is not None else None,
            _dump(bcc) if bcc is not None else None, text_signature, html_signature,
        )
        return status.endswith(" 1")

    async def make_primary(self, account_id: int, identity_id: int) -> bool:
        async with self.db.transaction():
            await self.db.execute("UPDATE identity SET is_primary = false, updated_at = now() "
                                  "WHERE account_id = $1 AND is_primary AND id <> $2", account_id, identity_id)
            status = await self.db.execute("UPDATE identity SET is_primary = true, updated_at = now() "
                                           "WHERE account_id = $1 AND id = $2", account_id, identity_id)
        return status.endswith(" 1")

    async def delete(self, identity_id: int) -> int | None:
        """Remove one identity; returns its account, or None when it was not there."""
        value = await self.db.fetchval("DELETE FROM identity WHERE id = $1 RETURNING account_id", identity_id)
        return int(value) if value is not None else None

    async def ensure_primary(self, account_id: int) -> None:
        """An account whose primary went away gets one again: its own address, else the oldest."""
        await self.db.execute(
            """UPDATE identity SET is_primary = true, updated_at = now()
                WHERE id = (SELECT id FROM identity WHERE account_id = $1
                             ORDER BY (origin = 'account') DESC, id LIMIT 1)
                  AND NOT EXISTS (SELECT 1 FROM identity WHERE account_id = $1 AND is_primary)""",
            account_id,
        )

    async def replace_provided(self, account_id: int, provided: Sequence[ProvidedIdentity]) -> list[int]:
        """Make the provider-listed identities of the account what the provider lists now; returns the ids of
        identities created, changed or removed (for the change log)."""
        touched: list[int] = []
        async with self.db.transaction():
            existing = {r["lower"]: r for r in await self.db.fetch(
                """SELECT id, lower(email) AS lower, name, reply_to, text_signature, html_signature, origin,
                          verified_at IS NOT NULL AS verified
                     FROM identity WHERE account_id = $1""", account_id)}
            wanted = {p.email.lower(): p for p in provided}
            for key, row in existing.items():
                if row["origin"] == IdentityOrigin.PROVIDER.value and key not in wanted:
                    await self.db.execute("DELETE FROM identity WHERE id = $1", row["id"])
                    touched.append(row["id"])
            for key, item in wanted.items():
                row = existing.get(key)
                if row is None:
                    created = await self.create(account_id, item.email, name=item.name,
                                                origin=IdentityOrigin.PROVIDER, is_primary=item.is_primary,
                                                reply_to=item.reply_to, text_signature=item.text_signature,
                                                html_signature=item.html_signature, verified=item.verified)
                    if created is not None:
                        touched.append(created)
                    continue
                adopted = row["origin"] != IdentityOrigin.ALIAS.value and await self._adopt_provided(row, item)
                # The provider's word on whether the address is confirmed holds for every identity it lists: an
                # alias typed in here becomes sendable once the provider confirmed it (never the other way).
                if item.verified != row["verified"] and (item.verified or row["origin"] == IdentityOrigin.PROVIDER):
                    await self.set_verified(row["id"], item.verified)
                    adopted = True
                if adopted:
                    touched.append(row["id"])
            await self.ensure_primary(account_id)
        return touched

    async def _adopt_provided(self, row: asyncpg.Record, item: ProvidedIdentity) -> bool:
        """Name, reply-to and signatures as the provider lists them now. For the account's own address only what
        the provider states: an empty display name or signature there keeps the one the user set here."""
        exact = row["origin"] == IdentityOrigin.PROVIDER.value
        changed: dict[str, Any] = {}
        for column, value in (("name", item.name), ("text_signature", item.text_signature),
                              ("html_signature", item.html_signature)):
            if (value or exact) and (row[column] or "") != value:
                changed[column] = value
        if (item.reply_to or exact) and _addresses(row["reply_to"]) != item.reply_to:
            changed["reply_to"] = item.reply_to
        return bool(changed) and await self.update(row["id"], **changed)

    async def set_verified(self, identity_id: int, verified: bool) -> None:
        await self.db.execute(
            """UPDATE identity SET verified_at = CASE WHEN $2 THEN coalesce(verified_at, now()) END,
                                   verify_token_hash = CASE WHEN $2 THEN NULL ELSE verify_token_hash END,
                                   updated_at = now()
                WHERE id = $1""",
            identity_id, verified,
        )

    async def confirmation_sent(self, identity_id: int, token_hash: str) -> None:
        """A new confirmation link went out; an older one stops working."""
        await self.db.execute(
            "UPDATE identity SET verify_token_hash = $2, verify_sent_at = now() WHERE id = $1 AND verified_at IS NULL",
            identity_id, token_hash,
        )

    async def awaiting_confirmation(self, token_hash: str, *, max_age_seconds: int) -> tuple[int, int, str, str] | None:
        """(identity id, account id, the alias, the account's address) a live confirmation link names."""
        row = await self.db.fetchrow(
            """SELECT i.id, i.account_id, i.email, a.email AS account_email
                 FROM identity i JOIN account a ON a.id = i.account_id
                WHERE i.verify_token_hash = $1 AND i.verified_at IS NULL
                  AND i.verify_sent_at > now() - make_interval(secs => $2)""",
            token_hash, max_age_seconds,
        )
        return (row["id"], row["account_id"], row["email"], row["account_email"]) if row else None

    async def confirm(self, token_hash: str, *, max_age_seconds: int) -> tuple[int, int] | None:
        """Mark the identity a live link names verified; (identity id, account id), or None."""
        row = await self.db.fetchrow(
            """UPDATE identity SET verified_at = now(), verify_token_hash = NULL, updated_at = now()
                WHERE verify_token_hash = $1 AND verified_at IS NULL
                  AND verify_sent_at > now() - make_interval(secs => $2)
            RETURNING id, account_id""",
            token_hash, max_age_seconds,
        )
        return (row["id"], row["account_id"]) if row else None

    async def belongs_to_another_user(self, user_id: int, email: str) -> bool:
        """Whether the address is another plmail user's: their sign-in address, an account's, or one they send as
        (verified)."""
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM app_user WHERE id <> $1 AND lower(email) = lower($2))
                   OR EXISTS (SELECT 1 FROM account WHERE user_id <> $1 AND lower(email) = lower($2))
                   OR EXISTS (SELECT 1 FROM identity i JOIN account a ON a.id = i.account_id
                               WHERE a.user_id <> $1 AND lower(i.email) = lower($2) AND i.verified_at IS NOT NULL)""",
            user_id, email,
        ))

    async def mirror_aliases(self, account_id: int) -> None:
        """Keep account.settings.aliases equal to the account's other identities: every reader of "the account's
        own addresses" (own copies, contacts, proposals addressed to me) reads that list."""
        await self.db.execute(
            """UPDATE account a SET settings = jsonb_set(a.settings, '{aliases}', coalesce((
                       SELECT jsonb_agg(lower(i.email) ORDER BY lower(i.email)) FROM identity i
                        WHERE i.account_id = a.id AND lower(i.email) <> lower(a.email)), '[]'::jsonb)),
                                  updated_at = now()
                WHERE a.id = $1""",
            account_id,
        )

    async def legacy_aliases(self, account_id: int) -> list[str]:
        """Aliases an account had in its settings before identities existed."""
        value = await self.db.fetchval("SELECT settings -> 'aliases' FROM account WHERE id = $1", account_id)
        loaded = json.loads(value) if isinstance(value, str) else value
        return [str(a).strip() for a in loaded if isinstance(a, str) and a.strip()] if isinstance(loaded, list) else []

    async def accounts_without_identities(self, user_id: int) -> list[tuple[int, str, str]]:
        """(account id, address, the user's display name) of the user's accounts that have no identity yet."""
        rows = await self.db.fetch(
            """SELECT a.id, a.email, u.display_name FROM account a JOIN app_user u ON u.id = a.user_id
                WHERE a.user_id = $1 AND a.email <> ''
                  AND NOT EXISTS (SELECT 1 FROM identity i WHERE i.account_id = a.id)""",
            user_id,
        )
        return [(r["id"], r["email"], r["display_name"] or "") for r in rows]

    async def account_of(self, identity_id: int) -> int | None:
        value = await self.db.fetchval("SELECT account_id FROM identity WHERE id = $1", identity_id)
        return int(value) if value is not None else None
