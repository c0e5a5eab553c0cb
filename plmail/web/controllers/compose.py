"""Writing mail in the browser: the composer (a page for new mail, inline under a message for answers), its
autosave, attachments and pasted images, address completion, sending with the undo toast or at a chosen time,
and the outbox with its scheduled mail.

Everything the person typed comes back on the page when something is refused, so nothing is lost to an
error; the draft itself is saved before a send is attempted. Without JavaScript the same form posts whole and
the pages answer with full pages; with htmx and compose.js the answers are fragments.
"""

from __future__ import annotations

import secrets
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from litestar import Controller, Request, get, post
from litestar.datastructures import UploadFile
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Response, Template

from plmail.domain.errors import NotFoundError, PlmailError, ValidationError
from plmail.domain.messages import Address
from plmail.domain.models import User
from plmail.domain.outgoing import (
    BodyFormat,
    ComposerDraft,
    DraftContent,
    OutgoingAttachment,
    Submission,
    SubmissionRefused,
    SubmissionState,
)
from plmail.mail.compose import DEFAULT_SIZE_LIMIT, parse_address_list
from plmail.mail.composer import ComposerInput, is_scheduled, is_waiting, signature_html, signature_text
from plmail.mail.replies import AnswerKind
from plmail.mail.snooze import MORNING
from plmail.services import services_from
from plmail.web.controllers.forms import parse_form
from plmail.web.i18n import translate
from plmail.web.i18n_runtime import N_
from plmail.web.pages import render, signed_in_user

_MODES = {kind.value: kind for kind in AnswerKind}
_SCHEDULES = ("tomorrow", "monday", "custom")


COMPOSE_MAX_BODY = DEFAULT_SIZE_LIMIT + 2 * 1024 * 1024
COMPOSE_TOO_LARGE_TITLE = N_("Attachments too large")
COMPOSE_TOO_LARGE = N_("The attachments are larger than 25 MB, the most a message can carry. Nothing was sent; "
                       "attach smaller files or share a link.")

@dataclass(frozen=True)
class ComposeForm:
    identity_id: int | None = None
    to: str = ""
    cc: str = ""
    bcc: str = ""
    subject: str = ""
    text: str = ""
    html: str = ""
    body_format: str = "plain"  # what compose.js says the editor holds; without it, the textarea
    draft_id: int | None = None
    answers: int | None = None
    answer_keyword: str = ""
    in_reply_to: str = ""
    references: str = ""
    keep_part: list[str] = field(default_factory=list)
    send_at: str = ""  # datetime-local, in the user's time zone (Schedule send → Pick a time)
    schedule: str = ""  # tomorrow | monday | custom: Schedule send
    action: str = "save"  # save | send | discard
    autosave: str = ""  # "1": compose.js saving in the background, answered with the file list only
    inline: str = ""  # "1": the composer sits under a message
    forwards: int | None = None  # a forward not saved yet: the message whose files it lists (fwd:N)
    forward_mode: str = ""


def _addresses(text: str, name: str) -> tuple[Address, ...]:
    # A list pasted from a spreadsheet or another client: lines and tabs separate addresses too.
    return parse_address_list(" ".join(text.replace("\t", ",").splitlines()).replace("\n", ","), name)


def _written(form: ComposeForm, files: list[OutgoingAttachment], images: list[OutgoingAttachment]) -> ComposerInput:
    if form.identity_id is None:
        raise ValidationError("Choose the address to send from.", field="from")
    rich = form.body_format == BodyFormat.RICH.value
    content = DraftContent(
        identity_id=form.identity_id, to=_addresses(form.to, "to"), cc=_addresses(form.cc, "cc"),
        bcc=_addresses(form.bcc, "bcc"), subject=form.subject, text_body=form.text,
        html_body=form.html if rich else None, attachments=tuple(files), in_reply_to=tuple(form.in_reply_to.split()),
        references=tuple(form.references.split()), answers=form.answers, answer_keyword=form.answer_keyword or None)
    return ComposerInput(content, BodyFormat.RICH if rich else BodyFormat.PLAIN, draft_id=form.draft_id,
                         keep_parts=tuple(form.keep_part), inline_images=tuple(images), forwards=form.forwards,
                         forward_mode=form.forward_mode)


def _zone(time_zone: str) -> ZoneInfo:
    try:
        return ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def schedule_presets(now: datetime, time_zone: str) -> dict[str, datetime]:
    """Tomorrow morning and Monday morning (08:00 in the user's zone; Monday a week ahead on a Monday)."""
    zone = _zone(time_zone)
    local = now.astimezone(zone)
    tomorrow = datetime.combine((local + timedelta(days=1)).date(), MORNING, tzinfo=zone)
    monday = datetime.combine((local + timedelta(days=(7 - local.weekday()) % 7 or 7)).date(), MORNING, tzinfo=zone)
    return {"tomorrow": tomorrow.astimezone(UTC), "monday": monday.astimezone(UTC)}


