"""The calendar pages (day, week, month, agenda), an event with its provenance, the editor (new events, the
series or one occurrence, deleting either), "Not an event", the cards drawn above messages in a conversation,
.ics export and import, private subscription feeds, "Happening soon" and the extractors' admin notice.

Controllers resolve, authorise, call one service and render; every lookup names the signed-in user,
so another user's event is a 404 like a missing one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Annotated, Any
from urllib.parse import quote

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException, PermissionDeniedException
from litestar.params import Body, FromPath, FromQuery
from litestar.response import Redirect, Template

from plmail.calendar.browse import CalendarView
from plmail.calendar.display import (
    moment_label,
    reader_zone,
    span_label,
)
from plmail.calendar.editor import EventForm, Saved, Scope, repeat_of
from plmail.calendar.ics_files import MAX_IMPORT_BYTES, calendar_ics, event_ics
from plmail.calendar.invites import EventCard
from plmail.calendar.rsvp import answer_of
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.models import User
from plmail.services import services_from
from plmail.web.auth import safe_next
from plmail.web.calendar_forms import EventEditorForm, editor_view, event_form, occurrence_of
from plmail.web.calendar_views import (
    FRESH,
    _clock_minute,
    _detail_view,
    _is_date,
    _local_minute,
    _movable,
    _person,
    _soon_view,
    _translator,
    _window_view,
)
from plmail.web.controllers.forms import URLENCODED
from plmail.web.i18n import translate, translate_plural
from plmail.web.pages import render, signed_in_user
from plmail.web.proposal_cards import proposal_view

STATUS_LABELS = {"confirmed": "Confirmed", "tentative": "Tentative", "cancelled": "Cancelled"}
PARTSTAT_LABELS = {"accepted": "Accepted", "declined": "Declined", "tentative": "Tentative",
                   "needs-action": "Not answered yet", "delegated": "Delegated"}
VIEW_LABELS = (("day", "Day"), ("week", "Week"), ("month", "Month"), ("agenda", "Agenda"))


@dataclass(frozen=True)
class NextForm:
    next: str = "/calendar"


@dataclass(frozen=True)
class MoveForm:
    start: str = ""  # local wall time, YYYY-MM-DDTHH:MM
    end: str = ""
    occurrence: str = ""  # the occurrence dragged, of a series
    view: str = "week"  # the view to answer with
    day: str = ""
    undone: str = ""  # "1": this move is an Undo


@dataclass(frozen=True)
class DeleteForm:
    scope: str = "series"
    occurrence: str = ""


@dataclass(frozen=True)
class SubscribeForm:
    calendar_id: str = ""


@dataclass
class ImportForm:
    file: UploadFile | None = None
    calendar_id: str = ""
    _csrf_token: str = field(default="")


CARD_LABELS = {"invitation": "Invitation", "booking": "Booking", "accepted": "Added to calendar"}
# What the conversation says after an invitation was answered (?answered=…); the reasons of a send that
# failed later are in the outbox.
RSVP_NOTICES = {
    "sent": ("notice", "Your answer is recorded and on its way to the organiser."),
    "recorded": ("notice", "Your answer is recorded; nothing was sent."),
    "not_sent": ("error", "Your answer is recorded, but it could not be sent to the organiser."),
}


@dataclass(frozen=True)
class AnswerForm:
    answer: str = ""
    send: str = ""  # "on": send the REPLY to the organiser
    next: str = "/calendar"
FEED_MEDIA_TYPE = "text/calendar; charset=utf-8"




def _today(user: User) -> date:
    return datetime.now(reader_zone(user.time_zone)).date()




def card_view(card: EventCard, user: User) -> dict[str, Any]:
    t = _translator(user)
    when = span_label(card.starts_at, card.ends_at, all_day=card.all_day, where=reader_zone(user.time_zone),
                      locale=user.locale.value, t=t)
    return {
        "kind": card.kind.value, "label": t(CARD_LABELS.get(card.kind.value, "Booking")),
        "event_id": card.event_id, "title": card.title or t("(no title)"), "when": when,
        "location": card.location, "cancelled": card.cancelled, "applied": card.applied,
        "status": t(STATUS_LABELS.get(card.status, card.status)),
        "organizer": _person(card.organizer.name, card.organizer.email) if card.organizer else None,
        "attendees": [{"who": _person(a.name, a.email), "partstat": t(PARTSTAT_LABELS.get(a.partstat or "", ""))
                       if a.partstat else ""} for a in card.attendees],
        "mine": t(PARTSTAT_LABELS[card.my_participation]) if card.my_participation in PARTSTAT_LABELS else None,
        "answer": card.my_participation,
        "may_answer": card.answerable,
    }


async def message_cards_context(request: Request[Any, Any, Any], user: User, thread_id: int) -> dict[str, Any]:
    """What the conversation page needs for its event cards: ``message_cards`` by message id, read
    once for the whole conversation."""
    calendar = services_from(request).calendar
    cards = await calendar.invites.cards_for_thread(user.id, thread_id)
    proposals = await calendar.proposals.for_thread(user.id, thread_id)
    return {"message_cards": {mid: [card_view(card, user) for card in found] for mid, found in cards.items()},
            "message_proposals": {mid: [proposal_view(p, user) for p in found] for mid, found in proposals.items()}}


def _admin(request: Request[Any, Any, Any]) -> User:
    user = signed_in_user(request)
    if not user.is_admin:
        raise PermissionDeniedException("Only administrators can open this page.")
    return user


def _not_modified(request: Request[Any, Any, Any], etag: str, last_modified: datetime | None) -> bool:
    """RFC 9110 §13.2.2: If-None-Match decides when present; otherwise If-Modified-Since, to the second."""
    matches = request.headers.get("if-none-match")
    if matches is not None:
        offered = {tag.strip().removeprefix("W/") for tag in matches.split(",")}
        return "*" in offered or etag in offered
    since = request.headers.get("if-modified-since")
    if since is None or last_modified is None:
        return False
    try:
        asked = parsedate_to_datetime(since)
    except (TypeError, ValueError, IndexError):
        return False
    return asked.tzinfo is not None and last_modified.replace(microsecond=0) <= asked


class CalendarController(Controller):
    path = "/calendar"

    @get("/")
    async def page(
        self, request: Request[Any, Any, Any], view: FromQuery[str] = "week", day: FromQuery[str | None] = None,
        undone: FromQuery[str | None] = None,
    ) -> Template:
        user = signed_in_user(request)
        browser = services_from(request).calendar.browser
        chosen = CalendarView(view) if view in CalendarView._value2member_map_ else CalendarView.WEEK
        try:
            anchor = date.fromisoformat(day) if day else _today(user)
        except ValueError:
            anchor = _today(user)
        calendars = await browser.provision(user.id)
        window = _window_view(await browser.window(user.id, user.time_zone, chosen, anchor), user, calendars)
        # An Undo the browser posted itself (no script yet) lands here, and still says it was undone.
        moved = {"event_id": 0, "undo": None, "error": None, "undone": True} if undone == "1" else None
        if request.headers.get("hx-request") == "true" and request.headers.get("hx-boosted") != "true":
            return await render(request, "partials/calendar_body.html", bare=True, cal=window, headers=FRESH,
                                moved=moved)
        return await render(request, "calendar/index.html", cal=window, headers=FRESH, moved=moved)

    @post("/event/{event_id:int}/move")
    async def move(
        self, request: Request[Any, Any, Any], event_id: FromPath[int], data: Annotated[MoveForm, URLENCODED]
    ) -> Template | Redirect:
        """A drag on the time grid (or its keyboard alternative): the event, or the one occurrence dragged, gets
        new times and nothing else changes. The answer carries an undo toast whose Undo moves it back."""
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        view = data.view if data.view in CalendarView._value2member_map_ else CalendarView.WEEK.value
        where = reader_zone(user.time_zone)
        error: str | None = None
        undo: dict[str, str] | None = None
        try:
            event = await calendar.writer.owned(user.id, event_id)
            if event is None:
                raise NotFoundException()
            if not _movable(event.values.source):
                raise ValidationError("This event belongs to a subscribed calendar; change it there.")
            occurrence = occurrence_of(data.occurrence)
            starts, ends = _local_minute(data.start, where), _local_minute(data.end, where)
            chosen = next((o for o in await calendar.browser.occurrences(user.id, event_id)
                           if occurrence is not None and o.recurrence_id == occurrence), None)
            was_start = (chosen.starts_at if chosen else event.values.starts_at).astimezone(where)
            was_end = (chosen.ends_at if chosen else event.values.ends_at).astimezone(where)
            values = event.values
            form = EventForm(title=values.title or "", start=starts, end=ends, all_day=False,
                             calendar_id=values.calendar_id, repeat=repeat_of(values),
                             location=(chosen.location if chosen and chosen.location is not None
                                       else values.location) or "",
                             description=values.description or "")
            if chosen is not None:
                form = replace(form, title=chosen.title or form.title)
            if values.is_all_day:
                raise ValidationError("An all-day event is moved in its editor.")
            scope = Scope.OCCURRENCE if chosen is not None else Scope.SERIES
            await calendar.editor.update(user.id, event_id, form, user_zone=user.time_zone, scope=scope,
                                         occurrence=occurrence)
            undo = {"start": was_start.strftime("%Y-%m-%dT%H:%M"), "end": was_end.strftime("%Y-%m-%dT%H:%M"),
                    "occurrence": data.occurrence, "title": form.title,
                    "when": span_label(starts, ends, all_day=False, where=where, locale=user.locale.value,
                                       t=_translator(user))}
        except ValidationError as refused:
            error = translate(str(refused), user.locale)
        except NotFoundError:
            raise NotFoundException() from None
        anchor = data.day if _is_date(data.day) else _today(user).isoformat()
        if request.headers.get("hx-request") != "true":
            said = "&undone=1" if data.undone == "1" and error is None else ""
            return Redirect(f"/calendar?view={view}&day={anchor}{said}", status_code=303)
        browser = calendar.browser
        calendars = await browser.provision(user.id)
        window = _window_view(await browser.window(user.id, user.time_zone, CalendarView(view),
                                                   date.fromisoformat(anchor)), user, calendars)
        return await render(request, "partials/calendar_body.html", bare=True, cal=window,
                            status_code=400 if error else 200,
                            moved={"event_id": event_id, "undo": undo, "error": error, "undone": data.undone == "1"})

    # -- the editor ------------------------------------------------------------------------------------------

    @get("/new")
    async def new_event(
        self, request: Request[Any, Any, Any], day: FromQuery[str | None] = None, hour: FromQuery[int | None] = None,
        start: FromQuery[str | None] = None, end: FromQuery[str | None] = None,
    ) -> Template:
        """A new event on ``day``; ``start`` and ``end`` (HH:MM) are the span a drag on the time grid covered."""
        user = signed_in_user(request)
        calendars = await services_from(request).calendar.browser.provision(user.id)
        try:
            chosen = date.fromisoformat(day) if day else None
        except ValueError:
            chosen = None
        first, last = _clock_minute(start), _clock_minute(end)
        span = (first, last) if first is not None and last is not None and first < last else None
        identities = await services_from(request).identities.for_user(user.id)
        form = editor_view(user, calendars, _translator(user), day=chosen,
                           hour=hour if hour is not None and 0 <= hour <= 23 else None, span=span,
                           identities=identities)
        return await render(request, "calendar/new.html", form=form)

    @post("/new")
    async def create_event(
        self, request: Request[Any, Any, Any], data: Annotated[EventEditorForm, URLENCODED]
    ) -> Template | Redirect:
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        try:
            saved = await calendar.editor.create_event(user.id, event_form(data, user, creating=True),
                                                       user_zone=user.time_zone)
        except ValidationError as error:
            calendars = await calendar.browser.provision(user.id)
            identities = await services_from(request).identities.for_user(user.id)
            form = editor_view(user, calendars, _translator(user), posted=data, identities=identities)
            return await render(request, "calendar/new.html", status_code=400, form=form,
                                error=translate(str(error), user.locale))
        return Redirect(f"/calendar/event/{saved.event_id}{_invitations_told(saved, '?')}", status_code=303)

    @get("/event/{event_id:int}")
    async def event(
        self, request: Request[Any, Any, Any], event_id: FromPath[int], occurrence: FromQuery[str] = "",
        invited: FromQuery[int | None] = None, refused: FromQuery[int | None] = None,
    ) -> Template:
        try:
            chosen = occurrence_of(occurrence)
        except ValidationError:
            chosen = None
        user = signed_in_user(request)
        notice = None
        if refused:
            notice = translate("The event is saved, but its invitations could not be sent: the Outbox says why.",
                               user.locale)
        elif invited:
            notice = translate_plural("The invitation is on its way to {n} guest.",
                                      "The invitation is on its way to {n} guests.", invited, user.locale)
        return await self._event_page(request, event_id, occurrence=chosen, notice=notice)

    async def _event_page(
        self, request: Request[Any, Any, Any], event_id: int, *, occurrence: datetime | None = None,
        error: str | None = None, status_code: int = 200, posted: EventEditorForm | None = None,
        notice: str | None = None,
    ) -> Template:
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        try:
            detail = await calendar.browser.detail(user.id, event_id)
        except NotFoundError:
            raise NotFoundException() from None
        view = _detail_view(detail, user, occurrence)
        chosen = view.pop("chosen")
        calendars = await calendar.browser.provision(user.id)
        identities = await services_from(request).identities.for_user(user.id)
        form = editor_view(
            user, calendars, _translator(user), values=detail.event.values,
            starts_at=chosen.starts_at if chosen else None, ends_at=chosen.ends_at if chosen else None,
            title=chosen.title if chosen else None, location=chosen.location if chosen else None,
            occurrence=chosen.recurrence_id if chosen else None, posted=posted, identities=identities,
        )
        return await render(request, "calendar/event.html", status_code=status_code, event=view, form=form,
                            error=error, notice=notice)

    @post("/event/{event_id:int}")
    async def edit(
        self, request: Request[Any, Any, Any], event_id: FromPath[int],
        data: Annotated[EventEditorForm, URLENCODED],
    ) -> Template | Redirect:
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        if await calendar.writer.owned(user.id, event_id) is None:
            raise NotFoundException()
        try:
            occurrence = occurrence_of(data.occurrence)
            scope = Scope.OCCURRENCE if data.scope == Scope.OCCURRENCE.value and occurrence else Scope.SERIES
            saved = await calendar.editor.update_event(user.id, event_id, event_form(data, user, creating=False),
                                                       user_zone=user.time_zone, scope=scope, occurrence=occurrence)
        except ValidationError as error:
            return await self._event_page(request, event_id, error=translate(str(error), user.locale),
                                          status_code=400, posted=data)
        except NotFoundError:
            raise NotFoundException() from None
        target = f"/calendar/event/{event_id}"
        if scope is Scope.OCCURRENCE and occurrence is not None:
            target += "?occurrence=" + quote(occurrence.isoformat())
        return Redirect(target + _invitations_told(saved, "&" if "?" in target else "?"), status_code=303)

    @post("/event/{event_id:int}/delete")
    async def delete(
        self, request: Request[Any, Any, Any], event_id: FromPath[int], data: Annotated[DeleteForm, URLENCODED]
    ) -> Redirect:
        user = signed_in_user(request)
        try:
            occurrence = occurrence_of(data.occurrence)
            scope = Scope.OCCURRENCE if data.scope == Scope.OCCURRENCE.value and occurrence else Scope.SERIES
            gone = await services_from(request).calendar.editor.delete(
                user.id, event_id, user_zone=user.time_zone, scope=scope, occurrence=occurrence)
        except (NotFoundError, ValidationError):
            raise NotFoundException() from None
        return Redirect("/calendar" if gone else f"/calendar/event/{event_id}", status_code=303)

    @post("/event/{event_id:int}/answer")
    async def answer(
        self, request: Request[Any, Any, Any], event_id: FromPath[int], data: Annotated[AnswerForm, URLENCODED]
    ) -> Redirect:
        """Yes / Maybe / No on an invitation card: the answer recorded, and sent unless "answer without sending"."""
        user = signed_in_user(request)
        try:
            outcome = await services_from(request).rsvp.answer(user.id, event_id, answer_of(data.answer),
                                                                send=data.send == "on")
        except NotFoundError:
            raise NotFoundException() from None
        kind = "not_sent" if outcome.problem else ("sent" if outcome.submission_id else "recorded")
        target, _, anchor = safe_next(data.next).partition("#")
        joiner = "&" if "?" in target else "?"
        return Redirect(f"{target}{joiner}answered={kind}" + (f"#{anchor}" if anchor else ""), status_code=303)

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

    # -- files, feeds and sharing ----------------------------------------------------------------------------

    @get("/event/{event_id:int}/export.ics")
    async def export_event(self, request: Request[Any, Any, Any], event_id: FromPath[int]) -> Response[bytes]:
        user = signed_in_user(request)
        event = await services_from(request).calendar.writer.owned(user.id, event_id)
        if event is None:
            raise NotFoundException()
        return Response(event_ics(event, user_zone=user.time_zone), media_type=FEED_MEDIA_TYPE,
                        headers={"content-disposition": f'attachment; filename="event-{event_id}.ics"'})

    @get("/{calendar_id:int}/export.ics")
    async def export_calendar(self, request: Request[Any, Any, Any], calendar_id: FromPath[int]) -> Response[bytes]:
        user = signed_in_user(request)
        try:
            found, events = await services_from(request).calendar.browser.calendar_with_events(user.id, calendar_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Response(calendar_ics(events, name=found.name, user_zone=user.time_zone), media_type=FEED_MEDIA_TYPE,
                        headers={"content-disposition": f'attachment; filename="calendar-{calendar_id}.ics"'})

    @get("/sharing")
    async def sharing(self, request: Request[Any, Any, Any]) -> Template:
        return await self._sharing_page(request)

    async def _sharing_page(
        self, request: Request[Any, Any, Any], *, status_code: int = 200, **extra: Any
    ) -> Template:
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        calendars = await calendar.browser.provision(user.id)
        where = reader_zone(user.time_zone)
        t = _translator(user)
        subscriptions = [{"id": s.id, "calendar": s.calendar_name,
                          "created": moment_label(s.created_at, where=where, locale=user.locale.value, t=t),
                          "fetched": moment_label(s.last_fetched_at, where=where, locale=user.locale.value, t=t)
                          if s.last_fetched_at else None}
                         for s in await calendar.feeds.subscriptions(user.id)]
        return await render(request, "calendar/sharing.html", status_code=status_code, calendars=calendars,
                            subscriptions=subscriptions, max_import_mb=MAX_IMPORT_BYTES // (1024 * 1024), **extra)

    @post("/import")
    async def import_file(
        self, request: Request[Any, Any, Any],
        data: Annotated[ImportForm, Body(media_type=RequestEncodingType.MULTI_PART)],
    ) -> Template:
        user = signed_in_user(request)
        calendar = services_from(request).calendar
        try:
            if data.file is None:
                raise ValidationError("Choose an .ics file.", field="file")
            content = await data.file.read(MAX_IMPORT_BYTES + 1)
            calendar_id = int(data.calendar_id) if data.calendar_id.strip().isdigit() else 0
            report = await calendar.importer.run(user.id, calendar_id, content, user_zone=user.time_zone)
        except ValidationError as error:
            return await self._sharing_page(request, status_code=400,
                                            import_error=translate(str(error), user.locale))
        return await self._sharing_page(request, imported=report)

    @post("/subscriptions")
    async def subscribe(self, request: Request[Any, Any, Any], data: Annotated[SubscribeForm, URLENCODED]
                        ) -> Template:
        user = signed_in_user(request)
        feeds = services_from(request).calendar.feeds
        try:
            created = await feeds.subscribe(user.id, int(data.calendar_id) if data.calendar_id.isdigit() else 0)
        except NotFoundError:
            raise NotFoundException() from None
        address = f"{request.base_url.netloc}/calendar/feed/{created.token}.ics"
        return await self._sharing_page(request, new_feed={"webcal": f"webcal://{address}",
                                                           "https": f"{request.base_url.scheme}://{address}"})

    @post("/subscriptions/{subscription_id:int}/revoke")
    async def revoke(self, request: Request[Any, Any, Any], subscription_id: FromPath[int]) -> Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).calendar.feeds.revoke(user.id, subscription_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Redirect("/calendar/sharing", status_code=303)

    @get("/feed/{token:str}", cache=False)
    async def feed(self, request: Request[Any, Any, Any], token: FromPath[str]) -> Response[bytes]:
        """Public: the long random token in the URL is the credential (sign-in is not asked here)."""
        feeds = services_from(request).calendar.feeds
        version = await feeds.version(token.removesuffix(".ics"))  # NotFoundError: a plain 404
        headers = {"etag": version.etag, "cache-control": "private, no-cache"}
        if version.last_modified is not None:
            headers["last-modified"] = format_datetime(version.last_modified.astimezone(UTC), usegmt=True)
        if _not_modified(request, version.etag, version.last_modified):
            return Response(b"", status_code=304, headers=headers)
        feed = await feeds.body(version)
        return Response(feed.body, media_type=FEED_MEDIA_TYPE, headers=headers)

    # -- beside other pages ----------------------------------------------------------------------------------

    @get("/soon")
    async def soon(self, request: Request[Any, Any, Any]) -> Template:
        """"Happening soon": the next 14 days, at most 12 rows, each leading to the mail it came from."""
        user = signed_in_user(request)
        entries = await services_from(request).calendar.upcoming.soon(user.id, datetime.now(UTC))
        return await render(request, "partials/calendar_soon.html", bare=True, soon=_soon_view(entries, user))

    @get("/extractors")
    async def extractors(self, request: Request[Any, Any, Any]) -> Template:
        """Administrators: the extractors that need something installed, and whether it is."""
        _admin(request)
        statuses = services_from(request).calendar.extractor_statuses()
        return await render(request, "partials/calendar_extractors.html", bare=True, statuses=statuses)

    # -- proposals -------------------------------------------------------------------------------------------

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


def _invitations_told(saved: Saved, joiner: str) -> str:
    """What the event page says about the invitations a save sent: how many guests, or that sending failed."""
    if saved.problems:
        return f"{joiner}refused={len(saved.problems)}"
    count = sum(len(sent.recipients) for sent in saved.invitations if sent.submission_id is not None)
    return f"{joiner}invited={count}" if count else ""
