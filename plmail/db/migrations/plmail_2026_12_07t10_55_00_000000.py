"""JMAP accounts (issue 31): the messages they stored before the neutral reference carry their upstream Email id as
the reference's key too, so "Delete forever" and drafts reach the upstream for them as for new mail.

`jmap_email` keeps the mapping the sync reads; the key is copied from it where the message has none yet and no
other message of the account holds it, so running this twice changes nothing the second time.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T10:55:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "JMAP accounts: upstream Email ids as the messages' provider keys"

FORWARDS_SQL = r"""
UPDATE message m SET provider_container = '', provider_key = e.email_id
  FROM (SELECT DISTINCT ON (account_id, message_id) account_id, message_id, email_id
          FROM jmap_email ORDER BY account_id, message_id, email_id) e
 WHERE m.id = e.message_id AND m.account_id = e.account_id AND m.provider_key IS NULL
   AND NOT EXISTS (SELECT 1 FROM message o WHERE o.account_id = e.account_id AND o.provider_container = ''
                                            AND o.provider_key = e.email_id);
"""

BACKWARDS_SQL = r"""
UPDATE message m SET provider_key = NULL
  FROM jmap_email e WHERE m.id = e.message_id AND m.account_id = e.account_id AND m.provider_container = ''
   AND m.provider_key = e.email_id;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
