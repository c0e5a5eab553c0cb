"""Writing mail in the browser: the composer (new, reply, reply all, forward, a draft reopened), saving a
draft, sending with the undo delay or at a chosen time, and the outbox with Undo / Cancel.

Everything the person typed comes back on the page when something is refused, so nothing is lost to an
error; the draft itself is saved before a send is attempted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from litestar import Controller, Request, get, post
from litestar.datastructures import UploadFile
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from plmail.domain.errors import NotFoundError, PlmailError, ValidationError
from plmail.domain.outgoing import DraftContent, OutgoingAttachment, SubmissionRefused
from plmail.mail.compose import parse_address_list
from plmail.mail.replies import AnswerKind
from plmail.web.auth import services_from
from plmail.web.controllers.forms import parse_form
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user

_MODES = {kind.value: kind for kind in AnswerKind}


@dataclass(frozen=True)
class ComposeForm:
    identity_id: int | None = None
    to: str = ""
    cc: str = ""
    bcc: str = ""
    subject: str = ""
    text: str = ""
    draft_id: int | None = None
    answers: int | None = None
    answer_keyword: str = ""
    in_reply_to: str = ""
    references: str = ""
    keep_part: list[str] = field(default_factory=list)
    send_at: str = ""  # datetime-local, in the user's time zone; empty: now, after the undo delay
    action: str = "save"  # save | send | discard


def _content(form: ComposeForm, files: list[OutgoingAttachment]) -> DraftContent:
    if form.identity_id is None:
        raise ValidationError("Choose the address to send from.", field="from")
    return DraftContent(
        identity_id=form.identity_id, to=parse_address_list(form.to, "to"), cc=parse_address_list(form.cc, "cc"),
        bcc=parse_address_list(form.bcc, "bcc"), subject=form.subject, text_body=form.text.replace("\r\n", "\n"),
        attachments=tuple(files), in_reply_to=tuple(form.in_reply_to.split()),
        references=tuple(form.references.split()), answers=form.answers,
        answer_keyword=form.answer_keyword or None)


def _send_time(value: str, time_zone: str) -> datetime | None:
    if not value.strip():
        return None
    try:
        local = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValidationError("Pick the time to send as a date and time.", field="send_at") from None
    try:
        zone = ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    moment = local.replace(tzinfo=zone) if local.tzinfo is None else local
    now = datetime.now(UTC)
    if moment < now + timedelta(minutes=1):
        raise ValidationError("A scheduled send is at least a minute ahead.", field="send_at")
    return moment


def _field_text(addresses: tuple[Any, ...]) -> str:
    return ", ".join(f'"{a.name}" <{a.address}>' if a.name else a.address for a in addresses)


class ComposeController(Controller):
    path = "/compose"

    async def _page(self, request: Request[Any, Any, Any], form: ComposeForm, *, status_code: int = 200,
                    files: tuple[tuple[str, str, int], ...] = (), **context: Any) -> Template:
        user = signed_in_user(request)
        identities = await services_from(request).identities.for_user(user.id)
        return await render(request, "compose.html", status_code=status_code, form=form, identities=identities,
                            files=files, **context)

    @get("/")
    async def page(self, request: Request[Any, Any, Any], draft: FromQuery[int | None] = None,
                   answer: FromQuery[int | None] = None, mode: FromQuery[str] = "reply") -> Template | Redirect:
        """A new message; a draft reopened (?draft=ID); or an answer to a message (?answer=ID&mode=…)."""
        user = signed_in_user(request)
        services = services_from(request)
        try:
            if draft is not None:
                loaded = await services.drafts.load(user.id, draft)
                return await self._page(request, self._form(loaded.content, draft_id=loaded.message_id),
                                        files=loaded.files)
            if answer is not None:
                kind = _MODES.get(mode)
                if kind is None:
                    raise ValidationError("Reply, reply all, forward or forward as attachment.", field="mode")
                content = await services.replies.start(user.id, answer, kind)
                if content.attachments:  # a forward's files live in a draft from the start
                    saved = await services.drafts.save(user.id, replace(content, html_body=None))
                    return Redirect(f"/compose?draft={saved.message_id}")
                return await self._page(request, self._form(content))
        except NotFoundError:
            raise NotFoundException() from None
        primary = next((i for i in await services.identities.for_user(user.id) if i.is_primary), None)
        return await self._page(request, ComposeForm(identity_id=primary.id if primary else None))

    @staticmethod
    def _form(content: DraftContent, *, draft_id: int | None = None) -> ComposeForm:
        return ComposeForm(identity_id=content.identity_id, to=_field_text(content.to), cc=_field_text(content.cc),
                           bcc=_field_text(content.bcc), subject=content.subject, text=content.text_body or "",
                           draft_id=draft_id, answers=content.answers, answer_keyword=content.answer_keyword or "",
                           in_reply_to=" ".join(content.in_reply_to), references=" ".join(content.references))

    @post("/")
    async def submit(self, request: Request[Any, Any, Any]) -> Template | Redirect:
        user = signed_in_user(request)
        services = services_from(request)
        posted = await request.form()
        form = ComposeForm()
        try:
            form = parse_form(posted, ComposeForm)
            if form.action == "discard":
                if form.draft_id is not None:
                    await services.drafts.discard(user.id, form.draft_id)
                return Redirect("/")
            files = [OutgoingAttachment(f.filename or "", f.content_type or "application/octet-stream",
                                        await f.read())
                     for f in posted.getall("attachments", []) if isinstance(f, UploadFile) and f.filename]
            content = _content(form, files)
            send_at = _send_time(form.send_at, user.time_zone) if form.action == "send" else None
            saved = await services.drafts.save(user.id, content, replaces=form.draft_id,
                                               keep_parts=tuple(form.keep_part))
            form = replace(form, draft_id=saved.message_id, keep_part=[])
            if form.action != "send":
                loaded = await services.drafts.load(user.id, saved.message_id)
                return await self._page(request, form, files=loaded.files, notice="Saved")
            if send_at is None:
                send_at = datetime.now(UTC) + timedelta(seconds=await services.outbox.undo_delay(user.id))
            submission = await services.outbox.submit(user.id, saved.message_id, content.identity_id,
                                                      send_at=send_at, answers=content.answers,
                                                      answer_keyword=content.answer_keyword)
        except PlmailError as exc:
            if exc.retryable:  # the database or a service is down: the error page, not a refusal
                raise
            files_left: tuple[tuple[str, str, int], ...] = ()
            if form.draft_id is not None:
                try:
                    files_left = (await services.drafts.load(user.id, form.draft_id)).files
                except PlmailError:
                    files_left = ()
            return await self._page(request, form, status_code=400, files=files_left,
                                    error=translate(str(exc), user.locale))
        return Redirect(f"/compose/outbox?sent={submission.id}")

    @get("/outbox")
    async def outbox(self, request: Request[Any, Any, Any], sent: FromQuery[int | None] = None) -> Template:
        """Sending, scheduled and failed messages, each with Undo / Cancel while it waits."""
        user = signed_in_user(request)
        entries = await services_from(request).outbox.outbox(user.id)
        return await render(request, "outbox.html", entries=entries, sent=sent, now=datetime.now(UTC))

    @post("/outbox/{submission_id:int}/cancel")
    async def cancel(self, request: Request[Any, Any, Any], submission_id: FromPath[int]) -> Template | Redirect:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            submission = await services.outbox.cancel(user.id, submission_id)
        except NotFoundError:
            raise NotFoundException() from None
        except SubmissionRefused as exc:
            entries = await services.outbox.outbox(user.id)
            return await render(request, "outbox.html", status_code=409, entries=entries, sent=None,
                                now=datetime.now(UTC), error=translate(str(exc), user.locale))
        if submission.message_id is not None:
            return Redirect(f"/compose?draft={submission.message_id}")
        return Redirect("/compose/outbox")
