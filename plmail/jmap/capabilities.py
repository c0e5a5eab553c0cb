"""Capabilities this server speaks and the limits it advertises (and enforces)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from plmail.calendar.organiser import MAX_GUESTS
from plmail.domain.enums import Category
from plmail.mail.downloads import MAX_CONCURRENT_UPLOADS
from plmail.mail.email_query import COLLATIONS, SORT_PROPERTIES
from plmail.mail.outbox import MAX_DELAYED_SEND

MAX_DELAYED_SECONDS: Final = int(MAX_DELAYED_SEND.total_seconds())

CORE: Final = "urn:ietf:params:jmap:core"
MAIL: Final = "urn:ietf:params:jmap:mail"
SUBMISSION: Final = "urn:ietf:params:jmap:submission"
CATEGORIES: Final = "urn:plmail:params:jmap:categories"  # vendor: inbox tabs on Email, Thread and in filters
WEBSOCKET: Final = "urn:ietf:params:jmap:websocket"  # RFC 8887
VACATION: Final = "urn:ietf:params:jmap:vacationresponse"  # RFC 8621 §8
QUOTA: Final = "urn:ietf:params:jmap:quota"  # RFC 9425
CALENDARS: Final = "urn:ietf:params:jmap:calendars"  # JMAP for Calendars, JSCalendar (RFC 8984) events
CONTACTS: Final = "urn:ietf:params:jmap:contacts"  # RFC 9610, JSContact (RFC 9553) cards
WEBPUSH_VAPID: Final = "urn:ietf:params:jmap:webpush-vapid"  # RFC 9749: the key Web Push subscriptions are for

SUPPORTED: Final = frozenset({CORE, MAIL, SUBMISSION, CATEGORIES, WEBSOCKET, VACATION, QUOTA, CALENDARS,
                              CONTACTS, WEBPUSH_VAPID})
SORT_OPTIONS: Final = SORT_PROPERTIES


@dataclass(frozen=True, slots=True)
class Limits:
    max_size_upload: int = 50_000_000
    max_concurrent_upload: int = MAX_CONCURRENT_UPLOADS
    max_size_request: int = 10_000_000
    max_concurrent_requests: int = 4
    max_calls_in_request: int = 32
    max_objects_in_get: int = 500
    max_objects_in_set: int = 500
    max_changes: int = 500  # the most ids one /changes answers, whatever the client asks for
    max_query_limit: int = 500


LIMITS: Final = Limits()


def core_capability(limits: Limits = LIMITS) -> dict[str, Any]:
    return {
        "maxSizeUpload": limits.max_size_upload,
        "maxConcurrentUpload": limits.max_concurrent_upload,
        "maxSizeRequest": limits.max_size_request,
        "maxConcurrentRequests": limits.max_concurrent_requests,
        "maxCallsInRequest": limits.max_calls_in_request,
        "maxObjectsInGet": limits.max_objects_in_get,
        "maxObjectsInSet": limits.max_objects_in_set,
        "collationAlgorithms": list(COLLATIONS),
    }


def session_capabilities(limits: Limits = LIMITS, *, websocket: str | None = None,
                         vapid_public_key: str | None = None) -> dict[str, Any]:
    capabilities: dict[str, Any] = {
        CORE: core_capability(limits),
        MAIL: {},
        SUBMISSION: {},
        CATEGORIES: {"categories": [c.value for c in Category]},
        VACATION: {},
        QUOTA: {},
        CALENDARS: {},
        CONTACTS: {},
    }
    if websocket is not None:
        capabilities[WEBSOCKET] = {"url": websocket, "supportsPush": True}
    if vapid_public_key is not None:
        # RFC 9749 §3: the P-256 public key, base64url (no padding), uncompressed as in RFC 8292.
        capabilities[WEBPUSH_VAPID] = {"applicationServerKey": vapid_public_key}
    return capabilities


def latest_release() -> str:
    return (datetime.now(UTC) + MAX_DELAYED_SEND).strftime("%Y-%m-%dT%H:%M:%SZ")


def calendar_account_capability() -> dict[str, Any]:
    """Only the primary account carries the calendars: a person keeps one diary, not one per mailbox."""
    return {"maxCalendarsPerEvent": 1, "minDateTime": "1900-01-01T00:00:00Z", "maxDateTime": "2200-01-01T00:00:00Z",
            "maxExpandedQueryDuration": "P0D", "maxParticipantsPerEvent": MAX_GUESTS + 1, "mayCreateCalendar": True}


def account_capabilities(*, unified: bool = False) -> dict[str, Any]:
    """What an account offers. The automatic reply and the calendars are the user's, so only the unified
    (primary) account has them."""
    capabilities: dict[str, Any] = {
        MAIL: {
            "maxMailboxesPerEmail": None,
            "maxMailboxDepth": None,
            "maxSizeMailboxName": 255,
            "maxSizeAttachmentsPerEmail": 50_000_000,
            "emailQuerySortOptions": list(SORT_OPTIONS),
            "mayCreateTopLevelMailbox": True,
        },
        # Sends may be held up to 30 days: FUTURERELEASE (RFC 4865) with its interval and latest release time.
        SUBMISSION: {"maxDelayedSend": MAX_DELAYED_SECONDS, "submissionExtensions": {
            "FUTURERELEASE": [str(MAX_DELAYED_SECONDS), latest_release()]}},
        CATEGORIES: {},
        QUOTA: {},
    }
    if unified:
        capabilities[VACATION] = {}
        capabilities[CALENDARS] = calendar_account_capability()
        # RFC 9610 §1.4.1: a card is in one of the two fixed books, and no other book can be made.
        capabilities[CONTACTS] = {"maxAddressBooksPerCard": 1, "mayCreateAddressBook": False}
    return capabilities
