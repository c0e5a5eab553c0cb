"""Any provider's "add an account" form, as its plugin describes it (`domain/account_forms.py`): the fields, and
the one call that checks and adds the account. This page names no provider; the plugins' forms are found in the
provider registry by kind."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect, Template

from plmail.domain.account_forms import AccountSetup
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import PlmailError, ValidationError
from plmail.services import services_from
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render, signed_in_user


def _setup(request: Request[Any, Any, Any], kind: str) -> AccountSetup:
    try:
        found = services_from(request).provider_roles.account_forms.get(ProviderKind(kind))
    except ValueError:
        found = None
    if found is None:
        raise NotFoundException()
    return found


class AccountFormController(Controller):
    path = "/accounts/new"

    @get("/{kind:str}")
    async def show(self, request: Request[Any, Any, Any], kind: FromPath[str]) -> Template:
        return await render(request, "accounts/provider_form.html", setup=_setup(request, kind), values={})

    @post("/{kind:str}")
    async def create(self, request: Request[Any, Any, Any], kind: FromPath[str]) -> Template | Redirect:
        setup = _setup(request, kind)
        form = await request.form()
        values = {f.name: str(form.get(f.name) or "") for f in setup.fields}
        try:
            account_id = await setup.add(signed_in_user(request).id, values)
        except PlmailError as exc:
            typed = {f.name: values[f.name] for f in setup.fields if not f.secret}  # a secret is typed again
            return await render(request, "accounts/provider_form.html", status_code=400, setup=setup, values=typed,
                                error=translate(str(exc), locale_for(request)),
                                error_field=exc.field if isinstance(exc, ValidationError) else None)
        return Redirect(f"/accounts/{account_id}")
