"""Which sending identities count as verified when verification starts (issue 39).

The account's own address and the addresses its provider lists (Gmail lists only confirmed send-as addresses,
Graph the mailbox's own) are verified. Aliases a user typed in (and the ones kept from before identities
existed) were never proven: they stay unverified until their confirmation link is opened, so nobody keeps
sending as an address they merely typed. Safe to run twice.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-06T16:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "the account's own and provider-listed identities are verified"

FORWARDS_SQL = r"""
UPDATE identity SET verified_at = coalesce(created_at, now())
 WHERE verified_at IS NULL
   AND (origin IN ('account', 'provider')
        OR lower(email) = (SELECT lower(a.email) FROM account a WHERE a.id = identity.account_id));
"""

# Going back leaves the column to the previous migration's backwards step, which drops it.
BACKWARDS_SQL = r"""
SELECT 1;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
