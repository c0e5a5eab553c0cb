"""schema.org items out of raw HTML: JSON-LD, microdata and RDFa, read separately and block by block.

extruct raises on the first broken JSON-LD block by default, and ``errors="ignore"`` drops the
whole syntax instead; either way one sloppy template would cost every other block. So the HTML
is parsed once, each ``<script type="application/ld+json">`` is read on its own, and microdata
and RDFa each have their own guard: a broken block costs that block.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

import lxml.etree  # type: ignore[import-untyped]

log = logging.getLogger(__name__)

MAX_HTML_CHARS = 16_000_000
MAX_BLOCKS = 50
MAX_BLOCK_CHARS = 8_000_000
_JSON_LD_SCRIPTS = lxml.etree.XPath(
    "//script[translate(normalize-space(@type), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    " = 'application/ld+json']"
)
_ITEMSCOPES = lxml.etree.XPath("//*[@itemscope]")
_DATETIME_PROPERTIES = lxml.etree.XPath("//*[@property][@datetime][not(@content)]")
MAX_ITEMSCOPES = 400
# RDFa is parsed again by pyRdfa, so it is read only where an element types itself (and not past this size).
_TYPED = lxml.etree.XPath("//*[@typeof]")
MAX_RDFA_CHARS = 500_000  # pyRdfa takes about a second for this much
MAX_RDFA_NODES = 2_000
_RDFA_DEPTH = 8
# libxml2 drops everything after </html>, where list footers and sloppy templates put markup.
_DOCUMENT_END = re.compile(r"</(?:html|body)\s*>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class MarkupItems:
    """Top-level items per syntax, and one line per block or syntax that could not be read."""

    json_ld: tuple[object, ...]
    microdata: tuple[object, ...]
    errors: tuple[str, ...]
    rdfa: tuple[object, ...] = ()


def read_markup(html: str) -> MarkupItems:
    # extruct is imported here, not at the top: it brings rdflib, html5lib, BeautifulSoup and mf2py, a fifth of a
    # second at every start of plmail (each command, each serve), and only mail that carries HTML needs it.
    from extruct.utils import parse_html

    if len(html) > MAX_HTML_CHARS:
        return MarkupItems((), (), (f"HTML of {len(html)} characters not read",))
    errors: list[str] = []
    try:
        tree = parse_html(_DOCUMENT_END.sub("", html).encode("utf-8", "replace"), encoding="utf-8")
    except (ValueError, lxml.etree.LxmlError, RecursionError) as error:
        return MarkupItems((), (), (f"HTML unparsable: {type(error).__name__}",))
    if tree is None:
        return MarkupItems((), (), ())
    json_ld = _json_ld(tree, errors)
    microdata = _microdata(tree, errors)
    rdfa = _rdfa(tree, errors) if _typed(tree) else []
    return MarkupItems(tuple(json_ld), tuple(microdata), tuple(errors), tuple(rdfa))


def _json_ld(tree: object, errors: list[str]) -> list[object]:
    from extruct.jsonld import JsonLdExtractor

    items: list[object] = []
    reader = JsonLdExtractor()
    try:
        scripts = _JSON_LD_SCRIPTS(tree)
    except (lxml.etree.LxmlError, RecursionError) as error:
        errors.append(f"JSON-LD scripts not found: {type(error).__name__}")
        return items
    for index, script in enumerate(scripts if isinstance(scripts, list) else []):
        if index >= MAX_BLOCKS:
            errors.append(f"JSON-LD blocks after the first {MAX_BLOCKS} not read")
            break
        try:
            source = script.xpath("string()")
            if isinstance(source, str) and len(source) > MAX_BLOCK_CHARS:
                errors.append(f"JSON-LD block {index} too large")
                continue
            # extract_items looks at descendant-or-self, so handing it the script reads that block alone.
            items.extend(reader.extract_items(script))
        except Exception as error:  # json, jstyleson and lxml each raise their own kinds on hostile input
            errors.append(f"JSON-LD block {index} unreadable: {type(error).__name__}")
    return items


def _microdata(tree: object, errors: list[str]) -> list[object]:
    import extruct

    try:
        scopes = _ITEMSCOPES(tree)
        if not scopes:
            return []
        if len(scopes) > MAX_ITEMSCOPES:
            # extruct spends a fraction of a millisecond per item; past the cap the rest is not read.
            errors.append(f"microdata items after the first {MAX_ITEMSCOPES} not read")
            for element in scopes[MAX_ITEMSCOPES:]:
                parent = element.getparent()
                if parent is not None:
                    parent.remove(element)
        found = extruct.extract(tree, syntaxes=["microdata"], uniform=True, return_html_node=True, errors="strict")
    except Exception as error:  # a microdata parser bug on hostile input costs microdata, not JSON-LD
        errors.append(f"microdata unreadable: {type(error).__name__}")
        return []
    items = found.get("microdata", []) if isinstance(found, Mapping) else []
    return _reattached([item for item in items if isinstance(item, dict)]) if isinstance(items, list) else []


def _reattached(items: list[dict[str, object]]) -> list[object]:
    """Top-level items with orphaned properties put back where their markup said they belong.

    An HTML parser closes ``<p itemscope>`` at the first ``<div>`` inside it (Google's own Gmail
    markup sample does this), which leaves ``<div itemprop="reservationFor" itemscope>`` outside
    its item. The element still names the property it is, so it rejoins the item before it.
    """
    merged: list[dict[str, object]] = []
    for item in items:
        node = item.get("htmlNode")
        prop = node.get("itemprop") if hasattr(node, "get") else None
        name = prop.split()[0] if isinstance(prop, str) and prop.split() else None
        if name and merged and name not in merged[-1]:
            merged[-1][name] = item
        else:
            merged.append(item)
    for item in merged:
        _drop_nodes(item)
    return list(merged)


def _drop_nodes(root: dict[str, object]) -> None:
    """Remove extruct's ``htmlNode`` references (lxml elements are not data) from every level."""
    stack: list[object] = [root]
    visits = 0
    while stack and visits < 100_000:
        item = stack.pop()
        visits += 1
        if isinstance(item, dict):
            item.pop("htmlNode", None)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _typed(tree: object) -> bool:
    try:
        return bool(_TYPED(tree))
    except (lxml.etree.LxmlError, RecursionError):
        return False


