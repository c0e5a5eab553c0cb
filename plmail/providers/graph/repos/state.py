"""A Microsoft account's sync bookkeeping, kept on the account in `sync_state`.

Graph has no account-wide cursor, so the state is per folder: `graph_links` (folder id => delta link) for
folders the sync follows, `graph_import` (folder id => when it was scheduled and the next page of its first
round) for folders still being read, `graph_removals` (message id => folder id) for removals held until
every folder has answered, `graph_folders` for what discovery last saw, and `graph_throttled_until`.

The sync and the import run at the same time for one account, so every write is one statement that
changes only its own entries: a read-modify-write in Python would lose the other's update.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database
from plmail.domain.enums import LabelRole
from plmail.domain.moments import parse_moment

LINKS = "graph_links"
IMPORTS = "graph_import"
REMOVALS = "graph_removals"
FOLDERS = "graph_folders"
THROTTLED = "graph_throttled_until"
ROLES = "graph_roles"


@dataclass(frozen=True, slots=True)
class FolderInfo:
    """A folder as discovery last saw it."""

    id: str
    path: tuple[str, ...]
    role: LabelRole | None
    total: int

    def as_json(self) -> dict[str, Any]:
        return {"path": list(self.path), "role": self.role.value if self.role else None, "total": self.total}


@dataclass(frozen=True, slots=True)
class ImportMark:
    """A folder whose first delta round is being read: scheduled at `since`, going on at `next_link`; the
    round began at `started` (database clock), so what the folder held before and the round did not list
    can be told apart when it ends."""

    folder_id: str
    since: datetime
    next_link: str | None
    started: datetime | None = None


@dataclass(frozen=True, slots=True)
class GraphState:
    folders: dict[str, FolderInfo]
    roles: dict[str, str]  # well-known name (inbox, sentitems, ..., outbox) -> folder id
    links: dict[str, str]
    imports: dict[str, ImportMark]
    removals: dict[str, str]
    throttled_until: datetime | None

    @property
    def importing(self) -> bool:
        """Doubt counts as importing: no folder known yet, a folder without its link, or one still being read."""
        if self.imports or not self.folders:
            return True
        return any(folder_id not in self.links for folder_id in self.folders)


def _obj(value: Any) -> dict[str, Any]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return loaded if isinstance(loaded, dict) else {}


def _state(raw: dict[str, Any]) -> GraphState:
    folders: dict[str, FolderInfo] = {}
    for folder_id, value in _obj(raw.get(FOLDERS)).items():
        if isinstance(value, dict):
            role = value.get("role")
            folders[folder_id] = FolderInfo(
                folder_id, tuple(str(s) for s in value.get("path") or ()),
                LabelRole(str(role)) if role in LabelRole._value2member_map_ else None, int(value.get("total") or 0))
    imports: dict[str, ImportMark] = {}
    for folder_id, value in _obj(raw.get(IMPORTS)).items():
        since = parse_moment(value.get("since")) if isinstance(value, dict) else None
        if since is not None and isinstance(value, dict):
            next_link = value.get("next")
            imports[folder_id] = ImportMark(folder_id, since, str(next_link) if next_link else None,
                                            parse_moment(value.get("started")))
    return GraphState(
        folders=folders,
        roles={k: str(v) for k, v in _obj(raw.get(ROLES)).items() if isinstance(v, str)},
        links={k: str(v) for k, v in _obj(raw.get(LINKS)).items() if isinstance(v, str)},
        imports=imports,
        removals={k: str(v) for k, v in _obj(raw.get(REMOVALS)).items() if isinstance(v, str)},
        throttled_until=parse_moment(raw.get(THROTTLED)),
    )


class GraphStateRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def load(self, account_id: int) -> GraphState:
        value = await self.db.fetchval("SELECT sync_state FROM account WHERE id = $1", account_id)
        return _state(_obj(value))

    async def _merge(self, account_id: int, key: str, entries: Mapping[str, Any]) -> None:
        if entries:
            await self.db.execute(
                """UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text],
                                                             coalesce(sync_state -> $2, '{}'::jsonb) || $3::jsonb)
                    WHERE id = $1""",
                account_id, key, json.dumps(dict(entries)),
            )

    async def _drop(self, account_id: int, key: str, ids: Sequence[str]) -> None:
        if ids:
            await self.db.execute(
                """UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text],
                                                             coalesce(sync_state -> $2, '{}'::jsonb) - $3::text[])
                    WHERE id = $1""",
                account_id, key, list(ids),
            )

    # -- folders -----------------------------------------------------------------------------------------

    async def set_folders(self, account_id: int, folders: Sequence[FolderInfo]) -> None:
        """What discovery saw; links, import marks and held removals of folders that are gone are dropped by
        the caller, which knows what to do with their mail."""
        await self.db.execute(
            "UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text], $3::jsonb) WHERE id = $1",
            account_id, FOLDERS, json.dumps({f.id: f.as_json() for f in folders}),
        )

    async def set_roles(self, account_id: int, roles: Mapping[str, str]) -> None:
        await self.db.execute(
            "UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text], $3::jsonb) WHERE id = $1",
            account_id, ROLES, json.dumps(dict(roles)),
        )

    async def forget_folders(self, account_id: int, folder_ids: Sequence[str]) -> None:
        await self._drop(account_id, LINKS, folder_ids)
        await self._drop(account_id, IMPORTS, folder_ids)

    # -- delta links and imports ---------------------------------------------------------------------------

    async def schedule_imports(self, account_id: int, folder_ids: Sequence[str], since: datetime) -> None:
        """Folders without a delta link are read by the import; one already scheduled keeps its mark."""
        if folder_ids:
            fresh = json.dumps({f: {"since": since.isoformat(), "next": None} for f in folder_ids})
            await self.db.execute(
                """UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text],
                                                             $3::jsonb || coalesce(sync_state -> $2, '{}'::jsonb))
                    WHERE id = $1""",
                account_id, IMPORTS, fresh,
            )

    async def import_moved_on(self, account_id: int, folder_id: str, next_link: str | None) -> None:
        """The next page of the folder's first round (None: start the round again)."""
        await self.db.execute(
            """UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text, $3::text, 'next'], $4::jsonb)
                WHERE id = $1 AND sync_state -> $2 ? $3""",
            account_id, IMPORTS, folder_id, json.dumps(next_link),
        )

    async def import_started(self, account_id: int, folder_id: str, at: datetime) -> None:
        await self.db.execute(
            """UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text, $3::text, 'started'], $4::jsonb)
                WHERE id = $1 AND sync_state -> $2 ? $3""",
            account_id, IMPORTS, folder_id, json.dumps(at.isoformat()),
        )

    async def import_done(self, account_id: int, folder_id: str, delta_link: str) -> None:
        """The page that ends the round brings the folder's delta link: from now on the sync follows it."""
        await self.db.execute(
            """UPDATE account SET sync_state = jsonb_set(
                       jsonb_set(sync_state, ARRAY[$2::text], coalesce(sync_state -> $2, '{}'::jsonb) - $4::text),
                       ARRAY[$3::text],
                       coalesce(sync_state -> $3, '{}'::jsonb) || jsonb_build_object($4::text, $5::text))
                WHERE id = $1""",
            account_id, IMPORTS, LINKS, folder_id, delta_link,
        )

    async def set_links(self, account_id: int, links: Mapping[str, str]) -> None:
        await self._merge(account_id, LINKS, links)

    async def link_expired(self, account_id: int, folder_id: str, since: datetime) -> None:
        """An expired delta link hands its folder back to the import instead of a re-enumeration in the sync."""
        await self._drop(account_id, LINKS, [folder_id])
        await self.schedule_imports(account_id, [folder_id], since)

    # -- removals held until every folder answered --------------------------------------------------------

    async def hold_removals(self, account_id: int, removals: Mapping[str, str]) -> None:
        await self._merge(account_id, REMOVALS, removals)

    async def release_removals(self, account_id: int, message_ids: Sequence[str]) -> None:
        await self._drop(account_id, REMOVALS, message_ids)

    # -- throttling ------------------------------------------------------------------------------------------

    async def throttled(self, account_id: int, until: datetime | None) -> None:
        await self.db.execute(
            "UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text], $3::jsonb) WHERE id = $1",
            account_id, THROTTLED, json.dumps(until.isoformat() if until else None),
        )
