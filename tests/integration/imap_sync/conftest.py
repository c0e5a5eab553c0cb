"""An IMAP account on the suite's private Dovecot, and helpers to sync it and compare it with the server."""

from __future__ import annotations

import imaplib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.models import User
from plmail.domain.providers import PageRun
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services
from tests.support.dovecot import DovecotUser, dovecot, dovecot_tls, dovecot_tls_user, dovecot_user

__all__ = ["ImapSetup", "dovecot", "dovecot_tls", "dovecot_tls_user", "dovecot_user", "imap"]

_MESSAGE_ID = re.compile(rb"message-id:\s*<([^>]+)>", re.IGNORECASE)


@dataclass
class ImapSetup:
    services: Services
    user: User
    mail: DovecotUser
    account_id: int
    pages: list[PageRun] = field(default_factory=list)

    async def sync(self) -> list[int]:
        return await self.services.sync.run(self.account_id)

    async def import_page(self) -> PageRun:
        run = await self.services.importer.run_page(self.account_id, chain=False)
        self.pages.append(run)
        return run

    async def import_all(self, limit: int = 1000) -> int:
        """Pages until the importer has nothing left; returns how many ran."""
        count = 0
        while await self.services.importer.progress(self.account_id) is not None:
            progress = await self.services.importer.progress(self.account_id)
            assert progress is not None
            if not progress.importing:
                break
            await self.import_page()
            count += 1
            assert count < limit, "the import does not finish"
        return count

    async def sync_all(self) -> None:
        await self.sync()
        await self.import_all()
        await self.sync()  # the clean-up of vanished mail waits for the import

    async def propagate(self) -> int:
        return await self.services.propagation.run(self.account_id)

    async def stored_ids(self) -> dict[str, set[str]]:
        """Folder path -> Message-IDs of the messages plmail holds there (not vanished)."""
        rows = await self.services.db.fetch(
            """SELECT mb.full_path, m.rfc_message_id FROM message m JOIN mailbox mb ON mb.id = m.mailbox_id
                WHERE m.account_id = $1 AND m.vanished_at IS NULL""", self.account_id)
        found: dict[str, set[str]] = {}
        for r in rows:
            found.setdefault(r["full_path"], set()).add(r["rfc_message_id"])
        return found

    async def count(self, where: str = "TRUE", *args: Any) -> int:
        return int(await self.services.db.fetchval(
            f"SELECT count(*) FROM message WHERE account_id = $1 AND ({where})", self.account_id, *args))

    async def message_id_of(self, rfc_id: str) -> int:
        value = await self.services.db.fetchval(
            "SELECT id FROM message WHERE account_id = $1 AND rfc_message_id = $2", self.account_id, rfc_id)
        assert value is not None, f"{rfc_id} is not stored"
        return int(value)

    async def labels_of(self, rfc_id: str) -> set[str]:
        rows = await self.services.db.fetch(
            """SELECT coalesce(l.role, l.name) AS n FROM message m JOIN message_label ml ON ml.message_id = m.id
                 JOIN label l ON l.id = ml.label_id WHERE m.account_id = $1 AND m.rfc_message_id = $2""",
            self.account_id, rfc_id)
        return {r["n"] for r in rows}

    async def folder_of(self, rfc_id: str) -> str | None:
        value = await self.services.db.fetchval(
            """SELECT mb.full_path FROM message m JOIN mailbox mb ON mb.id = m.mailbox_id
                WHERE m.account_id = $1 AND m.rfc_message_id = $2""", self.account_id, rfc_id)
        return str(value) if value is not None else None

    def server_ids(self, folders: list[str]) -> dict[str, set[str]]:
        """Folder path -> Message-IDs on the server, read by another client."""
        found: dict[str, set[str]] = {}
        with self.mail.peer() as peer:
            for folder in folders:
                found[folder] = message_ids(peer.conn, folder)
        return {k: v for k, v in found.items() if v}


def message_ids(conn: imaplib.IMAP4, folder: str) -> set[str]:
    typ, _ = conn.select(f'"{folder}"', readonly=True)
    assert typ == "OK", folder
    typ, data = conn.uid("FETCH", "1:*", "(BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
    assert typ == "OK"
    ids: set[str] = set()
    for item in data:
        if isinstance(item, tuple):
            match = _MESSAGE_ID.search(item[1])
            if match:
                ids.add(match.group(1).decode())
    return ids


async def add_account(services: Services, user: User, mail: DovecotUser, **overrides: Any) -> int:
    server = mail.imap()
    data = MailServerAccountInput(email=f"{mail.name}@example.org", host=server.host, port=server.port, tls="none",
                            username=mail.name, password=mail.password, name=overrides.pop("name", ""))
    # Set up as an operator would (the command line): the test Dovecot is on a free port, not a mail port.
    account_id = await services.providers.get(ImapAccountService).add(user.id, data, operator=True)
    if overrides:
        await services.db.execute(
            "UPDATE account SET settings = jsonb_set(settings, '{imap}', (settings -> 'imap') || $2::jsonb) "
            "WHERE id = $1", account_id, json.dumps(overrides))
    return account_id


@pytest.fixture
async def imap(services: Services, dovecot_user: DovecotUser) -> ImapSetup:
    user = await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await add_account(services, user, dovecot_user)
    return ImapSetup(services, user, dovecot_user, account_id)
