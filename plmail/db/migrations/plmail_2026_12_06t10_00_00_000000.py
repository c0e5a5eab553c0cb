"""Draft versions: every saved version of a draft, the composition it belongs to, and its provider copy to remove.

Saving a draft writes a new message and removes the version before (a message cannot change); sending it turns
the message into a sent one. Each version's row stays behind its message: `lineage` is the composition (the
first version's id, which the composer's URL names and reopens), `state` is where the version is in its life
(current, submitted, superseded, sent, destroyed), and the provider columns hold the copy of a version that is
no longer a draft until the provider has deleted it (issue 29: a sent message leaves no draft anywhere). The
push job keeps the provider's Drafts in step from these rows, under a per-composition advisory lock. Safe to
run twice.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-06T10:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "draft versions: one lifecycle per composition"

FORWARDS_SQL = r"""
CREATE TABLE IF NOT EXISTS draft_version (
    message_id bigint PRIMARY KEY,
    lineage bigint NOT NULL,
    account_id integer NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    state text NOT NULL DEFAULT 'current'
        CHECK (state IN ('current', 'submitted', 'superseded', 'sent', 'destroyed')),
    mailbox_id bigint,
    imap_uid bigint,
    gmail_id text,
    graph_id text,
    attempts integer NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS idx_draft_version_lineage ON draft_version (lineage);
CREATE INDEX IF NOT EXISTS idx_draft_version_to_remove ON draft_version (account_id, lineage)
    WHERE state IN ('superseded', 'sent', 'destroyed')
      AND (imap_uid IS NOT NULL OR gmail_id IS NOT NULL OR graph_id IS NOT NULL);
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS draft_version;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
