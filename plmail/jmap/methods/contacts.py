"""JMAP for Contacts (RFC 9610): AddressBook/get, /changes, /set and ContactCard/get, /changes, /query,
/queryChanges, /set, with cards as JSContact (RFC 9553), on the user's primary account.

The cards are the CardDAV address books' vCards (contacts/cards.py converts per RFC 9555): "Contacts", the book the
user edits, and "From your mail", gathered from the people the user wrote to. The two books are fixed, so
AddressBook/set renames them but neither makes nor removes one (mayCreateAddressBook is false).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plmail.contacts.cards import BOOK_IDS, ContactCards, StateUnknownError, StoredCard
from plmail.jmap.args import Args
from plmail.jmap.capabilities import CONTACTS, LIMITS
from plmail.jmap.common import (
    CHANGES_ARGUMENTS,
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    apply_patch,
    each_object,
    get_ids,
    max_changes,
    page_of,
    properties,
    query_response,
    set_request,
    set_response,
)
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, invalid_properties
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()
BOOK_PROPERTIES = ("id", "name", "description", "sortOrder", "isDefault", "isSubscribed", "shareWith", "myRights")
CARD_PROPERTIES = ("id", "addressBookIds", "@type", "version", "uid", "kind", "name", "nicknames", "emails",
                   "phones", "addresses", "organizations", "titles", "notes", "onlineServices", "links",
                   "anniversaries", "created", "updated", "prodId")
QUERY_ARGUMENTS = ("accountId", "filter", "sort", "position", "anchor", "anchorOffset", "limit", "calculateTotal")
_SERVER_SET = ("id", "created", "updated")
_FIXED_BOOKS = "plmail keeps two address books, Contacts and From your mail; they can be renamed only."


def _account(call: Call, args: Args) -> str:
    """The primary (unified) account: the address books are the person's, not one mailbox's."""
    scope = call.scope(args)
    if not scope.unified:
        raise MethodError("accountNotSupportedByMethod", "Contacts live in your primary account.")
    return call.jmap_id(scope)


def _cards(call: Call) -> ContactCards:
    return ContactCards(call.ctx.services.address_books)


def _book_object(book: Any) -> dict[str, Any]:
    return {"id": book.id, "name": book.name, "description": None, "sortOrder": book.sort_order,
            "isDefault": book.is_default, "isSubscribed": True, "shareWith": None,
            "myRights": {"mayRead": True, "mayWrite": True, "mayShare": False, "mayDelete": book.may_delete}}


@table.method("AddressBook/get", CONTACTS)
async def book_get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    account = _account(call, args)
    props = properties(args, BOOK_PROPERTIES, BOOK_PROPERTIES)
    cards = _cards(call)
    user_id = call.ctx.principal.user_id
    books = {b.id: _book_object(b) for b in await cards.books(user_id)}
    ids = get_ids(args)
    wanted = ids if ids is not None else list(books)
    return {"accountId": account, "state": await cards.books_state(user_id),
            "list": [{p: books[i][p] for p in props} for i in wanted if i in books],
            "notFound": [i for i in wanted if i not in books]}


@table.method("AddressBook/changes", CONTACTS)
async def book_changes(call: Call) -> dict[str, Any]:
    """Books are never made or removed, only renamed: from any earlier state both are reported updated."""
    args = call.args(*CHANGES_ARGUMENTS)
    account = _account(call, args)
    since = args.string("sinceState", required=True)
    assert since is not None
    cards = _cards(call)
    user_id = call.ctx.principal.user_id
    current = await cards.books_state(user_id)
    if not (since.startswith("b") and len(since) == 17):
        raise MethodError("cannotCalculateChanges", "This state was not handed out by this server.")
    updated = [] if since == current else [b.id for b in await cards.books(user_id)]
    return {"accountId": account, "oldState": since, "newState": current, "hasMoreChanges": False,
            "created": [], "updated": updated, "destroyed": [], "updatedProperties": None}


@table.method("AddressBook/set", CONTACTS)
async def book_set(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS, "onDestroyRemoveContents", "onSuccessSetIsDefault")
    account = _account(call, args)
    cards = _cards(call)
    user_id = call.ctx.principal.user_id
    old_state = await cards.books_state(user_id)
    _check_state(args, old_state)
    if args.raw("onSuccessSetIsDefault") is not None:
        raise invalid_arguments("The default address book is always Contacts.")
    request = set_request(args)
    books = {b.id: _book_object(b) for b in await cards.books(user_id)}

    async def update(book_id: str) -> None:
        if book_id not in books:
            raise SetError("notFound", "No such address book.")
        patched = apply_patch(books[book_id], request.update[book_id])
        changed = [p for p in BOOK_PROPERTIES if patched.get(p) != books[book_id].get(p)]
        if [p for p in changed if p != "name"]:
            raise invalid_properties("Only an address book's name can be changed.",
                                     *[p for p in changed if p != "name"])
        if "name" in changed:
            if not isinstance(patched["name"], str):
                raise invalid_properties("'name' is text.", "name")
            await cards.rename_book(user_id, book_id, patched["name"])

    updated, not_updated = await each_object(list(request.update), update)
    fixed = SetError("forbidden", _FIXED_BOOKS).as_json()
    return set_response(account, old_state, await cards.books_state(user_id), created={}, updated=updated,
                        destroyed=[], not_created={key: fixed for key in request.create}, not_updated=not_updated,
                        not_destroyed={key: (fixed if key in books else SetError("notFound").as_json())
                                       for key in request.destroy})


def _card_object(stored: StoredCard) -> dict[str, Any]:
    return {"id": stored.id, "addressBookIds": {stored.book_id: True}, **stored.card}


@table.method("ContactCard/get", CONTACTS)
async def card_get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    account = _account(call, args)
    props = properties(args, CARD_PROPERTIES, CARD_PROPERTIES)
    cards = _cards(call)
    user_id = call.ctx.principal.user_id
    await cards.gather(user_id)
    state = await cards.state(user_id)
    ids = get_ids(args)
    limit = LIMITS.max_objects_in_get + 1 if ids is None else len(ids)
    found = {s.id: _card_object(s) for s in await cards.cards(user_id, ids, limit=limit)}
    if len(found) > LIMITS.max_objects_in_get:
        raise MethodError("requestTooLarge", f"More than {LIMITS.max_objects_in_get} cards; ask for ids "
                                             "(ContactCard/query lists them).")
    wanted = ids if ids is not None else list(found)
    return {"accountId": account, "state": state,
            "list": [{p: found[i][p] for p in props if p in found[i]} for i in wanted if i in found],
            "notFound": [i for i in wanted if i not in found]}


@table.method("ContactCard/changes", CONTACTS)
async def card_changes(call: Call) -> dict[str, Any]:
    args = call.args(*CHANGES_ARGUMENTS)
    account = _account(call, args)
    since = args.string("sinceState", required=True)
    assert since is not None
    cards = _cards(call)
    await cards.gather(call.ctx.principal.user_id)
    try:
        found = await cards.changes(call.ctx.principal.user_id, since, max_changes(args))
    except StateUnknownError:
        raise MethodError("cannotCalculateChanges", "This state was not handed out by this server.") from None
    return {"accountId": account, "oldState": found.old_state, "newState": found.new_state,
            "hasMoreChanges": found.has_more, "created": found.created, "updated": found.updated,
            "destroyed": found.destroyed}


# RFC 9610 §3.3.1: the conditions this server answers; each is matched case-insensitively as a substring.
def _texts(card: dict[str, Any], *props: str) -> list[str]:
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value.lower())
        elif isinstance(value, dict):
            for key, inner in value.items():
                if key not in ("@type", "kind", "contexts", "features", "pref"):
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for prop in props:
        walk(card.get(prop))
    return found


def _name_part(card: dict[str, Any], kind: str) -> str:
    for component in (card.get("name") or {}).get("components") or []:
        if component.get("kind") == kind:
            return str(component.get("value", "")).lower()
    return ""


_TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("name", "nicknames", "organizations", "emails", "phones", "onlineServices", "addresses", "notes"),
    "name": ("name",), "nickname": ("nicknames",), "organization": ("organizations",), "email": ("emails",),
    "phone": ("phones",), "onlineService": ("onlineServices",), "address": ("addresses",), "note": ("notes",),
}
_NAME_PARTS = {"name/given": "given", "name/surname": "surname", "name/surname2": "surname2"}
_DATES = {"createdBefore": ("created", True), "createdAfter": ("created", False),
          "updatedBefore": ("updated", True), "updatedAfter": ("updated", False)}


def _matcher(condition: Any) -> Callable[[dict[str, Any]], bool]:
    if not isinstance(condition, dict):
        raise MethodError("unsupportedFilter", "A filter is an object.")
    if "operator" in condition:
        operator, parts = condition.get("operator"), condition.get("conditions")
        if operator not in ("AND", "OR", "NOT") or not isinstance(parts, list) or set(condition) != {
                "operator", "conditions"}:
            raise MethodError("unsupportedFilter", "A FilterOperator is AND, OR or NOT with a list of conditions.")
        inner = [_matcher(p) for p in parts]
        if operator == "AND":
            return lambda card: all(m(card) for m in inner)
        if operator == "OR":
            return lambda card: any(m(card) for m in inner)
        return lambda card: not any(m(card) for m in inner)
    tests: list[Callable[[dict[str, Any]], bool]] = []
    for key, value in condition.items():
        if key in _DATES:
            if not isinstance(value, str) or not value.endswith("Z"):
                raise invalid_arguments(f"'{key}' is a UTCDate.")
        elif key in _TEXT_FIELDS or key in _NAME_PARTS or key in ("inAddressBook", "uid", "kind"):
            if not isinstance(value, str):
                raise invalid_arguments(f"'{key}' is text.")
        else:
            raise MethodError("unsupportedFilter", f"Cards cannot be filtered by {key!r}.")
        tests.append(_condition(key, value))
    return lambda card: all(test(card) for test in tests)


def _condition(key: str, value: str) -> Callable[[dict[str, Any]], bool]:
    needle = value.lower()

    def test(card: dict[str, Any]) -> bool:
        if key == "inAddressBook":
            return value in card["addressBookIds"]
        if key in ("uid", "kind"):
            return bool(card.get(key) == value)
        if key in _NAME_PARTS:
            return needle in _name_part(card, _NAME_PARTS[key])
        if key in _DATES:
            prop, before = _DATES[key]
            return bool(card[prop] < value) if before else bool(card[prop] >= value)
        return any(needle in text for text in _texts(card, *_TEXT_FIELDS[key]))

    return test


def _sort_value(prop: str) -> Callable[[dict[str, Any]], str]:
    def value(card: dict[str, Any]) -> str:
        return str(card[prop]) if prop in ("created", "updated") else _name_part(card, _NAME_PARTS[prop])

    return value


def _sort_key(sort: Any) -> list[tuple[Callable[[dict[str, Any]], str], bool]]:
    if sort is None:
        return []
    if not isinstance(sort, list) or not all(isinstance(s, dict) for s in sort):
        raise invalid_arguments("'sort' is a list of comparators.")
    keys: list[tuple[Callable[[dict[str, Any]], str], bool]] = []
    for comparator in sort:
        prop = comparator.get("property")
        ascending = comparator.get("isAscending", True)
        if set(comparator) - {"property", "isAscending", "collation"} or not isinstance(ascending, bool):
            raise invalid_arguments("A comparator has property, isAscending and collation.")
        if prop in ("created", "updated") or prop in _NAME_PARTS:
            keys.append((_sort_value(str(prop)), ascending))
        else:
            raise MethodError("unsupportedSort", f"Cards cannot be sorted by {prop!r}.")
    return keys


@table.method("ContactCard/query", CONTACTS)
async def card_query(call: Call) -> dict[str, Any]:
    args = call.args(*QUERY_ARGUMENTS)
    account = _account(call, args)
    condition = args.raw("filter")
    match = _matcher(condition) if condition is not None else (lambda card: True)
    order = _sort_key(args.raw("sort"))
    cards = _cards(call)
    user_id = call.ctx.principal.user_id
    await cards.gather(user_id)
    state = await cards.state(user_id)
    found = [c for c in (_card_object(s) for s in await cards.cards(user_id, None)) if match(c)]
    for key, ascending in reversed(order):  # stable sorts, last comparator first
        found.sort(key=key, reverse=not ascending)
    page = page_of([c["id"] for c in found], args)
    return query_response(account, state, page, changes=False, total=args.boolean("calculateTotal"))


@table.method("ContactCard/queryChanges", CONTACTS)
async def card_query_changes(call: Call) -> dict[str, Any]:
    call.args("accountId", "filter", "sort", "sinceQueryState", "maxChanges", "upToId", "calculateTotal")
    raise MethodError("cannotCalculateChanges", "Run the query again: its changes are not kept.")


@table.method("ContactCard/set", CONTACTS)
async def card_set(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS)
    account = _account(call, args)
    cards = _cards(call)
    user_id = call.ctx.principal.user_id
    old_state = await cards.state(user_id)
    _check_state(args, old_state)
    request = set_request(args)

    async def create(key: str) -> dict[str, Any]:
        given = request.create[key]
        server_set = [p for p in _SERVER_SET if p in given]
        if server_set:
            raise invalid_properties("These are set by the server.", *server_set)
        book = _one_book(given.get("addressBookIds"))
        stored = await cards.create(user_id, book, {k: v for k, v in given.items() if k != "addressBookIds"})
        call.ctx.created_ids[key] = stored.id
        return {"id": stored.id, "uid": stored.card["uid"], "created": stored.card["created"],
                "updated": stored.card["updated"]}

    async def update(card_id: str) -> dict[str, Any] | None:
        current = await cards.cards(user_id, [card_id])
        if not current:
            raise SetError("notFound", "No such card.")
        before = _card_object(current[0])
        patched = apply_patch(before, request.update[card_id])
        server_set = [p for p in _SERVER_SET if patched.get(p) != before.get(p)]
        if server_set:
            raise invalid_properties("These are set by the server.", *server_set)
        if _one_book(patched.get("addressBookIds")) != current[0].book_id:
            raise invalid_properties("A card stays in its address book; copy it to the other and destroy this one.",
                                     "addressBookIds")
        stored = await cards.replace(user_id, current[0], {k: v for k, v in patched.items()
                                                           if k not in ("id", "addressBookIds")})
        return {"updated": stored.card["updated"]}

    async def destroy(card_id: str) -> None:
        await cards.destroy(user_id, card_id)

    created, not_created = await each_object(list(request.create), create)
    updated, not_updated = await each_object(list(request.update), update)
    destroyed, not_destroyed = await each_object(request.destroy, destroy)
    return set_response(account, old_state, await cards.state(user_id), created=created, updated=updated,
                        destroyed=list(destroyed), not_created=not_created, not_updated=not_updated,
                        not_destroyed=not_destroyed)


def _check_state(args: Args, current: str) -> None:
    expected = args.string("ifInState")
    if expected is not None and expected != current:
        raise MethodError("stateMismatch", "The state has changed since you last read it.")


def _one_book(value: Any) -> str:
    """RFC 9610 §3: addressBookIds, here exactly one book (maxAddressBooksPerCard is 1)."""
    if not isinstance(value, dict) or len(value) != 1 or list(value.values()) != [True]:
        raise invalid_properties("A card is in exactly one address book: {\"<id>\": true}.", "addressBookIds")
    [book] = value
    if book not in BOOK_IDS.values():
        raise invalid_properties(f"No address book {book!r}.", "addressBookIds")
    return str(book)


__all__ = ["table"]
