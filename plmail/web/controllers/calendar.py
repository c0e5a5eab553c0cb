"""The calendar pages (day, week, month, agenda), an event with its provenance, editing, "Not an event",
and the cards drawn above messages in a conversation.

Controllers resolve, authorise, call one service and render; every lookup names the signed-in user,
so another user's event is a 404 like a missing one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from plmail.calendar.browse import CalendarView, CalendarWindow, EventDetail
from plmail.calendar.display import (
    Translator,
    all_day_dates,
    clock,
    day_label,
    moment_label,
    month_label,
    reader_zone,
    span_label,
    weekday_names,
)
from plmail.calendar.invites import EventCard
from plmail.calendar.writer import EventEdit
from plmail.domain.calendar import EventValues
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.models import User
from plmail.web.auth import safe_next, services_from
from plmail.web.controllers.forms import URLENCODED
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user
from plmail.web.proposal_cards import proposal_view

STATUS_LABELS = {"confirmed": "Confirmed", "tentative": "Tentative", "cancelled": "Cancelled"}
PARTSTAT_LABELS = {"accepted": "Accepted", "declined": "Declined", "tentative": "Tentative",
                   "needs-action": "Not answered yet", "delegated": "Delegated"}
VIEW_LABELS = (("day", "Day"), ("week", "Week"), ("month", "Month"), ("agenda", "Agenda"))


@dataclass(frozen=True)
class EventEditForm:
    title: str = ""
    location: str = ""
    start: str = ""
    end: str = ""


@dataclass(frozen=True)
class NextForm:
    next: str = "/calendar"


def _translator(user: User) -> Translator:
    locale = user.locale.value

    def t(text: str) -> str:
        return translate(text, locale)

    return t


def _today(user: User) -> date:
    return datetime.now(reader_zone(user.time_zone)).date()


def _person(name: str | None, email: str | None) -> str:
    if name and email:
        return f"{name} <{email}>"
    return name or email or ""


def card_view(card: EventCard, user: User) -> dict[str, Any]:
    t = _translator(user)
    when = span_label(card.starts_at, card.ends_at, all_day=card.all_day, where=reader_zone(user.time_zone),
                      locale=user.locale.value, t=t)
    return {
        "kind": card.kind.value, "event_id": card.event_id, "title": card.title or t("(no title)"), "when": when,
        "location": card.location, "cancelled": card.cancelled, "applied": card.applied,
        "status": t(STATUS_LABELS.get(card.status, card.status)),
        "organizer": _person(card.organizer.name, card.organizer.email) if card.organizer else None,
        "attendees": [{"who": _person(a.name, a.email), "partstat": t(PARTSTAT_LABELS.get(a.partstat or "", ""))
                       if a.partstat else ""} for a in card.attendees],
        "mine": t(PARTSTAT_LABELS[card.my_participation]) if card.my_participation in PARTSTAT_LABELS else None,
    }


async def message_cards_context(request: Request[Any, Any, Any], user: User, thread_id: int) -> dict[str, Any]:
    """What the conversation page needs for its event cards: ``message_cards`` by message id, read
    once for the whole conversation."""
    calendar = services_from(request).calendar
    cards = await calendar.invites.cards_for_thread(user.id, thread_id)
    proposals = await calendar.proposals.for_thread(user.id, thread_id)
    return {"message_cards": {mid: [card_view(card, user) for card in found] for mid, found in cards.items()},
            "message_proposals": {mid: [proposal_view(p, user) for p in found] for mid, found in proposals.items()}}


def _window_view(window: CalendarWindow, user: User) -> dict[str, Any]:
    t = _translator(user)
    where = reader_zone(user.time_zone)
    locale = user.locale.value
    today = _today(user)
    days = []
    for cell in window.days:
        entries = []
        for entry in cell.entries:
            begin = entry.starts_at.astimezone(where)
            if entry.all_day:
                time_label = t("all day")
            elif begin.date() < cell.day:
                time_label = t("continues")  # began on an earlier day
            else:
                time_label = f"{clock(begin)}–{clock(entry.ends_at.astimezone(where))}"
            entries.append({"id": entry.event_id, "title": entry.title or t("(no title)"), "time": time_label,
                            "location": entry.location, "cancelled": entry.cancelled, "kind": entry.kind})
        days.append({"date": cell.day.isoformat(), "label": day_label(cell.day, locale, t), "number": cell.day.day,
                     "entries": entries, "in_range": cell.in_range, "today": cell.day == today})
    if window.view is CalendarView.MONTH:
        heading = month_label(window.anchor, locale)
    elif window.view is CalendarView.DAY:
        heading = day_label(window.anchor, locale, t)
    else:
        heading = f"{day_label(window.first, locale, t)} – {day_label(window.last, locale, t)}"
    return {"view": window.view.value, "anchor": window.anchor.isoformat(), "heading": heading, "days": days,
            "weeks": [days[i : i + 7] for i in range(0, len(days), 7)], "previous": window.previous.isoformat(),
            "following": window.following.isoformat(), "today": today.isoformat(), "views": VIEW_LABELS,
            "weekdays": weekday_names(locale)}


def _inputs(starts_at: datetime, ends_at: datetime, user: User, all_day: bool) -> tuple[str, str]:
    """Form values: local times, or the first and last day of an all-day event (its end is exclusive)."""
    if all_day:
        first, last = all_day_dates(starts_at, ends_at)
        return first.isoformat(), last.isoformat()
    where = reader_zone(user.time_zone)
    return starts_at.astimezone(where).strftime("%Y-%m-%dT%H:%M"), ends_at.astimezone(where).strftime("%Y-%m-%dT%H:%M")


def _people(values: EventValues, t: Translator) -> tuple[str | None, list[dict[str, str]]]:
    organizer = values.organizer
    shown = _person(organizer.get("name"), organizer.get("email")) if organizer else None
    attendees = [{"who": _person(a.get("name"), a.get("email")),
                  "partstat": t(PARTSTAT_LABELS.get(str(a.get("partstat")), "")) if a.get("partstat") else ""}
                 for a in values.attendees]
    return shown, attendees


def _detail_view(detail: EventDetail, user: User) -> dict[str, Any]:
    t = _translator(user)
    where = reader_zone(user.time_zone)
    values = detail.event.values
    locale = user.locale.value
    start_input, end_input = _inputs(values.starts_at, values.ends_at, user, values.is_all_day)
    organizer, attendees = _people(values, t)

    def when(starts_at: datetime, ends_at: datetime) -> str:
        return span_label(starts_at, ends_at, all_day=values.is_all_day, where=where, locale=locale, t=t)

    provenance = [
        {"subject": row.subject or t("(no subject)"), "sender": row.from_name or row.from_address,
         "arrived": moment_label(row.arrived_at, where=where, locale=locale, t=t) if row.arrived_at else "",
         "applied": row.applied, "extractor": row.extractor, "confidence": row.confidence,
         "href": f"/thread/{row.thread_id}#m{row.message_id}" if row.thread_id else None}
        for row in detail.provenance
    ]
    return {
        "id": detail.event.id, "title": values.title or t("(no title)"), "raw_title": values.title or "",
        "when": when(values.starts_at, values.ends_at), "location": values.location or "",
        "description": values.description, "cancelled": values.status == "cancelled",
        "status": t(STATUS_LABELS.get(values.status, values.status)), "all_day": values.is_all_day,
        "edited": detail.event.is_user_edited, "source": values.source, "sequence": values.sequence,
        "calendar": detail.calendar.name if detail.calendar else "", "time_zone": values.time_zone,
        "organizer": organizer, "attendees": attendees, "start_input": start_input, "end_input": end_input,
        "occurrences": [{"when": when(o.starts_at, o.ends_at), "cancelled": o.cancelled, "moved": o.is_override}
                        for o in detail.occurrences],
        "more_occurrences": detail.occurrence_count - len(detail.occurrences),
        "provenance": provenance,
    }


def _parse_moment(value: str, user: User, all_day: bool) -> datetime | date:
    text = value.strip()
    try:
        if all_day:
            return date.fromisoformat(text[:10])
        return datetime.fromisoformat(text).replace(tzinfo=reader_zone(user.time_zone))
    except ValueError:
        raise ValidationError("Enter the time as shown, for example 2026-04-01T09:30.") from None


class CalendarController(Controller):
    path = "/calendar"

    @get("/")
    async def page(
        self, request: Request[Any, Any, Any], view: FromQuery[str] = "week", day: FromQuery[str | None] = None
    ) -> Template:
        user = signed_in_user(request)
        browser = services_from(request).calendar.browser
        chosen = CalendarView(view) if view in CalendarView._value2member_map_ else CalendarView.WEEK
        try:
            anchor = date.fromisoformat(day) if day else _today(user)
        except ValueError:
            anchor = _today(user)
        await browser.provision(user.id)
        window = _window_view(await browser.window(user.id, user.time_zone, chosen, anchor), user)
        if request.headers.get("hx-request") == "true" and request.headers.get("hx-boosted") != "true":
            return await render(request, "partials/calendar_body.html", bare=True, cal=window)
        return await render(request, "calendar/index.html", cal=window)

    @get("/event/{event_id:int}")
    async def event(self, request: Request[Any, Any, Any], event_id: FromPath[int]) -> Template:
        return await self._event_page(request, event_id)

    async def _event_page(
        self, request: Request[Any, Any, Any], event_id: int, *, error: str | None = None, status_code: int = 200
    ) -> Template:
        user = signed_in_user(request)
        try:
            detail = await services_from(request).calendar.browser.detail(user.id, event_id)
        except NotFoundError:
            raise NotFoundException() from None
        return await render(request, "calendar/event.html", status_code=status_code, event=_detail_view(detail, user),
                            error=error)

    @post("/event/{event_id:int}")
    async def edit(
        self, request: Request[Any, Any, Any], event_id: FromPath[int],
        data: Annotated[EventEditForm, URLENCODED],
    ) -> Template | Redirect:
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        event = await calendar.writer.owned(user.id, event_id)
        if event is None:
            raise NotFoundException()
        try:
            start = _parse_moment(data.start, user, event.values.is_all_day)
            end = _parse_moment(data.end, user, event.values.is_all_day)
            if isinstance(end, date) and not isinstance(end, datetime):
                end = date.fromordinal(end.toordinal() + 1)  # the form names the last day; the end is exclusive
            await calendar.writer.edit(user.id, event_id, EventEdit(data.title, data.location, start, end),
                                       user_zone=user.time_zone, reference=datetime.now(UTC))
        except ValidationError as error:
            message = translate(str(error), user.locale)
            return await self._event_page(request, event_id, error=message, status_code=400)
        except NotFoundError:
            raise NotFoundException() from None
        return Redirect(f"/calendar/event/{event_id}", status_code=303)

    @post("/event/{event_id:int}/not-an-event")
    async def not_an_event(
        self, request: Request[Any, Any, Any], event_id: FromPath[int], data: Annotated[NextForm, URLENCODED]
    ) -> Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).calendar.suppressor.not_an_event(user.id, event_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Redirect(safe_next(data.next), status_code=303)

    @post("/proposal/{proposal_id:int}/accept")
    async def accept_proposal(
        self, request: Request[Any, Any, Any], proposal_id: FromPath[int], data: Annotated[NextForm, URLENCODED]
    ) -> Template | Redirect:
        """Writes the event at once, so the calendar shows it on the next page load; htmx swaps the card."""
        return await self._decide_proposal(request, proposal_id, data, accept=True)

    @post("/proposal/{proposal_id:int}/decline")
    async def decline_proposal(
        self, request: Request[Any, Any, Any], proposal_id: FromPath[int], data: Annotated[NextForm, URLENCODED]
    ) -> Template | Redirect:
        return await self._decide_proposal(request, proposal_id, data, accept=False)

    async def _decide_proposal(
        self, request: Request[Any, Any, Any], proposal_id: int, data: NextForm, *, accept: bool
    ) -> Template | Redirect:
        user = signed_in_user(request)
        proposals = services_from(request).calendar.proposals
        proposal = await proposals.proposals.owned(user.id, proposal_id)
        if proposal is None:
            raise NotFoundException()
        try:
            if accept:
                event_id: int | None = await proposals.accept(user.id, proposal_id, user_zone=user.time_zone)
            else:
                event_id = None
                await proposals.decline(user.id, proposal_id)
        except NotFoundError:  # decided a moment ago, in another tab
            raise NotFoundException() from None
        if request.headers.get("hx-request") == "true":
            view = proposal_view(proposal, user, state="accepted" if accept else "declined", event_id=event_id)
            return await render(request, "partials/proposal_card.html", bare=True, proposal=view)
        return Redirect(safe_next(data.next), status_code=303)
