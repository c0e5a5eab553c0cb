"""`plmail doctor`'s check of an IMAP account's server: reach it and sign in, with the account's own settings."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.doctor import Finding, Level
from plmail.domain.errors import PlmailError
from plmail.keys import CredentialBox
from plmail.providers.imap.session import ImapConnector, try_login

PROBE_TIMEOUT = 10.0


async def reach_imap(db: Database, box: CredentialBox, record: AccountRecord) -> Finding:
    name = f"account {record.id} IMAP"
    connector = ImapConnector(AccountAdminRepository(db), box, timeout=PROBE_TIMEOUT)
    try:
        server = connector.server(record)
        server_name = f"{server.host}:{server.port}"
        await try_login(server, record.username, connector.password(record))
    except PlmailError as exc:
        return Finding(name, Level.FAIL, f"{record.username}: {exc}",
                       "correct the server or password on the account's page (Accounts → Edit)")
    except OSError as exc:
        return Finding(name, Level.FAIL, f"cannot reach the server: {exc}", "check the host, port and network")
    finally:
        await connector.close()
    return Finding(name, Level.OK, f"signed in at {server_name} as {record.username}")
