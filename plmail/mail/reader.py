"""Reading mail: thread lists, a thread with its messages, and why a message sits in its tab."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.contacts import ContactRepository
from plmail.db.repos.identities import IdentityRepository
from plmail.db.repos.labels import LabelRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.enums import Category, LabelRole
from plmail.domain.errors import FilterError, NotFoundError
from plmail.domain.models import SidebarLabel
from plmail.mail.blobs import BlobStore
from plmail.mail.categorizer import CategoryFacts, CategoryVerdict, MessageCategorizer
from plmail.mail.conversation import MessageParties, conversation_order, parties
from plmail.mail.repos.views import AttachmentView, MailViewRepository, MessageView, ThreadSummary
from plmail.mail.sanitizer import sanitize_html
from plmail.mail.search import parse_search

PAGE_SIZE = 50
_IMAGE_SENDERS = "images_allowed_senders"


# The sidebar's views that are no label, by the system labels they leave out.
WALKED_VIEWS: dict[str, tuple[LabelRole, ...]] = {
    "all": (LabelRole.SPAM, LabelRole.TRASH),
    "archive": (LabelRole.SPAM, LabelRole.TRASH, LabelRole.INBOX, LabelRole.SNOOZED, LabelRole.DRAFTS),
}


@dataclass(frozen=True, slots=True)
class ThreadPage:
    threads: list[ThreadSummary]
    page: int
    has_next: bool


@dataclass(frozen=True, slots=True)
class RenderedMessage:
    message: MessageView
    html: str | None  # sanitised; remote images only when the reader allowed them
    remote_images_blocked: int
    images_allowed: bool
    verdict: CategoryVerdict
    parties: MessageParties | None = None  # From, To, Cc (Bcc on the user's own), with "me" marked


class MailReader:
    def __init__(self, db: Database, blobs: BlobStore, categorizer: MessageCategorizer | None = None) -> None:
        self.views = MailViewRepository(db)
        self.labels = LabelRepository(db)
        self.users = UserRepository(db)
        self.accounts = AccountRepository(db)
        self.identities = IdentityRepository(db)
        self.contacts = ContactRepository(db)
        self.blobs = blobs
        self.categorizer = categorizer or MessageCategorizer()

    async def inbox(self, user_id: int, tab: Category, page: int = 1) -> ThreadPage:
        return (await self.inbox_with_tabs(user_id, tab, page))[0]

    async def inbox_with_tabs(self, user_id: int, tab: Category, page: int = 1) -> tuple[ThreadPage, dict[str, int]]:
        """A page of the inbox's tab and the unread count of each tab, finding the inbox once for both."""
        inbox = await self.labels.by_role(user_id, LabelRole.INBOX)
        if inbox is None:
            return ThreadPage([], 1, False), {}
        return await self._page(user_id, inbox, tab.value, page), await self.views.unread_by_category(user_id, inbox)

    async def label(self, user_id: int, label_id: int, page: int = 1, *, account_id: int | None = None
                    ) -> ThreadPage:
        return (await self.label_view(user_id, label_id, page, account_id=account_id))[1]

    async def label_view(self, user_id: int, label_id: int, page: int = 1, *, account_id: int | None = None
                         ) -> tuple[SidebarLabel, ThreadPage]:
        """The user's label and a page of its threads; NotFoundError when the label is not the user's."""
        label = await self.labels.owned(user_id, label_id)
        if label is None:
            raise NotFoundError("No such label.")
        # The trash view is the one place binned threads are listed.
        return label, await self._page(user_id, label_id, None, page, account_id=account_id,
                                       include_binned=label.role is LabelRole.TRASH)

    async def walked(self, user_id: int, view: str, page: int = 1) -> ThreadPage:
        """Starred (the is:starred search), All mail (everything but Spam and Trash, as Gmail's) or Archive (what
        left the Inbox and is neither snoozed nor a draft)."""
        if view == "starred":
            return await self.search(user_id, "is:starred", page)
        page = max(page, 1)
        roles = await self.labels.role_ids(user_id)
        hidden = WALKED_VIEWS.get(view)
        if hidden is None:
            raise NotFoundError("No such view.")
        rows = await self.views.walked_threads(user_id, without_labels=[roles[r] for r in hidden if r in roles],
                                               limit=PAGE_SIZE + 1, offset=(page - 1) * PAGE_SIZE)
        return ThreadPage(rows[:PAGE_SIZE], page, len(rows) > PAGE_SIZE)

    async def _page(self, user_id: int, label_id: int, category: str | None, page: int, *,
                    account_id: int | None = None, include_binned: bool = False) -> ThreadPage:
        page = max(page, 1)
        rows = await self.views.label_threads(
            user_id, label_id, category=category, limit=PAGE_SIZE + 1, offset=(page - 1) * PAGE_SIZE,
            account_id=account_id, include_binned=include_binned,
        )
        return ThreadPage(rows[:PAGE_SIZE], page, len(rows) > PAGE_SIZE)

    async def view_thread_ids(self, user_id: int, view: str, cap: int = 10_000) -> list[int]:
        """All threads of a list view named like "inbox:primary", "label:5", "label:5:account:2" or
        "search:<query>" — what "select all conversations in this view" acts on."""
        kind, _, rest = view.partition(":")
        if kind == "inbox":
            inbox = await self.labels.by_role(user_id, LabelRole.INBOX)
            if inbox is None:
                return []
            return await self.views.label_thread_ids(user_id, inbox, category=rest or None, account_id=None,
                                                     include_binned=False, cap=cap)
        if kind == "label":
            label_text, _, account_text = rest.partition(":account:")
            try:
                label_id = int(label_text)
                account_id = int(account_text) if account_text else None
            except ValueError:
                raise NotFoundError("No such view.") from None
            label = await self.labels.owned(user_id, label_id)
            if label is None:
                raise NotFoundError("No such label.")
            return await self.views.label_thread_ids(user_id, label_id, category=None, account_id=account_id,
                                                     include_binned=label.role is LabelRole.TRASH, cap=cap)
        if kind in ("search", "view"):
            ids: list[int] = []
            page = 1
            while len(ids) < cap:
                found = await (self.search(user_id, rest, page) if kind == "search"
                               else self.walked(user_id, rest, page))
                ids += [t.id for t in found.threads]
                if not found.has_next:
                    break
                page += 1
            return ids[:cap]
        raise NotFoundError("No such view.")

    async def tab_unread(self, user_id: int) -> dict[str, int]:
        inbox = await self.labels.by_role(user_id, LabelRole.INBOX)
        return await self.views.unread_by_category(user_id, inbox) if inbox is not None else {}

    async def search(self, user_id: int, query: str, page: int = 1, *, ranked: bool = False) -> ThreadPage:
        page = max(page, 1)
        parsed = parse_search(query.strip()[:1000])
        if parsed.empty:
            return ThreadPage([], 1, False)
        roles = await self.labels.role_ids(user_id)
        label_ids = [roles[role] for role in parsed.roles if role in roles]
        for name in parsed.labels:
            found = await self.labels.find_path(user_id, name)
            if found is None:
                return ThreadPage([], page, False)  # a label that does not exist matches nothing
            label_ids.append(found)
        try:
            rows = await self.views.search(user_id, parsed, label_ids, ranked=ranked, limit=PAGE_SIZE + 1,
                                           offset=(page - 1) * PAGE_SIZE)
        except FilterError:
            return ThreadPage([], page, False)
        return ThreadPage(rows[:PAGE_SIZE], page, len(rows) > PAGE_SIZE)

    async def thread(
        self, user_id: int, thread_id: int, *, images_for: int | None = None
    ) -> tuple[ThreadSummary, list[RenderedMessage]]:
        summary = await self.views.thread(user_id, thread_id)
        if summary is None:
            raise NotFoundError("No such conversation.")
        messages = conversation_order(await self.views.thread_messages(user_id, thread_id))
        own = await self._own_addresses(user_id)
        settings = await self.users.settings(user_id)
        allowed_senders = set(_strings(settings.get(_IMAGE_SENDERS)))
        disabled = _strings(settings.get("categories_disabled"))
        senders = sorted({m.from_address for m in messages if m.from_address})
        correspondents = await self.contacts.correspondents(user_id, senders)
        rendered = []
        for message in messages:
            allow = images_for == message.id or message.from_address in allowed_senders
            html: str | None = message.body_html_safe
            blocked = 0
            if message.body_html is not None:
                # Re-sanitised from the raw copy: the stored safe copy has remote images already removed.
                result = sanitize_html(message.body_html, message_id=message.id, allow_remote_images=allow)
                html, blocked = result.html, result.remote_images_blocked
            verdict = self.categorizer.explain(
                CategoryFacts(message.from_address, message.headers, message.provider_labels),
                correspondents=correspondents,
                disabled={Category(c) for c in disabled if c in Category._value2member_map_},
            )
            rendered.append(RenderedMessage(message, html, blocked, allow, verdict, parties(message, own)))
        return summary, rendered

    async def _own_addresses(self, user_id: int) -> set[str]:
        """Every address of the user: each account's own and its identities (aliases included)."""
        accounts = await self.accounts.for_user(user_id)
        identities = await self.identities.for_user(user_id)
        return {a.email.lower() for a in accounts if a.email} | {i.email.lower() for i in identities}

    async def allow_images_from(self, user_id: int, message_id: int) -> None:
        message = await self.views.message(user_id, message_id)
        if message is None:
            raise NotFoundError("No such message.")
        settings = await self.users.settings(user_id)
        senders = _strings(settings.get(_IMAGE_SENDERS))
        if message.from_address and message.from_address not in senders:
            senders.append(message.from_address)
            await self.users.merge_settings(user_id, {_IMAGE_SENDERS: senders[-1000:]})

    async def inline_part(self, user_id: int, message_id: int, content_id: str) -> tuple[AttachmentView, bytes]:
        part = await self.views.part_by_content_id(user_id, message_id, content_id)
        if part is None or part.sha256 is None:
            raise NotFoundError("No such inline part.")
        return part, await self.blobs.get(part.sha256)

    async def attachment(self, user_id: int, part_id: int) -> tuple[AttachmentView, bytes]:
        part = await self.views.part(user_id, part_id)
        if part is None or part.sha256 is None:
            raise NotFoundError("No such attachment.")
        return part, await self.blobs.get(part.sha256)


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []
