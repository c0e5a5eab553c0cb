"""Rendering pages with the context every page shares (user, language, sidebar)."""

from __future__ import annotations

import re
import zlib
from datetime import UTC, date, datetime, tzinfo
from functools import cache, lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jinja2
from babel import Locale as BabelLocale
from babel.dates import DateTimePattern, format_date, format_datetime, format_skeleton, get_time_format, parse_pattern
from litestar import Request
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from markupsafe import Markup, escape

from plmail.domain.enums import Locale
from plmail.domain.models import User
from plmail.mail.snooze import snooze_presets
from plmail.services import services_from
from plmail.web.auth import reauthentication_needed
from plmail.web.i18n import catalog, pick_locale, translate, translate_in, translate_plural

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
    shared: dict[str, Any] = {"user": user, "locale": locale_for(request).value, "toast": _toast(request)}
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
    if user is not None:
        shared["reauth_needed"] = reauthentication_needed(request)
    return Template(template_name=template, context={**shared, **context}, status_code=status_code,
                    headers=headers)


TOASTS = frozenset({"archive", "trash", "spam", "move", "label_add", "snooze", "undone", "undo_gone"})


def _toast(request: Request[Any, Any, Any]) -> dict[str, Any] | None:
    """What an action just did (its redirect says so in the query), for the toast with Undo."""
    kind = request.query_params.get("toast")
    if kind not in TOASTS:
        return None
    count = request.query_params.get("n", "1")
    return {"kind": kind, "undo": request.query_params.get("undo", "")[:40],
            "n": int(count) if count.isdigit() else 1}


@jinja2.pass_context
def _gettext(ctx: jinja2.runtime.Context, text: str, **values: object) -> str:
    return translate(text, ctx.get("locale", "en"), **values)


@jinja2.pass_context
def _pgettext(ctx: jinja2.runtime.Context, context: str, text: str, **values: object) -> str:
    return translate_in(context, text, ctx.get("locale", "en"), **values)


@jinja2.pass_context
def _ngettext(ctx: jinja2.runtime.Context, singular: str, plural: str, n: int, **values: object) -> str:
    return translate_plural(singular, plural, n, ctx.get("locale", "en"), **values)


@jinja2.pass_context
def _npgettext(ctx: jinja2.runtime.Context, context: str, singular: str, plural: str, n: int,
               **values: object) -> str:
    catalog_text = catalog(str(ctx.get("locale", "en"))).npgettext(context, singular, plural, n)
    return catalog_text.format(n=n, **values)


