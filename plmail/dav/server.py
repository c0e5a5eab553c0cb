"""CalDAV (RFC 4791) and CardDAV (RFC 6352) for every user, mounted at /dav in the same process.

Layout: ``/dav/`` (the context path, where RFC 6764's well-known URIs lead), ``/dav/<user id>/`` the principal,
``/dav/<user id>/calendars/<calendar id>/<name>.ics`` and ``/dav/<user id>/addressbooks/<book>/<name>.vcf``.
Every request but OPTIONS authenticates with an app password (Basic, as JMAP does: the same service), and a
principal reaches only its own paths (403 elsewhere). Bodies are bounded before they are read (413).

Why not Radicale in-process: its storage, auth and rights plugins are synchronous and path-based (a WSGI app
calling BaseCollection.get_multi/upload/sync from worker threads), so every item read would cross from a thread
into plmail's asyncpg loop, its calendar-query filters parse every item of a collection in Python instead of
using the occurrences plmail materialises for every event, and its model (an item is stored text) would need a
second copy of each event beside the calendar tables. The protocol surface clients use is small enough to serve
from plmail's own stores, on its own loop, with the writer's rules applied to every write.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import quote, unquote, urlsplit

from litestar.handlers import asgi
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send
from lxml import etree  # type: ignore[import-untyped]

from plmail.dav import filters
from plmail.dav.exchange import DavError, Exchange, depth, precondition
from plmail.dav.homes import CalendarHome, Kind, ObjectStore
from plmail.dav.xml import (
    APPLE_ICAL,
    CALDAV,
    CALENDARSERVER,
    CARDDAV,
    DAV,
    Response,
    XmlError,
    element,
    error_body,
    href,
    multistatus,
    name,
    parse,
    requested_props,
)
from plmail.domain.dav import (
    DavCollection,
    DavEntry,
    DavObject,
    DavRefusalError,
    InvalidSyncTokenError,
    PreconditionFailedError,
)
from plmail.domain.errors import AuthenticationError, LoginThrottledError, NotFoundError, ValidationError
from plmail.domain.models import Principal
from plmail.services import Services, services_from

log = logging.getLogger(__name__)

ROOT = "/dav/"
REALM = 'Basic realm="plmail", charset="UTF-8"'
SYNC_PREFIX = "http://plmail.org/ns/sync/"
ALLOW = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT"
CALENDARS = Kind("calendars", CALDAV, "calendar", "calendar-data", "text/calendar; charset=utf-8",
                 "calendar-multiget", "calendar-query")
ADDRESSBOOKS = Kind("addressbooks", CARDDAV, "addressbook", "address-data", "text/vcard; charset=utf-8",
                    "addressbook-multiget", "addressbook-query")
_KINDS = {CALENDARS.segment: CALENDARS, ADDRESSBOOKS.segment: ADDRESSBOOKS}
_TOKEN = re.compile(r"^(?P<key>[A-Za-z0-9_-]{1,40})-(?P<sequence>\d{1,18})$")


def home_store(services: Services, kind: Kind) -> ObjectStore:
    if kind is CALENDARS:
        return CalendarHome(services)
    return services.address_books


def sync_token(collection: DavCollection, sequence: int) -> str:
    return f"{SYNC_PREFIX}{collection.key}-{sequence}"


def _parse_token(text: str, collection: DavCollection) -> int | None:
    text = text.strip()
    if not text:
        return None
    match = _TOKEN.match(text.removeprefix(SYNC_PREFIX)) if text.startswith(SYNC_PREFIX) else None
    if match is None or match.group("key") != collection.key:
        raise InvalidSyncTokenError("This sync token was not handed out for this collection.")
    return int(match.group("sequence"))


class Dav:
    """Routes one authenticated request to the resource its path names."""

    def __init__(self, exchange: Exchange, services: Services, principal: Principal) -> None:
        self.exchange = exchange
        self.services = services
        self.principal = principal
        self.user_id = principal.user_id

    @property
    def principal_path(self) -> str:
        return f"{ROOT}{self.user_id}/"

    def home_path(self, kind: Kind) -> str:
        return f"{self.principal_path}{kind.segment}/"

    def collection_path(self, kind: Kind, collection: DavCollection) -> str:
        return f"{self.home_path(kind)}{quote(collection.key)}/"

    async def handle(self) -> None:
        exchange = self.exchange
        path = exchange.path
        if not (path + "/").startswith(ROOT):
            raise DavError(404)
        parts = [p for p in path[len(ROOT):].split("/") if p]
        if not parts:
            return await self.root()
        if parts[0] != str(self.user_id):
            raise DavError(403, b"This is another user's data.")
        if len(parts) == 1:
            return await self.principal_resource()
        kind = _KINDS.get(parts[1])
        if kind is None or len(parts) > 4:
            raise DavError(404)
        store = home_store(self.services, kind)
        if len(parts) == 2:
            return await self.home(kind, store)
        collection = next((c for c in await store.collections(self.user_id) if c.key == parts[2]), None)
        if collection is None:
            raise DavError(404, b"No such collection.")
        if len(parts) == 3:
            return await self.collection(kind, store, collection)
        return await self.object(kind, store, collection, parts[3])

    # --- the context path and the principal (RFC 6764 §6, RFC 5397, RFC 4791 §6.2, RFC 6352 §7.1) ----------

    def _common(self) -> dict[str, Callable[[], etree._Element]]:
        return {
            name(DAV, "current-user-principal"): lambda: element(name(DAV, "current-user-principal"), None,
                                                                 href(self.principal_path)),
            name(DAV, "principal-collection-set"): lambda: element(name(DAV, "principal-collection-set"), None,
                                                                   href(ROOT)),
            name(CALDAV, "calendar-home-set"): lambda: element(name(CALDAV, "calendar-home-set"), None,
                                                               href(self.home_path(CALENDARS))),
            name(CARDDAV, "addressbook-home-set"): lambda: element(name(CARDDAV, "addressbook-home-set"), None,
                                                                   href(self.home_path(ADDRESSBOOKS))),
        }

    def _read_only_privileges(self) -> etree._Element:
        return _privileges(["read", "read-current-user-privilege-set"])

    async def root(self) -> None:
        if self.exchange.method not in ("PROPFIND", "GET", "HEAD"):
            raise DavError(405, headers={"Allow": "OPTIONS, PROPFIND"})
        if self.exchange.method != "PROPFIND":
            return await self.exchange.answer(200, b"plmail CalDAV and CardDAV\n", content_type="text/plain")
        props = {
            **self._common(),
            name(DAV, "resourcetype"): lambda: element(name(DAV, "resourcetype"), None,
                                                       element(name(DAV, "collection"))),
            name(DAV, "displayname"): lambda: element(name(DAV, "displayname"), "plmail"),
            name(DAV, "current-user-privilege-set"): self._read_only_privileges,
        }
        await self.multistatus([await self._props(ROOT, props)])

    async def principal_resource(self) -> None:
        if self.exchange.method != "PROPFIND":
            raise DavError(405, headers={"Allow": "OPTIONS, PROPFIND"})
        principal = self.principal
        props = {
            **self._common(),
            name(DAV, "resourcetype"): lambda: element(name(DAV, "resourcetype"), None,
                                                       element(name(DAV, "collection")),
                                                       element(name(DAV, "principal"))),
            name(DAV, "displayname"): lambda: element(name(DAV, "displayname"),
                                                      principal.display_name or principal.email),
            name(DAV, "principal-URL"): lambda: element(name(DAV, "principal-URL"), None,
                                                        href(self.principal_path)),
            name(CALDAV, "calendar-user-address-set"): lambda: element(
                name(CALDAV, "calendar-user-address-set"), None, href(f"mailto:{principal.email}"),
                href(self.principal_path)),
            name(CARDDAV, "principal-address"): lambda: element(name(CARDDAV, "principal-address")),
            name(DAV, "current-user-privilege-set"): self._read_only_privileges,
            name(DAV, "supported-report-set"): lambda: _reports([]),
        }
        await self.multistatus([await self._props(self.principal_path, props)])

    async def home(self, kind: Kind, store: ObjectStore) -> None:
        if self.exchange.method != "PROPFIND":
            raise DavError(405 if self.exchange.method not in ("MKCALENDAR", "MKCOL") else 403,
                           b"Collections are made in plmail.", headers={"Allow": "OPTIONS, PROPFIND"})
        path = self.home_path(kind)
        props = {
            **self._common(),
            name(DAV, "resourcetype"): lambda: element(name(DAV, "resourcetype"), None,
                                                       element(name(DAV, "collection"))),
            name(DAV, "displayname"): lambda: element(name(DAV, "displayname"), kind.segment),
            name(DAV, "owner"): lambda: element(name(DAV, "owner"), None, href(self.principal_path)),
            name(DAV, "current-user-privilege-set"): self._read_only_privileges,
        }
        responses = [await self._props(path, props)]
        if depth(self.exchange, "0") == 1:
            for collection in await store.collections(self.user_id):
                responses.append(await self._props(self.collection_path(kind, collection),
                                                   self._collection_props(kind, collection)))
        await self.multistatus(responses)

    # --- a calendar or an address book ------------------------------------------------------------------

    def _collection_props(self, kind: Kind, collection: DavCollection) -> dict[str, Callable[[], etree._Element]]:
        token = sync_token(collection, collection.sync_sequence)
        writable = ["read", "read-current-user-privilege-set"]
        if collection.writable:
            writable += ["write", "write-content", "bind", "unbind"]
        props: dict[str, Callable[[], etree._Element]] = {
            name(DAV, "current-user-principal"): self._common()[name(DAV, "current-user-principal")],
            name(DAV, "resourcetype"): lambda: element(name(DAV, "resourcetype"), None,
                                                       element(name(DAV, "collection")),
                                                       element(name(kind.namespace, kind.collection_type))),
            name(DAV, "displayname"): lambda: element(name(DAV, "displayname"), collection.name),
            name(DAV, "owner"): lambda: element(name(DAV, "owner"), None, href(self.principal_path)),
            name(CALENDARSERVER, "getctag"): lambda: element(name(CALENDARSERVER, "getctag"),
                                                             str(collection.sync_sequence)),
            name(DAV, "sync-token"): lambda: element(name(DAV, "sync-token"), token),
            name(DAV, "current-user-privilege-set"): lambda: _privileges(writable),
            name(DAV, "supported-report-set"): lambda: _reports([(kind.namespace, kind.multiget),
                                                                 (kind.namespace, kind.query),
                                                                 (DAV, "sync-collection")]),
        }
        if kind is CALENDARS:
            props.update({
                name(CALDAV, "supported-calendar-component-set"): lambda: element(
                    name(CALDAV, "supported-calendar-component-set"), None, _comp("VEVENT")),
                name(CALDAV, "supported-calendar-data"): lambda: element(
                    name(CALDAV, "supported-calendar-data"), None, _data_type(CALDAV, "calendar-data",
                                                                              "text/calendar", "2.0")),
                name(CALDAV, "max-resource-size"): lambda: element(name(CALDAV, "max-resource-size"),
                                                                   str(1024 * 1024)),
                name(CALDAV, "calendar-description"): lambda: element(name(CALDAV, "calendar-description"),
                                                                      collection.description or collection.name),
                name(APPLE_ICAL, "calendar-color"): lambda: element(name(APPLE_ICAL, "calendar-color"),
                                                                    collection.color or "#3465a4"),
                name(APPLE_ICAL, "calendar-order"): lambda: element(name(APPLE_ICAL, "calendar-order"),
                                                                    str(collection.order)),
            })
        else:
            props.update({
                name(CARDDAV, "supported-address-data"): lambda: element(
                    name(CARDDAV, "supported-address-data"), None,
                    _data_type(CARDDAV, "address-data-type", "text/vcard", "3.0")),
                name(CARDDAV, "max-resource-size"): lambda: element(name(CARDDAV, "max-resource-size"),
                                                                    str(256 * 1024)),
                name(CARDDAV, "addressbook-description"): lambda: element(
                    name(CARDDAV, "addressbook-description"), collection.description or collection.name),
            })
        return props

    async def collection(self, kind: Kind, store: ObjectStore, collection: DavCollection) -> None:
        method = self.exchange.method
        path = self.collection_path(kind, collection)
        if method == "PROPFIND":
            responses = [await self._props(path, self._collection_props(kind, collection))]
            if depth(self.exchange, "0") == 1:
                how, wanted = requested_props(parse(await self.exchange.body()))
                entries = await store.listing(self.user_id, collection.key)
                responses += await self._object_responses(kind, store, collection, entries, how, wanted)
            return await self.multistatus(responses)
        if method == "REPORT":
            return await self.report(kind, store, collection)
        if method == "PROPPATCH":
            return await self.proppatch(kind, store, collection, path)
        if method in ("GET", "HEAD"):
            raise DavError(405, b"Read the objects of a collection with PROPFIND or REPORT.", headers={"Allow": ALLOW})
        raise DavError(403 if method in ("DELETE", "MKCALENDAR", "MKCOL") else 405,
                       b"Collections are kept in plmail.", headers={"Allow": ALLOW})

    async def proppatch(self, kind: Kind, store: ObjectStore, collection: DavCollection, path: str) -> None:
        """A phone may rename and recolour a calendar (iOS writes displayname and calendar-color); anything else is
        refused by name, and then nothing is set (RFC 4918 §9.2: all or none, the others 424)."""
        root = parse(await self.exchange.body())
        if root is None or root.tag != name(DAV, "propertyupdate"):
            raise DavError(400, b"PROPPATCH takes a propertyupdate.")
        settable = {name(DAV, "displayname"), name(APPLE_ICAL, "calendar-color")} if kind is CALENDARS else set()
        values: dict[str, str] = {}
        refused: list[str] = []
        for action in root:
            for prop in action.iterfind(f"{name(DAV, 'prop')}/*"):
                tag = str(prop.tag)
                if action.tag == name(DAV, "set") and tag in settable:
                    values[tag] = str(prop.text or "")
                else:
                    refused.append(tag)
        if refused or not values or not isinstance(store, CalendarHome):
            return await self.multistatus([Response(path, forbidden=refused, failed=list(values))])
        try:
            await store.describe(self.user_id, collection.key, name=values.get(name(DAV, "displayname")),
                                 color=values.get(name(APPLE_ICAL, "calendar-color")))
        except ValidationError:
            return await self.multistatus([Response(path, forbidden=list(values))])
        await self.multistatus([Response(path, found=[element(tag) for tag in values])])

    async def report(self, kind: Kind, store: ObjectStore, collection: DavCollection) -> None:
        root = parse(await self.exchange.body())
        if root is None:
            raise DavError(400, b"A REPORT needs a body.")
        how, wanted = requested_props(root)
        if root.tag == name(DAV, "sync-collection"):
            return await self.sync_collection(kind, store, collection, root, how, wanted)
        if root.tag == name(kind.namespace, kind.multiget):
            hrefs = [self._own_href(kind, collection, str(node.text or ""))
                     for node in root.iter(name(DAV, "href"))]
            wanted_hrefs = [h for h in hrefs if h is not None]
            found = {o.href: o for o in await store.fetch(self.user_id, collection.key, wanted_hrefs,
                                                          base_url=self.exchange.base_url)}
            responses = []
            for node in root.iter(name(DAV, "href")):
                given = self._own_href(kind, collection, str(node.text or ""))
                obj = found.get(given) if given is not None else None
                if obj is None:
                    responses.append(Response(str(node.text or "").strip(), status=404))
                else:
                    responses.append(await self._object_response(kind, collection, obj, how, wanted, root))
            return await self.multistatus(responses)
        if root.tag == name(kind.namespace, kind.query):
            return await self.query(kind, store, collection, root, how, wanted)
        raise precondition(403, "supported-report", DAV, "This report is not supported here.")

    async def query(self, kind: Kind, store: ObjectStore, collection: DavCollection, root: etree._Element,
                    how: str, wanted: Sequence[str]) -> None:
        try:
            plan = filters.plan(kind is CALENDARS, root)
        except filters.FilterError as error:
            raise precondition(403, "supported-filter", kind.namespace, str(error)) from None
        if plan.nothing:
            return await self.multistatus([])
        if kind is CALENDARS and isinstance(store, CalendarHome):
            entries = await store.query(self.user_id, collection.key, plan.start, plan.end)
        else:
            entries = await store.listing(self.user_id, collection.key)
        if plan.needs_data:
            objects = await store.fetch(self.user_id, collection.key, [e.href for e in entries],
                                        base_url=self.exchange.base_url)
            kept = {o.href for o in objects if plan.matches(o.data)}
            entries = [e for e in entries if e.href in kept]
        await self.multistatus(await self._object_responses(kind, store, collection, entries, how, wanted, root))

    async def sync_collection(self, kind: Kind, store: ObjectStore, collection: DavCollection, root: etree._Element,
                              how: str, wanted: Sequence[str]) -> None:
        """RFC 6578: the objects changed since the token, and a 404 response for each one removed."""
        token_node = root.find(name(DAV, "sync-token"))
        level = root.findtext(name(DAV, "sync-level"), default="1").strip()
        if level not in ("1", "infinite", "infinity"):
            raise DavError(400, b"sync-level must be 1.")
        try:
            since = _parse_token(str(token_node.text or "") if token_node is not None else "", collection)
            changes = await store.changes(self.user_id, collection.key, since)
        except InvalidSyncTokenError as error:
            raise precondition(403, "valid-sync-token", DAV, str(error)) from None
        responses = await self._object_responses(kind, store, collection, list(changes.changed), how, wanted, root)
        prefix = self.collection_path(kind, collection)
        responses += [Response(prefix + quote(gone), status=404) for gone in changes.removed]
        await self.multistatus(responses, sync_token=sync_token(collection, changes.sequence))

    # --- objects ---------------------------------------------------------------------------------------------

    def _own_href(self, kind: Kind, collection: DavCollection, given: str) -> str | None:
        """The object name a request's href names inside this collection, or None for anything else."""
        path = unquote(urlsplit(given.strip()).path)
        prefix = self.collection_path(kind, collection)
        if not path.startswith(unquote(prefix)):
            return None
        rest = path[len(unquote(prefix)):]
        return rest if rest and "/" not in rest else None

    async def _object_responses(self, kind: Kind, store: ObjectStore, collection: DavCollection,
                                entries: Sequence[DavEntry], how: str, wanted: Sequence[str],
                                root: etree._Element | None = None) -> list[Response]:
        data_name = name(kind.namespace, kind.data_prop)
        if data_name in wanted and entries:
            objects = await store.fetch(self.user_id, collection.key, [e.href for e in entries],
                                        base_url=self.exchange.base_url)
            return [await self._object_response(kind, collection, o, how, wanted, root) for o in objects]
        prefix = self.collection_path(kind, collection)
        return [await self._props(prefix + quote(e.href), self._entry_props(kind, e), how, wanted) for e in entries]

    def _entry_props(self, kind: Kind, entry: DavEntry) -> dict[str, Callable[[], etree._Element]]:
        return {
            name(DAV, "getetag"): lambda: element(name(DAV, "getetag"), entry.etag),
            name(DAV, "getcontenttype"): lambda: element(name(DAV, "getcontenttype"), kind.content_type),
            name(DAV, "resourcetype"): lambda: element(name(DAV, "resourcetype")),
        }

    async def _object_response(self, kind: Kind, collection: DavCollection, obj: DavObject, how: str,
                               wanted: Sequence[str], root: etree._Element | None) -> Response:
        props = self._entry_props(kind, DavEntry(obj.href, obj.etag))
        props[name(DAV, "getcontentlength")] = lambda: element(name(DAV, "getcontentlength"), str(len(obj.data)))
        data = obj.data
        expand = filters.expansion(root) if root is not None and kind is CALENDARS else None
        if expand is not None:
            store = home_store(self.services, kind)
            if isinstance(store, CalendarHome):
                data = await store.expanded(self.user_id, collection.key, obj.href, *expand) or data
        props[name(kind.namespace, kind.data_prop)] = lambda: element(name(kind.namespace, kind.data_prop),
                                                                      data.decode("utf-8"))
        return await self._props(self.collection_path(kind, collection) + quote(obj.href), props, how, wanted)

    async def object(self, kind: Kind, store: ObjectStore, collection: DavCollection, object_name: str) -> None:
        exchange = self.exchange
        method = exchange.method
        if method in ("GET", "HEAD", "PROPFIND"):
            found = await store.fetch(self.user_id, collection.key, [object_name], base_url=exchange.base_url)
            if not found:
                raise DavError(404, b"No such object.")
            obj = found[0]
            if method == "PROPFIND":
                props = self._entry_props(kind, DavEntry(obj.href, obj.etag))
                return await self.multistatus([await self._props(exchange.path, props)])
            if exchange.header("if-none-match") in (obj.etag, "*"):
                return await exchange.answer(304, headers={"ETag": obj.etag})
            return await exchange.answer(200, obj.data, content_type=kind.content_type, headers={"ETag": obj.etag})
        if method == "PUT":
            if not collection.writable:
                raise precondition(403, "need-privileges", DAV, "This collection is filled by plmail.")
            body = await exchange.body()
            none_match = (exchange.header("if-none-match") or "").strip()
            written = await store.put(self.user_id, collection.key, object_name, body,
                                      if_match=exchange.header("if-match"), if_none_match=none_match == "*")
            # The ETag, because the bytes sent are what a GET answers until the object changes (RFC 4791 §5.3.4).
            return await exchange.answer(201 if written.created else 204, headers={"ETag": written.etag})
        if method == "DELETE":
            await store.delete(self.user_id, collection.key, object_name, if_match=exchange.header("if-match"))
            return await exchange.answer(204)
        raise DavError(405, headers={"Allow": "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND"})

    # --- answering ------------------------------------------------------------------------------------------

    async def _props(self, path: str, props: dict[str, Callable[[], etree._Element]], how: str | None = None,
                     wanted: Sequence[str] | None = None) -> Response:
        if how is None:
            how, wanted = requested_props(parse(await self.exchange.body()) if self.exchange.method == "PROPFIND"
                                          else None)
        response = Response(path)
        if how == "propname":
            response.found = [element(key) for key in props]
        elif how == "allprop":
            response.found = [make() for key, make in props.items() if not key.endswith(("calendar-data}",
                                                                                         "address-data}"))]
        else:
            for key in wanted or ():
                make = props.get(key)
                if make is None:
                    response.missing.append(key)
                else:
                    response.found.append(make())
        return response

    async def multistatus(self, responses: Sequence[Response], *, sync_token: str | None = None) -> None:
        await self.exchange.answer(207, multistatus(responses, sync_token=sync_token),
                                   content_type="application/xml; charset=utf-8")


