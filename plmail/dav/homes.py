"""The two kinds of collection home a principal has, and what the front asks of the area behind each: the
calendar area's CalDAV store and the contacts area's CardDAV store, seen through one shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from plmail.domain.dav import DavChanges, DavCollection, DavEntry, DavObject, DavWrite
from plmail.domain.errors import NotFoundError
from plmail.services import Services


class ObjectStore(Protocol):
    async def collections(self, user_id: int) -> list[DavCollection]: ...

    async def listing(self, user_id: int, key: str) -> list[DavEntry]: ...

    async def fetch(self, user_id: int, key: str, hrefs: Sequence[str], *, base_url: str) -> list[DavObject]: ...

    async def changes(self, user_id: int, key: str, since: int | None) -> DavChanges: ...

    async def put(self, user_id: int, key: str, href: str, data: bytes, *, if_match: str | None,
                  if_none_match: bool) -> DavWrite: ...

    async def delete(self, user_id: int, key: str, href: str, *, if_match: str | None) -> None: ...


def _calendar_id(key: str) -> int:
    if not key.isdigit() or len(key) > 9:
        raise NotFoundError("No such calendar.")
    return int(key)


class CalendarHome:
    """The calendar area's CalDAV store, addressed by the calendar's id as its path segment."""

    def __init__(self, services: Services) -> None:
        self.store = services.calendar.dav

    async def collections(self, user_id: int) -> list[DavCollection]:
        return await self.store.calendars(user_id)

    async def listing(self, user_id: int, key: str) -> list[DavEntry]:
        return await self.store.listing(user_id, _calendar_id(key))

    async def describe(self, user_id: int, key: str, *, name: str | None, color: str | None) -> None:
        await self.store.describe(user_id, _calendar_id(key), name=name, color=color)

    async def query(self, user_id: int, key: str, start: datetime | None, end: datetime | None) -> list[DavEntry]:
        return await self.store.query(user_id, _calendar_id(key), start, end)

    async def expanded(self, user_id: int, key: str, href: str, start: datetime, end: datetime) -> bytes | None:
        return await self.store.expanded(user_id, _calendar_id(key), href, start, end)

    async def fetch(self, user_id: int, key: str, hrefs: Sequence[str], *, base_url: str) -> list[DavObject]:
        return await self.store.fetch(user_id, _calendar_id(key), hrefs, base_url=base_url)

    async def changes(self, user_id: int, key: str, since: int | None) -> DavChanges:
        return await self.store.changes(user_id, _calendar_id(key), since)

    async def put(self, user_id: int, key: str, href: str, data: bytes, *, if_match: str | None,
                  if_none_match: bool) -> DavWrite:
        return await self.store.put(user_id, _calendar_id(key), href, data, if_match=if_match,
                                    if_none_match=if_none_match)

    async def delete(self, user_id: int, key: str, href: str, *, if_match: str | None) -> None:
        await self.store.delete(user_id, _calendar_id(key), href, if_match=if_match)


@dataclass(frozen=True, slots=True)
class Kind:
    """What differs between CalDAV and CardDAV for the same machinery."""

    segment: str  # the home's path segment
    namespace: str
    collection_type: str  # the resourcetype element's local name: calendar / addressbook
    data_prop: str  # calendar-data / address-data
    content_type: str
    multiget: str
    query: str
