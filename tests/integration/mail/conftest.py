from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.ingest import IngestedMessage
from plmail.domain.models import User
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.repos import account_rows


@dataclass(frozen=True)
class Mailbox:
    services: Services
    user: User
    account_id: int
    inbox: int

    def message(self, raw: bytes, *, account_id: int | None = None, **facts: object) -> IngestedMessage:
        facts.setdefault("label_ids", (self.inbox,))
        return parse_message(raw, account_id=account_id or self.account_id, **facts)

    async def new_account(self, name: str) -> int:
        return await account_rows(self.services).create(
            user_id=self.user.id, provider_kind=ProviderKind.LOCAL, name=name, email=self.user.email
        )

    async def threads_by_message_id(self, account_id: int | None = None) -> set[frozenset[str]]:
        rows = await self.services.db.fetch(
            "SELECT thread_id, array_agg(rfc_message_id ORDER BY rfc_message_id) AS ids FROM message "
            "WHERE account_id = $1 GROUP BY thread_id",
            account_id or self.account_id,
        )
        return {frozenset(r["ids"]) for r in rows}

    async def changes(self, object_type: str | None = None) -> list[tuple[str, str, str]]:
        rows = await self.services.db.fetch(
            "SELECT object_type, entity_id, change_type FROM jmap_change_log WHERE account_id = $1 "
            "AND ($2::text IS NULL OR object_type = $2) ORDER BY sequence",
            self.account_id, object_type,
        )
        return [(r["object_type"], r["entity_id"], r["change_type"]) for r in rows]


def loads(value: object) -> object:
    return json.loads(value) if isinstance(value, str) else value


@pytest.fixture
async def mailbox(services: Services) -> Mailbox:
    user = await services.users.create_user("reader@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await account_rows(services).create(
        user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Archive", email="reader@example.org",
        # The receiving server whose Authentication-Results the account believes (the tests' mx.example.net).
        settings={"aliases": ["me@reader.example"], "authserv_ids": ["mx.example.net"]},
    )
    roles = await services.labels.role_ids(user.id)
    return Mailbox(services, user, account_id, roles[LabelRole.INBOX])