def _send_time(form: ComposeForm, time_zone: str) -> datetime | None:
    now = datetime.now(UTC)
    if form.schedule in ("tomorrow", "monday"):
        return schedule_presets(now, time_zone)[form.schedule]
    if form.schedule != "custom" and not form.send_at.strip():
        return None
    try:
        local = datetime.fromisoformat(form.send_at.strip())
    except ValueError:
        raise ValidationError("Pick the time to send as a date and time.", field="send_at") from None
    moment = local.replace(tzinfo=_zone(time_zone)) if local.tzinfo is None else local
    if moment < now + timedelta(minutes=1):
        raise ValidationError("A scheduled send is at least a minute ahead.", field="send_at")
    return moment


def _field_text(addresses: tuple[Address, ...]) -> str:
    def one(a: Address) -> str:
        if not a.name:
            return a.address
        name = a.name.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{name}" <{a.address}>'

    return ", ".join(one(a) for a in addresses)


def _form(draft: ComposerDraft, *, inline: bool = False) -> ComposeForm:
    content = draft.content
    return ComposeForm(identity_id=content.identity_id, to=_field_text(content.to), cc=_field_text(content.cc),
                       bcc=_field_text(content.bcc), subject=content.subject, text=content.text_body or "",
                       html=content.html_body or "", body_format=draft.body_format.value, draft_id=draft.message_id,
                       answers=content.answers, answer_keyword=content.answer_keyword or "",
                       in_reply_to=" ".join(content.in_reply_to), references=" ".join(content.references),
                       inline="1" if inline else "", forwards=draft.forwards, forward_mode=draft.forward_mode)


def _is_htmx(request: Request[Any, Any, Any]) -> bool:
    return request.headers.get("hx-request") == "true"


def _is_panel(request: Request[Any, Any, Any]) -> bool:
    """htmx opening new mail in place of a page's content; not htmx restoring its history, which wants pages."""
    return _is_htmx(request) and request.headers.get("hx-history-restore-request") != "true"


async def _uploads(posted: Any, name: str) -> list[OutgoingAttachment]:
    return [OutgoingAttachment(f.filename or "", f.content_type or "application/octet-stream", await f.read())
            for f in posted.getall(name, []) if isinstance(f, UploadFile) and f.filename]


