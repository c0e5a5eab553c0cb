"""Unsubscriptions: which mailing lists and senders a user left through plmail's Unsubscribe button.

One row per user and list (the List-Id, else the sender's address): the thread page then says "Unsubscribed"
instead of offering the button again, whichever message of the list is open. `method` is how it was done (RFC 8058
one-click POST, a mail to the list's mailto address, or the sender's web page), `target` the URI used.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-06T12:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "unsubscriptions from mailing lists"

FORWARDS_SQL = r"""
CREATE TABLE IF NOT EXISTS unsubscription (
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    list_key text NOT NULL,
    method text NOT NULL CHECK (method IN ('one_click', 'mailto', 'link')),
    target text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, list_key)
);
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS unsubscription;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
