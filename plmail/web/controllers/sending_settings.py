"""Settings → Sending: the default identity, the undo delay, reply quoting and plain text by default; per
account its addresses (aliases added, removed, made primary where the provider lets the user choose) and each
address's name and signature."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from plmail.domain.errors import NotFoundError, PlmailError, RateLimitedError
from plmail.domain.outgoing import SendError
from plmail.mail.composer import mail_text
from plmail.services import services_from
from plmail.web.controllers.forms import parse_form
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user

UNDO_CHOICES = (0, 5, 10, 20, 30, 60)


@dataclass(frozen=True)
class SendingForm:
    default_identity_id: int | None = None
    undo_delay: int | None = None
    reply_quoting: str = "below"
    plain_text: str = ""


@dataclass(frozen=True)
class IdentityForm:
    name: str = ""
    signature_format: str = "plain"  # "rich" when the editor (compose.js) filled signature_html
    signature_text: str = ""
    signature_html: str = ""


@dataclass(frozen=True)
class AliasForm:
    email: str = ""
    name: str = ""


class SendingSettingsController(Controller):
    path = "/settings/sending"

    async def _page(self, request: Request[Any, Any, Any], *, status_code: int = 200, **context: Any) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        identities = await services.identities.for_user(user.id)
        accounts = [a for a in await services.accounts.for_user(user.id) if a.is_active]
        by_account = {a.id: [i for i in identities if i.account_id == a.id] for a in accounts}
        aliases = {a.id: await services.identities.takes_aliases(user.id, a.id) for a in accounts}
        return await render(request, "settings_sending.html", status_code=status_code,
                            prefs=await services.sending_preferences.load(user.id), identities=identities,
                            sending_accounts=accounts, by_account=by_account, takes_aliases=aliases,
                            undo_choices=UNDO_CHOICES, **context)

    async def _refused(self, request: Request[Any, Any, Any], exc: PlmailError, where: str) -> Template:
        if exc.retryable:
            raise exc
        if isinstance(exc, NotFoundError):
            raise NotFoundException() from None
        user = signed_in_user(request)
        return await self._page(request, status_code=400, error=translate(str(exc), user.locale), error_at=where)

    @get("/")
    async def page(self, request: Request[Any, Any, Any], saved: FromQuery[str] = "") -> Template:
        return await self._page(request, saved=saved)

    @post("/")
    async def save(self, request: Request[Any, Any, Any]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            data = parse_form(await request.form(), SendingForm)
            await services_from(request).sending_preferences.save(
                user.id, undo_delay=data.undo_delay if data.undo_delay is not None else -1,
                reply_quoting=data.reply_quoting, plain_text=bool(data.plain_text),
                default_identity_id=data.default_identity_id)
        except PlmailError as exc:
            return await self._refused(request, exc, "writing")
        return Redirect("/settings/sending?saved=writing")

    @post("/identities/{identity_id:int}")
    async def identity(self, request: Request[Any, Any, Any], identity_id: FromPath[int]) -> Template | Redirect:
        """An address's name and signature; a signature written in the editor gets its text version derived."""
        user = signed_in_user(request)
        try:
            data = parse_form(await request.form(), IdentityForm)
            if data.signature_format == "rich":
                html_signature = data.signature_html if data.signature_html.strip() else ""
                text_signature = mail_text(html_signature).strip("\n") if html_signature else ""
            else:
                text_signature, html_signature = data.signature_text.replace("\r\n", "\n").strip("\n"), ""
            await services_from(request).identities.update(user.id, identity_id, name=data.name,
                                                           text_signature=text_signature,
                                                           html_signature=html_signature)
        except PlmailError as exc:
            return await self._refused(request, exc, f"identity-{identity_id}")
        return Redirect(f"/settings/sending?saved=identity-{identity_id}#identity-{identity_id}")

    @post("/accounts/{account_id:int}/aliases")
    async def add_alias(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            data = parse_form(await request.form(), AliasForm)
            created = await services_from(request).identities.add_alias(
                user.id, account_id, data.email.strip(), name=data.name.strip(),
                confirm_base=str(request.base_url))
        except PlmailError as exc:
            return await self._refused(request, exc, f"account-{account_id}")
        saved = f"confirm-{created.id}" if created.verification_sent_at else f"identity-{created.id}"
        return Redirect(f"/settings/sending?saved={saved}#identity-{created.id}")

    @post("/identities/{identity_id:int}/confirm")
    async def send_confirmation(self, request: Request[Any, Any, Any], identity_id: FromPath[int]
                                ) -> Template | Redirect:
        """The confirmation link to an unverified alias (again)."""
        user = signed_in_user(request)
        try:
            await services_from(request).identities.send_confirmation(user.id, identity_id,
                                                                      confirm_base=str(request.base_url))
        except SendError as exc:
            message = translate("The confirmation could not be sent: {reason}", user.locale, reason=str(exc))
            return await self._page(request, status_code=400, error=message, error_at=f"identity-{identity_id}")
        except RateLimitedError as exc:
            return await self._page(request, status_code=429, error=translate(str(exc), user.locale),
                                    error_at=f"identity-{identity_id}")
        except PlmailError as exc:
            return await self._refused(request, exc, f"identity-{identity_id}")
        return Redirect(f"/settings/sending?saved=confirm-{identity_id}#identity-{identity_id}")

    @post("/identities/{identity_id:int}/primary")
    async def make_primary(self, request: Request[Any, Any, Any], identity_id: FromPath[int]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).identities.make_primary(user.id, identity_id)
        except PlmailError as exc:
            return await self._refused(request, exc, f"identity-{identity_id}")
        return Redirect(f"/settings/sending?saved=identity-{identity_id}#identity-{identity_id}")

    @post("/identities/{identity_id:int}/remove")
    async def remove(self, request: Request[Any, Any, Any], identity_id: FromPath[int]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).identities.remove(user.id, identity_id)
        except PlmailError as exc:
            return await self._refused(request, exc, f"identity-{identity_id}")
        return Redirect("/settings/sending?saved=removed")
