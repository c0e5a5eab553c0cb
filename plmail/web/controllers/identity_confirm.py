"""The confirmation link an alias gets (issue 39): whoever reads that mailbox allows the account to send as it.

Opening the link only shows what is asked (a link preview or a mail scanner must not confirm anything); the
button posts the confirmation. No sign-in needed: the holder of the alias's mailbox may be someone else.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath
from litestar.response import Template

from plmail.domain.errors import NotFoundError
from plmail.services import services_from
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render


class IdentityConfirmController(Controller):
    path = "/identities/confirm"

    @get("/{token:str}")
    async def page(self, request: Request[Any, Any, Any], token: FromPath[str]) -> Template:
        found = await services_from(request).identities.awaiting_confirmation(token)
        if found is None:
            message = translate("This confirmation link is not valid any more: send a new one from Settings → "
                                "Sending.", locale_for(request))
            return await render(request, "identity_confirm.html", status_code=404, error=message)
        alias, account = found
        return await render(request, "identity_confirm.html", alias=alias, account=account, token=token)

    @post("/{token:str}")
    async def confirm(self, request: Request[Any, Any, Any], token: FromPath[str]) -> Template:
        try:
            alias = await services_from(request).identities.confirm(token)
        except NotFoundError as exc:
            return await render(request, "identity_confirm.html", status_code=404,
                                error=translate(str(exc), locale_for(request)))
        return await render(request, "identity_confirm.html", confirmed=alias)
