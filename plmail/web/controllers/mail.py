"""The inbox with its tabs, label views, search, a conversation, and its inline parts and attachments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Response, Template

from plmail.domain.enums import Category
from plmail.domain.errors import NotFoundError, PlmailError
from plmail.domain.models import User
from plmail.mail.previews import PDF_TYPES, PREVIEW_MEDIA_TYPE
from plmail.mail.reader import RenderedMessage
from plmail.mail.unsubscribe import UnsubscribeOffer
from plmail.services import services_from
from plmail.web.controllers.app_shell import OFFLINE_COPY_HEADER
from plmail.web.controllers.calendar import RSVP_NOTICES, message_cards_context
from plmail.web.explain import explain_text, filing_text, unverified_text
from plmail.web.pages import render, signed_in_user
from plmail.web.security import content_security_policy

if TYPE_CHECKING:
    from plmail.services import Services

# What the search box understands (mail/search.py), offered as the user types.
SEARCH_OPERATORS = ("from:", "to:", "cc:", "subject:", "label:", "in:inbox", "in:sent", "in:trash", "in:spam",
                    "is:unread", "is:read", "is:starred", "has:attachment", "filename:", "list:", "after:",
                    "before:", "older_than:", "newer_than:")

_VIEW_TITLES = {"starred": "Starred", "all": "All mail", "archive": "Archive"}
_INLINE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")


class MailController(Controller):
    @get("/")
    async def inbox(
        self, request: Request[Any, Any, Any], tab: FromQuery[str] = "primary", page: FromQuery[int] = 1
    ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        category = Category(tab) if tab in Category._value2member_map_ else Category.GENERAL
        listing, unread = await services.reader.inbox_with_tabs(user.id, category, page)
        return await render(request, "inbox.html", tab=category.value, listing=listing, tab_unread=unread,
                            page_url=f"/?tab={category.value}&page=", view=f"inbox:{category.value}", view_role="inbox")

    @get("/label/{label_id:int}")
    async def label(
        self, request: Request[Any, Any, Any], label_id: FromPath[int], page: FromQuery[int] = 1,
        account: FromQuery[int | None] = None,
    ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        if account is not None and await services.accounts.owned(user.id, account) is None:
            raise NotFoundException()
        try:
            label, listing = await services.reader.label_view(user.id, label_id, page, account_id=account)
        except NotFoundError:
            raise NotFoundException() from None
        scoped = account is not None
        view = f"label:{label_id}" + (f":account:{account}" if scoped else "")
        page_url = f"/label/{label_id}?" + (f"account={account}&" if scoped else "") + "page="
        return await render(request, "label.html", label=label, listing=listing, page_url=page_url,
                            view=view, view_role=label.role.value if label.role else "")

    @get(["/starred", "/all", "/archive"])
    async def walked(self, request: Request[Any, Any, Any], page: FromQuery[int] = 1) -> Template:
        """The sidebar's views that are no label: Starred, All mail, Archive."""
        user = signed_in_user(request)
        view = request.url.path.strip("/")
        listing = await services_from(request).reader.walked(user.id, view, page)
        return await render(request, "view.html", title=_VIEW_TITLES[view], listing=listing,
                            page_url=f"/{view}?page=", view=f"view:{view}", view_role="")

    @get("/search")
    async def search(
        self, request: Request[Any, Any, Any], q: FromQuery[str] = "", page: FromQuery[int] = 1
    ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        listing = await services.reader.search(user.id, q, page)
        return await render(request, "search.html", query=q, listing=listing, page_url=f"/search?q={quote(q)}&page=",
                            view=f"search:{q}", view_role="",
                            indexing=await services.search_index.incomplete_for(user.id))

    @get("/search/suggest")
    async def search_suggest(self, request: Request[Any, Any, Any], q: FromQuery[str] = "") -> Template:
        """Type-ahead for the search box: the operators the last word could become, and matching contacts."""
        user = signed_in_user(request)
        head, _sep, word = q.rpartition(" ")
        prefix = f"{head} " if head else ""
        operator, colon, value = word.partition(":")
        options: list[tuple[str, str, bool]] = []  # (query, what it shows, completes an operator)
        if word:
            options += [(prefix + op, op, op.endswith(":")) for op in SEARCH_OPERATORS
                        if op.startswith(word.lower()) and op != word.lower()]
        typed = value if colon and operator.lower() in ("from", "to", "cc") else ("" if colon else word)
        if len(typed) >= 2:
            field = f"{operator.lower()}:" if colon else "from:"
            contacts = await services_from(request).composer.suggestions(user.id, typed)
            options += [(f"{prefix}{field}{c.email}", f"{field}{c.name + ' ' if c.name else ''}<{c.email}>", False)
                        for c in contacts[:6]]
        return await render(request, "partials/search_suggestions.html", bare=True, options=options[:10])

    @get("/thread/{thread_id:int}")
    async def thread(
        self, request: Request[Any, Any, Any], thread_id: FromPath[int], images: FromQuery[int | None] = None,
        answered: FromQuery[str] = "", unsubscribed: FromQuery[str] = "",
    ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            summary, messages = await services.reader.thread(user.id, thread_id, images_for=images)
        except NotFoundError:
            raise NotFoundException() from None
        if summary.unread_count and OFFLINE_COPY_HEADER not in request.headers:
            # Opening a conversation reads it, through the same operation as "mark read" (and JMAP's $seen).
            await services.operations.set_seen(user.id, True, thread_ids=[thread_id])
        explanations = {m.message.id: explain_text(m.verdict, user.locale) for m in messages}
        unverified = await _sender_notes(services, user, messages, explanations)
        cards = await message_cards_context(request, user, thread_id)
        unsubscribe = await _unsubscribe_offer(services, user.id, [m.message for m in messages])
        pdf_previews = await services.previews.available(a for m in messages for a in m.message.attachments)
        # The framed bodies live under this page's policy: mail is styled inline, and shows remote images only
        # where the reader asked for them.
        policy = content_security_policy(inline_styles=any(m.html for m in messages),
                                         remote_images=any(m.html and m.images_allowed for m in messages))
        return await render(request, "thread.html", thread=summary, messages=messages, explanations=explanations,
                            unverified=unverified,
                            answered=RSVP_NOTICES.get(answered), headers={"Content-Security-Policy": policy},
                            unsubscribe=unsubscribe, unsubscribed=unsubscribed, pdf_previews=pdf_previews, **cards)

    @post("/message/{message_id:int}/unsubscribe")
    async def unsubscribe(self, request: Request[Any, Any, Any], message_id: FromPath[int]) -> Redirect:
        """Leave the list the message came from (mail/unsubscribe.py); back to its conversation, which then says
        "Unsubscribed" (and, for a list that only has a web page, links to it)."""
        user = signed_in_user(request)
        services = services_from(request)
        message = await services.reader.views.message(user.id, message_id)
        if message is None or message.thread_id is None:
            raise NotFoundException()
        try:
            outcome = await services.unsubscribe.unsubscribe(user.id, message_id)
        except NotFoundError:
            raise NotFoundException() from None
        except PlmailError:
            return Redirect(f"/thread/{message.thread_id}?unsubscribed=failed#unsubscribe")
        return Redirect(f"/thread/{message.thread_id}?unsubscribed={outcome.method}#unsubscribe")

    @get("/message/{message_id:int}/original")
    async def original(self, request: Request[Any, Any, Any], message_id: FromPath[int]) -> Template:
        """Show original: every header, the sender authentication verdicts, the raw source."""
        user = signed_in_user(request)
        services = services_from(request)
        message = await services.reader.views.message(user.id, message_id)
        if message is None:
            raise NotFoundException()
        try:
            raw, _subject = await services.downloads.raw_message(message.account_id, message_id)
        except NotFoundError:
            raw = b""
        headers = [(name, value) for name, values in message.headers.items()
                   for value in (values if isinstance(values, list) else [values])]
        return await render(request, "original.html", message=message, header_rows=headers,
                            verdicts=await services.sender_auth.believed_results(message.account_id, message.headers),
                            source=raw.decode("utf-8", errors="replace"), bare=False)

    @get("/message/{message_id:int}/original.eml")
    async def original_download(self, request: Request[Any, Any, Any], message_id: FromPath[int]) -> Response[bytes]:
        user = signed_in_user(request)
        services = services_from(request)
        message = await services.reader.views.message(user.id, message_id)
        if message is None:
            raise NotFoundException()
        try:
            raw, _subject = await services.downloads.raw_message(message.account_id, message_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Response(raw, media_type="message/rfc822", headers=_SAFE_HEADERS | {
            "Content-Disposition": f"attachment; filename=message-{message_id}.eml"})

    @post("/message/{message_id:int}/images")
    async def allow_images(self, request: Request[Any, Any, Any], message_id: FromPath[int]) -> Redirect:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            await services.reader.allow_images_from(user.id, message_id)
        except NotFoundError:
            raise NotFoundException() from None
        message = await services.reader.views.message(user.id, message_id)
        return Redirect(f"/thread/{message.thread_id}" if message and message.thread_id else "/")

    @get("/message/{message_id:int}/cid/{content_id:str}")
    async def inline_part(
        self, request: Request[Any, Any, Any], message_id: FromPath[int], content_id: FromPath[str]
    ) -> Response[bytes]:
        user = signed_in_user(request)
        try:
            part, data = await services_from(request).reader.inline_part(user.id, message_id, content_id)
        except NotFoundError:
            raise NotFoundException() from None
        media = part.content_type if part.content_type in _INLINE_TYPES else "application/octet-stream"
        return Response(data, media_type=media, headers=_SAFE_HEADERS | {"Cache-Control": "private, max-age=86400"})

    @get("/part/{part_id:int}")
    async def attachment(self, request: Request[Any, Any, Any], part_id: FromPath[int]) -> Response[bytes]:
        user = signed_in_user(request)
        try:
            part, data = await services_from(request).reader.attachment(user.id, part_id)
        except NotFoundError:
            raise NotFoundException() from None
        filename = part.filename or f"attachment-{part.id}"
        # Only images are shown in the browser; everything else downloads, so a hostile HTML or SVG
        # attachment never runs on our origin.
        inline = part.content_type in _INLINE_TYPES
        disposition = "inline" if inline else "attachment"
        media = part.content_type if inline else "application/octet-stream"
        header = f"{disposition}; filename*=UTF-8''{quote(filename, safe='')}"
        return Response(data, media_type=media, headers=_SAFE_HEADERS | {"Content-Disposition": header})

    @get("/part/{part_id:int}/preview")
    async def attachment_preview(self, request: Request[Any, Any, Any], part_id: FromPath[int]) -> Response[bytes]:
        """The first page of the user's own PDF attachment as a small PNG (mail/previews.py); 404 when there is none."""
        user = signed_in_user(request)
        try:
            image = await services_from(request).previews.image(user.id, part_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Response(image, media_type=PREVIEW_MEDIA_TYPE,
                        headers=_SAFE_HEADERS | {"Cache-Control": "private, max-age=86400"})

    @get("/part/{part_id:int}/view")
    async def view_pdf(self, request: Request[Any, Any, Any], part_id: FromPath[int]) -> Response[bytes]:
        """A PDF attachment opened in the browser's own viewer, as the preview on its card promises. Served as
        `application/pdf` with nosniff, so nothing but the PDF viewer reads it; without the `sandbox` the other
        parts carry, since browsers refuse to start their PDF viewer in a sandboxed document."""
        user = signed_in_user(request)
        try:
            part, data = await services_from(request).reader.attachment(user.id, part_id)
        except NotFoundError:
            raise NotFoundException() from None
        if part.content_type.lower() not in PDF_TYPES:
            raise NotFoundException()
        filename = part.filename or f"attachment-{part.id}.pdf"
        return Response(data, media_type="application/pdf", headers=_PDF_HEADERS | {
            "Content-Disposition": f"inline; filename*=UTF-8''{quote(filename, safe='')}"})


async def _unsubscribe_offer(services: Services, user_id: int, messages: list[Any]
                             ) -> tuple[Any, UnsubscribeOffer] | None:
    """The newest message of the conversation that names a way to leave its list, with that way."""
    for message in reversed(messages):
        if message.is_draft:
            continue
        offer = await services.unsubscribe.offer(user_id, message)
        if offer is not None:
            return message, offer
    return None


_SAFE_HEADERS = {"X-Content-Type-Options": "nosniff",
                 "Content-Security-Policy": "default-src 'none'; sandbox; frame-ancestors 'none'"}
# The browser's PDF viewer draws its page with inline styles and images of its own; nothing else is allowed.
_PDF_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store",
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data: blob:; "
                                           "frame-ancestors 'none'; form-action 'none'"}


async def _sender_notes(services: Services, user: User, rendered: Sequence[RenderedMessage],
                        explanations: dict[int, str]) -> dict[int, str]:
    """The warning for each received message whose sender could not be verified (the stored verdict), and the
    verdict added to "Why is this here?" where it decided a filter's filing."""
    messages = [r.message for r in rendered]
    ids = [m.id for m in messages]
    verdicts = await services.sender_auth.verdicts(ids)
    filings = await services.sender_auth.filings(ids)
    own = {i.email.lower() for i in await services.identities.for_user(user.id)}
    notes: dict[int, str] = {}
    for message in messages:
        verdict = verdicts.get(message.id)
        filed, withheld = filings.get(message.id, (None, None))
        filing = filing_text(filed, withheld, verdict, user.locale)
        if filing:
            explanations[message.id] = filing if filed else f"{explanations[message.id]} {filing}"
        if (verdict is not None and not verdict.passed and verdict.domain and not message.is_draft
                and (message.from_address or "").lower() not in own):
            notes[message.id] = unverified_text(verdict, user.locale)
    return notes