def _rdfa(tree: object, errors: list[str]) -> list[object]:
    """RDFa as the nested objects JSON-LD would have written.

    pyRdfa answers a flat graph: every node once, full IRIs as keys, each value a list, a nested object
    only as a reference by ``@id``. The items are its roots (nodes nothing refers to), with references
    put back in place up to a bounded depth, so the schema.org mappers read all three syntaxes alike.
    HTML+RDFa reads a ``<time datetime>`` as the value, which pyRdfa does not, so it is copied to content.
    Runs last: it changes the parsed tree.
    """
    import extruct

    try:
        for element in _DATETIME_PROPERTIES(tree):
            element.set("content", element.get("datetime"))
        html = lxml.etree.tostring(tree, encoding=str, method="html")
    except (lxml.etree.LxmlError, RecursionError, ValueError) as error:
        errors.append(f"RDFa unreadable: {type(error).__name__}")
        return []
    if len(html) > MAX_RDFA_CHARS:
        errors.append(f"RDFa not read in HTML of {len(html)} characters")
        return []
    try:
        found = extruct.extract(html, syntaxes=["rdfa"], errors="strict")
    except Exception as error:  # pyRdfa and rdflib raise their own kinds on hostile input
        errors.append(f"RDFa unreadable: {type(error).__name__}")
        return []
    graph = found.get("rdfa", []) if isinstance(found, Mapping) else []
    nodes = [node for node in graph[:MAX_RDFA_NODES] if isinstance(node, dict)] if isinstance(graph, list) else []
    by_id = {node["@id"]: node for node in nodes if isinstance(node.get("@id"), str)}
    referenced = {
        value["@id"]
        for node in nodes for values in node.values() if isinstance(values, list)
        for value in values if isinstance(value, dict) and isinstance(value.get("@id"), str)
    }
    roots = [node for node in nodes if node.get("@type") and node.get("@id") not in referenced]
    budget = [MAX_RDFA_NODES * 4]  # shared references are copied where they are used, so the copy is capped
    return [_compacted(node, by_id, 0, budget) for node in roots]


def _compacted(
    node: Mapping[str, object], by_id: Mapping[str, dict[str, object]], depth: int, budget: list[int]
) -> dict[str, object]:
    budget[0] -= 1
    item: dict[str, object] = {}
    if budget[0] < 0:
        return item
    for key, values in node.items():
        if key == "@id":
            continue
        if key == "@type":
            item["@type"] = values
            continue
        name = key.rsplit("/", 1)[-1].rsplit("#", 1)[-1]
        if not isinstance(values, list) or not name:
            continue
        shaped: list[object] = []
        for value in values[:20]:
            target = by_id.get(value["@id"]) if isinstance(value, dict) and isinstance(value.get("@id"), str) else None
            if target is not None and depth < _RDFA_DEPTH:
                shaped.append(_compacted(target, by_id, depth + 1, budget))
            elif isinstance(value, dict) and "@value" in value:
                shaped.append(value["@value"])
            elif isinstance(value, dict) and isinstance(value.get("@id"), str):
                shaped.append(value["@id"])
        if shaped:
            item[name] = shaped[0] if len(shaped) == 1 else shaped
    return item
