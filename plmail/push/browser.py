"""Web Push to the browser (issue 33): a signed-in browser's own push subscription (Settings → Notifications), the
notifications it is sent for new mail, and the Archive and Mark read actions those notifications carry.

A notification action reaches the server from the service worker, with no page open and perhaps no session
cookie left, so it carries its own authority: a token naming the subscription and the conversation, signed with a
key derived from the installation's secret. It works only while that subscription lives (signing out of the
browser removes it) and for its one conversation, and only for the two harmless actions. Every action carries an
idempotency key; a key already applied is refused, so a replayed request changes nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from email.utils import parseaddr
from functools import cache
from pathlib import Path
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel.dates import format_time
from babel.support import NullTranslations, Translations

from plmail.calendar.reminders import DueReminder
from plmail.db.database import Database
from plmail.domain.errors import AuthenticationError, ConflictError, ValidationError
from plmail.domain.push import (
    BROWSER_SUBSCRIPTION_LIFETIME,
    MAX_NOTICES_PER_ROUND,
    MAX_VIP_SENDERS,
    NewMailNotice,
    NotificationPreference,
    NotifyScope,
    PushSubscriptionRow,
)
from plmail.mail.idempotency import AppliedActions
from plmail.mail.operations import ThreadOperations
from plmail.push.addresses import check_push_url
from plmail.push.repos.subscriptions import BrowserPushRepository, PushSubscriptionRepository
from plmail.push.subscriptions import MAX_SUBSCRIPTIONS_PER_USER, MAX_URL, check_keys

TOKEN_LIFETIME_SECONDS: Final = 7 * 86400  # a notification left on the lock screen for a week still acts
ACTIONS: Final = ("archive", "read")
_LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"


def N_(text: str) -> str:  # the name tools/i18n extracts
    return text


def NC_(context: str, text: str) -> tuple[str, str]:
    return context, text


# What a notification says besides the mail's own sender and subject, in the user's language.
NEW_MAIL = N_("New mail")
REMINDER = N_("{title} at {time}")
NO_TITLE = N_("(no title)")
ARCHIVE = NC_("verb", "Archive")
MARK_READ = N_("Mark read")


@cache
def _catalog(locale: str) -> NullTranslations:
    return Translations.load(str(_LOCALE_DIR), [locale], "messages")


def _text(text: str, locale: str) -> str:
    return _catalog(locale).gettext(text)


def _text_in(context_text: tuple[str, str], locale: str) -> str:
    return str(_catalog(locale).pgettext(*context_text))


@dataclass(frozen=True, slots=True)
class ActionGrant:
    """What a valid notification token allows: these two actions on this conversation of this user."""

    subscription: PushSubscriptionRow
    thread_id: int


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


class BrowserPushService:
    def __init__(self, db: Database, operations: ThreadOperations, applied: AppliedActions, *, action_key: bytes,
                 vapid_public_key: str, allow_loopback: bool = False) -> None:
        self.repo = BrowserPushRepository(db)
        self.applied = applied
        self.subscriptions = PushSubscriptionRepository(db)
        self.operations = operations
        self.action_key = action_key
        self.vapid_public_key = vapid_public_key
        self.allow_loopback = allow_loopback

    # -- this browser's subscription -----------------------------------------------------------------------------
    async def subscribe(self, user_id: int, web_session_id: int, *, endpoint: str, p256dh: str, auth: str
                        ) -> PushSubscriptionRow:
        if not endpoint or len(endpoint) > MAX_URL:
            raise ValidationError("The browser gave no usable push endpoint.", field="endpoint")
        check_keys(p256dh, auth)
        await check_push_url(endpoint, allow_loopback=self.allow_loopback)
        live = await self.subscriptions.live_for_users([user_id])
        if len(live) >= MAX_SUBSCRIPTIONS_PER_USER and all(s.url != endpoint for s in live):
            raise ConflictError(f"You have {MAX_SUBSCRIPTIONS_PER_USER} devices with notifications already; turn "
                                f"them off on one first.", reason="overQuota")
        row = await self.repo.subscribe(user_id, web_session_id, endpoint, p256dh, auth,
                                        datetime.now(UTC) + BROWSER_SUBSCRIPTION_LIFETIME)
        await self.subscriptions.announce(user_id)
        return row

    async def unsubscribe(self, user_id: int, web_session_id: int) -> None:
        await self.repo.unsubscribe(user_id, web_session_id)

    async def on_for_session(self, user_id: int, web_session_id: int) -> bool:
        return bool(await self.repo.for_session(user_id, web_session_id))

    async def preference(self, user_id: int) -> NotificationPreference:
        return await self.repo.preference(user_id)

    async def set_preference(self, user_id: int, preference: NotificationPreference) -> None:
        if preference.scope is NotifyScope.LABELS and not preference.label_ids:
            raise ValidationError("Choose at least one label to be notified of.", field="labels")
        if preference.scope is NotifyScope.ACCOUNTS and not preference.account_ids:
            raise ValidationError("Choose at least one account to be notified of.", field="accounts")
        await self.repo.set_preference(user_id, preference)

    async def add_vip(self, user_id: int, address: str) -> str:
        """Mail from a VIP sender notifies whatever else is chosen. Returns the address as kept."""
        _, parsed = parseaddr(address.strip())
        kept = parsed.strip().lower()
        local, at, domain = kept.partition("@")
        if not (local and at and domain) or len(kept) > 320 or any(c.isspace() for c in kept):
            raise ValidationError("Enter an email address such as anna@example.org.", field="address")
        if not await self.repo.add_vip(user_id, kept, limit=MAX_VIP_SENDERS):
            raise ConflictError("Your VIP list is full; remove a sender first.", reason="overQuota")
        return kept

    async def remove_vip(self, user_id: int, address: str) -> None:
        await self.repo.remove_vip(user_id, address.strip().lower())

    async def notices(self, user_id: int, after_id: int, up_to_id: int, preference: NotificationPreference, *,
                      limit: int = MAX_NOTICES_PER_ROUND, now: datetime | None = None) -> list[NewMailNotice]:
        """The new messages (after `after_id`, up to `up_to_id`) the user's choice lets notify, decided per
        message: the newest per conversation, newest first. None in the quiet hours: what arrives then is not
        announced later either (the mail is in the inbox; a burst at 7:00 would wake no one kindly)."""
        if await self.quiet(user_id, preference, now):
            return []
        return await self.repo.new_mail(user_id, after_id, up_to_id, scope=preference.scope, limit=limit)

    async def quiet(self, user_id: int, preference: NotificationPreference, now: datetime | None = None) -> bool:
        """Whether `now` is in the user's quiet hours, in the user's time zone."""
        if preference.quiet_from is None:
            return False
        local = (now or datetime.now(UTC)).astimezone(await self.zone(user_id))
        return preference.quiet_at(local.time())

    async def zone(self, user_id: int) -> tzinfo:
        try:
            return ZoneInfo(await self.repo.time_zone(user_id))
        except (ZoneInfoNotFoundError, ValueError):
            return UTC

    # -- what a notification carries -------------------------------------------------------------------------------
    def token(self, subscription_id: int, thread_id: int, *, now: float | None = None) -> str:
        expires = int((time.time() if now is None else now) + TOKEN_LIFETIME_SECONDS)
        claim = f"{subscription_id}.{thread_id}.{expires}"
        mac = hmac.new(self.action_key, claim.encode(), hashlib.sha256).digest()
        return f"{claim}.{_b64(mac)}"

    def payload(self, subscription: PushSubscriptionRow, notice: NewMailNotice, preference: NotificationPreference,
                locale: str) -> dict[str, Any]:
        """What the service worker shows: sender and subject (or only "New mail" for lock screens), grouped per
        conversation, with Archive and Mark read."""
        shown = preference.show_content
        return {
            "@type": "NewMail",
            "threadId": notice.thread_id,
            "title": (notice.sender or _text(NEW_MAIL, locale)) if shown else _text(NEW_MAIL, locale),
            "body": notice.subject if shown else "",
            "tag": f"thread-{notice.thread_id}",
            "url": f"/thread/{notice.thread_id}",
            "token": self.token(subscription.id, notice.thread_id),
            "actions": [{"action": "archive", "title": _text_in(ARCHIVE, locale)},
                        {"action": "read", "title": _text(MARK_READ, locale)}],
        }

    def reminder_payload(self, reminder: DueReminder, zone: tzinfo, locale: str) -> dict[str, Any]:
        """"<title> at <time>" in the user's language and time zone; the location, if any, below it."""
        when = format_time(reminder.starts_at.astimezone(zone), format="short", locale=locale)
        title = reminder.title or _text(NO_TITLE, locale)
        return {
            "@type": "Reminder",
            "title": _text(REMINDER, locale).format(title=title, time=when),
            "body": reminder.location or "",
            "tag": f"event-{reminder.event_id}-{int(reminder.starts_at.timestamp())}",
            "url": f"/calendar/event/{reminder.event_id}",
        }

    # -- the actions -----------------------------------------------------------------------------------------------
    async def grant(self, token: str) -> ActionGrant:
        parts = token.split(".")
        refused = AuthenticationError("This notification's action is no longer valid.")
        if len(parts) != 4 or not all(p.isdigit() for p in parts[:3]):
            raise refused
        claim = ".".join(parts[:3])
        expected = _b64(hmac.new(self.action_key, claim.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(expected, parts[3]) or int(parts[2]) < time.time():
            raise refused
        subscription = await self.repo.live(int(parts[0]))
        if subscription is None:  # signed out of that browser, or turned off: its notifications act no more
            raise refused
        return ActionGrant(subscription, int(parts[1]))

    async def act(self, token: str, action: str, idempotency_key: str) -> bool:
        """Applies the action once; False when this key was applied already (nothing changes)."""
        if action not in ACTIONS:
            raise ValidationError(f"Unknown action {action!r}.")
        grant = await self.grant(token)
        user_id = grant.subscription.user_id
        return await self.apply_once(user_id, idempotency_key, action, [grant.thread_id])

    async def apply_once(self, user_id: int, idempotency_key: str, action: str, thread_ids: list[int]) -> bool:
        async with self.applied.once(user_id, idempotency_key) as fresh:
            if not fresh:
                return False
            if action == "archive":
                await self.operations.archive(user_id, thread_ids=thread_ids)
            else:
                await self.operations.set_seen(user_id, True, thread_ids=thread_ids)
        return True
