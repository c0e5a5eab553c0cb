"""HTML as the plain text a mail reader expects, keeping its line structure: every block (`div`, `p`, `li`, `tr`,
headings, ...) and every `br` ends a line, a block holding only `&nbsp;` (Outlook's empty paragraph) or only a `br`
(Gmail's and Apple Mail's `<div><br></div>`) is an empty line, `blockquote` lines are prefixed with "> ", list
items are marked. Parsed with lxml's HTML parser (libxml2), which copes with the tag soup real clients send.
"""

from __future__ import annotations

import re
from typing import Any

import lxml.etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]

_SKIPPED = frozenset({"script", "style", "head", "title", "template", "noscript", "xml"})
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "center", "dd", "details", "dir", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main",
    "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "thead", "tfoot", "tr", "ul",
    "caption", "body", "html",
})
_CELLS = frozenset({"td", "th"})
_COLLAPSIBLE = re.compile(r"[ \t\r\n\f\v]+")  # HTML's white space; no-break spaces are text
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # what str.splitlines() would split on
_SIGNATURE_SEPARATOR = "-- "  # RFC 3676 §4.3: its trailing space is part of it


class _Writer:
    def __init__(self, *, links: bool) -> None:
        self.links = links
        self.lines: list[tuple[int, str]] = []  # (quote depth, text)
        self.current: list[str] = []
        self.depth = 0
        self.pre = 0
        self.lists: list[list[int]] = []  # per open list: [counter], -1 for bullets
        self.anchors: list[str | None] = []

    def add(self, text: str | None) -> None:
        if not text:
            return
        if self.pre:
            first, *rest = text.replace("\r\n", "\n").split("\n")
            self.current.append(first)
            for line in rest:
                self.flush(empty_too=True)
                self.current.append(line)
            return
        self.current.append(_COLLAPSIBLE.sub(" ", text))

    def flush(self, *, empty_too: bool = False) -> None:
        raw = "".join(self.current)
        self.current = []
        line = raw if self.pre else raw.strip(" ")
        if line.replace("\xa0", " ").strip() == "":
            # Only a br, or a block of no-break spaces, asks for an empty line; white space between tags does not.
            if empty_too or "\xa0" in line:
                self.lines.append((self.depth, ""))
            return
        line = _OTHER_BREAKS.sub(" ", line.replace("\xa0", " ")).rstrip()
        if line == "--" and raw.replace("\xa0", " ").lstrip(" ").startswith(_SIGNATURE_SEPARATOR):
            line = _SIGNATURE_SEPARATOR
        self.lines.append((self.depth, line))

    def start(self, element: Any) -> None:
        tag = element.tag
        if tag == "br":
            self.flush(empty_too=True)
            return
        if tag in _BLOCKS:
            self.flush()
        if tag == "blockquote":
            self.depth += 1
        elif tag == "pre":
            self.pre += 1
        elif tag == "ul":
            self.lists.append([-1])
        elif tag == "ol":
            self.lists.append([0])
        elif tag == "li":
            marker = "- "
            if self.lists and self.lists[-1][0] >= 0:
                self.lists[-1][0] += 1
                marker = f"{self.lists[-1][0]}. "
            self.current.append("  " * max(len(self.lists) - 1, 0) + marker)
        elif tag == "a":
            self.anchors.append(element.get("href"))
        self.add(element.text)

    def end(self, element: Any) -> None:
        tag = element.tag
        if tag == "a" and self.anchors:
            href = "".join((self.anchors.pop() or "").split())  # a URL has no white space; a wrapped href had
            shown = "".join(self.current)
            target = href.removeprefix("mailto:")
            if self.links and href.startswith(("http:", "https:", "mailto:")) and target not in shown:
                self.current.append(f" <{target}>")
        elif tag in _CELLS:
            self.current.append(" ")
        elif tag in _BLOCKS:
            self.flush()
            if tag == "blockquote":
                self.depth = max(self.depth - 1, 0)
            elif tag == "pre":
                self.pre = max(self.pre - 1, 0)
            elif tag in ("ul", "ol") and self.lists:
                self.lists.pop()

    def text(self) -> str:
        self.flush()
        kept: list[tuple[int, str]] = []
        for depth, line in self.lines:
            if not line and (not kept or not kept[-1][1] or kept[-1][0] < depth):
                continue  # one empty line between paragraphs is enough; none opens the text or a quote
            if line and kept and not kept[-1][1] and kept[-1][0] > depth:
                kept.pop()  # nor closes a quote
            kept.append((depth, line))
        while kept and not kept[-1][1]:
            kept.pop()
        return "\n".join(("> " * depth + line if line else ">" * depth) if depth else line for depth, line in kept)


