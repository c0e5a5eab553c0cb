"""The composer behind the web UI: what it opens with (a new message with the default identity's signature, an
answer quoted as the user chose, a draft reopened with the reason its last send failed), and what it posts
back (the editor's HTML cleaned with nh3 before it is stored, its inline images kept as cid: parts, the text
part derived from the HTML), saved as the draft the sending engine defines, and sent through the outbox.
"""

from __future__ import annotations

import dataclasses
import html
import re
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

from plmail.domain.errors import NotFoundError
from plmail.domain.outgoing import (
    BodyFormat,
    ComposerDraft,
    ContactSuggestion,
    DraftContent,
    DraftFile,
    Identity,
    OutgoingAttachment,
    ReplyQuoting,
    Submission,
    SubmissionState,
)
from plmail.mail.contacts import ContactService
from plmail.mail.drafts import DraftService
from plmail.mail.html_text import editor_markup, html_to_text
from plmail.mail.identities import IdentityService
from plmail.mail.outbox import MAX_UNDO_SECONDS, OutboxService
from plmail.mail.replies import QUOTE_STYLE, AnswerKind, ReplyService
from plmail.mail.sanitizer import cid_url, sanitize_outgoing
from plmail.mail.sending_preferences import SendingPreferencesService

SIGNATURE_SEPARATOR = "-- "  # RFC 3676 §4.3: the line that starts a signature
_ROOM = "<div><br></div>"
FORWARDED = "fwd:"  # a forwarded message's file before the forward is first saved, by its index
# The editor shows an inline image from its stored draft; what is stored and sent names the part itself.
_SHOWN_INLINE = re.compile(r"""/message/\d+/cid/([^"'\s>?#]+)""")
_CID_SRC = re.compile(r"""(src=["'])cid:([^"']+)(["'])""", re.IGNORECASE)
_BARE_BLOCKQUOTE = re.compile(r"<blockquote>", re.IGNORECASE)  # sanitised HTML: attributes are normalised
_IMG_SRC = re.compile(r"""<img\b[^>]*?\bsrc=["']([^"']+)["']""", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, slots=True)
class ComposerInput:
    """What the composer posts: the fields as typed, the body in its format, the files to keep and add."""

    content: DraftContent  # addresses parsed; the body still as the editor gave it
    body_format: BodyFormat
    draft_id: int | None = None  # the version this one replaces
    keep_parts: tuple[str, ...] = ()
    inline_images: tuple[OutgoingAttachment, ...] = ()  # pasted into the editor; given a Content-ID here
    forwards: int | None = None  # a forward's first save: the message whose files (FORWARDED + index) it keeps
    forward_mode: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class SavedComposition:
    draft: ComposerDraft
    inline_ids: tuple[str, ...]  # Content-IDs given to `inline_images`, in order
    composition: int | None = None  # what the composer's URL names: the draft's first version


def signature_text(identity: Identity) -> str:
    """The identity's signature as the plain-text editor inserts it (empty when it has none)."""
    text = identity.text_signature.strip("\n") or _html_to_text(identity.html_signature).strip("\n")
    return f"{SIGNATURE_SEPARATOR}\n{_without_delimiter(text)}" if text.strip() else ""


def _without_delimiter(text: str) -> str:
    """A signature that brings its own "-- " line: the separator is written once, by us."""
    first, _, rest = text.partition("\n")
    return rest.lstrip("\n") if first.rstrip() == SIGNATURE_SEPARATOR.rstrip() else text


def signature_html(identity: Identity) -> str:
    """The identity's signature as the rich-text editor inserts it."""
    if identity.html_signature.strip():
        body = identity.html_signature
        if _html_to_text(body).split("\n", 1)[0].rstrip() == SIGNATURE_SEPARATOR.rstrip():
            return f"<div>{body}</div>"  # it brings its own "-- " line
    elif identity.text_signature.strip():
        body = html.escape(_without_delimiter(identity.text_signature.strip("\n"))).replace("\n", "<br>")
    else:
        return ""
    return f"<div>{SIGNATURE_SEPARATOR}<br>{body}</div>"


def text_to_html(text: str) -> str:
    """Plain text as editor HTML: one block per line, so a switch to rich text keeps every line."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "".join(f"<div>{html.escape(line) or '<br>'}</div>" for line in lines)


def cited(markup: str) -> str:
    """Every quote of the editor's HTML marked as a quoted message (`<blockquote type="cite">`, drawn with a bar):
    the rich editor keeps a quote's lines but not its attributes, and readers fold and style quotes by them."""
    return _BARE_BLOCKQUOTE.sub(f'<blockquote type="cite" style="{QUOTE_STYLE}">', markup)