def _privileges(names: Sequence[str]) -> etree._Element:
    node = element(name(DAV, "current-user-privilege-set"))
    for privilege in names:
        node.append(element(name(DAV, "privilege"), None, element(name(DAV, privilege))))
    return node


def _reports(reports: Sequence[tuple[str, str]]) -> etree._Element:
    node = element(name(DAV, "supported-report-set"))
    for namespace, local in reports:
        node.append(element(name(DAV, "supported-report"), None,
                            element(name(DAV, "report"), None, element(name(namespace, local)))))
    return node


def _comp(component: str) -> etree._Element:
    node = element(name(CALDAV, "comp"))
    node.set("name", component)
    return node


def _data_type(namespace: str, local: str, content_type: str, version: str) -> etree._Element:
    node = element(name(namespace, local))
    node.set("content-type", content_type)
    node.set("version", version)
    return node


async def _authenticate(exchange: Exchange, services: Services) -> Principal:
    client = exchange.request.client.host if exchange.request.client else "unknown"
    try:
        return await services.app_passwords.authenticate(exchange.header("authorization"), client=client)
    except LoginThrottledError as exc:
        raise DavError(429, b"Too many failed attempts.", headers={"Retry-After": str(exc.retry_after)}) from None
    except AuthenticationError:
        raise DavError(401, b"Sign in with your address and an app password.",
                       headers={"WWW-Authenticate": REALM}) from None


