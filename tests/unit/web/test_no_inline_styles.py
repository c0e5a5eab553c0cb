"""Templates carry no inline styles (issue 32): the look lives in the stylesheets, and the Content-Security-Policy
allows no style attribute or <style> element anyway (a page would render unstyled where it relied on one)."""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).parents[3] / "plmail" / "templates"
INLINE = re.compile(r"""\sstyle\s*=|<style[\s>]""", re.IGNORECASE)
# A sandboxed message body is a document of its own (an iframe's srcdoc, under its own policy): its <style> is
# that document's, not the page's.
SRCDOC = re.compile(r"""\ssrcdoc\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)


def inline_styles(text: str) -> list[str]:
    return [line.strip() for line in SRCDOC.sub(" srcdoc", text).splitlines() if INLINE.search(line)]


def test_no_template_has_a_style_attribute_or_element() -> None:
    found = {str(path.relative_to(TEMPLATES)): hits for path in sorted(TEMPLATES.rglob("*.html"))
             if (hits := inline_styles(path.read_text()))}
    assert not found


def test_the_check_sees_an_attribute_and_an_element() -> None:
    assert inline_styles('<p class="x" style="color: red">')
    assert inline_styles("<div\n  STYLE='margin:0'>") or inline_styles("  STYLE='margin:0'>")
    assert inline_styles("<style>p { color: red }</style>")
    assert not inline_styles('<p class="styled" data-style-name="x">')
    assert not inline_styles('<iframe sandbox srcdoc="<style>p{}</style><p>mail</p>"></iframe>')
    assert inline_styles('<iframe srcdoc="<p>mail</p>" style="height: 9rem"></iframe>')