def html_to_text(markup: str, *, links: bool = False) -> str:
    """The text of `markup`, line by line; `links` follows each link by its address where the text does not
    show it (for a text/plain alternative; search and previews leave it off)."""
    if not markup or not markup.strip():
        return ""
    try:
        root = lxml.html.document_fromstring(markup)
    except (lxml.etree.ParserError, ValueError):
        return ""
    writer = _Writer(links=links)
    skipping = 0
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = element.tag
        if not isinstance(tag, str):  # a comment or processing instruction: only its tail is text
            if event == "end" and not skipping:
                writer.add(element.tail)
            continue
        tag = tag.lower().rpartition(":")[2] if ":" in tag else tag.lower()
        if tag in _SKIPPED:
            skipping += 1 if event == "start" else -1
            if event == "end" and not skipping:
                writer.add(element.tail)
            continue
        if skipping:
            continue
        if event == "start":
            writer.start(_Named(element, tag))
        else:
            writer.end(_Named(element, tag))
            writer.add(element.tail)
    return writer.text()


class _Named:
    """An element with its tag lowered and any namespace prefix (Outlook's `o:p`) dropped."""

    __slots__ = ("element", "tag", "text")

    def __init__(self, element: Any, tag: str) -> None:
        self.element = element
        self.tag = tag
        self.text = element.text

    def get(self, name: str) -> str | None:
        value = self.element.get(name)
        return value if isinstance(value, str) else None


# The rich editor (Trix) parses only blockquote, h1, pre and lists as blocks. Any other block inside a quote joins
# the quote's one block, and a `br` that ends a block or comes before one is dropped: Outlook's paragraphs, Gmail's
# divs and table rows would run into one line. A `br` inside inline content is a line break it keeps.
_EDITOR_BLOCKS = frozenset({"blockquote", "h1", "pre", "ul", "ol", "li"})
_TABLES = frozenset({"table", "tbody", "thead", "tfoot"})
_LINE_BLOCKS = (_BLOCKS | _CELLS) - _EDITOR_BLOCKS - _TABLES - {"html", "body"}


def _ends_in_a_break(element: Any) -> bool:
    if len(element) == 0:
        return False
    last = element[-1]
    tag = last.tag.lower() if isinstance(last.tag, str) else ""
    if (last.tail or "").strip():
        return False
    if tag in _CELLS:
        return _ends_in_a_break(last)
    return tag == "br" or tag in _LINE_BLOCKS or tag in _EDITOR_BLOCKS


def _followed_by_editor_block(element: Any, root: Any) -> bool:
    """Whether the editor starts a block right after `element` (its own line end would add an empty line)."""
    while element is not root and not (element.tail or "").strip():
        following = element.getnext()
        if following is not None:
            return isinstance(following.tag, str) and following.tag.lower() in _EDITOR_BLOCKS
        element = element.getparent()
    return False


def editor_markup(markup: str) -> str:
    """`markup` as the rich editor keeps it line by line: each block it does not parse as one becomes inline
    content ending in a `br`, and a table's cells run inline (a row is a line, as in the text rendering)."""
    if not markup or not markup.strip():
        return markup
    try:
        root = lxml.html.fragment_fromstring(markup, create_parent="div")
    except (lxml.etree.ParserError, ValueError):
        return markup
    for element in list(root.iter()):  # parents before children: a parent sees its children's own tags
        if element is root or not isinstance(element.tag, str):
            continue
        tag = element.tag.lower()
        if tag in _CELLS:
            element.tag = "span"
            element.tail = " " + (element.tail or "")
            continue
        if tag in _TABLES:  # a row of spans in a table would be moved out of it by the browser's parser
            element.tag = "span"
            continue
        if tag not in _LINE_BLOCKS:
            continue
        content = element.text_content()
        ends = _ends_in_a_break(element)
        element.tag = "span"
        if ends or _followed_by_editor_block(element, root):
            continue
        if content.strip(" \t\r\n") or "\xa0" in content:  # white space between tags is no line
            lxml.etree.SubElement(element, "br")
    return (root.text or "") + "".join(lxml.html.tostring(child, encoding="unicode") for child in root)
