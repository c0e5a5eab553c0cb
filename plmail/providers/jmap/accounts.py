"""Adding a JMAP account: where its session is (a session URL, or a domain's `/.well-known/jmap`), and an app
password or bearer token. The session is fetched and checked before anything is saved; the secret is stored
only sealed with the installation key, like every account's password."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plmail.accounts.sync import AccountSyncService
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.errors import ValidationError
from plmail.providers.jmap.client import JmapCredentials, JmapSession, session_url
from plmail.providers.jmap.connection import JMAP, STATE_KEY, JmapConnector
from plmail.providers.jmap.errors import JmapAuthError, JmapConnectionError, JmapError, JmapNotFound, NotJmapError


@dataclass(frozen=True, slots=True)
class JmapAccountInput:
    """What the form or the command line gives. `server`: the session URL, the server's address, or blank to
    find it from the email address's domain."""

    email: str
    secret: str
    server: str = ""
    username: str = ""  # blank: the email address
    bearer: bool = False  # the secret is a bearer token, not an app password
    name: str = ""

    def checked_email(self) -> str:
        email = self.email.strip().lower()
        if "@" not in email or email.startswith("@") or email.endswith("@"):
            raise ValidationError("Enter the account's email address.", field="email")
        return email

    def credentials(self) -> JmapCredentials:
        if not self.secret:
            raise ValidationError("Enter the app password or token.", field="secret")
        return JmapCredentials(self.username.strip() or self.checked_email(), self.secret, bearer=self.bearer)


class JmapAccountService:
    def __init__(self, accounts: AccountAdminRepository, connector: JmapConnector, sync: AccountSyncService, *,
                 changed: Callable[[], None] | None = None) -> None:
        self.accounts = accounts
        self.connector = connector
        self.sync = sync
        self.changed = changed or (lambda: None)

    async def test(self, data: JmapAccountInput) -> JmapSession:
        """The upstream's session, or an error in plmail's words saying what is wrong."""
        credentials = data.credentials()
        try:
            url = session_url(data.server or data.checked_email())
        except NotJmapError as exc:
            raise ValidationError(str(exc), field="server") from None
        try:
            return await self.connector.client.session(url, credentials)
        except JmapAuthError:
            raise ValidationError("The JMAP server refused this app password or token.", field="secret") from None
        except JmapNotFound:
            raise ValidationError(f"There is no JMAP server at {url}.", field="server") from None
        except NotJmapError as exc:
            raise ValidationError(str(exc), field="server") from None
        except JmapConnectionError:
            raise ValidationError(f"The JMAP server at {url} could not be reached.", field="server") from None
        except JmapError as exc:
            raise ValidationError(str(exc), field="server") from None

    async def add(self, user_id: int, data: JmapAccountInput) -> int:
        email = data.checked_email()
        session = await self.test(data)
        credentials = data.credentials()
        account_id = await self.accounts.create(
            user_id=user_id, provider_kind=JMAP, name=data.name.strip() or email, email=email,
            username=credentials.username, credentials=self.connector.seal(credentials.secret),
            settings={STATE_KEY: {"session_url": session.url, "username": credentials.username,
                                  "bearer": credentials.bearer}},
        )
        await self.sync.request(account_id)
        self.changed()
        return account_id