class ComposeController(Controller):
    path = "/compose"

    async def _composer(self, request: Request[Any, Any, Any], form: ComposeForm, *, status_code: int = 200,
                        draft: ComposerDraft | None = None, error: str = "", notice: str = "",
                        fragment: bool = False, panel: bool = False) -> Template:
        """The composer, as a page or (inline, or for htmx) as the fragment that replaces the open one."""
        user = signed_in_user(request)
        services = services_from(request)
        # An alias not verified yet is not offered (it could not send); kept only where a draft was written from it.
        identities = [i for i in await services.identities.for_user(user.id)
                      if i.verified or i.id == form.identity_id]
        signatures = {i.id: (signature_text(i), signature_html(i)) for i in identities}
        account = next((i.account_id for i in identities if i.id == form.identity_id), None)
        limit = await services.drafts.size_limit(account) if account is not None else 25 * 1024 * 1024
        context: dict[str, Any] = {
            "form": form, "identities": identities, "signatures": signatures, "files": draft.files if draft else (),
            "size_limit": limit, "error": error, "notice": notice, "presets": schedule_presets(datetime.now(UTC),
                                                                                             user.time_zone),
            "min_send_at": (datetime.now(UTC) + timedelta(minutes=2)).astimezone(_zone(user.time_zone))
            .strftime("%Y-%m-%dT%H:%M"),
            # Several composers open at once (docked panels) each need ids of their own.
            "instance": secrets.token_hex(4),
        }
        if draft is not None and draft.failure and not error:
            context["error"] = translate("Not sent: {reason}", user.locale, reason=draft.failure)
        if fragment or form.inline:
            return await render(request, "partials/composer.html", status_code=status_code, bare=True, **context)
        if panel:
            return await render(request, "partials/compose_panel.html", status_code=status_code, bare=True, **context)
        return await render(request, "compose.html", status_code=status_code, **context)

    @get("/")
    async def page(self, request: Request[Any, Any, Any], draft: FromQuery[int | None] = None,
                   answer: FromQuery[int | None] = None, mode: FromQuery[str] = "reply"
                   ) -> Template | Redirect | Response[str]:
        """A new message (for htmx, in place of the page's content); a draft reopened (?draft=ID); or an answer
        to a message (?answer=ID&mode=…), which htmx opens inline under the message."""
        user = signed_in_user(request)
        composer = services_from(request).composer
        inline = _is_htmx(request) and answer is not None
        try:
            if draft is not None:
                opened = await composer.reopen(user.id, draft)
            elif answer is not None:
                kind = _MODES.get(mode)
                if kind is None:
                    raise ValidationError("Reply, reply all, forward or forward as attachment.", field="mode")
                opened = await composer.answer(user.id, answer, kind)
            else:
                opened = await composer.new(user.id)
        except NotFoundError:
            if draft is None and answer is None:
                return await self._no_account(request)
            raise NotFoundException() from None
        panel = _is_panel(request) and draft is None and answer is None
        return await self._composer(request, _form(opened, inline=inline), draft=opened, panel=panel)

    async def _no_account(self, request: Request[Any, Any, Any]) -> Template | Response[str]:
        """Compose before any account is connected: the next step, not "not found". A docked panel (htmx) cannot
        show a page, so the browser is sent to it."""
        if _is_htmx(request):
            return Response("", headers={"HX-Redirect": "/compose"})
        return await render(request, "compose_no_account.html")

    # Attachments up to the largest an account sends (25 MB; a lower SMTP SIZE is refused by the composer with
    # its own message), and the text beside them. Files are spooled to disk as they arrive (litestar's parser);
    # a larger request is answered by app.py's page for 413, which says what the limit is.
    @post("/", request_max_body_size=COMPOSE_MAX_BODY)
    async def submit(self, request: Request[Any, Any, Any]) -> Template | Redirect | Response[str]:
        user = signed_in_user(request)
        services = services_from(request)
        posted = await request.form()
        form = ComposeForm()
        try:
            form = parse_form(posted, ComposeForm)
            if form.action == "discard":
                return await self._discard(request, user, form)
            # A send the service worker kept while offline comes with an Idempotency-Key: a replay of one already
            # sent is refused before anything is read, so the message goes once whatever the replays.
            key = request.headers.get("Idempotency-Key") if form.action == "send" or form.schedule else None
            async with AsyncExitStack() as once:
                if key is not None and not await once.enter_async_context(
                        services.applied_actions.once(user.id, key)):
                    return Response(translate("This message was sent already.", user.locale), status_code=409,
                                    media_type="text/plain")
                files = await _uploads(posted, "attachments")
                images = await _uploads(posted, "inline_images")
                written = _written(form, files, images)
                if form.action != "send" and not form.schedule:
                    saved = await services.composer.save(user.id, written)
                    form = replace(form, draft_id=saved.draft.message_id, keep_part=[])
                    if form.autosave:
                        return await self._saved(request, saved.draft, saved.inline_ids, saved.composition)
                    return await self._composer(request, form, draft=saved.draft, notice="Saved",
                                                fragment=_is_htmx(request))
                send_at = _send_time(form, user.time_zone)
                submission = await services.composer.send(user.id, written, send_at=send_at)
        except PlmailError as exc:
            if exc.retryable:  # the database or a service is down: the error page, not a refusal
                raise
            reason = translate(str(exc), user.locale)
            if form.autosave:
                return Response(reason, status_code=400, media_type="text/plain")
            return await self._refused(request, user, form, reason)
        if _is_htmx(request):
            return await self._status(request, submission, form.inline == "1")
        return Redirect(f"/compose/outbox?sent={submission.id}")

    async def _refused(self, request: Request[Any, Any, Any], user: User, form: ComposeForm, reason: str
                       ) -> Template:
        draft: ComposerDraft | None = None
        if form.draft_id is not None:
            try:
                draft = await services_from(request).composer.reopen(user.id, form.draft_id)
            except PlmailError:
                draft = None
        if draft is not None:
            form = replace(form, keep_part=[f.path for f in draft.files if f.content_id is None])
        return await self._composer(request, form, status_code=400, draft=replace(draft, failure="") if draft else None,
                                    error=reason, fragment=_is_htmx(request))

    async def _discard(self, request: Request[Any, Any, Any], user: User, form: ComposeForm
                       ) -> Template | Redirect | Response[str]:
        if form.draft_id is not None:
            await services_from(request).drafts.discard(user.id, form.draft_id)
        if form.autosave:
            return Response("", status_code=204)
        if _is_htmx(request):
            if form.inline or request.headers.get("x-plmail-panel") == "1":  # a docked panel closes, the page stays
                return await render(request, "partials/composer_closed.html", bare=True, notice="Draft discarded")
            return Response("", headers={"HX-Redirect": "/"})
        return Redirect("/")

    async def _saved(self, request: Request[Any, Any, Any], draft: ComposerDraft, inline_ids: tuple[str, ...],
                     composition: int | None) -> Template:
        """compose.js's autosave: the attachment list with its new part paths; the draft's id, the composition's
        (which the page's address names) and the pasted images' URLs in headers."""
        headers = {"X-Draft-Id": str(draft.message_id), "X-Composition-Id": str(composition or draft.message_id),
                   "X-Inline-Urls": " ".join(f"/message/{draft.message_id}/cid/{quote(cid, safe='')}"
                                             for cid in inline_ids)}
        return await render(request, "partials/composer_files.html", bare=True, files=draft.files, headers=headers)

    async def _status(self, request: Request[Any, Any, Any], submission: Submission, inline: bool) -> Template:
        return await render(request, "partials/send_status.html", bare=True, submission=submission, inline=inline,
                            waiting=is_waiting(submission, datetime.now(UTC)), scheduled=is_scheduled(submission))

    @get("/submission/{submission_id:int}")
    async def submission_status(self, request: Request[Any, Any, Any], submission_id: FromPath[int],
                                inline: FromQuery[str] = "") -> Template:
        """The undo toast, asked again every second until the message went; a send that failed or was undone
        elsewhere brings the draft back into the composer, with the server's reason."""
        user = signed_in_user(request)
        composer = services_from(request).composer
        try:
            submission = await composer.submission(user.id, submission_id)
        except NotFoundError:
            raise NotFoundException() from None
        if submission.state in (SubmissionState.FAILED, SubmissionState.CANCELED) and submission.message_id:
            try:
                draft = await composer.reopen(user.id, submission.message_id)
            except NotFoundError:
                return await self._status(request, submission, inline == "1")
            error = translate("Not sent: {reason}", user.locale, reason=submission.last_error) \
                if submission.state is SubmissionState.FAILED else ""
            return await self._composer(request, _form(draft, inline=inline == "1"), draft=replace(draft, failure=""),
                                        error=error, fragment=True)
        return await self._status(request, submission, inline == "1")

    @get("/contacts")
    async def contacts(self, request: Request[Any, Any, Any], field: FromQuery[str] = "to") -> Template:
        """Suggestions for the address being typed (the text after the last comma) in To, Cc or Bcc."""
        user = signed_in_user(request)
        if field not in ("to", "cc", "bcc"):
            field = "to"
        value = request.query_params.get(field) or ""
        chosen, _, typed = value.replace(";", ",").rpartition(",")
        try:
            exclude = tuple(a.address for a in _addresses(chosen, field)) if chosen.strip() else ()
        except ValidationError:
            exclude = ()
        found = await services_from(request).composer.suggestions(user.id, typed, exclude=exclude)
        return await render(request, "partials/suggestions.html", bare=True, suggestions=found, field=field)

    @get("/outbox")
    async def outbox(self, request: Request[Any, Any, Any], sent: FromQuery[int | None] = None) -> Template:
        """Scheduled mail with Cancel; what is sending or did not go; the message just sent with Undo."""
        user = signed_in_user(request)
        entries = await services_from(request).outbox.outbox(user.id)
        return await self._outbox_page(request, entries, sent)

    async def _outbox_page(self, request: Request[Any, Any, Any], entries: list[Any], sent: int | None, *,
                           status_code: int = 200, error: str = "") -> Template:
        now = datetime.now(UTC)
        scheduled = [e for e in entries if is_waiting(e.submission, now) and e.submission.id != sent]
        others = [e for e in entries if e not in scheduled]
        return await render(request, "outbox.html", status_code=status_code, scheduled=scheduled, entries=others,
                            sent=sent, now=now, error=error)

    @post("/outbox/{submission_id:int}/cancel")
    async def cancel(self, request: Request[Any, Any, Any], submission_id: FromPath[int],
                     inline: FromQuery[str] = "") -> Template | Redirect:
        """Undo (inside the delay) or Cancel (a scheduled send): the message is a draft again and opens."""
        user = signed_in_user(request)
        services = services_from(request)
        try:
            draft = await services.composer.undo(user.id, submission_id)
        except NotFoundError:
            raise NotFoundException() from None
        except SubmissionRefused as exc:
            reason = translate(str(exc), user.locale)
            if _is_htmx(request):
                submission = await services.composer.submission(user.id, submission_id)
                return await render(request, "partials/send_status.html", bare=True, submission=submission,
                                    inline=inline == "1", waiting=False, error=reason)
            return await self._outbox_page(request, await services.outbox.outbox(user.id), None, status_code=409,
                                           error=reason)
        if draft is None:
            return Redirect("/compose/outbox")
        if _is_htmx(request):
            return await self._composer(request, _form(draft, inline=inline == "1"), draft=draft,
                                        notice="The message was not sent; it is a draft again.", fragment=True)
        return Redirect(f"/compose?draft={draft.message_id}")