async def _serve(scope: Scope, receive: Receive, send: Send) -> None:
    exchange = Exchange(scope, receive, send)
    try:
        if exchange.method == "OPTIONS":
            return await exchange.answer(200, headers={"Allow": ALLOW})
        services = services_from(exchange.request)
        principal = await _authenticate(exchange, services)
        await Dav(exchange, services, principal).handle()
    except DavError as error:
        await exchange.answer(error.status, error.body, content_type=error.content_type, headers=error.headers)
    except filters.FilterError as error:
        await exchange.answer(400, str(error).encode(), content_type="text/plain; charset=utf-8")
    except XmlError as error:
        await exchange.answer(400, str(error).encode(), content_type="text/plain; charset=utf-8")
    except PreconditionFailedError as error:
        await exchange.answer(412, str(error).encode(), content_type="text/plain; charset=utf-8")
    except DavRefusalError as error:
        await exchange.answer(403, error_body(error.condition, error.namespace, str(error)),
                              content_type="application/xml; charset=utf-8")
    except NotFoundError as error:
        await exchange.answer(404, str(error).encode(), content_type="text/plain; charset=utf-8")
    except ValidationError as error:
        await exchange.answer(400, str(error).encode(), content_type="text/plain; charset=utf-8")
    except Exception:
        log.exception("DAV %s %s failed", exchange.method, exchange.path)
        raise


