"""Account settings: add an IMAP account (with presets and a connection test), edit it, pause, remove,
choose folders, and watch its first import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from plmail.domain.account_services import (
    MAIL_SERVER_ACCOUNTS,
    OAUTH_CONNECT,
    MailServerAccountInput,
    MailServerAccounts,
    TlsMode,
)
from plmail.domain.errors import NotFoundError, PlmailError, ValidationError
from plmail.domain.providers import ImportProgress
from plmail.mail.authentication import parse_ids
from plmail.services import services_from
from plmail.web.controllers.forms import URLENCODED
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render, signed_in_user

TLS_CHOICES = (
    (TlsMode.IMPLICIT.value, "Implicit TLS (usually port 993)"),
    (TlsMode.STARTTLS.value, "STARTTLS (usually port 143)"),
    (TlsMode.NONE.value, "No encryption (this machine only)"),
)
SMTP_TLS_CHOICES = (
    (TlsMode.IMPLICIT.value, "Implicit TLS (usually port 465)"),
    (TlsMode.STARTTLS.value, "STARTTLS (usually port 587)"),
    (TlsMode.NONE.value, "No encryption (this machine only)"),
)
CHOICES: dict[str, Any] = {"tls_choices": TLS_CHOICES, "smtp_tls_choices": SMTP_TLS_CHOICES}


@dataclass(frozen=True)
class ReceiversForm:
    authserv_ids: str = ""
    action: str = "save"  # save what was typed, confirm the learned one, or go back to learning


@dataclass(frozen=True)
class AccountForm:
    email: str = ""
    name: str = ""
    host: str = ""
    port: str = "993"
    tls: str = TlsMode.IMPLICIT.value
    username: str = ""
    password: str = ""
    smtp_host: str = ""
    smtp_port: str = ""
    smtp_tls: str = TlsMode.STARTTLS.value
    smtp_username: str = ""
    smtp_password: str = ""


@dataclass(frozen=True)
class ToggleForm:
    enabled: str = ""


def _input(form: AccountForm) -> MailServerAccountInput:
    port = form.port.strip()
    if not port.isdigit():
        raise ValidationError("The port must be a number.")
    smtp_port = form.smtp_port.strip()
    if smtp_port and not smtp_port.isdigit():
        raise ValidationError("The SMTP port must be a number.")
    return MailServerAccountInput(email=form.email, host=form.host, port=int(port), tls=form.tls,
                            username=form.username, password=form.password, name=form.name,
                            smtp_host=form.smtp_host, smtp_port=int(smtp_port) if smtp_port else None,
                            smtp_tls=form.smtp_tls if form.smtp_host.strip() else "",
                            smtp_username=form.smtp_username, smtp_password=form.smtp_password)


def eta_text(progress: ImportProgress | None) -> tuple[str, str] | None:
    """(text with {n}, n) for "about 3 minutes left"; the template translates the text."""
    if progress is None or progress.eta_seconds is None:
        return None
    seconds = int(progress.eta_seconds)
    if seconds < 90:
        return ("less than {n} minutes left", "2")
    if seconds < 90 * 60:
        return ("about {n} minutes left", str(round(seconds / 60)))
    return ("about {n} hours left", f"{round(seconds / 3600, 1):g}")


def _service(request: Request[Any, Any, Any]) -> MailServerAccounts:
    return services_from(request).providers.get(MAIL_SERVER_ACCOUNTS)


class AccountController(Controller):
    path = "/accounts"

    @get("/")
    async def index(self, request: Request[Any, Any, Any]) -> Template:
        user = signed_in_user(request)
        service = _service(request)
        rows = []
        for account in await services_from(request).accounts.for_user(user.id):
            overview = await service.overview(user.id, account.id)
            rows.append((overview, eta_text(overview.progress)))
        # the other kinds of account the installed plugins offer a form for (domain/account_forms.py)
        forms = sorted(services_from(request).provider_roles.account_forms, key=lambda f: f.kind.value)
        return await render(request, "accounts/index.html", rows=rows, account_forms=forms)

    @get("/new")
    async def new(self, request: Request[Any, Any, Any], email: FromQuery[str] = "") -> Template:
        form, note = await _suggested(request, email)
        return await render(request, "accounts/new.html", form=form, **CHOICES, note=note)

    @get("/preset")
    async def preset(self, request: Request[Any, Any, Any], email: FromQuery[str] = "") -> Template:
        """The server fields for an address, found by autoconfig, SRV records or the domain's preset (htmx, as the
        address is typed)."""
        form, note = await _suggested(request, email)
        return await render(request, "accounts/_server_fields.html", bare=True, form=form, **CHOICES, note=note)

    @post("/test")
    async def test(self, request: Request[Any, Any, Any], data: Annotated[AccountForm, URLENCODED]) -> Template:
        try:
            report = await _service(request).test(_input(data), user_id=signed_in_user(request).id)
        except PlmailError as exc:
            return await render(request, "accounts/_test_result.html", bare=True,
                                error=translate(str(exc), locale_for(request)))
        return await render(request, "accounts/_test_result.html", bare=True, report=report)

    @post("/")
    async def create(self, request: Request[Any, Any, Any], data: Annotated[AccountForm, URLENCODED]
                     ) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            account_id = await _service(request).add(user.id, _input(data))
        except PlmailError as exc:
            return await render(request, "accounts/new.html", status_code=400, form=data, **CHOICES,
                                note="", error=translate(str(exc), locale_for(request)))
        return Redirect(f"/accounts/{account_id}")

    @get("/{account_id:int}")
    async def detail(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Template:
        return await self._detail(request, account_id)

    async def _detail(self, request: Request[Any, Any, Any], account_id: int, *, status_code: int = 200,
                      error: str | None = None, notice: str | None = None, typed: AccountForm | None = None
                      ) -> Template:
        user = signed_in_user(request)
        overview = await _service(request).overview(user.id, account_id)
        consent = await services_from(request).providers.get(OAUTH_CONNECT).needs_consent_to_send(
            user.id, account_id)
        receivers = await services_from(request).sender_auth.receiver_settings(user.id, account_id)
        return await render(request, "accounts/detail.html", status_code=status_code, overview=overview,
                            eta=eta_text(overview.progress), **CHOICES, error=error, notice=notice,
                            needs_send_consent=consent, receivers=receivers, typed=typed)

    @post("/{account_id:int}/receivers")
    async def receivers(self, request: Request[Any, Any, Any], account_id: FromPath[int],
                        data: Annotated[ReceiversForm, URLENCODED]) -> Template | Redirect:
        """Set or confirm the receiving servers whose Authentication-Results the account believes."""
        user = signed_in_user(request)
        service = services_from(request).sender_auth
        try:
            if data.action == "confirm":
                learned = (await service.receiver_settings(user.id, account_id)).learned
                await service.set_receivers(user.id, account_id, sorted(learned))
            elif data.action == "learn":
                await service.set_receivers(user.id, account_id, None)
            else:
                await service.set_receivers(user.id, account_id, parse_ids(data.authserv_ids))
        except NotFoundError:
            raise
        except PlmailError as exc:
            return await self._detail(request, account_id, status_code=400,
                                      error=translate(str(exc), locale_for(request)))
        return Redirect(f"/accounts/{account_id}#receivers")

    @post("/{account_id:int}")
    async def update(self, request: Request[Any, Any, Any], account_id: FromPath[int],
                     data: Annotated[AccountForm, URLENCODED]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            await _service(request).update(user.id, account_id, _input(data))
        except NotFoundError:
            raise
        except PlmailError as exc:
            return await self._detail(request, account_id, status_code=400,
                                      error=translate(str(exc), locale_for(request)), typed=data)
        return Redirect(f"/accounts/{account_id}")

    @post("/{account_id:int}/test")
    async def test_existing(self, request: Request[Any, Any, Any], account_id: FromPath[int],
                            data: Annotated[AccountForm, URLENCODED]) -> Template:
        user = signed_in_user(request)
        try:
            report = await _service(request).test_existing(user.id, account_id, _input(data))
        except NotFoundError:
            raise
        except PlmailError as exc:
            return await render(request, "accounts/_test_result.html", bare=True,
                                error=translate(str(exc), locale_for(request)))
        return await render(request, "accounts/_test_result.html", bare=True, report=report)

    @post("/{account_id:int}/active")
    async def active(self, request: Request[Any, Any, Any], account_id: FromPath[int],
                     data: Annotated[ToggleForm, URLENCODED]) -> Redirect:
        await _service(request).set_active(signed_in_user(request).id, account_id, data.enabled == "on")
        return Redirect(f"/accounts/{account_id}")

    @post("/{account_id:int}/delete")
    async def delete(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Redirect:
        await _service(request).remove(signed_in_user(request).id, account_id)
        return Redirect("/accounts")

    @post("/{account_id:int}/sync")
    async def sync(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Redirect:
        await _service(request).request_sync(signed_in_user(request).id, account_id)
        return Redirect(f"/accounts/{account_id}")

    @post("/{account_id:int}/retry")
    async def retry(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Redirect:
        """Try the account again now (after the server was down, or a refusal the person thinks is passing)."""
        await _service(request).retry(signed_in_user(request).id, account_id)
        return Redirect(f"/accounts/{account_id}")

    @post("/{account_id:int}/folders/{mailbox_id:int}")
    async def folder(self, request: Request[Any, Any, Any], account_id: FromPath[int], mailbox_id: FromPath[int],
                     data: Annotated[ToggleForm, URLENCODED]) -> Redirect:
        await _service(request).set_folder_sync(signed_in_user(request).id, account_id, mailbox_id,
                                                data.enabled == "on")
        return Redirect(f"/accounts/{account_id}")

    @get("/{account_id:int}/progress")
    async def progress(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Template:
        progress = await _service(request).progress(signed_in_user(request).id, account_id)
        return await render(request, "accounts/_progress.html", bare=True, account_id=account_id,
                            progress=progress, eta=eta_text(progress))

    @get("/{account_id:int}/sidebar")
    async def sidebar(self, request: Request[Any, Any, Any], account_id: FromPath[int]) -> Template:
        progress = await _service(request).progress(signed_in_user(request).id, account_id)
        return await render(request, "accounts/_sidebar.html", bare=True, account_id=account_id, progress=progress)


async def _suggested(request: Request[Any, Any, Any], email: str) -> tuple[AccountForm, str]:
    """The form filled with the servers found for the address, and the note on where they came from."""
    suggestion = await _service(request).suggest(email) if email else None
    if suggestion is None:
        return AccountForm(email=email), ""
    found = suggestion.data
    return AccountForm(email=email, host=found.host, port=str(found.port), tls=found.tls, username=found.username,
                       smtp_host=found.smtp_host, smtp_port=str(found.smtp_port or ""),
                       smtp_tls=found.smtp_tls or TlsMode.STARTTLS.value), suggestion.note
