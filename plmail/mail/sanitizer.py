"""The sanitised copy of a message's HTML: the only HTML plmail ever renders.

The raw `body_html` is kept untouched next to it on purpose: the booking extractor reads the
`<script type="application/ld+json">` block that sanitising rightly removes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import nh3

_TAGS = set(nh3.ALLOWED_TAGS) | {"font", "tfoot", "center"}
_GENERIC = {"style", "dir", "lang", "title", "align", "valign", "bgcolor", "width", "height", "border"}
_ATTRIBUTES: dict[str, set[str]] = {tag: set(nh3.ALLOWED_ATTRIBUTES.get(tag, set())) | _GENERIC for tag in _TAGS}
_ATTRIBUTES["img"] |= {"src", "alt", "width", "height", "align", "border", "hspace", "vspace"}
_ATTRIBUTES["a"] |= {"href", "name"}
_ATTRIBUTES["font"] |= {"color", "face", "size"}
_ATTRIBUTES["table"] |= {"cellpadding", "cellspacing", "background"}
_ATTRIBUTES["td"] |= {"background", "nowrap"}
_ATTRIBUTES["th"] |= {"background", "nowrap"}
_ATTRIBUTES["blockquote"] |= {"type"}  # type="cite": a quoted message, as Thunderbird and Apple Mail mark it
# Layout and typography only: nothing that can take a url() and fetch from the network.
_STYLE_PROPERTIES = {
    "color", "background-color", "font", "font-family", "font-size", "font-style", "font-weight", "font-variant",
    "text-align", "text-decoration", "text-indent", "text-transform", "letter-spacing", "word-spacing",
    "line-height", "white-space", "vertical-align", "direction", "margin", "margin-top", "margin-right",
    "margin-bottom", "margin-left", "padding", "padding-top", "padding-right", "padding-bottom", "padding-left",
    "border", "border-top", "border-right", "border-bottom", "border-left", "border-color", "border-style",
    "border-width", "border-collapse", "border-spacing", "border-radius", "width", "min-width", "max-width",
    "height", "min-height", "max-height", "display", "float", "clear", "table-layout", "list-style-type",
    "overflow", "word-break", "overflow-wrap",
}
_URL_SCHEMES = {"http", "https", "mailto", "tel", "cid", "data"}
_IMAGE_ATTRIBUTES = {("img", "src"), ("table", "background"), ("td", "background"), ("th", "background")}


@dataclass(frozen=True, slots=True)
class SanitizedHtml:
    html: str
    remote_images_blocked: int


def cid_url(message_id: int, content_id: str) -> str:
    return f"/message/{message_id}/cid/{quote(content_id, safe='')}"


def sanitize_html(markup: str, *, message_id: int, allow_remote_images: bool = False) -> SanitizedHtml:
    """Scripts, style blocks, forms, frames, event handlers and `javascript:` go; `cid:` points at our
    part URLs; remote images are dropped unless the reader allowed them for this message or sender."""
    blocked = 0

    def image(value: str) -> str | None:
        nonlocal blocked
        lowered = value.strip().lower()
        if lowered.startswith("cid:"):
            return cid_url(message_id, value.strip()[4:].strip("<>"))
        if lowered.startswith(("http:", "https:", "//")):
            if allow_remote_images:
                return value
            blocked += 1
            return None
        return value if lowered.startswith("data:image/") else None

    cleaned = _clean(markup, image)
    return SanitizedHtml(html=cleaned, remote_images_blocked=blocked)


def sanitize_outgoing(markup: str, *, remote_images: bool = False, allowed_images: frozenset[str] = frozenset()
                      ) -> str:
    """HTML that plmail sends (a composed body, a quoted or forwarded original): the same cleaning, with `cid:`
    kept for the parts that travel along, and no remote loads unless the writer put the image there
    (`remote_images`, or one of `allowed_images`, such as the logo of the writer's own signature)."""

    def image(value: str) -> str | None:
        lowered = value.strip().lower()
        if lowered.startswith(("cid:", "data:image/")):
            return value.strip()
        if lowered.startswith(("https:", "http:")) and (remote_images or value.strip() in allowed_images):
            return value
        return None

    return _clean(markup, image)


def _clean(markup: str, image: Callable[[str], str | None]) -> str:
    def keep(tag: str, attribute: str, value: str) -> str | None:
        if (tag, attribute) in _IMAGE_ATTRIBUTES:
            return image(value)
        if attribute == "href" and value.strip().lower().startswith(("data:", "cid:")):
            return None  # a data: link is a page we did not sanitise
        return value

    filter_attribute: Callable[[str, str, str], str | None] = keep
    return nh3.clean(
        markup,
        tags=_TAGS,
        clean_content_tags={"script", "style", "title", "noscript", "template"},
        attributes=_ATTRIBUTES,
        attribute_filter=filter_attribute,
        link_rel="noopener noreferrer nofollow",
        url_schemes=_URL_SCHEMES,
        filter_style_properties=_STYLE_PROPERTIES,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )
