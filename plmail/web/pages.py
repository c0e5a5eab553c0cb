"""Rendering pages with the context every page shares (user, language, sidebar)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jinja2
from litestar import Request
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template

from plmail.domain.enums import Locale
from plmail.domain.models import User
from plmail.mail.snooze import snooze_presets
from plmail.web.auth import services_from
from plmail.web.i18n import pick_locale, translate

CATEGORY_TABS = (
    ("primary", "General"),
    ("promotions", "Promotions"),
    ("social", "Social"),
    ("updates", "Updates"),
    ("forums", "Forums"),
)


def current_user(request: Request[Any, Any, Any]) -> User | None:
    user = request.scope.get("user")
    return user if isinstance(user, User) else None


def signed_in_user(request: Request[Any, Any, Any]) -> User:
    user = current_user(request)
    if user is None:  # the sign-in middleware guarantees a user on every non-public path
        raise RuntimeError("page reached without a session")
    return user


def locale_for(request: Request[Any, Any, Any]) -> Locale:
    user = current_user(request)
    return user.locale if user else pick_locale(request.headers.get("accept-language"))


async def render(
    request: Request[Any, Any, Any], template: str, *, status_code: int = 200, headers: dict[str, str] | None = None,
    **context: Any,
) -> Template:
    user = current_user(request)
    shared: dict[str, Any] = {"user": user, "locale": locale_for(request).value}
    if user is not None and not context.pop("bare", False):
        services = services_from(request)
        shared["sidebar"] = await services.labels.sidebar(user.id)
        shared["accounts"] = await services.accounts.for_user(user.id)
        by_account: dict[int, list[tuple[int, str, str | None, int]]] = {}
        for account_id, label_id, name, role, unread in await services.reader.views.account_labels(user.id):
            by_account.setdefault(account_id, []).append((label_id, name, role, unread))
        shared["account_labels"] = by_account
        shared["all_labels"] = await services.labels.all_for_user(user.id)
        shared["snooze_presets"] = snooze_presets(datetime.now(UTC), _zone_name(user))
    return Template(template_name=template, context={**shared, **context}, status_code=status_code,
                    headers=headers)


@jinja2.pass_context
def _translate(ctx: jinja2.runtime.Context, text: str, **values: object) -> str:
    return translate(text, ctx.get("locale", "en"), **values)


def _zone_name(user: User) -> str:
    try:
        ZoneInfo(user.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return user.time_zone


def localtime(moment: datetime | None, user: User | None) -> str:
    """A timestamp in the reader's zone: the time for today, the date otherwise."""
    if moment is None:
        return ""
    try:
        zone = ZoneInfo(user.time_zone) if user else UTC
    except (ZoneInfoNotFoundError, ValueError):
        zone = UTC
    local = moment.astimezone(zone)
    today = datetime.now(zone).date()
    german = user is not None and user.locale is Locale.DE
    if local.date() == today:
        return local.strftime("%H:%M")
    if local.year == today.year:
        return local.strftime("%d.%m." if german else "%b %d")
    return local.strftime("%d.%m.%Y" if german else "%b %d, %Y")


def clocktime(moment: datetime | None, user: User | None) -> str:
    """The time of day in the reader's zone."""
    if moment is None:
        return ""
    try:
        zone = ZoneInfo(user.time_zone) if user else UTC
    except (ZoneInfoNotFoundError, ValueError):
        zone = UTC
    return moment.astimezone(zone).strftime("%H:%M")


def configure_jinja(engine: JinjaTemplateEngine) -> None:
    engine.engine.globals["_"] = _translate
    engine.engine.globals["category_tabs"] = CATEGORY_TABS
    engine.engine.filters["localtime"] = localtime
    engine.engine.filters["clocktime"] = clocktime
