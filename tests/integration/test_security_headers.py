"""Headers on every page (CSP without inline script or eval, frame-ancestors 'none', Referrer-Policy, nosniff,
Permissions-Policy), HSTS and Secure cookies over HTTPS (directly or through a trusted proxy, never an untrusted
one), and the Origin check behind the CSRF token."""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser

import httpx
import pytest
from litestar import Litestar

from plmail.app import create_app
from plmail.config import Settings
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.conftest import browser, running_lifespan
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.web import csrf_token, post_form, sign_in, sign_up_admin

PASSWORD = "correct horse"
# GET routes no page test here reaches, and why.
NOT_PAGES = {
    "/events": "an event stream that lasts minutes (this transport waits for a body's end); the browser test "
               "opens it under the policy",
    "/calendar/event/{event_id:int}": "needs a calendar event; the calendar tests open it",
    "/accounts/oauth/{provider:str}/callback": "the OAuth provider's redirect target; the OAuth tests follow it",
    "/message/{message_id:int}/cid/{content_id:str}": "an inline image, not a page",
    "/jmap/download/{account_id:str}/{blob_id:str}/{name:str}": "JMAP, with an app password",
    "/jmap/eventsource": "JMAP push, with an app password",
}


def _matches(route: str, path: str) -> bool:
    pattern = re.sub(r"\{[^}:]+:path\}", ".+", re.escape(route).replace("\\{", "{").replace("\\}", "}"))
    pattern = re.sub(r"\{[^}]+\}", "[^/]+", pattern)
    return re.fullmatch(pattern, path.rstrip("/") or "/") is not None


def assert_policy(response: httpx.Response) -> None:
    headers = response.headers
    policy = headers.get("content-security-policy", "")
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    if headers.get("content-type") == "application/pdf":
        # Issue 32: a PDF attachment opened in the browser's own viewer, which browsers refuse to start in a
        # sandboxed document; nothing of ours runs there and nothing but the viewer's own styles and images loads.
        assert directives.get("default-src") == ["'none'"] and "script-src" not in directives, (response.url, policy)
        assert directives.get("style-src") == ["'unsafe-inline'"], (response.url, policy)
    elif directives.get("default-src") == ["'none'"]:  # a stored attachment: nothing at all may run or load
        assert "sandbox" in directives, (response.url, policy)
    else:
        assert directives.get("default-src") == ["'self'"], (response.url, policy)
        assert directives.get("script-src") == ["'self'"], (response.url, policy)  # no inline script, no eval
        assert directives.get("object-src") == ["'none'"]
    assert "'unsafe-eval'" not in policy and "'unsafe-inline'" not in directives.get("script-src", [])
    assert directives.get("frame-ancestors") == ["'none'"], (response.url, policy)
    assert headers.get("referrer-policy") == "no-referrer"
    assert headers.get("x-content-type-options") == "nosniff"
    assert "camera=()" in headers.get("permissions-policy", "")
    assert headers.get("x-frame-options") == "DENY"


def assert_no_inline_script(response: httpx.Response) -> None:
    if not response.headers.get("content-type", "").startswith("text/html"):
        return
    # Read as the browser does: tags and their attributes, not text. A page that shows mail source (Show
    # original) prints `style=` and `onload=` as escaped text, which the policy has nothing to say about;
    # the framed mail body (srcdoc) is an attribute value, sanitised and framed without scripts.
    found = _InlineCode()
    found.feed(response.text)
    assert not found.problems, (response.url, found.problems[:5])


