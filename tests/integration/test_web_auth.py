"""First-run setup, sign-in, throttling, CSRF and per-user isolation, over HTTP through the real app."""

from __future__ import annotations

import time

import httpx
import pyotp
from litestar import Litestar

from plmail.services import Services
from tests.conftest import browser
from tests.support.web import csrf_token, post_form, sign_in, sign_up_admin

PASSWORD = "correct horse"


async def test_fresh_installation_sends_everyone_to_setup_and_setup_happens_once(client: httpx.AsyncClient) -> None:
    for path in ("/", "/admin", "/settings", "/login"):
        response = await client.get(path, follow_redirects=False)
        assert response.status_code in (302, 303), path
        assert response.headers["location"] == "/setup", path

    created = await sign_up_admin(client, "Admin@Example.org", PASSWORD)
    assert created.status_code == 200
    assert "Inbox" in created.text
    inbox = await client.get("/")
    assert inbox.status_code == 200
    assert "Administration" in inbox.text  # the first user is the administrator

    # Setup is closed for good once someone exists, even for a fresh visitor.
    client.cookies.clear()
    again = await client.get("/setup", follow_redirects=False)
    assert again.headers["location"] == "/login"
    token = await csrf_token(client, "/login")
    hijack = await client.post(
        "/setup", data={"email": "evil@example.org", "password": PASSWORD, "_csrf_token": token}, follow_redirects=False
    )
    assert hijack.headers["location"] == "/login"
    assert (await sign_in(client, "evil@example.org", PASSWORD)).status_code == 401


async def test_setup_rejects_bad_input_and_keeps_what_was_typed(client: httpx.AsyncClient) -> None:
    token = await csrf_token(client, "/setup")
    short = await client.post("/setup", data={"email": "a@example.org", "password": "short", "display_name": "Ann",
                                              "_csrf_token": token})
    assert short.status_code == 400
    assert "at least 8 characters" in short.text
    assert 'value="Ann"' in short.text
    bad_zone = await client.post("/setup", data={"email": "a@example.org", "password": PASSWORD,
                                                 "time_zone": "Mars/Base", "_csrf_token": token})
    assert bad_zone.status_code == 400 and "Unknown time zone" in bad_zone.text


