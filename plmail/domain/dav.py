"""What the CalDAV and CardDAV front reads from the calendar and contacts areas: collections, objects by href,
the changes since a sync token, and why a write was refused (RFC 4791, RFC 6352, RFC 6578)."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.domain.errors import PlmailError


@dataclass(frozen=True, slots=True)
class DavCollection:
    """A calendar or an address book as a client lists it. ``sync_sequence`` is its change log position: the
    CTag and the sync token are both made from it, so a client sees a change the moment it is committed."""

    key: str  # the path segment: a calendar's id, an address book's kind
    name: str
    sync_sequence: int
    color: str | None = None  # #RRGGBB
    order: int = 0
    description: str | None = None
    writable: bool = True


@dataclass(frozen=True, slots=True)
class DavEntry:
    href: str  # the object's name inside its collection
    etag: str  # quoted, as HTTP sends it


@dataclass(frozen=True, slots=True)
class DavObject:
    href: str
    etag: str
    data: bytes


@dataclass(frozen=True, slots=True)
class DavChanges:
    sequence: int  # the new token's position
    changed: tuple[DavEntry, ...]
    removed: tuple[str, ...]  # hrefs


@dataclass(frozen=True, slots=True)
class DavWrite:
    created: bool
    etag: str


class PreconditionFailedError(PlmailError):
    """An If-Match or If-None-Match that does not hold: HTTP 412 (RFC 9110 §13.1)."""


class DavRefusalError(PlmailError):
    """A write the protocol refuses with a named precondition (RFC 4791 §5.3.2.1, RFC 6352 §6.3.2.1), answered
    403 with that element in the error body."""

    def __init__(self, message: str, *, condition: str, namespace: str) -> None:
        super().__init__(message)
        self.condition = condition
        self.namespace = namespace


class InvalidSyncTokenError(PlmailError):
    """A sync token this collection never handed out, or one from its future (RFC 6578 §3.2: valid-sync-token)."""