class _InlineCode(HTMLParser):
    """Inline script, inline event handlers, style attributes and javascript: URLs: what the policy refuses."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _value in attrs}
        if tag == "script" and "src" not in names:
            self.problems.append("inline <script>")
        for name, value in attrs:
            if name.startswith("on") or name == "style":
                self.problems.append(f"<{tag} {name}=>")
            if name in ("href", "src", "action", "formaction") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.problems.append(f"<{tag} {name}=javascript:>")


@pytest.fixture
async def seeded(client: httpx.AsyncClient, services: Services) -> dict[str, int]:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    user = await services.users.by_email("admin@example.org")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                                  email=user.email)
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    html = '<p style="color: red">Styled <img src="https://tracker.example/t.gif"></p>'
    raw = make_message(message_id="h1@x", subject="Garden party", html=html, to=[user.email])
    attached = (b"From: a@example.org\r\nSubject: Files\r\nMessage-ID: <h2@x>\r\nMIME-Version: 1.0\r\n"
                b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee\r\n"
                b"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\n\r\n"
                b"%PDF\r\n--b--\r\n")
    result = await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(inbox,)),
                                             parse_message(attached, account_id=account, label_ids=(inbox,))])
    part = await services.db.fetchval("SELECT id FROM message_part WHERE filename = 'a.pdf'")
    label = await services.labels.create(user.id, "Projects")
    await post_form(client, "/rules/", {"name": "Topics", "match": "all", "condition_field": ["subject"],
                                       "condition_value": ["party"], "actions": ["star"], "enabled": "on"},
                    token_from="/rules/new")
    rule = await services.db.fetchval("SELECT id FROM mail_rule")
    return {"thread": result.messages[0].thread_id or 0, "message": result.messages[0].id, "label": int(label),
            "account": account, "part": part, "rule": rule}


async def test_every_page_carries_the_policy_and_no_inline_script(client: httpx.AsyncClient, web_app: Litestar,
                                                                  seeded: dict[str, int]) -> None:
    ids = seeded
    pages = [
        "/", "/?tab=promotions", "/search?q=party", f"/thread/{ids['thread']}", f"/label/{ids['label']}",
        "/labels", "/rules", "/rules/new", f"/rules/{ids['rule']}", "/settings", "/settings/devices",
        "/settings/sessions", "/settings/two-factor", "/accounts", "/accounts/new",
        "/accounts/preset?email=a@gmail.com", "/accounts/new/jmap",  # issue 31: a plugin's add-account form
        f"/accounts/{ids['account']}", f"/accounts/{ids['account']}/progress", f"/accounts/{ids['account']}/sidebar",
        f"/part/{ids['part']}", "/calendar", "/calendar/new", "/calendar/soon", "/calendar/sharing",
        "/calendar/extractors", "/compose", "/compose/outbox", "/compose/contacts?q=be", "/settings/sending",
        "/compose/submission/999999",
        # issue 21: search type-ahead, Show original (and its download), a filter's apply-to-existing progress
        "/search/suggest?q=fr", f"/message/{ids['message']}/original", f"/message/{ids['message']}/original.eml",
        f"/rules/{ids['rule']}/progress",
        # unknown ids and tokens: the refusal carries the headers as well
        "/calendar/999999/export.ics", "/calendar/event/999999/export.ics", "/calendar/feed/no-such-token",
        "/identities/confirm/no-such-token",
        "/admin", "/admin/queues", "/healthz", "/static/plmail.css",
        # issue 29: the sidebar's views that are no label
        "/starred", "/all", "/archive",
        "/static/pages.js", "/no/such/page", "/.well-known/jmap", "/jmap/session",
        # issue 33: the installable app's manifest, service worker, offline page and offline list
        "/manifest.webmanifest", "/sw.js", "/offline", "/offline/inbox.json", "/settings/notifications",
        # issue 32: settings' own sections, the administrators' style guide
        "/settings/sorting", "/settings/security", "/_styleguide",
        # issue 32: a PDF attachment's first-page preview (this one cannot be drawn: a 404) and the PDF opened
        f"/part/{ids['part']}/preview", f"/part/{ids['part']}/view",
    ]
    covered: set[str] = set()
    routes = [r for r in web_app.routes if "GET" in getattr(r, "methods", ())]
    for path in pages:
        response = await client.get(path, follow_redirects=False)
        assert response.status_code < 500, (path, response.status_code)
        assert_policy(response)
        assert_no_inline_script(response)
        bare = path.split("?")[0]
        covered |= {r.path for r in routes if _matches(r.path, bare)}
    # Signed out: the sign-in pages carry it too.
    async with browser(web_app, "198.51.100.40") as stranger:
        for path in ("/login", "/login/code", "/setup", "/settings"):
            response = await stranger.get(path, follow_redirects=False)
            assert_policy(response)
            assert_no_inline_script(response)
            covered |= {r.path for r in routes if _matches(r.path, path)}
    missed = {r.path for r in routes} - covered - set(NOT_PAGES)
    assert not missed, f"pages this test does not open: {sorted(missed)}"

    home = await client.get("/")
    assert """<meta name="htmx-config" content='{"allowEval":false""" in home.text
    assert '<script src="/static/htmx.min.js"' in home.text and '<script src="/static/pages.js"' in home.text


