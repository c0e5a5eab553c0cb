"""WebDAV's XML: a parser that resolves no entity and reaches no network, names in Clark notation, and the
multistatus body (RFC 4918 §13) every PROPFIND and REPORT answers with."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lxml import etree  # type: ignore[import-untyped]

DAV = "DAV:"
CALDAV = "urn:ietf:params:xml:ns:caldav"
CARDDAV = "urn:ietf:params:xml:ns:carddav"
CALENDARSERVER = "http://calendarserver.org/ns/"
APPLE_ICAL = "http://apple.com/ns/ical/"
NSMAP = {"d": DAV, "cal": CALDAV, "card": CARDDAV, "cs": CALENDARSERVER, "ical": APPLE_ICAL}

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                          remove_blank_text=True)


class XmlError(ValueError):
    """A request body that is not the XML it should be: 400."""


def name(namespace: str, local: str) -> str:
    return f"{{{namespace}}}{local}"


def parse(body: bytes) -> etree._Element | None:
    """The request's root element, None for an empty body; XmlError for anything else that is not XML."""
    if not body.strip():
        return None
    try:
        root = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError as error:
        raise XmlError(f"The request body is not XML: {error}") from None
    if root.getroottree().docinfo.doctype:
        raise XmlError("A DOCTYPE is not accepted.")
    return root


def element(tag: str, text: str | None = None, *children: etree._Element, root: bool = False) -> etree._Element:
    """A node; only a document's root declares the prefixes (a declaration on every node makes lxml reconcile
    namespaces at each append, which cost seconds for a 5,000-object multistatus)."""
    node = etree.Element(tag, nsmap=NSMAP) if root else etree.Element(tag)
    if text is not None:
        node.text = text
    for child in children:
        node.append(child)
    return node


def href(path: str) -> etree._Element:
    return element(name(DAV, "href"), path)


@dataclass(slots=True)
class Response:
    """One ``DAV:response``: a resource's properties by status, or a status for the whole resource."""

    path: str
    found: list[etree._Element] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # property names, 404
    forbidden: list[str] = field(default_factory=list)  # property names, 403
    failed: list[str] = field(default_factory=list)  # property names, 424: not set because another one was not
    status: int | None = None  # a bare status instead of propstats (404 for a gone object in sync-collection)


_REASONS = {200: "OK", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 424: "Failed Dependency",
            507: "Insufficient Storage"}


def status_line(code: int) -> str:
    return f"HTTP/1.1 {code} {_REASONS.get(code, '')}".rstrip()


def multistatus(responses: Iterable[Response], *, sync_token: str | None = None) -> bytes:
    """Built in place under the root (SubElement), which is what keeps a 5,000-object answer cheap."""
    root = element(name(DAV, "multistatus"), root=True)
    sub = etree.SubElement
    for response in responses:
        node = sub(root, name(DAV, "response"))
        sub(node, name(DAV, "href")).text = response.path
        if response.status is not None:
            sub(node, name(DAV, "status")).text = status_line(response.status)
            continue
        groups = ((200, response.found), (404, [etree.Element(tag) for tag in response.missing]),
                  (403, [etree.Element(tag) for tag in response.forbidden]),
                  (424, [etree.Element(tag) for tag in response.failed]))
        for code, props in groups:
            if props or (code == 200 and not (response.missing or response.forbidden or response.failed)):
                propstat = sub(node, name(DAV, "propstat"))
                sub(propstat, name(DAV, "prop")).extend(props)
                sub(propstat, name(DAV, "status")).text = status_line(code)
    if sync_token is not None:
        sub(root, name(DAV, "sync-token")).text = sync_token
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))


def error_body(condition: str, namespace: str, message: str) -> bytes:
    """A precondition's body (RFC 4918 §16): the named element, and the reason for a person reading logs."""
    root = element(name(DAV, "error"), None, element(name(namespace, condition)), root=True)
    root.append(element(name("http://plmail.org/ns/", "message"), message))
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))


def requested_props(root: etree._Element | None) -> tuple[str, Sequence[str]]:
    """What a PROPFIND (or a REPORT's ``prop``) asks: ``("allprop", ())``, ``("propname", ())`` or
    ``("prop", names)``. An empty body is allprop (RFC 4918 §9.1)."""
    if root is None:
        return "allprop", ()
    for child in root:
        if child.tag == name(DAV, "prop"):
            return "prop", [str(p.tag) for p in child if isinstance(p.tag, str)]
        if child.tag == name(DAV, "propname"):
            return "propname", ()
        if child.tag == name(DAV, "allprop"):
            return "allprop", ()
    if root.tag == name(DAV, "prop"):
        return "prop", [str(p.tag) for p in root if isinstance(p.tag, str)]
    return "allprop", ()
