"""A first import's address terms wait with its search vectors (issue 36): an insert that sets plmail.search_later
(a page of an account its provider says is importing) writes no message_address_term rows; `index_search` writes
them with the vectors, from message_search_pending. Measured on the import benchmark's mail, the terms were about
0.1 ms of the database's CPU per message, an eighth of what is left of the insert. Safe to run twice (CREATE OR
REPLACE); backwards writes the terms with every insert again.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T13:55:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "a first import's address terms written with its search vectors, after the import"

_TERMS = r"""
CREATE OR REPLACE FUNCTION plmail_message_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    {skip}INSERT INTO message_address_term (message_id, user_id, field, term, arrived_at)
    SELECT n.id, a.user_id, x.field, x.term, coalesce(n.received_at, n.sent_at, n.created_at)
      FROM added n JOIN account a ON a.id = n.account_id,
           plmail_message_address_terms(n.from_name, n.from_address, n.to_addresses, n.cc_addresses,
                                        n.bcc_addresses) x;
    RETURN NULL;
END $$;
"""

FORWARDS_SQL = _TERMS.replace("{skip}", """IF current_setting('plmail.search_later', true) = 'on' THEN
        RETURN NULL;  -- index_search writes them with the search vectors
    END IF;
    """)

BACKWARDS_SQL = _TERMS.replace("{skip}", "")

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
