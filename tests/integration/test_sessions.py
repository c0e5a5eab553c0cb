"""Sessions kept on the server: signing out ends them for good, they can be listed and ended from elsewhere, and
they end by themselves (14 idle days, 60 days at most), when the password changes and when the admin disables
the user."""

from __future__ import annotations

import re

import httpx
from litestar import Litestar

from plmail.services import Services
from tests.conftest import browser
from tests.support.web import csrf_token, post_form, sign_in, sign_up_admin

PASSWORD = "correct horse"


async def _signed_in(client: httpx.AsyncClient) -> bool:
    response = await client.get("/", follow_redirects=False)
    assert response.status_code in (200, 303)
    return response.status_code == 200


async def test_a_cookie_copied_before_logout_no_longer_signs_in(client: httpx.AsyncClient,
                                                                services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    copied = client.cookies.get("plmail_session")
    assert copied and await _signed_in(client)
    stored = await services.db.fetchval("SELECT token_hash FROM web_session")
    assert copied not in stored  # only a hash of the token is kept

    out = await client.post("/logout", data={"_csrf_token": await csrf_token(client, "/")}, follow_redirects=False)
    assert out.status_code in (302, 303) and out.headers["location"] == "/login"
    assert await services.db.fetchval("SELECT count(*) FROM web_session") == 0

    client.cookies.set("plmail_session", copied)
    replay = await client.get("/settings", follow_redirects=False)
    assert replay.status_code == 303 and replay.headers["location"].startswith("/login")


async def test_sessions_are_listed_and_one_revoked_from_another_browser(client: httpx.AsyncClient,
                                                                        web_app: Litestar) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    async with browser(web_app, "198.51.100.7") as phone:
        phone.headers["user-agent"] = "Phone browser 1.0"
        assert (await sign_in(phone, "admin@example.org", PASSWORD)).status_code == 200
        listing = await client.get("/settings/sessions")
        assert listing.status_code == 200
        assert "Phone browser 1.0" in listing.text and "198.51.100.7" in listing.text
        assert "(this browser)" in listing.text
        ids = re.findall(r'data-session-id="(\d+)"', listing.text)
        assert len(ids) == 2
        [phone_row] = re.findall(r'<tr data-session-id="(\d+)">\s*<td>Phone browser 1.0', listing.text)

        revoked = await post_form(client, f"/settings/sessions/{phone_row}/revoke", {}, token_from="/settings/sessions")
        assert revoked.status_code == 200 and "That browser is signed out." in revoked.text
        assert not await _signed_in(phone)
        assert await _signed_in(client)
        # Nobody revokes someone else's session: an unknown id is not found.
        missing = await post_form(client, f"/settings/sessions/{phone_row}/revoke", {}, token_from="/settings/sessions")
        assert missing.status_code == 404

        assert (await sign_in(phone, "admin@example.org", PASSWORD)).status_code == 200
        everywhere = await post_form(client, "/settings/sessions/end-all", {}, token_from="/settings/sessions")
        assert everywhere.url.path == "/login"
        assert not await _signed_in(client) and not await _signed_in(phone)


async def test_sessions_end_after_fourteen_idle_days_and_sixty_days_in_all(client: httpx.AsyncClient,
                                                                           services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    await services.db.execute("UPDATE web_session SET last_seen_at = now() - interval '13 days 23 hours'")
    assert await _signed_in(client)  # within 14 days: still going, and the visit counts as activity
    await services.db.execute("UPDATE web_session SET last_seen_at = now() - interval '14 days 1 minute'")
    assert not await _signed_in(client)

    await sign_in(client, "admin@example.org", PASSWORD)
    lifetime = await services.db.fetchval("SELECT expires_at - created_at FROM web_session")
    assert lifetime.days == 60
    await services.db.execute("UPDATE web_session SET expires_at = now() - interval '1 second'")
    assert not await _signed_in(client)  # however active: 60 days after signing in it ends


async def test_a_visit_records_activity_unless_the_session_was_just_seen(client: httpx.AsyncClient,
                                                                         services: Services) -> None:
    """The idle clock restarts with a visit, but pages poll every few seconds: a session seen a minute ago is not
    written again (the page's own lookup tells, without a second statement)."""
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    await services.db.execute("UPDATE web_session SET last_seen_at = now() - interval '3 days'")
    assert await _signed_in(client)
    assert await services.db.fetchval("SELECT now() - last_seen_at < interval '1 minute' FROM web_session")

    await services.db.execute("UPDATE web_session SET last_seen_at = now() - interval '1 minute', user_agent = 'x'")
    before = await services.db.fetchval("SELECT last_seen_at FROM web_session")
    assert await _signed_in(client)
    assert await services.db.fetchrow("SELECT last_seen_at, user_agent FROM web_session") == (before, "x")


async def test_remember_me_gives_a_persistent_cookie_and_without_it_the_cookie_ends_with_the_browser(
        client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    await client.post("/logout", data={"_csrf_token": await csrf_token(client, "/")})
    plain = await post_form(client, "/login", {"email": "admin@example.org", "password": PASSWORD})
    cookie = next(h for h in plain.history[0].headers.get_list("set-cookie") if h.startswith("plmail_session="))
    assert "max-age" not in cookie.lower() and "expires" not in cookie.lower()
    assert "httponly" in cookie.lower() and "samesite=lax" in cookie.lower()
    await client.post("/logout", data={"_csrf_token": await csrf_token(client, "/")})
    kept = await post_form(client, "/login", {"email": "admin@example.org", "password": PASSWORD, "remember": "on"})
    cookie = next(h for h in kept.history[0].headers.get_list("set-cookie") if h.startswith("plmail_session="))
    assert f"max-age={60 * 24 * 3600}" in cookie.lower()


async def test_disabling_a_user_ends_their_sessions_and_app_passwords(client: httpx.AsyncClient, web_app: Litestar,
                                                                      services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    bob = await services.users.create_user("bob@example.org", PASSWORD)
    token = (await services.app_passwords.create(bob.id, "Phone")).token
    async with browser(web_app, "198.51.100.8") as bobs:
        assert (await sign_in(bobs, "bob@example.org", PASSWORD)).status_code == 200
        disabled = await post_form(client, f"/admin/users/{bob.id}/disable", {}, token_from="/admin")
        assert disabled.status_code == 200 and "User disabled; their sessions ended." in disabled.text
        assert not await _signed_in(bobs)
        refused = await sign_in(bobs, "bob@example.org", PASSWORD)
        assert refused.status_code == 401 and "This account is disabled" in refused.text
        jmap = await bobs.get("/jmap/session", headers={"Authorization": f"Bearer {token}"})
        assert jmap.status_code == 401
        admin = (await services.users.by_email("admin@example.org")).id
        yourself = await post_form(client, f"/admin/users/{admin}/disable", {}, token_from="/admin")
        assert yourself.status_code == 400 and "You cannot disable your own account." in yourself.text

        await post_form(client, f"/admin/users/{bob.id}/enable", {}, token_from="/admin")
        assert (await sign_in(bobs, "bob@example.org", PASSWORD)).status_code == 200
        assert (await bobs.get("/jmap/session", headers={"Authorization": f"Bearer {token}"})).status_code == 200
