"""The provider-neutral message reference (issue 31), step 2 of 3: the data moves.

A message's place at its provider becomes `(account_id, provider_container, provider_key)`: IMAP keeps the
folder row's id as the container (that row holds UIDVALIDITY; a change of it already drops the keys) and the
UID as decimal text; Gmail's message id and Graph's immutable id are account-wide keys in container ''. The
folder a Graph message was last seen in moves to `graph_message`, a table `providers/graph` owns. Tombstones,
draft versions and the draft references kept in submissions move to the same shape.

The message table is large (a million rows measured), so its part runs online (`plmail/db/online_migration.py`):
the transaction only changes small tables and the catalogue; the message rows move in short id ranges, each
committed on its own, so a writer waits for one range and a reader for nothing. Every statement only fills what is
still empty, and the moves from the old columns run only while those columns exist, so running this twice (or
again after a crash half-way) changes nothing already done. The new message indexes are built concurrently by step
3, after the key's type change, which would otherwise rebuild them under an exclusive lock.
`benchmarks/neutral_ref_migration.py` measures the three steps on a 1,000,000-message fill: 262 s in all, reads of
the table waited at most 0.18 s and a one-row write 0.52 s (it was 68.9 s for both at 200,000 in one transaction).
"""

from plmail.db.online_migration import Backfill, ConcurrentIndex, OnlineStep, Vacuum
from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T10:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "provider-neutral message reference: move the data"

FORWARDS_SQL = r"""
-- With IMAP UIDs among the keys, (key, account) is no longer unique: Gmail's index goes first. (Graph's and the
-- IMAP folder's go with their columns in step 3; the folder's serves the folder foreign key until then.)
DROP INDEX IF EXISTS uniq_message_gmail_id_account;
DROP INDEX IF EXISTS idx_message_tombstone_imap;
DROP INDEX IF EXISTS idx_message_tombstone_gmail;
DROP INDEX IF EXISTS idx_message_tombstone_graph;
DROP INDEX IF EXISTS idx_draft_version_to_remove;

CREATE TABLE IF NOT EXISTS graph_message (
    message_id bigint PRIMARY KEY REFERENCES message (id) ON DELETE CASCADE,
    folder_id text NOT NULL
);

ALTER TABLE draft_version ADD COLUMN IF NOT EXISTS provider_container text NOT NULL DEFAULT '';
ALTER TABLE draft_version ADD COLUMN IF NOT EXISTS provider_key text;

-- A job argument or a submission written before the upgrade names the provider's columns; this reads it.
CREATE OR REPLACE FUNCTION pg_temp.plmail_neutral_ref(old jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN old IS NULL OR jsonb_typeof(old) <> 'object' OR old ? 'key' THEN old
        WHEN old->>'imap_uid' IS NOT NULL AND old->>'mailbox_id' IS NOT NULL THEN jsonb_build_object(
            'container', old->>'mailbox_id', 'key', old->>'imap_uid', 'folder_id', (old->>'mailbox_id')::bigint)
        WHEN coalesce(old->>'gmail_id', old->>'graph_id') IS NOT NULL THEN jsonb_build_object(
            'container', '', 'key', coalesce(old->>'gmail_id', old->>'graph_id'), 'folder_id', NULL)
        ELSE 'null'::jsonb END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = 'draft_version' AND column_name = 'imap_uid')
    THEN
        UPDATE draft_version
           SET provider_key = coalesce(gmail_id, graph_id, imap_uid::text),
               provider_container = CASE WHEN gmail_id IS NULL AND graph_id IS NULL AND imap_uid IS NOT NULL
                                         THEN coalesce(mailbox_id::text, '') ELSE '' END
         WHERE provider_key IS NULL AND coalesce(gmail_id, graph_id, imap_uid::text) IS NOT NULL;
        ALTER TABLE draft_version DROP COLUMN mailbox_id, DROP COLUMN imap_uid, DROP COLUMN gmail_id,
                                  DROP COLUMN graph_id;
    END IF;
END $$;

UPDATE submission SET draft_ref = pg_temp.plmail_neutral_ref(draft_ref)
 WHERE draft_ref IS NOT NULL AND jsonb_typeof(draft_ref) = 'object' AND NOT draft_ref ? 'key';
UPDATE submission SET delivery = jsonb_set(delivery, '{ref}', pg_temp.plmail_neutral_ref(delivery->'ref'))
 WHERE jsonb_typeof(delivery->'ref') = 'object' AND NOT delivery->'ref' ? 'key';
DROP FUNCTION pg_temp.plmail_neutral_ref(jsonb);

-- Keys that are numbers (IMAP UIDs) are asked for by range and compared as numbers (step 3 indexes this over the
-- foldered rows); the guard means a provider whose keys are not numbers never fails an insert.
CREATE OR REPLACE FUNCTION plmail_key_number(key text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN key ~ '^[0-9]{1,18}$' THEN key::bigint END
$$;
CREATE INDEX IF NOT EXISTS idx_draft_version_to_remove ON draft_version (account_id, lineage)
    WHERE state IN ('superseded', 'sent', 'destroyed') AND provider_key IS NOT NULL;
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_mailbox;
DROP INDEX IF EXISTS idx_draft_version_to_remove;
DROP INDEX IF EXISTS idx_message_tombstone_ref;
DROP INDEX IF EXISTS idx_message_key_number;
DROP FUNCTION IF EXISTS plmail_key_number(text);
DROP INDEX IF EXISTS uniq_message_provider_ref;
ALTER TABLE draft_version ADD COLUMN IF NOT EXISTS mailbox_id bigint, ADD COLUMN IF NOT EXISTS imap_uid bigint,
                          ADD COLUMN IF NOT EXISTS gmail_id text, ADD COLUMN IF NOT EXISTS graph_id text;
UPDATE draft_version v
   SET mailbox_id = CASE WHEN v.provider_container <> '' THEN v.provider_container::bigint END,
       imap_uid = CASE WHEN v.provider_container <> '' THEN v.provider_key::bigint END,
       gmail_id = CASE WHEN v.provider_container = '' AND a.provider_kind = 'gmail' THEN v.provider_key END,
       graph_id = CASE WHEN v.provider_container = '' AND a.provider_kind = 'graph' THEN v.provider_key END
  FROM account a WHERE a.id = v.account_id AND v.provider_key IS NOT NULL;
ALTER TABLE draft_version DROP COLUMN IF EXISTS provider_container, DROP COLUMN IF EXISTS provider_key;
CREATE INDEX IF NOT EXISTS idx_draft_version_to_remove ON draft_version (account_id, lineage)
    WHERE state IN ('superseded', 'sent', 'destroyed')
      AND (imap_uid IS NOT NULL OR gmail_id IS NOT NULL OR graph_id IS NOT NULL);
UPDATE message m SET graph_folder_id = g.folder_id FROM graph_message g WHERE g.message_id = m.id;
UPDATE message m SET graph_id = m.provider_key, provider_key = NULL
  FROM account a WHERE a.id = m.account_id AND a.provider_kind = 'graph' AND m.provider_container = '';
UPDATE message SET imap_uid = provider_key::bigint, provider_key = NULL, provider_container = ''
 WHERE provider_container <> '';
DROP TABLE IF EXISTS graph_message;
CREATE UNIQUE INDEX IF NOT EXISTS uniq_message_mailbox_imap_uid ON message (mailbox_id, imap_uid);
CREATE UNIQUE INDEX IF NOT EXISTS uniq_message_graph_id_account ON message (graph_id, account_id)
    WHERE graph_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS uniq_message_gmail_id_account ON message (provider_key, account_id)
    WHERE provider_key IS NOT NULL;
"""


