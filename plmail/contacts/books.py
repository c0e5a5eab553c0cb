"""Address books as CardDAV clients see them (RFC 6352): "Contacts", the one the user edits, and "From your mail",
filled with a card for each person the user wrote to (the contacts step's correspondents: never a list or bulk
sender, who is never written to), with the name and address they used.

Cards are kept as the vCard text the client sent (so a GET answers the bytes of the PUT, and the PUT may answer
with the ETag). Removing a gathered card leaves a tombstone with its address: the person stays removed, which is
the user's decision, and editing one keeps the edit, because a card that exists is never gathered again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from plmail.contacts.repos.cards import FROM_MAIL, PERSONAL, AddressBookRepository, BookRow, CardRow, Correspondent
from plmail.db.database import Database
from plmail.domain.dav import (
    DavChanges,
    DavCollection,
    DavEntry,
    DavObject,
    DavRefusalError,
    DavWrite,
    InvalidSyncTokenError,
    PreconditionFailedError,
)
from plmail.domain.errors import NotFoundError
from plmail.domain.outgoing import ContactSuggestion

CARDDAV = "urn:ietf:params:xml:ns:carddav"
MAX_CARD_BYTES = 256 * 1024
MAX_BOOK = 20_000
GATHER_BATCH = 500
BOOK_NAMES = {PERSONAL: "Contacts", FROM_MAIL: "From your mail"}
_HREF = re.compile(r"^[A-Za-z0-9@._~+=:,;!$&'()*-]{1,255}$")


def etag_of(card: CardRow) -> str:
    return f'"{card.id}-{card.modseq}"'


def _escape(text: str) -> str:
    """A vCard text value (RFC 6350 §3.4)."""
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(";", "\\;").replace("\n", "\\n")


def gathered_card(person: Correspondent) -> tuple[str, str, str]:
    """(href, uid, vCard 3.0) for a correspondent; the same address always makes the same names."""
    digest = hashlib.sha256(person.email.encode("utf-8")).hexdigest()[:32]
    name = person.display_name.strip() or person.email
    lines = ["BEGIN:VCARD", "VERSION:3.0", "PRODID:-//plmail//contacts//EN", f"UID:plmail-{digest}",
             f"FN:{_escape(name)}", f"N:{_escape(name)};;;;", f"EMAIL;TYPE=INTERNET:{person.email}",
             "END:VCARD"]
    return f"{digest}.vcf", f"plmail-{digest}", "\r\n".join(lines) + "\r\n"


def _unfolded(text: str) -> list[str]:
    lines: list[str] = []
    for raw in text.splitlines():
        if raw[:1] in (" ", "\t") and lines:
            lines[-1] += raw[1:]
        elif raw.strip():
            lines.append(raw)
    return lines


def _name_and_emails(text: str) -> tuple[str, list[str]]:
    """A stored card's FN and EMAIL values (RFC 6350 §6.2.1, §6.4.2), unescaped."""
    name, emails = "", []
    for line in _unfolded(text):
        head, _, value = line.partition(":")
        key = head.split(";", 1)[0].rsplit(".", 1)[-1].upper()
        value = value.strip().replace("\\,", ",").replace("\\;", ";").replace("\\\\", "\\")
        if key == "FN" and not name:
            name = value
        elif key == "EMAIL" and "@" in value:
            emails.append(value.removeprefix("mailto:"))
    return name, emails


