"""Issue 32: icons are drawn from the vendored Lucide sprite, never emoji a font may lack."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markupsafe import Markup

from plmail.web.pages import icon

PLMAIL = Path(__file__).resolve().parents[3] / "plmail"
SPRITE = PLMAIL / "static" / "icons" / "lucide.svg"
# Pictographs and dingbats render as an empty box where the font lacks them (the attachment icon).
EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf\u2b50\u2b06\u2194-\u21aa]")


SYMBOL = re.compile(r"<symbol ([^>]*)>")


def _symbols() -> dict[str, str]:
    """Each symbol's id with its attributes, read from the sprite file as shipped."""
    return {re.search(r'id="([^"]+)"', attributes).group(1): attributes  # type: ignore[union-attr]
            for attributes in SYMBOL.findall(SPRITE.read_text())}


def test_every_icon_a_template_names_is_in_the_sprite() -> None:
    named: set[tuple[str, str]] = set()
    for template in (PLMAIL / "templates").rglob("*.html"):
        for name in re.findall(r"""icon\(\s*["']([^"']+)["']""", template.read_text()):
            named.add((template.name, name))
    assert named, "no template draws an icon"
    missing = sorted((file, name) for file, name in named if name not in _symbols())
    assert missing == []


def test_no_template_or_script_draws_an_emoji() -> None:
    found = []
    for path in [*(PLMAIL / "templates").rglob("*.html"), *(PLMAIL / "static").glob("*.js")]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if EMOJI.search(line):
                found.append(f"{path.relative_to(PLMAIL)}:{number}: {line.strip()[:80]}")
    assert found == []


def test_the_sprite_names_its_licence_and_every_symbol_draws_in_the_text_colour() -> None:
    text = SPRITE.read_text()
    assert "ISC" in text and (SPRITE.parent / "LUCIDE-LICENSE").read_text().startswith("ISC License")
    symbols = _symbols()
    assert len(symbols) >= 40
    for name, attributes in symbols.items():
        assert 'stroke="currentColor"' in attributes and 'viewBox="0 0 24 24"' in attributes, name


def test_a_decorative_icon_is_hidden_and_a_standalone_one_is_named() -> None:
    decorative = icon("archive")
    assert isinstance(decorative, Markup)
    assert 'aria-hidden="true"' in decorative and 'href="/static/icons/lucide.svg#archive"' in decorative
    named = icon("star", 'Starred "now"')
    assert 'role="img"' in named and 'aria-label="Starred &#34;now&#34;"' in named and "aria-hidden" not in named


def test_an_icon_name_cannot_carry_markup() -> None:
    with pytest.raises(ValueError, match="not an icon name"):
        icon('x"><script>')
