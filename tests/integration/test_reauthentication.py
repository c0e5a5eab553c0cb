"""Issue 39 rule 8, as the attack: someone holding a signed-in session (a copied cookie, an unlocked computer)
tries to replace the second factor, read new recovery codes, switch the factor off, add an app password or change
the password. Each asks for the current password, unless this session gave it within the last ten minutes."""

from __future__ import annotations

import re
import time

import httpx
import pyotp
from litestar import Litestar

from plmail.services import Services
from tests.conftest import browser
from tests.support.web import post_form, sign_in, sign_up_admin

EMAIL = "admin@example.org"
PASSWORD = "correct horse"
ASK = "Enter your current password to make this change."


async def _session_copy(web_app: Litestar, owner: httpx.AsyncClient) -> httpx.AsyncClient:
    """Another browser elsewhere, carrying a copy of the owner's session cookie (not the device cookie)."""
    thief = browser(web_app, "198.51.100.66")
    thief.cookies.set("plmail_session", owner.cookies.get("plmail_session") or "", domain="plmail.test")
    return thief


async def test_a_session_alone_cannot_enrol_a_second_factor_or_add_an_app_password(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    async with await _session_copy(web_app, client) as thief:
        page = await thief.get("/settings/two-factor")
        assert page.status_code == 200 and 'name="password"' in page.text  # the form asks for it
        secret = pyotp.random_base32()
        enrol = await post_form(thief, "/settings/two-factor", {"secret": secret, "code": pyotp.TOTP(secret).now()},
                                token_from="/settings/two-factor")
        assert enrol.status_code == 400 and ASK in enrol.text
        assert "Recovery codes" not in enrol.text
        assert await services.db.fetchval("SELECT totp_secret FROM app_user") is None
        assert await services.db.fetchval("SELECT count(*) FROM recovery_code") == 0

        device = await post_form(thief, "/settings/devices", {"name": "Thief's phone"}, token_from="/settings/devices")
        assert device.status_code == 400 and ASK in device.text and "plmail_" not in device.text
        assert await services.db.fetchval("SELECT count(*) FROM app_password") == 0

        changed = await post_form(thief, "/settings/password",
                                  {"current_password": "guess", "new_password": "a new password of mine"},
                                  token_from="/settings")
        assert changed.status_code == 400 and "The current password is wrong." in changed.text
        # Guessing the password through these forms is throttled like signing in (the guess above counted).
        statuses = []
        for n in range(services.users.policy.pair_threshold):
            answer = await post_form(thief, "/settings/devices", {"name": "x", "password": f"guess {n}"},
                                     token_from="/settings/devices")
            statuses.append("Too many failed sign-in attempts" in answer.text)
        assert statuses == [False] * (services.users.policy.pair_threshold - 1) + [True]
        right = await post_form(thief, "/settings/devices", {"name": "x", "password": PASSWORD},
                                token_from="/settings/devices")
        assert "Too many failed sign-in attempts" in right.text
        assert await services.db.fetchval("SELECT count(*) FROM app_password") == 0
    # The owner, giving the password, gets both.
    done = await post_form(client, "/settings/devices", {"name": "My phone", "password": PASSWORD},
                           token_from="/settings/devices")
    assert done.status_code == 200 and re.search(r"data-secret>plmail_", done.text)


async def test_with_a_second_factor_on_new_codes_and_switching_it_off_need_the_password_again_after_ten_minutes(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    secret = pyotp.random_base32()
    on = await post_form(client, "/settings/two-factor",
                         {"secret": secret, "code": pyotp.TOTP(secret).at(time.time() - 30), "password": PASSWORD},
                         token_from="/settings/two-factor")
    assert on.status_code == 200 and "Two-factor sign-in is on." in on.text
    # Within ten minutes of giving it, this session is not asked again...
    page = await client.get("/settings/two-factor")
    assert 'name="password"' not in page.text
    codes = await post_form(client, "/settings/two-factor/codes", {}, token_from="/settings/two-factor")
    assert codes.status_code == 200 and "New recovery codes" in codes.text
    # ...but a copy of its cookie elsewhere is no different from the session itself: the stamp is the session's.
    # Eleven minutes later, everyone is asked again.
    await services.db.execute("UPDATE web_session SET reauthenticated_at = now() - interval '11 minutes'")
    async with await _session_copy(web_app, client) as thief:
        for path in ("/settings/two-factor/codes", "/settings/two-factor/disable"):
            refused = await post_form(thief, path, {}, token_from="/settings/two-factor")
            assert refused.status_code == 400 and ASK in refused.text
        assert await services.db.fetchval("SELECT totp_secret IS NOT NULL FROM app_user")
    page = await client.get("/settings/two-factor")
    assert 'name="password"' in page.text
    wrong = await post_form(client, "/settings/two-factor/disable", {"password": "nope"},
                            token_from="/settings/two-factor")
    assert wrong.status_code == 400 and "The current password is wrong." in wrong.text
    off = await post_form(client, "/settings/two-factor/disable", {"password": PASSWORD},
                          token_from="/settings/two-factor")
    assert off.status_code == 200 and "Two-factor sign-in is off." in off.text
    # A new sign-in alone does not count as giving the password again for these changes.
    client.cookies.delete("plmail_session")
    await sign_in(client, EMAIL, PASSWORD)
    assert 'name="password"' in (await client.get("/settings/devices")).text
