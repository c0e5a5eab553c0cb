"""Push subscriptions (RFC 8620 §7.2, Web Push RFC 8030/8291): what is stored, and what a delivery came to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import Final

from plmail.domain.enums import JmapObjectType

# RFC 8620 §7.2 lets the server shorten what a client asks for; a phone renews (updates `expires`) well before.
MAX_SUBSCRIPTION_LIFETIME: Final = timedelta(days=7)
# "At most one push per subscription per second with the latest states" (issue 33).
PUSH_INTERVAL: Final = timedelta(seconds=1)
# The types a StateChange may name (what the change log knows for mail), in the order they are listed.
PUSHABLE_TYPES: Final = (JmapObjectType.MAILBOX, JmapObjectType.EMAIL, JmapObjectType.THREAD,
                         JmapObjectType.IDENTITY, JmapObjectType.EMAIL_SUBMISSION)

# (JMAP account id, type name) -> state, as JSON keeps it: "accountId/Type".
PushedStates = dict[str, str]


def state_key(account_id: str, kind: str) -> str:
    return f"{account_id}/{kind}"


@dataclass(frozen=True, slots=True)
class PushSubscriptionRow:
    id: int
    user_id: int
    app_password_id: int | None
    device_client_id: str
    url: str
    p256dh: str
    auth: str
    types: tuple[str, ...] | None  # None: every type
    expires_at: datetime
    verification_code: str
    verified: bool
    verification_sent_at: datetime | None
    pushed_states: PushedStates
    next_push_at: datetime
    failures: int
    web_session_id: int | None = None  # a browser's subscription (Settings → Notifications), not a JMAP client's
    notified_message_id: int | None = None  # a browser's: the newest message it was told about

    @property
    def browser(self) -> bool:
        return self.web_session_id is not None

    def wants(self, kind: JmapObjectType) -> bool:
        return self.types is None or kind.value in self.types


@dataclass(frozen=True, slots=True)
class NewPushSubscription:
    user_id: int
    app_password_id: int | None
    device_client_id: str
    url: str
    p256dh: str
    auth: str
    types: tuple[str, ...] | None
    expires_at: datetime
    verification_code: str


class PushOutcome(StrEnum):
    DELIVERED = "delivered"
    GONE = "gone"  # 404/410 (and any other 4xx, RFC 8620 §7.2): the subscription is removed
    RETRY = "retry"  # 429, 5xx, a network failure: try again later


@dataclass(frozen=True, slots=True)
class PushResult:
    outcome: PushOutcome
    status: int | None = None
    retry_after: float | None = None  # seconds, from the push service's Retry-After
    detail: str = ""


# A browser subscription lives as long as the web session that made it (sign-out removes it), and at most this.
BROWSER_SUBSCRIPTION_LIFETIME: Final = timedelta(days=60)
# New conversations announced in one round at most; more at once (a backlog) is one "new mail" too many to read.
MAX_NOTICES_PER_ROUND: Final = 5


class NotifyScope(StrEnum):
    """Which new mail notifies (issue 33); mail from a VIP sender notifies whatever the scope."""

    GENERAL = "primary"  # new mail in the inbox's General tab (the default)
    EVERY = "all"  # every new message in the inbox, in every tab
    LABELS = "labels"  # new mail in one of the chosen labels, in the inbox or not
    ACCOUNTS = "accounts"  # new mail in the inbox of one of the chosen accounts
    VIP = "vip"  # only mail from VIP senders


# A VIP list is a short list of people; a few hundred is already more than anyone reads notifications from.
MAX_VIP_SENDERS: Final = 500


@dataclass(frozen=True, slots=True)
class NotificationPreference:
    """What notifies (the scope, its chosen labels or accounts, and the VIP senders, who always do) and what a
    notification shows (sender and subject, or only "New mail", for lock screens)."""

    scope: NotifyScope = NotifyScope.GENERAL
    show_content: bool = True
    label_ids: tuple[int, ...] = ()
    account_ids: tuple[int, ...] = ()
    vip_senders: tuple[str, ...] = ()
    quiet_from: time | None = None  # quiet hours, in the user's time zone; both set or neither
    quiet_to: time | None = None
    reminders: bool = True  # calendar reminders (an event's VALARM, else 10 minutes before it starts)

    def quiet_at(self, local: time) -> bool:
        """Whether `local` (the user's wall-clock time) is in the quiet hours: from inclusive, to exclusive, and
        across midnight when `to` is earlier than `from` (22:00–07:00)."""
        if self.quiet_from is None or self.quiet_to is None or self.quiet_from == self.quiet_to:
            return False
        local = local.replace(tzinfo=None)
        if self.quiet_from < self.quiet_to:
            return self.quiet_from <= local < self.quiet_to
        return local >= self.quiet_from or local < self.quiet_to


@dataclass(frozen=True, slots=True)
class NewMailNotice:
    """A new message as a browser notification announces it (the newest one per conversation)."""

    message_id: int
    thread_id: int
    sender: str
    subject: str
