"""The private Dovecot fixtures for these tests (see tests/support/dovecot.py)."""

from tests.support.dovecot import dovecot, dovecot_tls, dovecot_tls_user, dovecot_user, imap_client

__all__ = ["dovecot", "dovecot_tls", "dovecot_tls_user", "dovecot_user", "imap_client"]