def shown_inline(markup: str, message_id: int) -> str:
    """cid: images of a stored draft pointed at its part URLs, for the editor to show."""
    return _CID_SRC.sub(lambda m: m.group(1) + cid_url(message_id, m.group(2)) + m.group(3), markup)


def stored_inline(markup: str) -> str:
    """The editor's part URLs back to cid: references, which travel with the message."""
    return _SHOWN_INLINE.sub(lambda m: "cid:" + unquote(m.group(1)), markup)


def _html_to_text(markup: str) -> str:
    text = html_to_text(markup, links=True)
    # The signature's line keeps its space (RFC 3676 §4.3), the one line whose trailing space matters.
    text = "\n".join(SIGNATURE_SEPARATOR if line == SIGNATURE_SEPARATOR.rstrip() else line
                     for line in text.split("\n"))
    return text + "\n" if text else ""


def mail_text(markup: str) -> str:
    """The text part sent beside an HTML body."""
    return _html_to_text(markup)


class ComposerService:
    def __init__(self, drafts: DraftService, replies: ReplyService, identities: IdentityService,
                 outbox: OutboxService, preferences: SendingPreferencesService, contacts: ContactService) -> None:
        self.drafts = drafts
        self.replies = replies
        self.identities = identities
        self.outbox = outbox
        self.preferences = preferences
        self.contacts = contacts

    # -- opening ----------------------------------------------------------------------------------------------

    async def new(self, user_id: int) -> ComposerDraft:
        """An empty message from the default identity, its signature below the room to write."""
        prefs = await self.preferences.load(user_id)
        identity = await self.preferences.default_identity(user_id, prefs)
        if identity is None:
            raise NotFoundError("Connect an account to send mail from.")
        body_format = BodyFormat.PLAIN if prefs.plain_text else BodyFormat.RICH
        content = self._with_signature(DraftContent(identity_id=identity.id, text_body=""), identity, body_format)
        return ComposerDraft(content, body_format)

    async def answer(self, user_id: int, message_id: int, kind: AnswerKind) -> ComposerDraft:
        """A reply or forward: quoted as the user chose, the signature above the quote. Nothing is stored (no GET
        changes anything, issue 39): a forward's files are listed from the original and go into the draft when it
        is first saved; its inline images show from the original meanwhile."""
        prefs = await self.preferences.load(user_id)
        quote = prefs.reply_quoting is ReplyQuoting.BELOW or kind not in (AnswerKind.REPLY, AnswerKind.REPLY_ALL)
        content = await self.replies.start(user_id, message_id, kind, quote=quote)
        identity = await self.identities.owned(user_id, content.identity_id)
        body_format = BodyFormat.PLAIN if prefs.plain_text else BodyFormat.RICH
        if content.html_body is not None:
            content = dataclasses.replace(content, html_body=editor_markup(content.html_body))
        content = self._with_signature(content, identity, body_format)
        if not content.attachments:
            return ComposerDraft(content, body_format)
        files = tuple(DraftFile(f"{FORWARDED}{i}", a.filename, a.content_type, len(a.data), a.content_id)
                      for i, a in enumerate(content.attachments))
        shown = shown_inline(content.html_body, message_id) if content.html_body is not None else None
        return ComposerDraft(dataclasses.replace(content, attachments=(), html_body=shown), body_format, files=files,
                             forwards=message_id, forward_mode=kind.value)

    async def _forwarded_files(self, user_id: int, written: ComposerInput, content: DraftContent
                               ) -> tuple[OutgoingAttachment, ...]:
        """A forward's first save: the original's files the person kept, and its inline images the text shows."""
        kind = next((k for k in AnswerKind if k.value == written.forward_mode), AnswerKind.FORWARD)
        if written.forwards is None or written.draft_id is not None:
            return ()
        original = await self.replies.start(user_id, written.forwards, kind, quote=False)
        markup = content.html_body or ""
        return tuple(a for i, a in enumerate(original.attachments)
                     if (a.content_id is None and f"{FORWARDED}{i}" in written.keep_parts)
                     or (a.content_id is not None and f"cid:{a.content_id}" in markup))

    async def reopen(self, user_id: int, draft_id: int) -> ComposerDraft:
        """A stored draft as it was left, in rich text when it has HTML; with why its last send failed. `draft_id`
        may name any version of the composition (the composer's URL names its first): its draft now opens."""
        loaded = await self.drafts.load(user_id, await self.drafts.live_version(user_id, draft_id))
        content = loaded.content
        body_format = BodyFormat.RICH if content.html_body is not None else BodyFormat.PLAIN
        if content.html_body is not None:
            content = dataclasses.replace(content, html_body=shown_inline(content.html_body, loaded.message_id))
        failure = await self.outbox.failure_of(user_id, loaded.message_id)
        return ComposerDraft(content, body_format, loaded.message_id, loaded.thread_id, loaded.files, failure)

    def _with_signature(self, content: DraftContent, identity: Identity, body_format: BodyFormat) -> DraftContent:
        text_sig, html_sig = signature_text(identity), signature_html(identity)
        text = content.text_body or ""
        text = f"\n\n{text_sig}{text if text.startswith(chr(10)) else chr(10) + text}" if text_sig else text
        if body_format is BodyFormat.PLAIN:
            return dataclasses.replace(content, text_body=text.rstrip("\n") + "\n" if text.strip() else text,
                                       html_body=None)
        markup = content.html_body if content.html_body is not None else text_to_html(content.text_body or "")
        markup = re.sub(r"^(\s*<p>\s*</p>)+", "", markup)  # an empty block an editor drops: the room to write
        # A line of its own above the signature and the quote or forwarded block: the cursor starts there, and
        # what is typed never runs into the "Forwarded message" line.
        markup = _ROOM + html_sig + markup if html_sig or not markup.startswith(_ROOM) else markup
        return dataclasses.replace(content, text_body=text, html_body=markup)

    # -- saving and sending -----------------------------------------------------------------------------------

    async def save(self, user_id: int, written: ComposerInput) -> SavedComposition:
        """Store what the composer holds as a new version of its draft; returns the draft as it now is (its
        files have new part paths) and the Content-IDs the pasted images got."""
        identity = await self.identities.sendable(user_id, written.content.identity_id)
        inline_ids: list[str] = []
        inline: list[OutgoingAttachment] = []
        for image in written.inline_images:
            content_id = f"{uuid.uuid4().hex}@plmail"
            inline_ids.append(content_id)
            inline.append(dataclasses.replace(image, content_id=content_id))
        content = self._cleaned(written, identity)
        forwarded = await self._forwarded_files(user_id, written, content)
        content = dataclasses.replace(content, attachments=(*forwarded, *content.attachments, *inline))
        keep = tuple(p for p in written.keep_parts if not p.startswith(FORWARDED))
        saved = await self.drafts.save(user_id, content, replaces=written.draft_id, keep_parts=keep,
                                       identity=identity)
        draft = ComposerDraft(content, written.body_format, saved.message_id, saved.thread_id, saved.files)
        return SavedComposition(draft, tuple(inline_ids), saved.composition)

    async def send(self, user_id: int, written: ComposerInput, *, send_at: datetime | None = None) -> Submission:
        """Save, then submit: at `send_at` when scheduled, else after the user's undo delay."""
        content = written.content
        async with self.drafts.sending(user_id, written.draft_id):
            saved = await self.save(user_id, written)
            if send_at is None:
                send_at = datetime.now(UTC) + timedelta(seconds=await self.outbox.undo_delay(user_id))
            message_id = saved.draft.message_id
            assert message_id is not None
            return await self.outbox.submit(user_id, message_id, content.identity_id, send_at=send_at,
                                            answers=content.answers, answer_keyword=content.answer_keyword)

    async def submission(self, user_id: int, submission_id: int) -> Submission:
        return await self.outbox.owned(user_id, submission_id)

    async def undo(self, user_id: int, submission_id: int) -> ComposerDraft | None:
        """Take a waiting send back; the draft it was, to open again (None when its message is gone)."""
        submission = await self.outbox.cancel(user_id, submission_id)
        if submission.message_id is None:
            return None
        return await self.reopen(user_id, submission.message_id)

    async def suggestions(self, user_id: int, typed: str, *, exclude: tuple[str, ...] = ()
                          ) -> list[ContactSuggestion]:
        return await self.contacts.suggest(user_id, typed, exclude=exclude)

    def _cleaned(self, written: ComposerInput, identity: Identity) -> DraftContent:
        content = written.content
        if written.body_format is BodyFormat.PLAIN:
            return dataclasses.replace(content, text_body=(content.text_body or "").replace("\r\n", "\n"),
                                       html_body=None)
        own_images = frozenset(html.unescape(src) for src in _IMG_SRC.findall(identity.html_signature))
        markup = cited(sanitize_outgoing(stored_inline(content.html_body or ""), allowed_images=own_images))
        return dataclasses.replace(content, html_body=markup, text_body=mail_text(markup))


def is_waiting(submission: Submission, now: datetime) -> bool:
    """Still inside its undo window or scheduled time: Undo / Cancel can take it back."""
    return submission.state is SubmissionState.PENDING and submission.send_at > now


def is_scheduled(submission: Submission) -> bool:
    """Sent at a chosen time rather than after the undo delay (which is at most a minute)."""
    return submission.send_at - submission.created_at > timedelta(seconds=MAX_UNDO_SECONDS + 5)