async def test_the_conversation_page_loosens_styles_and_images_only_as_far_as_its_mail_needs(
        client: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    page = await client.get(f"/thread/{seeded['thread']}")
    policy = page.headers["content-security-policy"]
    assert "style-src 'self' 'unsafe-inline'" in policy  # mail is styled inline, and its frame lives under this
    assert "img-src 'self' data: blob:;" in policy  # remote images stay blocked; blob: is a pasted image
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    shown = await client.get(f"/thread/{seeded['thread']}?images={seeded['message']}")
    assert "img-src 'self' data: blob: https: http:" in shown.headers["content-security-policy"]
    other = await client.get("/settings")
    # Elsewhere styles come from our origin, plus the one <style> of Trix's defaults under this response's nonce.
    nonce = re.search(r"style-src 'nonce-([A-Za-z0-9_-]{16,})' 'self';", other.headers["content-security-policy"])
    assert nonce is not None, other.headers["content-security-policy"]
    assert f'<meta name="trix-csp-nonce" content="{nonce.group(1)}">' in other.text
    again = await client.get("/settings")
    assert nonce.group(1) not in again.headers["content-security-policy"]  # a fresh nonce for every response


@pytest.fixture
async def proxied(settings: Settings, database_url: str, services: Services) -> AsyncIterator[Litestar]:
    """The app behind a reverse proxy at 203.0.113.7 (PLMAIL_TRUSTED_PROXIES)."""
    trusted = dataclasses.replace(settings, trusted_proxies=(ipaddress.ip_network("203.0.113.7/32"),))
    app = create_app(trusted, database_url, worker_queues=(), services=services)
    async with running_lifespan(app):
        yield app


async def test_https_through_a_trusted_proxy_gets_hsts_and_secure_cookies(proxied: Litestar,
                                                                          services: Services) -> None:
    forwarded = {"x-forwarded-proto": "https", "x-forwarded-for": "192.0.2.99, 203.0.113.7"}
    async with browser(proxied, "203.0.113.7", base_url="http://plmail.test") as via_proxy:
        via_proxy.headers.update(forwarded)
        page = await via_proxy.get("/setup")
        assert page.headers["strict-transport-security"].startswith("max-age=")
        assert page.headers.get_list("set-cookie") and all("; Secure" in c for c in page.headers.get_list("set-cookie"))
        # (This client speaks plain HTTP to the app, so it would not send those Secure cookies back.)
        del via_proxy.headers["x-forwarded-proto"]
        via_proxy.cookies.clear()
        await sign_up_admin(via_proxy, "admin@example.org", PASSWORD)
        # The client address the proxy named is the one that counts (sessions, the throttle).
        assert await services.db.fetchval("SELECT client_address FROM web_session") == "192.0.2.99"
    async with browser(proxied, "198.51.100.50") as direct:  # anyone else's forwarded headers are not believed
        direct.headers.update(forwarded)
        page = await direct.get("/login")
        assert "strict-transport-security" not in page.headers
        assert not any("Secure" in c for c in page.headers.get_list("set-cookie"))
        await sign_in(direct, "admin@example.org", PASSWORD)
        addresses = {r["client_address"] for r in await services.db.fetch("SELECT client_address FROM web_session")}
        assert addresses == {"192.0.2.99", "198.51.100.50"}


async def test_https_directly_gets_hsts_and_secure_cookies(web_app: Litestar) -> None:
    async with browser(web_app, base_url="https://plmail.test") as secure:
        page = await secure.get("/setup")
        assert "strict-transport-security" in page.headers
        assert page.headers.get_list("set-cookie") and all("; Secure" in c for c in page.headers.get_list("set-cookie"))


async def test_a_state_changing_request_from_another_site_is_refused_even_with_the_token(
        client: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    form = {"display_name": "Mallory", "locale": "en", "time_zone": "UTC"}

    async def post(headers: dict[str, str], *, token: bool = True) -> httpx.Response:
        data = {**form, "_csrf_token": await csrf_token(client, "/settings")} if token else form
        return await client.post("/settings/preferences", data=data, headers=headers)

    assert (await post({"origin": "https://evil.example"})).status_code == 403
    assert (await post({"sec-fetch-site": "cross-site", "origin": "http://plmail.test"})).status_code == 403
    assert (await post({"sec-fetch-site": "same-site"})).status_code == 403
    assert (await post({"referer": "https://evil.example/form"})).status_code == 403
    assert "another site" in (await post({"origin": "https://evil.example"})).text
    assert (await post({"origin": "http://plmail.test"})).status_code == 200
    assert (await post({"sec-fetch-site": "same-origin"})).status_code == 200
    # Under our Referrer-Policy a browser may send "Origin: null" for our own form; the token still decides.
    assert (await post({"origin": "null"})).status_code == 200
    assert (await post({"origin": "null"}, token=False)).status_code == 403
    # JMAP authenticates with app passwords, not cookies: clients on other origins may call it.
    jmap = await client.post("/jmap/api", json={}, headers={"origin": "https://app.example"})
    assert jmap.status_code == 401