async def test_wrong_password_is_refused_and_right_one_signs_in(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    await client.post("/logout", data={"_csrf_token": await csrf_token(client, "/")})
    assert (await client.get("/", follow_redirects=False)).status_code == 303

    wrong = await sign_in(client, "admin@example.org", "not the password")
    assert wrong.status_code == 401
    assert "The email address or password is wrong." in wrong.text
    unknown = await sign_in(client, "nobody@example.org", PASSWORD)
    assert unknown.status_code == 401

    ok = await post_form(client, "/login", {"email": "ADMIN@example.org", "password": PASSWORD,
                                            "next": "/settings/security"})
    assert ok.status_code == 200 and "Change password" in ok.text  # followed next= to Settings → Security


async def test_sign_in_redirect_target_is_kept_but_never_off_site(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    client.cookies.clear()
    bounced = await client.get("/settings", follow_redirects=False)
    assert bounced.headers["location"] == "/login?next=/settings"
    token = await csrf_token(client, "/login?next=https://evil.example/")
    response = await client.post("/login", data={"email": "admin@example.org", "password": PASSWORD,
                                                 "next": "https://evil.example/", "_csrf_token": token},
                                 follow_redirects=False)
    assert response.headers["location"] == "/"


async def test_failures_slow_down_that_address_from_that_client_only(client: httpx.AsyncClient, web_app: Litestar,
                                                                    services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    client.cookies.clear()  # a browser that never signed in (no device cookie)
    policy = services.users.policy
    for _ in range(policy.pair_threshold):
        assert (await sign_in(client, "admin@example.org", "guess")).status_code == 401
    # This address from this client waits now: even the right password is not checked, with a retry hint.
    waiting = await sign_in(client, "admin@example.org", PASSWORD)
    assert waiting.status_code == 429
    assert int(waiting.headers["retry-after"]) > 0
    assert "Too many failed sign-in attempts" in waiting.text
    # The wait is stored in the database, so a restart does not lift it.
    pair = "web:pair:admin@example.org|203.0.113.7"
    state = await services.users.throttle.state([pair])
    assert state.failures == policy.pair_threshold
    assert state.locked_until is not None
    # Someone guessing elsewhere slows only themselves: from another address the right password works.
    async with browser(web_app, "198.51.100.20") as elsewhere:
        assert (await sign_in(elsewhere, "admin@example.org", PASSWORD)).status_code == 200
    # Once the wait has passed, the right password works here too and the pair starts over.
    await services.db.execute("UPDATE login_throttle SET locked_until = now() - interval '1 second'")
    assert (await sign_in(client, "admin@example.org", PASSWORD)).status_code == 200
    cleared = await services.users.throttle.state([pair])
    assert cleared.failures == 0


async def test_fifty_wrong_passwords_never_lock_out_a_browser_that_signed_in_before(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)  # this browser signed in: it has a device cookie
    assert client.cookies.get("plmail_device")
    await client.post("/logout", data={"_csrf_token": await csrf_token(client, "/")})
    # An attacker at the same client address (behind the same proxy, say) tries 50 passwords.
    async with browser(web_app) as attacker:
        statuses = [(await sign_in(attacker, "admin@example.org", f"guess {n}")).status_code for n in range(50)]
        assert statuses[:5] == [401] * 5 and set(statuses[5:]) == {429}
        assert (await sign_in(attacker, "admin@example.org", PASSWORD)).status_code == 429
    # The browser that signed in before is never refused the right password.
    assert (await sign_in(client, "admin@example.org", PASSWORD)).status_code == 200
    assert (await client.get("/", follow_redirects=False)).status_code == 200


async def test_made_up_addresses_from_a_shared_address_never_lock_out_a_real_user_there(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    """Issue 39 rule 10, as the attack: 25 wrong sign-ins for made-up addresses from a household's one NAT
    address. Browsers there that signed in before, and a real user with the right password in a new browser,
    still get in; everything else waits, alike for real and made-up addresses (no hint which exist)."""
    await sign_up_admin(client, "admin@example.org", PASSWORD)  # the administrator's browser, behind the NAT
    await client.post("/logout", data={"_csrf_token": await csrf_token(client, "/")})
    await services.users.create_user("bob@example.org", PASSWORD)
    nat = "192.0.2.50"
    async with browser(web_app, nat) as attacker:
        statuses = [(await sign_in(attacker, f"user{n}@example.org", "guess")).status_code for n in range(25)]
        threshold = services.users.policy.client_threshold
        assert statuses[:threshold] == [401] * threshold and set(statuses[threshold:]) == {429}, statuses
        # A wrong password for a real address waits just as a made-up one does.
        assert (await sign_in(attacker, "bob@example.org", "guess")).status_code == 429
        assert (await sign_in(attacker, "nobody@example.org", PASSWORD)).status_code == 429
    async with browser(web_app, nat) as bobs_new_laptop:  # never signed in before: no device cookie
        arrived = await sign_in(bobs_new_laptop, "bob@example.org", PASSWORD)
        assert arrived.status_code == 200 and arrived.url.path == "/"
    async with browser(web_app, nat) as admins_phone:
        assert (await sign_in(admins_phone, "admin@example.org", PASSWORD)).url.path == "/"
    # With a second factor: the right password and code from a new browser there get in as well.
    secret = pyotp.random_base32()
    await services.two_factor.confirm(await services.users.by_email("bob@example.org"), secret,
                                      pyotp.TOTP(secret).at(time.time() - 30))
    async with browser(web_app, nat) as bobs_tablet:
        assert (await sign_in(bobs_tablet, "bob@example.org", PASSWORD)).url.path == "/login/code"
        code = await post_form(bobs_tablet, "/login/code", {"code": pyotp.TOTP(secret).now()},
                               token_from="/login/code")
        assert code.url.path == "/"
    assert (await sign_in(client, "admin@example.org", PASSWORD)).url.path == "/"  # signed in before


async def test_many_wrong_passwords_for_real_addresses_from_one_client_slow_only_new_browsers_there(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    """Credential stuffing against real users' addresses (not more than four guesses each, under the per-address
    limit) is stopped by the per-client count."""
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    for n in range(6):
        await services.users.create_user(f"user{n}@example.org", PASSWORD)
    async with browser(web_app, "192.0.2.50") as stuffing:
        for n in range(services.users.policy.client_threshold):
            await sign_in(stuffing, f"user{n % 5}@example.org", f"guess {n}")
        # Every address is slowed from this client now, even the right password, for browsers without a device
        # cookie...
        assert (await sign_in(stuffing, "user5@example.org", PASSWORD)).status_code == 429
    # ...and only failures count: people signing in successfully from an address do not slow it down.
    async with browser(web_app, "192.0.2.51") as office:
        for _ in range(services.users.policy.client_threshold + 1):
            assert (await sign_in(office, "user5@example.org", PASSWORD)).status_code == 200
            office.cookies.clear()


async def test_post_without_csrf_token_is_refused(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    client.cookies.clear()
    await client.get("/login")  # has the CSRF cookie, but sends no token
    no_token = await client.post("/login", data={"email": "admin@example.org", "password": PASSWORD})
    assert no_token.status_code == 403
    forged = await client.post("/login", data={"email": "admin@example.org", "password": PASSWORD,
                                               "_csrf_token": "forged"})
    assert forged.status_code == 403
    # Signed in, a state-changing POST still needs the token.
    await sign_in(client, "admin@example.org", PASSWORD)
    logout = await client.post("/logout")
    assert logout.status_code == 403
    assert (await client.get("/", follow_redirects=False)).status_code == 200  # still signed in


async def test_other_users_pages_are_unreachable(client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    bob = await services.users.create_user("bob@example.org", PASSWORD)
    admin = (await services.users.all_users())[0]
    admin_inbox = await services.labels.sidebar(admin.id)
    bob_labels = await services.labels.sidebar(bob.id)
    assert {label.name for label in bob_labels} >= {"Inbox", "Sent", "Trash"}
    assert "Archive" not in {label.name for label in bob_labels}  # hidden until shown

    # The admin sees their own label page, but not Bob's.
    own = await client.get(f"/label/{admin_inbox[1].id}")
    assert own.status_code == 200
    foreign = await client.get(f"/label/{bob_labels[1].id}")
    assert foreign.status_code == 404
    assert "belongs to someone else" in foreign.text

    # Bob signs in; the admin page and the admin's labels are closed to him.
    client.cookies.clear()
    assert (await sign_in(client, "bob@example.org", PASSWORD)).status_code == 200
    assert (await client.get("/admin")).status_code == 403
    probe = await post_form(client, "/admin/probe", {}, token_from="/")
    assert probe.status_code == 403
    assert (await client.get(f"/label/{admin_inbox[1].id}")).status_code == 404
    assert (await client.get("/label/999999")).status_code == 404


async def test_password_change_ends_other_sessions(client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    stolen_cookie = client.cookies.get("plmail_session")
    assert stolen_cookie

    changed = await post_form(client, "/settings/password",
                              {"current_password": PASSWORD, "new_password": "battery staple"}, token_from="/settings")
    assert changed.status_code == 200 and "Password changed" in changed.text
    assert (await client.get("/", follow_redirects=False)).status_code == 200  # this session lives on

    client.cookies.set("plmail_session", stolen_cookie)
    assert (await client.get("/", follow_redirects=False)).status_code == 303

    wrong = await sign_in(client, "admin@example.org", PASSWORD)
    assert wrong.status_code == 401
    assert (await sign_in(client, "admin@example.org", "battery staple")).status_code == 200


async def test_preferences_switch_the_interface_to_german(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    saved = await post_form(client, "/settings/preferences",
                            {"display_name": "Ada", "locale": "de", "time_zone": "Europe/Berlin"},
                            token_from="/settings")
    assert saved.status_code == 200
    assert "Gespeichert." in saved.text
    inbox = await client.get("/")
    assert "Posteingang" in inbox.text and "Abmelden" in inbox.text
    assert '<html lang="de">' in inbox.text


async def test_htmx_request_without_session_gets_a_full_page_redirect(client: httpx.AsyncClient) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    client.cookies.clear()
    response = await client.get("/admin/queues", headers={"HX-Request": "true"}, follow_redirects=False)
    assert response.status_code == 200
    assert response.headers["hx-redirect"] == "/login"
    from_page = await client.get("/admin/queues", follow_redirects=False,
                                 headers={"HX-Request": "true", "HX-Current-URL": "http://plmail.test/admin"})
    # The fragment URL is no place to come back to; the page that asked for it is.
    assert from_page.headers["hx-redirect"] == "/login?next=/admin"


async def test_healthz_is_public_and_reports_the_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "workers": {}}
