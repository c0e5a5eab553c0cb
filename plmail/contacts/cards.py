"""Address books and cards as JMAP for Contacts sees them (RFC 9610): JSContact cards with ids, in the same store
CardDAV serves, written through the same AddressBookStore so both protocols keep the same rules (the size limit,
one UID per book, a removed gathered card staying removed).

A card's vCard is the truth: JMAP reads it as JSContact (contacts/jscontact.py) and writes it back as vCard,
keeping the lines JSContact has no place for, so a phone reads over CardDAV what JMAP wrote and the other way round.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from plmail.contacts.books import BOOK_NAMES, MAX_BOOK, MAX_CARD_BYTES, AddressBookStore
from plmail.contacts.jscontact import CardError, card_from_vcard, vcard_from_card
from plmail.contacts.repos.card_index import CardIndexRepository, IndexedCard, Watermark
from plmail.contacts.repos.cards import FROM_MAIL, PERSONAL
from plmail.domain.dav import DavRefusalError, PreconditionFailedError
from plmail.domain.errors import ConflictError, NotFoundError, TooLargeError, ValidationError

BOOK_IDS = {PERSONAL: "personal", FROM_MAIL: "from-mail"}  # the JMAP id of each book: its CardDAV path segment
MAX_NAME = 255
_STATE = re.compile(r"^(\d{1,18})-(\d{1,18})$")


@dataclass(frozen=True, slots=True)
class Book:
    id: str
    name: str
    sort_order: int
    is_default: bool
    may_delete: bool  # neither fixed book can be removed; the gathered one can be emptied card by card


@dataclass(frozen=True, slots=True)
class StoredCard:
    id: str
    book_id: str
    card: dict[str, Any]  # JSContact, with created and updated from the store
    vcard: str


@dataclass(frozen=True, slots=True)
class CardChanges:
    old_state: str
    new_state: str
    has_more: bool
    created: list[str]
    updated: list[str]
    destroyed: list[str]


class StateUnknownError(ValueError):
    """A state this server never handed out (JMAP's cannotCalculateChanges)."""


def state_of(mark: Watermark) -> str:
    return f"{mark.modseq}-{mark.last_id}"


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _stored(row: IndexedCard) -> StoredCard:
    card = card_from_vcard(row.vcard)
    card["created"], card["updated"] = _utc(row.created_at), _utc(row.updated_at)
    return StoredCard(str(row.id), BOOK_IDS[row.book_kind], card, row.vcard)


class ContactCards:
    def __init__(self, store: AddressBookStore) -> None:
        self.store = store
        self.index = CardIndexRepository(store.repo.db)

    async def books(self, user_id: int) -> list[Book]:
        rows = await self.store.repo.books(user_id, BOOK_NAMES)
        return [Book(BOOK_IDS[row.kind], row.name, order, row.kind == PERSONAL, False)
                for order, row in enumerate(rows)]

    async def books_state(self, user_id: int) -> str:
        """Both books always exist; only their names change, so the state is what they are called."""
        names = "\x00".join(f"{b.id}={b.name}" for b in await self.books(user_id))
        return "b" + uuid.uuid5(uuid.NAMESPACE_OID, names).hex[:16]

    async def rename_book(self, user_id: int, book_id: str, name: str) -> None:
        kind = next((k for k, v in BOOK_IDS.items() if v == book_id), None)
        if kind is None:
            raise NotFoundError("No such address book.")
        if not name.strip() or len(name) > MAX_NAME or any(ord(c) < 32 for c in name):
            raise ValidationError(f"An address book's name is 1 to {MAX_NAME} characters on one line.", field="name")
        await self.store.repo.books(user_id, BOOK_NAMES)
        await self.index.rename_book(user_id, kind, name.strip())

    async def state(self, user_id: int) -> str:
        return state_of(await self.index.watermark(user_id))

    async def gather(self, user_id: int) -> None:
        """Correspondents written to since the last look become cards in "From your mail", as over CardDAV."""
        await self.store.collections(user_id)

    async def cards(self, user_id: int, ids: Sequence[str] | None, *, limit: int = MAX_BOOK * 2) -> list[StoredCard]:
        numeric = None if ids is None else [int(i) for i in ids if i.isdigit() and len(i) < 19]
        if numeric == []:
            return []
        rows = await self.index.live(user_id, numeric, limit=limit if numeric is None else min(len(numeric), limit))
        return [_stored(row) for row in rows]

    async def changes(self, user_id: int, since: str, limit: int) -> CardChanges:
        found = _STATE.match(since)
        current = await self.index.watermark(user_id)
        if found is None or int(found[1]) > current.modseq:
            raise StateUnknownError(since)
        old = Watermark(int(found[1]), int(found[2]))
        rows = await self.index.changed_since(user_id, old.modseq, current.modseq, limit=limit + 1)
        has_more = len(rows) > limit
        rows = rows[:limit]
        new = Watermark(rows[-1].modseq, old.last_id) if has_more else current
        created, updated, destroyed = [], [], []
        for row in rows:
            if row.deleted:
                if row.id <= old.last_id:  # one made and removed since the old state never concerned the client
                    destroyed.append(str(row.id))
            elif row.id > old.last_id:
                created.append(str(row.id))
            else:
                updated.append(str(row.id))
        return CardChanges(since, state_of(new), has_more, created, updated, destroyed)

    async def create(self, user_id: int, book_id: str, card: dict[str, Any]) -> StoredCard:
        """A new card from JSContact; the server gives it a UID when the client did not."""
        card = {**card}
        card.setdefault("uid", f"urn:uuid:{uuid.uuid4()}")
        vcard = _vcard(card, None)
        href = f"{uuid.uuid4()}.vcf"
        await self._put(user_id, book_id, href, vcard, if_match=None)
        return await self._at(user_id, book_id, href)

    async def replace(self, user_id: int, current: StoredCard, card: dict[str, Any]) -> StoredCard:
        """The card as the client patched it, written over the old vCard (its unmapped lines kept)."""
        if card.get("uid") != current.card.get("uid"):
            raise ValidationError("A card's uid cannot change.", field="uid")
        vcard = _vcard(card, current.vcard)
        row = (await self.index.live(user_id, [int(current.id)], limit=1))
        if not row:
            raise NotFoundError("No such card.")
        await self._put(user_id, current.book_id, row[0].href, vcard, if_match=f'"{row[0].id}-{row[0].modseq}"')
        return (await self.cards(user_id, [current.id]))[0]

    async def destroy(self, user_id: int, card_id: str) -> None:
        rows = await self.index.live(user_id, [int(card_id)], limit=1) if card_id.isdigit() and len(card_id) < 19 \
            else []
        if not rows:
            raise NotFoundError("No such card.")
        await self.store.delete(user_id, BOOK_IDS[rows[0].book_kind], rows[0].href, if_match=None)

    async def _put(self, user_id: int, book_id: str, href: str, vcard: str, *, if_match: str | None) -> None:
        data = vcard.encode("utf-8")
        if len(data) > MAX_CARD_BYTES:
            raise TooLargeError(f"A card is at most {MAX_CARD_BYTES} bytes as vCard.", max_size=MAX_CARD_BYTES)
        try:
            await self.store.put(user_id, book_id, href, data, if_match=if_match, if_none_match=if_match is None)
        except DavRefusalError as error:
            if error.condition == "no-uid-conflict":
                raise ValidationError(str(error), field="uid") from None
            raise ValidationError(str(error)) from None
        except PreconditionFailedError:
            raise ConflictError("The card changed while it was being written; read it again.",
                                reason="stateMismatch") from None

    async def _at(self, user_id: int, book_id: str, href: str) -> StoredCard:
        kind = next(k for k, v in BOOK_IDS.items() if v == book_id)
        row = await self.index.at_href(user_id, kind, href)
        if row is None:
            raise NotFoundError("The card was not kept.")
        return _stored(row)

def _vcard(card: dict[str, Any], previous: str | None) -> str:
    try:
        return vcard_from_card({k: v for k, v in card.items() if k not in ("created", "updated")}, previous)
    except CardError as error:
        raise ValidationError(str(error), field=error.prop) from None
