"""Calendars a person arranges over JMAP (issue 34): a description, their own order, and whether a calendar is
shown and kept subscribed (JMAP Calendars: description, sortOrder, isVisible, isSubscribed).

Raw SQL beside the Piccolo table, read only by `plmail/calendar/repos/objects.py`. Every statement may run twice.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T12:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "calendar description, sort order, visibility and subscription"

FORWARDS_SQL = r"""
ALTER TABLE calendar ADD COLUMN IF NOT EXISTS description text;
ALTER TABLE calendar ADD COLUMN IF NOT EXISTS sort_order integer;
ALTER TABLE calendar ADD COLUMN IF NOT EXISTS is_visible boolean NOT NULL DEFAULT true;
ALTER TABLE calendar ADD COLUMN IF NOT EXISTS is_subscribed boolean NOT NULL DEFAULT true;
"""

BACKWARDS_SQL = r"""
ALTER TABLE calendar DROP COLUMN IF EXISTS is_subscribed;
ALTER TABLE calendar DROP COLUMN IF EXISTS is_visible;
ALTER TABLE calendar DROP COLUMN IF EXISTS sort_order;
ALTER TABLE calendar DROP COLUMN IF EXISTS description;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
