"""The stored sender verdicts (message.sender_auth) and what judging them needs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from plmail.db.database import Database
from plmail.domain.messages import HeaderValue

# Learning looks among the account's newest messages only. It asks for every batch of a first import while nothing
# is learned, so it must not read more as the Inbox grows: where the Inbox holds under 20 of the newest 500, arriving
# mail is filed elsewhere and the Inbox's older mail says little about the server's stamp now.
LEARN_WINDOW = 500


def newest_inbox_headers_query(account_id: int, inbox: int, limit: int) -> tuple[str, tuple[Any, ...]]:
    return ("""SELECT m.headers FROM (SELECT id FROM message WHERE account_id = $1
                                          ORDER BY received_at DESC NULLS LAST, id DESC LIMIT $4) newest
                 JOIN message m ON m.id = newest.id
                WHERE NOT (m.flags ? '$draft')
                  AND EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id AND ml.label_id = $2)
                ORDER BY m.received_at DESC NULLS LAST, m.id DESC LIMIT $3""",
            (account_id, inbox, limit, LEARN_WINDOW))


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class SenderAuthRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def stored(self, message_ids: Sequence[int]) -> list[tuple[int, int, str | None, dict[str, HeaderValue],
                                                                    Any]]:
        """(message id, account id, sender, headers, stored verdict or None) of the messages."""
        rows = await self.db.fetch(
            """SELECT id, account_id, from_address, headers, sender_auth FROM message WHERE id = ANY($1::bigint[])
                ORDER BY id""", list(message_ids))
        return [(r["id"], r["account_id"], r["from_address"], _json(r["headers"]) or {}, _json(r["sender_auth"]))
                for r in rows]

    async def store(self, verdicts: Sequence[tuple[int, dict[str, Any]]]) -> None:
        if not verdicts:
            return
        await self.db.execute(
            """UPDATE message m SET sender_auth = x.v FROM unnest($1::bigint[], $2::jsonb[]) AS x(i, v)
                WHERE m.id = x.i""",
            [i for i, _ in verdicts], [json.dumps(v) for _, v in verdicts])

    async def note_withheld(self, message_ids: Sequence[int], category: str) -> None:
        """Remember that a filter would have filed these into `category` had their sender been verified."""
        await self.db.execute(
            """UPDATE message SET sender_auth = sender_auth || jsonb_build_object('withheld', $2::text)
                WHERE id = ANY($1::bigint[]) AND sender_auth IS NOT NULL""", list(message_ids), category)

    async def newest_inbox_headers(self, account_id: int, inbox: int, limit: int) -> list[dict[str, HeaderValue]]:
        """The headers of the account's newest received messages in its Inbox (label `inbox`)."""
        sql, args = newest_inbox_headers_query(account_id, inbox, limit)
        return [_json(r["headers"]) or {} for r in await self.db.fetch(sql, *args)]

    async def forget_account(self, account_id: int) -> None:
        """The account's verdicts were made with ids that no longer hold: judge again on first use."""
        await self.db.execute("UPDATE message SET sender_auth = NULL WHERE account_id = $1 AND sender_auth IS NOT NULL",
                              account_id)

    async def filings(self, message_ids: Sequence[int]) -> dict[int, tuple[str | None, str | None]]:
        """(category a filter filed it into, category a filter withheld for want of a verified sender)."""
        rows = await self.db.fetch(
            """SELECT id, rule_category, sender_auth ->> 'withheld' AS withheld FROM message
                WHERE id = ANY($1::bigint[])""",
            list(message_ids))
        return {r["id"]: (r["rule_category"], r["withheld"]) for r in rows}
