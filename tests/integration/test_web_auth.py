"""First-run setup, sign-in, throttling, CSRF and per-user isolation, over HTTP through the real app."""

from __future__ import annotations

import httpx

from plmail.services import Services
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

    ok = await post_form(client, "/login", {"email": "ADMIN@example.org", "password": PASSWORD, "next": "/settings"})
    assert ok.status_code == 200 and "Change password" in ok.text  # followed next= to the settings page


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


async def test_login_is_throttled_after_repeated_failures(client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, "admin@example.org", PASSWORD)
    client.cookies.clear()
    for _ in range(services.users.policy.email_threshold):
        assert (await sign_in(client, "admin@example.org", "guess")).status_code == 401
    # Locked now: even the right password is refused, with a retry hint, before any hashing.
    locked = await sign_in(client, "admin@example.org", PASSWORD)
    assert locked.status_code == 429
    assert int(locked.headers["retry-after"]) > 0
    assert "Too many failed sign-in attempts" in locked.text
    # The lock is stored in the database, so a restart does not lift it.
    state = await services.users.throttle.state(["email:admin@example.org"])
    assert state.failures == services.users.policy.email_threshold
    assert state.locked_until is not None
    # Once the lock has passed, the right password works and clears the counter.
    await services.db.execute("UPDATE login_throttle SET locked_until = now() - interval '1 second'")
    assert (await sign_in(client, "admin@example.org", PASSWORD)).status_code == 200
    cleared = await services.users.throttle.state(["email:admin@example.org"])
    assert cleared.failures == 0


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
