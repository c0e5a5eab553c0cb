"""Issue 32's pages of the design system: the administrators' style guide, settings as sections with their own
navigation, and an error page that offers the next step."""

from __future__ import annotations

import re

import httpx

from plmail.services import Services
from tests.support.web import post_form, sign_in, sign_up_admin

PASSWORD = "correct horse"
# The sections, in its order, each with the page it opens.
SECTIONS = [("Account", "/settings"), ("Sending", "/settings/sending"), ("Inbox sorting", "/settings/sorting"),
            ("Filters", "/rules"), ("Calendar", "/calendar/sharing"), ("Security", "/settings/security"),
            ("Devices &amp; apps", "/settings/devices"), ("Administration", "/admin")]


def _section_nav(page: str) -> str:
    match = re.search(r'<nav class="settings-nav".*?</nav>', page, re.S)
    assert match, "no settings navigation on the page"
    return match.group(0)


def _current(nav: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)" aria-current="page">', nav)


async def test_the_style_guide_is_for_administrators_alone(client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    guide = await client.get("/_styleguide")
    assert guide.status_code == 200
    # every promised token has its swatch, light and dark, and every component is on the page
    for token in ("bg", "surface", "surface-2", "text", "muted", "border", "primary", "primary-text", "danger",
                  "success", "warning", "focus"):
        assert guide.text.count(f"<code>--color-{token}</code>") == 2, token
    assert 'class="theme-light"' in guide.text and 'class="theme-dark"' in guide.text
    for component in ('class="primary"', 'class="secondary"', 'class="ghost"', 'class="icon-button"', 'class="chip',
                      '<details class="dropdown">', 'class="toast', "<dialog", 'class="tabs"', 'class="list-rows"',
                      'class="field', 'class="card', 'class="empty-state'):
        assert component in guide.text, component
    assert _current(_section_nav(guide.text)) == ["/_styleguide"]

    await services.users.create_user("bob@example.org", PASSWORD)
    client.cookies.clear()
    anonymous = await client.get("/_styleguide", follow_redirects=False)
    assert anonymous.status_code in (302, 303) and anonymous.headers["location"].startswith("/login")
    assert (await sign_in(client, "bob@example.org", PASSWORD)).status_code == 200
    refused = await client.get("/_styleguide")
    assert refused.status_code == 403 and "--color-primary" not in refused.text
    own = await client.get("/settings")
    assert 'href="/_styleguide"' not in own.text and 'href="/admin"' not in own.text  # not offered either


async def test_settings_are_sections_each_on_a_short_page_of_its_own(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    account = await client.get("/settings")
    nav = _section_nav(account.text)
    links = re.findall(r'<a href="([^"]+)"[^>]*>.*?<span class="name">([^<]+)</span>', nav, re.S)
    named = [(name, href) for href, name in links]
    assert [section for section in named if section in SECTIONS] == SECTIONS
    for name, href in SECTIONS:
        page = await client.get(href)
        assert page.status_code == 200, href
        assert _current(_section_nav(page.text)) == [href], name
    for path in ("/settings/two-factor", "/settings/sessions"):  # Security's own pages stay under Security
        assert _current(_section_nav((await client.get(path)).text)) == ["/settings/security"]
    # Account is short: preferences and appearance; sorting and the password are on their sections' pages
    assert 'name="display_name"' in account.text and 'name="theme"' in account.text
    assert 'name="sorting"' not in account.text and 'name="new_password"' not in account.text
    assert 'name="sorting"' in (await client.get("/settings/sorting")).text
    assert 'name="new_password"' in (await client.get("/settings/security")).text
    # the forms post where they always did, and answer on their section's page
    wrong = await post_form(client, "/settings/password", {"current_password": "guess", "new_password": "x" * 12},
                            token_from="/settings/security")
    assert wrong.status_code == 400 and _current(_section_nav(wrong.text)) == ["/settings/security"]
    saved = await post_form(client, "/settings/appearance", {"theme": "dark", "density": "compact"},
                            token_from="/settings")
    assert saved.status_code == 200 and 'data-theme="dark"' in saved.text
    assert _current(_section_nav(saved.text)) == ["/settings"]


async def test_an_error_page_offers_the_next_step(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    missing = await client.get("/label/999999")
    assert missing.status_code == 404
    assert re.search(r'<a class="button primary" href="/">.*?Back to the inbox</a>', missing.text, re.S)
    assert '<form class="inline error-search" method="get" action="/search"' in missing.text