# A mount, because WebDAV's methods (PROPFIND, REPORT) reach only ASGI handlers without path parameters. The mount
# rewrites scope["path"], so the handler reads raw_path, and says by its opts what the path-based exemptions of the
# pages would have said: no session, no CSRF token, no sign-in (every request carries an app password instead).
_OPTS = {"exclude_from_csrf": True, "skip_session": True, "authenticates_itself": True}


@asgi(ROOT.rstrip("/"), is_mount=True, copy_scope=True, opt=_OPTS)
async def dav_mount(scope: Scope, receive: Receive, send: Send) -> None:
    await _serve(scope, receive, send)


def _well_known(target: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    async def redirect(scope: Scope, receive: Receive, send: Send) -> None:
        """RFC 6764 §5: the well-known URI redirects to the context path, for any method a client tries."""
        start: HTTPResponseStartEvent = {"type": "http.response.start", "status": 301,
                                         "headers": [(b"location", target.encode()), (b"content-length", b"0")]}
        end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(start)
        await send(end)

    return redirect


caldav_well_known = asgi("/.well-known/caldav", copy_scope=True, opt=_OPTS)(_well_known(ROOT))
carddav_well_known = asgi("/.well-known/carddav", copy_scope=True, opt=_OPTS)(_well_known(ROOT))
DAV_ROUTES = [dav_mount, caldav_well_known, carddav_well_known]