ONLINE: tuple[OnlineStep, ...] = (
    # The folder's messages by folder row (the IMAP sync's folder-wide updates, the foreign key's ON DELETE): the
    # (mailbox_id, imap_uid) index that served it goes with imap_uid in step 3.
    ConcurrentIndex("idx_message_mailbox", "ON message (mailbox_id) WHERE mailbox_id IS NOT NULL"),
    Backfill("message", """
        INSERT INTO graph_message (message_id, folder_id)
        SELECT id, graph_folder_id FROM message WHERE id >= $1 AND id < $2 AND graph_folder_id IS NOT NULL
        ON CONFLICT (message_id) DO NOTHING""", while_column=("message", "graph_folder_id")),
    # Gmail's rows hold their key already (step 1 renamed the column); IMAP's and Graph's are written here.
    Backfill("message", """
        UPDATE message
           SET provider_key = coalesce(graph_id, imap_uid::text),
               provider_container = CASE WHEN graph_id IS NULL THEN mailbox_id::text ELSE '' END
         WHERE id >= $1 AND id < $2 AND provider_key IS NULL AND provider_container = ''
           AND (graph_id IS NOT NULL OR imap_uid IS NOT NULL OR mailbox_id IS NOT NULL)""",
             while_column=("message", "imap_uid")),
    Backfill("message_tombstone", """
        UPDATE message_tombstone
           SET provider_key = coalesce(gmail_id, graph_id, imap_uid::text),
               provider_container = CASE WHEN gmail_id IS NULL AND graph_id IS NULL AND imap_uid IS NOT NULL
                                         THEN coalesce(mailbox_id::text, '') ELSE '' END
         WHERE id >= $1 AND id < $2 AND provider_key IS NULL
           AND coalesce(gmail_id, graph_id, imap_uid::text) IS NOT NULL""",
             while_column=("message_tombstone", "imap_uid")),
    Vacuum("message"),
)

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
