"""Messages as the Graph syncer, importer and propagator see them: by Graph id, where each was last seen,
the labels that stand for folders and categories, and what a move or a removal does to the rows.

A Graph message's immutable id is its provider key (in the account-wide container ''); the folder it was last
seen in is Graph's own, kept in `graph_message` beside the core row.

Every query is scoped to one account: jobs carry an account id and act for its owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database
from plmail.db.repos.imap_messages import TakenOver
from plmail.db.repos.threads import DeletedMessage
from plmail.domain.enums import LabelRole


@dataclass(frozen=True, slots=True)
class KnownMessage:
    id: int
    graph_id: str
    thread_id: int | None
    folder_id: str | None  # the Graph folder it was last seen in (None: not recorded yet)


@dataclass(frozen=True, slots=True)
class PlacedMessage:
    """A message as the propagator needs it: where it lives at Graph and which labels it carries here."""

    id: int
    graph_id: str | None
    folder_id: str | None
    thread_id: int | None
    labels: frozenset[int]


@dataclass(frozen=True, slots=True)
class FolderLabel:
    """A label with a Graph folder at this account."""

    label_id: int
    binding_id: int
    role: LabelRole | None
    folder_id: str


# A local label change the provider has not confirmed yet, or confirmed only after Graph's state was read
# ($LISTED): the user's change wins over what the delta says until then.
_PENDING = """EXISTS (SELECT 1 FROM provider_change pc WHERE pc.message_id = m.id AND pc.kind = '{kind}'
                        AND (pc.done_at IS NULL OR pc.done_at >= $LISTED))"""


class GraphMessageRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def now(self) -> datetime:
        value: datetime = await self.db.fetchval("SELECT clock_timestamp()")
        return value

    # -- what is stored ----------------------------------------------------------------------------------------

    async def known(self, account_id: int, graph_ids: Sequence[str]) -> dict[str, KnownMessage]:
        if not graph_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT m.id, m.provider_key, m.thread_id, g.folder_id
                 FROM message m LEFT JOIN graph_message g ON g.message_id = m.id
                WHERE m.account_id = $1 AND m.provider_container = '' AND m.provider_key = ANY($2::text[])""",
            account_id, list(graph_ids),
        )
        return {r["provider_key"]: KnownMessage(r["id"], r["provider_key"], r["thread_id"], r["folder_id"])
                for r in rows}

    async def stored_count(self, account_id: int) -> int:
        return int(await self.db.fetchval(
            "SELECT count(*) FROM message WHERE account_id = $1 AND provider_key IS NOT NULL", account_id))

    async def graph_id_of(self, account_id: int, message_id: int) -> str | None:
        value = await self.db.fetchval(
            "SELECT provider_key FROM message WHERE account_id = $1 AND id = $2", account_id, message_id)
        return str(value) if value is not None else None

    async def in_folders(self, account_id: int, folder_ids: Sequence[str]) -> dict[str, str]:
        """graph id -> folder id of the messages last seen in these folders."""
        if not folder_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT m.provider_key, g.folder_id FROM graph_message g JOIN message m ON m.id = g.message_id
                WHERE m.account_id = $1 AND g.folder_id = ANY($2::text[]) AND m.provider_key IS NOT NULL""",
            account_id, list(folder_ids),
        )
        return {r["provider_key"]: r["folder_id"] for r in rows}

    async def seen(self, account_id: int, message_ids: Sequence[int]) -> None:
        """Listed by Graph just now (synced_at tells a round's members from what it no longer holds)."""
        if message_ids:
            await self.db.execute(
                "UPDATE message SET synced_at = now() WHERE account_id = $1 AND id = ANY($2::bigint[])",
                account_id, list(message_ids),
            )

    async def unlisted(self, account_id: int, folder_id: str, since: datetime) -> dict[str, str]:
        """graph id -> folder id of messages recorded in the folder that no listing has named since `since`."""
        rows = await self.db.fetch(
            """SELECT m.provider_key FROM graph_message g JOIN message m ON m.id = g.message_id
                WHERE m.account_id = $1 AND g.folder_id = $2 AND m.provider_key IS NOT NULL
                  AND (m.synced_at IS NULL OR m.synced_at < $3)""",
            account_id, folder_id, since,
        )
        return {r["provider_key"]: folder_id for r in rows}

    async def place(self, account_id: int, graph_ids: Sequence[str], folder_ids: Sequence[str],
                    listed_at: datetime) -> None:
        """Record the folder of freshly stored messages (the pipeline knows no Graph folders), and mark them listed
        by the database's clock where the row's own stamp (the app's clock, at insert) is older than the listing:
        only then could `unlisted` mistake them for gone. Rewriting every new row instead cost a second row
        version, with all its index entries, per message: a third of a page's database time."""
        if graph_ids:
            await self.db.execute(
                """WITH x AS (SELECT DISTINCT ON (m.id) m.id, x.f, m.synced_at
                                FROM unnest($2::text[], $3::text[]) AS x(g, f)
                                JOIN message m ON m.provider_container = '' AND m.provider_key = x.g
                                              AND m.account_id = $1),
                        placed AS (INSERT INTO graph_message (message_id, folder_id) SELECT id, f FROM x
                                   ON CONFLICT (message_id) DO UPDATE SET folder_id = EXCLUDED.folder_id)
                   UPDATE message m SET synced_at = now() FROM x
                    WHERE m.id = x.id AND (x.synced_at IS NULL OR x.synced_at < $4)""",
                account_id, list(graph_ids), list(folder_ids), listed_at,
            )

    # -- labels that stand for folders and categories --------------------------------------------------------

    async def folder_labels(self, account_id: int) -> list[FolderLabel]:
        """The account's folders as labels. A Graph folder is a binding's `provider_key`; an Outlook category, a name
        on messages only, its `provider_tag` (a label that is both a folder and a category here is a folder)."""
        rows = await self.db.fetch(
            """SELECT b.label_id, b.id, l.role, b.provider_key FROM label_binding b JOIN label l ON l.id = b.label_id
                WHERE b.account_id = $1 AND b.provider_key IS NOT NULL ORDER BY b.id""",
            account_id,
        )
        return [FolderLabel(r["label_id"], r["id"], LabelRole(r["role"]) if r["role"] else None, r["provider_key"])
                for r in rows]

    async def category_labels(self, account_id: int) -> dict[int, str]:
        """label id -> Outlook category name, for labels that stand for a category at this account."""
        rows = await self.db.fetch(
            """SELECT label_id, provider_tag FROM label_binding
                WHERE account_id = $1 AND provider_tag IS NOT NULL AND provider_key IS NULL""",
            account_id,
        )
        return {r["label_id"]: r["provider_tag"] for r in rows}

    async def label_paths(self, user_id: int, label_ids: Sequence[int]) -> dict[int, tuple[tuple[str, ...],
                                                                                          LabelRole | None]]:
        """label id -> (path of names from the top, role) for the user's labels among `label_ids`."""
        if not label_ids:
            return {}
        rows = await self.db.fetch(
            """WITH RECURSIVE chain AS (
                   SELECT id AS start, id, parent_id, name, 0 AS depth FROM label
                    WHERE user_id = $1 AND id = ANY($2::int[])
                   UNION ALL
                   SELECT c.start, l.id, l.parent_id, l.name, c.depth + 1
                     FROM chain c JOIN label l ON l.id = c.parent_id WHERE c.depth < 32)
               SELECT c.start, array_agg(c.name ORDER BY c.depth DESC) AS path, s.role
                 FROM chain c JOIN label s ON s.id = c.start GROUP BY c.start, s.role""",
            user_id, list(label_ids),
        )
        return {r["start"]: (tuple(r["path"]), LabelRole(r["role"]) if r["role"] else None) for r in rows}

    # -- what the delta says about stored messages ------------------------------------------------------------

    async def relocate(self, account_id: int, moves: Sequence[tuple[int, str, int | None]], listed_at: datetime
                       ) -> tuple[list[int], list[int]]:
        """(message id, folder id, the folder's label) for messages seen in another folder than recorded: the
        folder where a message was last seen is where it is, so its other folder labels go. A message whose
        labels the user changed here, unconfirmed by Graph when the delta was read, keeps them until the
        propagator has moved it. Returns (relocated message ids, labels taken off or put on)."""
        if not moves:
            return [], []
        rows = await self.db.fetch(
            f"""WITH free AS (
                     SELECT DISTINCT ON (m.id) m.id, x.f
                       FROM unnest($2::bigint[], $3::text[]) AS x(id, f) JOIN message m ON m.id = x.id
                       LEFT JOIN graph_message g ON g.message_id = m.id
                      WHERE m.account_id = $1 AND g.folder_id IS DISTINCT FROM x.f
                        AND NOT {_PENDING.format(kind='labels').replace('$LISTED', '$4')}),
                   placed AS (INSERT INTO graph_message (message_id, folder_id) SELECT id, f FROM free
                              ON CONFLICT (message_id) DO UPDATE SET folder_id = EXCLUDED.folder_id
                              RETURNING message_id)
               UPDATE message m SET updated_at = now() FROM placed p WHERE m.id = p.message_id
             RETURNING m.id""",
            account_id, [m[0] for m in moves], [m[1] for m in moves], listed_at,
        )
        moved = {r["id"] for r in rows}
        pairs = [(m[0], m[2]) for m in moves if m[0] in moved and m[2] is not None]
        touched: set[int] = {p[1] for p in pairs if p[1] is not None}
        if moved:
            gone = await self.db.fetch(
                """DELETE FROM message_label ml
                    USING label_binding b, unnest($2::bigint[], $3::int[]) AS x(id, keep)
                    WHERE ml.message_id = x.id AND b.label_id = ml.label_id AND b.account_id = $1
                      AND b.provider_key IS NOT NULL AND ml.label_id IS DISTINCT FROM x.keep
                RETURNING ml.label_id""",
                account_id, [m[0] for m in moves if m[0] in moved], [m[2] for m in moves if m[0] in moved],
            )
            touched |= {r["label_id"] for r in gone}
        if pairs:
            await self.add_labels(pairs)
        return sorted(moved), sorted(touched)

    async def add_labels(self, pairs: Sequence[tuple[int, int | None]]) -> None:
        wanted = [(m, label) for m, label in pairs if label is not None]
        if wanted:
            await self.db.execute(
                """INSERT INTO message_label (message_id, label_id)
                   SELECT m, l FROM unnest($1::bigint[], $2::int[]) AS x(m, l) ON CONFLICT DO NOTHING""",
                [p[0] for p in wanted], [p[1] for p in wanted],
            )

    async def apply_flags(self, account_id: int, states: Sequence[tuple[int, bool, bool]], listed_at: datetime
                          ) -> list[int]:
        """(message id, read, flagged) from Graph, written into seen_at and starred_at where they differ —
        unless the user changed that state here and Graph has not confirmed it, or confirmed it only after
        the delta was read. Unread follows seen_at; the provider's flag is news, not the truth."""
        if not states:
            return []
        rows = await self.db.fetch(
            f"""UPDATE message m SET
                       seen_at = CASE WHEN {_PENDING.format(kind='seen').replace('$LISTED', '$5')} THEN m.seen_at
                                      WHEN x.seen THEN coalesce(m.seen_at, now()) ELSE NULL END,
                       starred_at = CASE WHEN {_PENDING.format(kind='starred').replace('$LISTED', '$5')}
                                         THEN m.starred_at
                                         WHEN x.starred THEN coalesce(m.starred_at, now()) ELSE NULL END,
                       synced_at = now(), updated_at = now()
                  FROM unnest($2::bigint[], $3::bool[], $4::bool[]) AS x(id, seen, starred)
                 WHERE m.account_id = $1 AND m.id = x.id
                   AND ((m.seen_at IS NOT NULL) <> x.seen OR (m.starred_at IS NOT NULL) <> x.starred)
             RETURNING m.id, (m.seen_at IS NOT NULL) = x.seen AND (m.starred_at IS NOT NULL) = x.starred AS took""",
            account_id, [s[0] for s in states], [s[1] for s in states], [s[2] for s in states], listed_at,
        )
        return [r["id"] for r in rows if r["took"]]

    async def set_categories(self, account_id: int, wanted: Sequence[tuple[int, Sequence[int]]],
                             listed_at: datetime) -> tuple[list[int], list[int]]:
        """Make each message's category labels the ones Graph lists; other labels are left alone, and a message
        whose labels the user changed here (unconfirmed) keeps them. Returns (messages changed, labels taken
        off or put on)."""
        if not wanted:
            return [], []
        ids = [w[0] for w in wanted]
        free = {r["id"] for r in await self.db.fetch(
            f"""SELECT m.id FROM message m WHERE m.account_id = $1 AND m.id = ANY($2::bigint[])
                  AND NOT {_PENDING.format(kind='labels').replace('$LISTED', '$3')}""",
            account_id, ids, listed_at,
        )}
        keep: list[tuple[int, int | None]] = [
            (m, label) for m, labels in wanted if m in free for label in ([*labels] if labels else [None])]
        keep_ids = [k[0] for k in keep]
        keep_labels = [k[1] for k in keep]
        gone = await self.db.fetch(
            """DELETE FROM message_label ml USING label_binding b
                WHERE ml.message_id = ANY($2::bigint[]) AND b.label_id = ml.label_id AND b.account_id = $1
                  AND b.provider_tag IS NOT NULL AND b.provider_key IS NULL
                  AND NOT EXISTS (SELECT 1 FROM unnest($3::bigint[], $4::int[]) AS k(m, l)
                                   WHERE k.m = ml.message_id AND k.l = ml.label_id)
            RETURNING ml.message_id, ml.label_id""",
            account_id, sorted(free), keep_ids, keep_labels,
        )
        added = await self.db.fetch(
            """INSERT INTO message_label (message_id, label_id)
               SELECT m, l FROM unnest($1::bigint[], $2::int[]) AS x(m, l) WHERE l IS NOT NULL
               ON CONFLICT DO NOTHING RETURNING message_id, label_id""",
            keep_ids, keep_labels,
        )
        rows = [*gone, *added]
        return sorted({r["message_id"] for r in rows}), sorted({r["label_id"] for r in rows})

    # -- removals and messages that turn up again under a new id ---------------------------------------------

    async def held_candidates(self, account_id: int, held: Sequence[str], rfc_ids: Sequence[str]
                              ) -> list[tuple[int, str, str | None, int | None]]:
        """(id, graph id, Message-ID, thread) of messages whose removal is held and whose Message-ID matches:
        a move under a changing id shows as a removal here and an unknown message there."""
        if not held or not rfc_ids:
            return []
        rows = await self.db.fetch(
            """SELECT id, provider_key, rfc_message_id, thread_id FROM message
                WHERE account_id = $1 AND provider_container = '' AND provider_key = ANY($2::text[])
                  AND rfc_message_id = ANY($3::text[])
                ORDER BY id""",
            account_id, list(held), list(rfc_ids),
        )
        return [(r["id"], r["provider_key"], r["rfc_message_id"], r["thread_id"]) for r in rows]

    async def take_over(self, account_id: int, folder_id: str, label_id: int | None,
                        rows: Sequence[tuple[int, str, str | None]]) -> list[TakenOver]:
        """Re-point rows of another account (Gmail's, Gmailify) at (this account, Graph id, folder): same id, read
        state and the user's own labels; the place labels follow the folder, Gmail's ids go, the thread is chosen
        anew. `rows` are (row id, Graph id, Graph conversation id)."""
        if not rows:
            return []
        ids = [r[0] for r in rows]
        before = await self.db.fetch(
            """SELECT m.id, m.account_id, m.thread_id,
                      coalesce((SELECT array_agg(ml.label_id ORDER BY ml.label_id) FROM message_label ml
                                 WHERE ml.message_id = m.id), '{}') AS labels
                 FROM message m WHERE m.id = ANY($1::bigint[]) ORDER BY m.id FOR UPDATE""", ids)
        await self.db.execute(
            """UPDATE message m
                  SET account_id = $1, provider_container = '', provider_key = x.g, provider_thread_key = x.c,
                      provider_labels = NULL, mailbox_id = NULL, thread_id = NULL,
                      vanished_at = NULL, synced_at = now(), updated_at = now()
                 FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(i, g, c)
                WHERE m.id = x.i""",
            account_id, ids, [r[1] for r in rows], [r[2] for r in rows])
        await self.db.execute(
            """INSERT INTO graph_message (message_id, folder_id) SELECT i, $2 FROM unnest($1::bigint[]) AS x(i)
               ON CONFLICT (message_id) DO UPDATE SET folder_id = EXCLUDED.folder_id""", ids, folder_id)
        await self.db.execute(
            """DELETE FROM message_label ml USING label l
                WHERE ml.label_id = l.id AND l.role IS NOT NULL AND ml.message_id = ANY($1::bigint[])""", ids)
        if label_id is not None:
            await self.db.execute(
                """INSERT INTO message_label (message_id, label_id) SELECT i, $2 FROM unnest($1::bigint[]) AS x(i)
                   ON CONFLICT DO NOTHING""", ids, label_id)
        return [TakenOver(r["id"], r["account_id"], r["thread_id"], tuple(r["labels"])) for r in before]

    async def repoint(self, message_id: int, graph_id: str) -> None:
        await self.db.execute(
            "UPDATE message SET provider_key = $2, updated_at = now() WHERE id = $1", message_id, graph_id)

    async def delete_removed(self, account_id: int, removals: dict[str, str]) -> list[DeletedMessage]:
        """Delete the messages still recorded in the folder they were removed from (parts, labels and links go
        with the rows); one seen in another folder since was moved, not deleted."""
        if not removals:
            return []
        rows = await self.db.fetch(
            """WITH doomed AS (
                   SELECT m.id, m.thread_id,
                          coalesce((SELECT array_agg(ml.label_id) FROM message_label ml WHERE ml.message_id = m.id),
                                   '{}') AS labels
                     FROM message m JOIN unnest($2::text[], $3::text[]) AS x(g, f)
                          ON m.provider_container = '' AND m.provider_key = x.g
                     LEFT JOIN graph_message gm ON gm.message_id = m.id
                    WHERE m.account_id = $1 AND (gm.folder_id IS NULL OR gm.folder_id = x.f))
               DELETE FROM message m USING doomed d WHERE m.id = d.id
               RETURNING d.id, d.thread_id, d.labels""",
            account_id, list(removals), [removals[g] for g in removals],
        )
        return [DeletedMessage(r["id"], r["thread_id"], tuple(r["labels"])) for r in rows]

    # -- messages that would not store -----------------------------------------------------------------------

    async def skip_counts(self, account_id: int, refs: Sequence[str]) -> dict[str, int]:
        if not refs:
            return {}
        rows = await self.db.fetch(
            """SELECT source_ref, count(*) AS n FROM ingest_skip
                WHERE account_id = $1 AND source_ref = ANY($2::text[]) GROUP BY source_ref""",
            account_id, list(refs),
        )
        return {r["source_ref"]: int(r["n"]) for r in rows}

    async def forget_skips(self, account_id: int, refs: Sequence[str]) -> None:
        if refs:
            await self.db.execute(
                "DELETE FROM ingest_skip WHERE account_id = $1 AND source_ref = ANY($2::text[])",
                account_id, list(refs),
            )

    # -- the propagator's view --------------------------------------------------------------------------------

    async def placed(self, account_id: int, message_ids: Sequence[int]) -> dict[int, PlacedMessage]:
        rows = await self.db.fetch(
            """SELECT m.id, m.provider_key, g.folder_id, m.thread_id,
                      coalesce(array_agg(ml.label_id) FILTER (WHERE ml.label_id IS NOT NULL), '{}') AS labels
                 FROM message m LEFT JOIN message_label ml ON ml.message_id = m.id
                 LEFT JOIN graph_message g ON g.message_id = m.id
                WHERE m.account_id = $1 AND m.id = ANY($2::bigint[])
                GROUP BY m.id, g.folder_id""",
            account_id, list(message_ids),
        )
        return {r["id"]: PlacedMessage(r["id"], r["provider_key"], r["folder_id"], r["thread_id"],
                                       frozenset(r["labels"])) for r in rows}

    async def moved(self, message_id: int, graph_id: str, folder_id: str) -> None:
        """The message's id and folder after a move, so the next delta recognises it instead of storing it twice."""
        await self.db.execute(
            """WITH placed AS (INSERT INTO graph_message (message_id, folder_id)
                               SELECT id, $3 FROM message WHERE id = $1
                               ON CONFLICT (message_id) DO UPDATE SET folder_id = EXCLUDED.folder_id)
               UPDATE message SET provider_key = $2, synced_at = now(), updated_at = now() WHERE id = $1""",
            message_id, graph_id, folder_id,
        )

    async def remove_labels(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            await self.db.execute(
                """DELETE FROM message_label ml USING unnest($1::bigint[], $2::int[]) AS x(m, l)
                    WHERE ml.message_id = x.m AND ml.label_id = x.l""",
                [p[0] for p in pairs], [p[1] for p in pairs],
            )
