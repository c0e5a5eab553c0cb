"""Adding a JMAP account: where its session is (a session URL, or a domain's `/.well-known/jmap`), and an app
password or bearer token. The session is fetched and checked before anything is saved; the secret is stored
only sealed with the installation key, like every account's password."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from plmail.accounts.sync import AccountSyncService
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.account_forms import N_, FormField
from plmail.domain.errors import ValidationError
from plmail.providers.jmap.client import JmapCredentials, JmapSession, session_url
from plmail.providers.jmap.connection import JMAP, STATE_KEY, JmapConnector
from plmail.providers.jmap.errors import (
    JmapAuthError,
    JmapBlocked,
    JmapConnectionError,
    JmapError,
    JmapNotFound,
    NoMailError,
    NotJmapError,
)


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
            raise ValidationError(N_("Enter the account's email address."), field="email")
        return email

    def credentials(self) -> JmapCredentials:
        if not self.secret:
            raise ValidationError(N_("Enter the app password or token."), field="secret")
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
        except NotJmapError:
            raise ValidationError(N_("Enter the JMAP session URL (https://…) or the account's email address."),
                                  field="server") from None
        try:
            return await self.connector.client.session(url, credentials)
        except JmapAuthError:
            raise ValidationError(N_("The JMAP server refused this app password or token."), field="secret") from None
        except JmapNotFound:
            raise ValidationError(N_("There is no JMAP server at this address."), field="server") from None
        except JmapBlocked:
            raise ValidationError(N_("The JMAP server's address is not on the public internet."),
                                  field="server") from None
        except NoMailError:
            raise ValidationError(N_("The JMAP server does not offer mail (urn:ietf:params:jmap:mail)."),
                                  field="server") from None
        except NotJmapError:
            raise ValidationError(N_("The server answered, but not with a JMAP session."), field="server") from None
        except JmapConnectionError:
            raise ValidationError(N_("The JMAP server could not be reached."), field="server") from None
        except JmapError:
            raise ValidationError(N_("The JMAP server refused the request."), field="server") from None

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


class JmapAccountForm:
    """The "add a JMAP account" form, as the pages and the command line show it."""

    kind = JMAP
    title = N_("Add a JMAP account (Fastmail, Stalwart, Cyrus)")
    fields: Sequence[FormField] = (
        FormField("email", N_("Email address"), "email", required=True, autocomplete="email"),
        FormField("secret", N_("App password or token"), "password", required=True,
                  help=N_("Create one in your mail provider's settings; your main password is not needed.")),
        FormField("server", N_("JMAP server or session URL"), "url",
                  help=N_("Leave empty to find it from the address's domain (/.well-known/jmap).")),
        FormField("username", N_("User name"), help=N_("Leave empty to sign in with the email address.")),
        FormField("bearer", N_("The secret is a bearer token (OAuth), not an app password"), "checkbox"),
        FormField("name", N_("Name shown in the sidebar")),
    )

    def __init__(self, service: JmapAccountService) -> None:
        self.service = service

    async def add(self, user_id: int, values: Mapping[str, str]) -> int:
        return await self.service.add(user_id, JmapAccountInput(
            email=values.get("email", ""), secret=values.get("secret", ""), server=values.get("server", ""),
            username=values.get("username", ""), bearer=values.get("bearer", "") in ("on", "true", "1", "yes"),
            name=values.get("name", "")))