def _zone_name(user: User) -> str:
    try:
        ZoneInfo(user.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return user.time_zone


def _zone(user: User | None) -> tzinfo:
    try:
        return ZoneInfo(user.time_zone) if user else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


@cache
def _parsed_locale(language: str) -> BabelLocale:
    """Babel's locale object, parsed once: given the name, each date formatted on a page parses it again."""
    return BabelLocale.parse(language)


def _babel_locale(user: User | None) -> BabelLocale:
    return _parsed_locale(user.locale.value if user else Locale.EN.value)


def _clock_pattern(user: User | None) -> str:
    """The user's 12/24-hour choice; without one, the language's custom (CLDR's short time)."""
    cycle = user.appearance.hour_cycle if user else ""
    return {"12": "h:mm a", "24": "HH:mm"}.get(cycle, "short")


@lru_cache(maxsize=16)
def _time_pattern(language: BabelLocale, clock: str) -> DateTimePattern:
    return get_time_format("short", locale=language) if clock == "short" else parse_pattern(clock)


def _clock(local: datetime, user: User | None) -> str:
    return _time_of_day(local, _babel_locale(user), _clock_pattern(user))


def _time_of_day(local: datetime, language: BabelLocale, clock: str) -> str:
    """The time of day of a moment already in the reader's zone: babel's format_time, with the pattern looked up
    once per language and clock rather than for each of a list's rows."""
    return _time_pattern(language, clock).apply(local.timetz(), language, reference_date=local.date())


def localtime(moment: datetime | None, user: User | None) -> str:
    """A timestamp in the reader's zone and language: the time for today, the day this year, else the date."""
    if moment is None:
        return ""
    zone = _zone(user)
    return _list_time(moment, zone, datetime.now(zone).date(), _babel_locale(user), _clock_pattern(user))


@lru_cache(maxsize=4096)
def _list_time(moment: datetime, zone: tzinfo, today: date, language: BabelLocale, clock: str) -> str:
    """Remembered: a list shows the same timestamps again on each refresh, and the text depends on nothing but
    these arguments (today's date among them, so "10:42" becomes "Dec 6" the next day)."""
    local = moment.astimezone(zone)
    if local.date() == today:
        return _time_of_day(local, language, clock)
    if local.year == today.year:
        return format_skeleton("MMMd", local, tzinfo=zone, locale=language)
    return format_date(local.date(), "medium", locale=language)


def fulltime(moment: datetime | None, user: User | None) -> str:
    """Date and time in full, for a message's header and "Show original"."""
    if moment is None:
        return ""
    local = moment.astimezone(_zone(user))
    return f"{format_date(local.date(), 'medium', locale=_babel_locale(user))}, {_clock(local, user)}"


def clocktime(moment: datetime | None, user: User | None) -> str:
    """The time of day in the reader's zone."""
    if moment is None:
        return ""
    return _clock(moment.astimezone(_zone(user)), user)


def fold_quotes(text: str) -> list[tuple[str, str]]:
    """A plain-text body as ("text" | "quote" | "signature", lines) runs: quoted lines ("> …", with the
    "On … wrote:" line before them) and everything after the "-- " signature separator fold behind "…"."""
    runs: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line in ("-- ", "--"):
            runs.append(("signature", lines[index:]))
            break
        quoted = line.lstrip().startswith(">")
        introduces = (not quoted and line.rstrip().endswith(":") and index + 1 < len(lines)
                      and lines[index + 1].lstrip().startswith(">"))
        kind = "quote" if quoted or introduces else "text"
        if runs and runs[-1][0] == kind:
            runs[-1][1].append(line)
        else:
            runs.append((kind, [line]))
    return [(kind, "\n".join(block)) for kind, block in runs if "".join(block).strip() or kind == "text"]


# Avatar colours: white initials on each pass WCAG AA (contrast 5.3 to 7.3 : 1); mail.css draws .avatar.av-N.
AVATAR_COLOURS = 10


def avatar_colour(address: str | None) -> str:
    """The avatar's colour class for an address: the same person gets the same colour on every page and visit."""
    return f"av-{zlib.crc32((address or '').strip().lower().encode()) % AVATAR_COLOURS}"


def initials(name: str | None, address: str | None = None) -> str:
    """One or two letters for an avatar: the first and last word of the name, else the address's first letter."""
    named = "" if "@" in (name or "") else (name or "")  # a "name" that is an address is no name
    words = [w for w in re.split(r"[\s,.\"'()<>]+", named) if w and w[0].isalnum()]
    if len(words) >= 2:
        return (words[0][0] + words[-1][0]).upper()
    if words:
        return words[0][0].upper()
    local = (address or name or "").strip()
    return local[:1].upper() or "?"


def snooze_when(moment: datetime | None, user: User | None) -> str:
    """A snooze choice's time beside its name: weekday and time ("Mon 08:00"), as Gmail's menu shows it."""
    if moment is None:
        return ""
    zone = _zone(user)
    local = moment.astimezone(zone)
    return f"{format_datetime(local, 'EEE', tzinfo=zone, locale=_babel_locale(user))} {_clock(local, user)}"


def user_today(user: User | None) -> str:
    """Today's date in the user's zone, ISO: the earliest day a date picker offers."""
    return datetime.now(_zone(user)).date().isoformat()


_ICON_NAME = re.compile(r"[a-z0-9-]+")


@lru_cache(maxsize=1024)  # a page draws a few hundred icons, of a few dozen kinds
def icon(name: str, label: str | None = None, css: str = "") -> Markup:
    """A Lucide icon from the vendored sprite. Decorative (aria-hidden) unless `label` names it, for an icon that
    stands alone; a button that shows only an icon still needs its own aria-label."""
    if not _ICON_NAME.fullmatch(name):
        raise ValueError(f"not an icon name: {name!r}")
    role = f'role="img" aria-label="{escape(label)}"' if label else 'aria-hidden="true"'
    classes = f"icon {escape(css)}".strip()
    # Safe: the name is checked above and the label and classes are escaped.
    return Markup(f'<svg class="{classes}" {role} focusable="false">'  # noqa: S704
                  f'<use href="/static/icons/lucide.svg#{name}"></use></svg>')


# Stands for a list row's form id in the row's snooze menu, which thread_list.html renders once per page.
ROW_PLACEHOLDER = "\x00row\x00"


def configure_jinja(engine: JinjaTemplateEngine) -> None:
    environment = engine.engine
    # The templates ship with the package and change only with it: no file check on every template a page includes.
    environment.auto_reload = False
    environment.add_extension("jinja2.ext.i18n")
    # jinja2.ext.i18n adds install_gettext_callables to the environment; the callables read the page's language.
    environment.install_gettext_callables(  # type: ignore[attr-defined]
        _gettext, _ngettext, newstyle=False, pgettext=_pgettext, npgettext=_npgettext)
    environment.globals["category_tabs"] = CATEGORY_TABS
    environment.globals["icon"] = icon
    environment.globals["row_placeholder"] = ROW_PLACEHOLDER
    environment.globals["user_today"] = user_today
    environment.filters["avatar_colour"] = avatar_colour
    environment.filters["initials"] = initials
    environment.filters["snooze_when"] = snooze_when
    environment.filters["localtime"] = localtime
    environment.filters["fulltime"] = fulltime
    environment.filters["clocktime"] = clocktime
    environment.filters["fold_quotes"] = fold_quotes
