"""Calendars, their events and occurrences, where each event came from, and what the user refused.

Unique, partial and range indexes, and the fixed-width suppression hash, are in the raw migration
that follows the tables' own one.
"""

from piccolo.columns import (
    JSONB,
    BigInt,
    BigSerial,
    Boolean,
    ForeignKey,
    Integer,
    OnDelete,
    Serial,
    SmallInt,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table

from plmail.db.tables.accounts import Account
from plmail.db.tables.mail import Message, MessagePart
from plmail.db.tables.users import User


class Calendar(Table, tablename="calendar"):
    """A user's calendar: the default one, or one per account that an account setting may point at.

    The account's calendar survives the account (SET NULL): its events are still the user's.
    """

    id = Serial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.set_null, null=True, db_column_name="account_id")
    name = Text(default="")
    color = Varchar(length=16, default="blue")
    time_zone = Varchar(length=64, null=True, default=None)  # None: the user's own zone
    is_default = Boolean(default=False)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class CalendarEvent(Table, tablename="calendar_event"):
    id = BigSerial(primary_key=True)
    calendar = ForeignKey(
        references=Calendar, on_delete=OnDelete.cascade, null=False, db_column_name="calendar_id"
    )
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id")
    uid = Text()  # the sender's own UID for invitations, verbatim
    sequence = Integer(default=0)
    starts_at = Timestamptz()  # UTC; midnight UTC of the date for all-day events
    ends_at = Timestamptz()
    time_zone = Varchar(length=64, null=True, default=None)  # the zone the sender named; None: UTC instant
    is_all_day = Boolean(default=False)
    is_floating = Boolean(default=False)  # wall-clock times read in the user's zone
    title = Text(null=True, default=None)
    location = Text(null=True, default=None)
    description = Text(null=True, default=None)
    status = Varchar(length=16, default="confirmed")  # EventStatus
    kind = Varchar(length=24, null=True, default=None)  # EventKind
    source = Varchar(length=20, default="manual")  # EventSource
    confidence = SmallInt(default=100)
    recurrence = JSONB(default="{}")  # JSCalendar recurrenceRules, recurrenceOverrides, excluded
    raw_rrule = Text(null=True, default=None)  # a rule the converter refused, kept verbatim
    is_user_edited = Boolean(default=False)
    dedup_key_version = SmallInt(default=1)
    my_participation = Varchar(length=16, null=True, default=None)  # None: not an invitation to the user
    organizer = JSONB(null=True, default=None)
    attendees = JSONB(default="[]")
    created_at = Timestamptz()
    updated_at = Timestamptz()


class CalendarEventOccurrence(Table, tablename="calendar_event_occurrence"):
    """One materialised instance; every range query reads these, never the rules."""

    id = BigSerial(primary_key=True)
    event = ForeignKey(
        references=CalendarEvent, on_delete=OnDelete.cascade, null=False, db_column_name="event_id"
    )
    calendar = ForeignKey(
        references=Calendar, on_delete=OnDelete.cascade, null=False, db_column_name="calendar_id"
    )
    recurrence_id = Timestamptz()
    starts_at = Timestamptz()
    ends_at = Timestamptz()
    is_override = Boolean(default=False)
    cancelled = Boolean(default=False)
    title = Text(null=True, default=None)  # this instance's own title (an override); None: the event's
    location = Text(null=True, default=None)


class EventSourceLink(Table, tablename="event_source_link"):
    """Which message put an event on the calendar, and exactly what it said (``payload``, verbatim).

    ``applied`` false means: the message was read and it lost (a stale duplicate, an older revision).
    """

    id = BigSerial(primary_key=True)
    event = ForeignKey(
        references=CalendarEvent, on_delete=OnDelete.cascade, null=False, db_column_name="event_id"
    )
    message = ForeignKey(references=Message, on_delete=OnDelete.cascade, null=False, db_column_name="message_id")
    message_part = ForeignKey(
        references=MessagePart, on_delete=OnDelete.set_null, null=True, db_column_name="message_part_id"
    )
    extractor = Varchar(length=64)
    confidence = SmallInt(default=0)
    dedup_key = Varchar(length=128)
    applied = Boolean(default=True)
    payload = JSONB(default="{}")
    created_at = Timestamptz()
    updated_at = Timestamptz()


class EventSuppression(Table, tablename="event_suppression"):
    """A user's "not an event", remembered by the hash of the dedup key (char(64) in the raw migration)."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id")
    dedup_key_hash = Varchar(length=64)
    created_at = Timestamptz()


class EventProposal(Table, tablename="event_proposal"):
    """A date read from a sentence, offered on a card; its own table, never a state of CalendarEvent.

    A row here materialises no occurrence, so no calendar view can show a guess by forgetting to exclude
    it. The unique (message_id, starts_at) index (raw migration) is the guard that holds under concurrent
    workers; there is deliberately no index by user or by date, because nothing reads this table that way.
    """

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id")
    message = ForeignKey(references=Message, on_delete=OnDelete.cascade, null=False, db_column_name="message_id")
    title = Text()
    starts_at = Timestamptz()  # local midnight in the user's zone for an all-day proposal
    ends_at = Timestamptz()
    is_all_day = Boolean(default=False)
    time_zone = Varchar(length=64)  # the user's zone the sentence was read in
    confidence = SmallInt(default=0)
    source_sentence = Text()  # kept as evidence: a guess whose reason shows can be judged in a second
    dedup_key_hash = Varchar(length=64)  # char(64) in the raw migration; what a decline suppresses
    detector = Varchar(length=64)
    created_at = Timestamptz()
    location = Text(null=True, default=None)  # the place the sentence names ("at Cafe Lotte")
    stated_end = Timestamptz(null=True, default=None)  # the end the sentence writes; None: ends_at is a default


class CalendarSubscription(Table, tablename="calendar_subscription"):
    """A private, read-only feed of one calendar for a phone's calendar app.

    The URL's token is a selector (looked up) and a verifier (only its SHA-256 is kept, compared in
    constant time), so neither a database reader nor a timing measurement learns a working URL.
    """

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    calendar = ForeignKey(
        references=Calendar, on_delete=OnDelete.cascade, null=False, db_column_name="calendar_id"
    )
    selector = Varchar(length=32)
    verifier_hash = Varchar(length=64)
    created_at = Timestamptz()
    revoked_at = Timestamptz(null=True, default=None)
    last_fetched_at = Timestamptz(null=True, default=None)


class CalendarChange(Table, tablename="calendar_change"):
    """The calendar's change log, written by triggers on calendars and events (the raw migration), so
    JMAP's /changes and a feed's ETag see every write, cascades included. No foreign keys: a row about a
    deleted calendar or event is the point, and pruning removes old rows."""

    sequence = BigSerial(primary_key=True)
    user_id = Integer()
    calendar_id = Integer(null=True, default=None)
    object_type = Varchar(length=16)  # Calendar, CalendarEvent
    entity_id = BigInt()
    change_type = Varchar(length=16)  # created, updated, destroyed
    created_at = Timestamptz()
