"""JMAP accounts (issue 31): the provider's own tables, beside the core schema and read only by
`plmail/providers/jmap/repos/upstream.py`.

`jmap_mailbox` is the upstream's Mailbox list (RFC 8621 §2) with the plmail label each one is shown as;
`jmap_email` ties an upstream Email id to the stored message. It is written before the message is stored (the
id is allocated ahead), so a crash between the two leaves a row whose message does not exist, which the next
sync treats as unknown: hence no foreign key on `message_id`, and every read joins `message`.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T10:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "JMAP accounts: the upstream's mailboxes and Email ids"

FORWARDS_SQL = r"""
CREATE TABLE IF NOT EXISTS jmap_mailbox (
    account_id integer NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    mailbox_id text NOT NULL,
    label_id integer REFERENCES label (id) ON DELETE SET NULL,
    role text,
    name text NOT NULL,
    PRIMARY KEY (account_id, mailbox_id)
);
CREATE TABLE IF NOT EXISTS jmap_email (
    account_id integer NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    email_id text NOT NULL,
    message_id bigint NOT NULL,
    PRIMARY KEY (account_id, email_id)
);
CREATE INDEX IF NOT EXISTS jmap_email_message ON jmap_email (message_id);
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS jmap_email;
DROP TABLE IF EXISTS jmap_mailbox;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
