"""The design tokens in static/plmail.css: every text/background pair meets WCAG 2.x AA, in light and in dark.

The formula and the thresholds are WCAG 2.2's: relative luminance from sRGB ("relative luminance" in the
glossary), contrast ratio (L1 + 0.05) / (L2 + 0.05); SC 1.4.3 asks 4.5:1 for text, SC 1.4.11 asks 3:1 for the
visual information that identifies a user-interface component (its edge, the focus indicator)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STYLESHEET = Path(__file__).parents[3] / "plmail" / "static" / "plmail.css"

TEXT = 4.5  # WCAG 2.2 SC 1.4.3 Contrast (Minimum): "a contrast ratio of at least 4.5:1"
NON_TEXT = 3.0  # WCAG 2.2 SC 1.4.11 Non-text Contrast: "a contrast ratio of at least 3:1 against adjacent color(s)"

SURFACES = ("--color-bg", "--color-surface", "--color-surface-2")
TEXT_PAIRS = [
    *[(text, surface) for surface in SURFACES
      for text in ("--color-text", "--color-muted", "--color-primary", "--color-danger", "--color-success",
                   "--color-warning")],
    ("--color-primary-text", "--color-primary"),
    ("--color-danger-text", "--color-danger"),
    ("--color-text", "--color-primary-soft"),
    ("--color-primary", "--color-primary-soft"),
    ("--color-muted", "--color-primary-soft"),
    ("--color-inverse-text", "--color-inverse-bg"),
    *[(pair, f"{pair}-soft") for pair in ("--color-danger", "--color-success", "--color-warning")],  # callouts
    *[("--color-text", f"{pair}-soft") for pair in ("--color-danger", "--color-success", "--color-warning")],
]
NON_TEXT_PAIRS = [
    *[(edge, surface) for surface in SURFACES for edge in ("--color-border-strong", "--color-focus", "--color-star")],
    ("--color-primary", "--color-bg"),  # a primary button's own edge on the page
    ("--color-primary", "--color-surface"),
]
# The names the other stylesheets and templates were promised (issue 32), in both themes.
PROMISED = ("--color-bg", "--color-surface", "--color-surface-2", "--color-text", "--color-muted", "--color-border",
            "--color-primary", "--color-primary-text", "--color-danger", "--color-success", "--color-warning",
            "--color-focus")
OTHER_TOKENS = (*(f"--space-{n}" for n in range(1, 9)), "--radius-s", "--radius-m", "--radius-l", "--radius-full",
                "--text-xs", "--text-s", "--text-m", "--text-l", "--text-xl", "--text-2xl",
                "--shadow-1", "--shadow-2", "--shadow-3")
ALIASES = {"--bg": "--color-bg", "--panel": "--color-surface", "--ink": "--color-text", "--muted": "--color-muted",
           "--line": "--color-border", "--accent": "--color-primary", "--accent-ink": "--color-primary-text",
           "--danger": "--color-danger", "--ok": "--color-success"}


def _css() -> str:
    return re.sub(r"/\*.*?\*/", "", STYLESHEET.read_text(), flags=re.S)


def _declarations(body: str) -> dict[str, str]:
    return {name: value.strip() for name, value in re.findall(r"(--[a-z0-9-]+)\s*:\s*([^;]+);", body)}


def _block(css: str, selector: str) -> str:
    """The body of the first rule whose selector is exactly `selector` (tokens are in flat rules)."""
    match = re.search(re.escape(selector) + r"\s*\{([^{}]*)\}", css)
    assert match, f"no rule {selector} in plmail.css"
    assert "--color-" in match.group(1) or "--bg" in match.group(1), f"{selector} holds no tokens"
    return match.group(1)


def themes() -> dict[str, dict[str, str]]:
    css = _css()
    light = _declarations(_block(css, ":root, .theme-light"))
    system_dark = _declarations(_block(css, ":root:not([data-theme=light])"))
    chosen_dark = _declarations(_block(css, ":root[data-theme=dark], .theme-dark"))
    assert system_dark == chosen_dark, "the system's dark and the chosen dark theme differ"
    aliases = _declarations(_block(css, ":root, .theme-light, .theme-dark"))
    return {"light": {**light, **aliases}, "dark": {**light, **chosen_dark, **aliases}}


def _channel(value: int) -> float:
    srgb = value / 255
    return srgb / 12.92 if srgb <= 0.04045 else ((srgb + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    match = re.fullmatch(r"#([0-9a-fA-F]{6})", colour)
    assert match, f"a colour token is not #rrggbb: {colour}"
    red, green, blue = (int(match.group(1)[i:i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * _channel(red) + 0.7152 * _channel(green) + 0.0722 * _channel(blue)


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_the_formula_gives_wcag_s_own_extremes() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the well-known just-failing grey
    assert contrast("#767676", "#ffffff") >= TEXT


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_promised_token_is_defined(theme: str) -> None:
    tokens = themes()[theme]
    missing = [name for name in (*PROMISED, *OTHER_TOKENS) if name not in tokens]
    assert not missing
    for alias, target in ALIASES.items():
        assert tokens[alias] == f"var({target})"


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("foreground", "background"), TEXT_PAIRS)
def test_text_pairs_meet_aa(theme: str, foreground: str, background: str) -> None:
    tokens = themes()[theme]
    ratio = contrast(tokens[foreground], tokens[background])
    assert ratio >= TEXT, f"{theme}: {foreground} on {background} is {ratio:.2f}:1"


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("foreground", "background"), NON_TEXT_PAIRS)
def test_control_edges_and_focus_meet_non_text_contrast(theme: str, foreground: str, background: str) -> None:
    tokens = themes()[theme]
    ratio = contrast(tokens[foreground], tokens[background])
    assert ratio >= NON_TEXT, f"{theme}: {foreground} on {background} is {ratio:.2f}:1"


def test_a_failing_pair_is_caught() -> None:
    """The check itself fails on a pair below AA (the old muted grey on a tinted row, for instance)."""
    assert contrast("#8a8a8a", "#eef0f4") < TEXT