def _uid_of(data: bytes) -> str:
    """The UID of the one vCard a resource holds (RFC 6352 §5.1), refusing anything else."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DavRefusalError("A vCard is UTF-8 text.", condition="valid-address-data", namespace=CARDDAV) from None
    lines = _unfolded(text)
    begins = sum(1 for line in lines if line.strip().upper() == "BEGIN:VCARD")
    if begins != 1 or lines[0].strip().upper() != "BEGIN:VCARD" or lines[-1].strip().upper() != "END:VCARD":
        raise DavRefusalError("The object must be exactly one vCard.", condition="valid-address-data",
                              namespace=CARDDAV)
    found = {line.split(":", 1)[0].split(";", 1)[0].rsplit(".", 1)[-1].upper(): line.split(":", 1)[-1].strip()
             for line in lines if ":" in line}
    if found.get("VERSION") not in ("3.0", "4.0"):
        raise DavRefusalError("vCard 3.0 or 4.0 is supported.", condition="supported-address-data",
                              namespace=CARDDAV)
    if not found.get("UID") or "FN" not in found:
        raise DavRefusalError("A vCard needs a UID and an FN.", condition="valid-address-data", namespace=CARDDAV)
    return found["UID"]


class AddressBookStore:
    def __init__(self, db: Database) -> None:
        self.repo = AddressBookRepository(db)

    async def collections(self, user_id: int) -> list[DavCollection]:
        books = await self.repo.books(user_id, BOOK_NAMES)
        for book in books:
            if book.kind == FROM_MAIL:
                await self.gather(user_id, book)
        marks = await self.repo.watermarks(user_id, [b.id for b in books])
        return [DavCollection(key=book.kind.replace("_", "-"), name=book.name, sync_sequence=marks.get(book.id, 0),
                              order=order) for order, book in enumerate(books)]

    async def gather(self, user_id: int, book: BookRow) -> int:
        """Cards for correspondents that have none yet, a batch at a time (the rest on the next request)."""
        made = 0
        for person in await self.repo.ungathered(user_id, book.id, limit=GATHER_BATCH):
            href, uid, vcard = gathered_card(person)
            if await self.repo.write(user_id, book.id, href, uid, vcard, person.email) is not None:
                made += 1
        return made

    async def listing(self, user_id: int, key: str) -> list[DavEntry]:
        book = await self._book(user_id, key)
        return [DavEntry(card.href, etag_of(card)) for card in await self.repo.live(user_id, book.id, limit=MAX_BOOK)]

    async def fetch(self, user_id: int, key: str, hrefs: Sequence[str], *, base_url: str) -> list[DavObject]:
        book = await self._book(user_id, key)
        cards = await self.repo.at(user_id, book.id, hrefs)
        return [DavObject(href, etag_of(cards[href]), cards[href].vcard.encode("utf-8"))
                for href in hrefs if href in cards]

    async def changes(self, user_id: int, key: str, since: int | None) -> DavChanges:
        book = await self._book(user_id, key)
        current = (await self.repo.watermarks(user_id, [book.id])).get(book.id, 0)
        if since is None:
            return DavChanges(current, tuple(await self.listing(user_id, key)), ())
        if since < 0 or since > current:
            raise InvalidSyncTokenError("This sync token was not handed out by this address book.")
        rows = await self.repo.changed_since(user_id, book.id, since, current)
        return DavChanges(current, tuple(DavEntry(r.href, etag_of(r)) for r in rows if not r.deleted),
                          tuple(r.href for r in rows if r.deleted))

    async def put(self, user_id: int, key: str, href: str, data: bytes, *, if_match: str | None,
                  if_none_match: bool) -> DavWrite:
        if not _HREF.match(href) or href in (".", ".."):
            raise DavRefusalError("Name the card with letters, digits and .-_@ only.",
                                  condition="valid-address-data", namespace=CARDDAV)
        if len(data) > MAX_CARD_BYTES:
            raise DavRefusalError("The card is larger than 256 KB.", condition="max-resource-size",
                                  namespace=CARDDAV)
        uid = _uid_of(data)
        book = await self._book(user_id, key)
        existing = (await self.repo.at(user_id, book.id, [href])).get(href)
        _check(existing, if_match=if_match, if_none_match=if_none_match)
        twin = await self.repo.with_uid(user_id, book.id, uid)
        if twin is not None and (existing is None or twin.id != existing.id):
            raise DavRefusalError("Another card in this address book has this UID.", condition="no-uid-conflict",
                                  namespace=CARDDAV)
        written = await self.repo.write(user_id, book.id, href, uid, data.decode("utf-8"), None)
        if written is None:
            raise NotFoundError("No such address book.")
        return DavWrite(existing is None, etag_of(written))

    async def delete(self, user_id: int, key: str, href: str, *, if_match: str | None) -> None:
        book = await self._book(user_id, key)
        existing = (await self.repo.at(user_id, book.id, [href])).get(href)
        if existing is None:
            raise NotFoundError("No such card.")
        _check(existing, if_match=if_match, if_none_match=False)
        await self.repo.remove(user_id, book.id, href)

    async def suggest(self, user_id: int, typed: str, limit: int) -> list[ContactSuggestion]:
        """The personal book's addresses for what was typed: an address, or a word of the card's name, starting
        with it (as the harvested contacts are matched). The gathered book is the harvested contacts already."""
        wanted = typed.strip().lower()
        found: list[ContactSuggestion] = []
        for text in await self.repo.containing(user_id, PERSONAL, wanted, limit=limit * 4):
            name, emails = _name_and_emails(text)
            words = [w for w in name.lower().split() if w]
            for email in emails:
                if email.lower().startswith(wanted) or any(w.startswith(wanted) for w in words):
                    found.append(ContactSuggestion(email, name, True))
        return found[:limit]

    async def _book(self, user_id: int, key: str) -> BookRow:
        kind = key.replace("-", "_")
        book = next((b for b in await self.repo.books(user_id, BOOK_NAMES) if b.kind == kind), None)
        if book is None:
            raise NotFoundError("No such address book.")
        return book


def _check(existing: CardRow | None, *, if_match: str | None, if_none_match: bool) -> None:
    if if_none_match and existing is not None:
        raise PreconditionFailedError("A card with this name exists already.")
    if if_match is not None:
        tags = {tag.strip() for tag in if_match.split(",")}
        if existing is None or ("*" not in tags and etag_of(existing) not in tags):
            raise PreconditionFailedError("The card changed since the client read it.")
