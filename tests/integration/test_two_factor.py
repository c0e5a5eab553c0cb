"""Two-factor sign-in with TOTP (RFC 6238): enrolment with a QR code, a code after the password, recovery codes
(each once), remembered browsers, throttling like a password, and the administrator's reset."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
import zoneinfo
from pathlib import Path

import httpx
import pyotp
from litestar import Litestar

from plmail.services import Services
from tests.conftest import browser
from tests.support.web import csrf_token, post_form, sign_in, sign_up_admin

PASSWORD = "correct horse"
EMAIL = "admin@example.org"


async def _enrol(client: httpx.AsyncClient) -> tuple[str, list[str]]:
    page = await client.get("/settings/two-factor")
    assert page.status_code == 200 and "<svg" in page.text  # the QR code, drawn on the server
    secret = re.search(r"data-totp-secret>([A-Z2-7]+)<", page.text)
    assert secret is not None
    wrong = await post_form(client, "/settings/two-factor",
                            {"secret": secret.group(1), "code": "000000", "password": PASSWORD},
                            token_from="/settings/two-factor")
    assert wrong.status_code == 400 and "That code does not match" in wrong.text
    # The previous step's code (within ±1 step): the current and next ones stay unused for the sign-ins below.
    done = await post_form(client, "/settings/two-factor",
                           {"secret": secret.group(1), "code": pyotp.TOTP(secret.group(1)).at(time.time() - 30)},
                           token_from="/settings/two-factor")
    assert done.status_code == 200 and "Two-factor sign-in is on." in done.text
    codes = re.findall(r"<li><code>([a-z2-9]{5}-[a-z2-9]{5})</code></li>", done.text)
    return secret.group(1), codes


async def _password_step(client: httpx.AsyncClient) -> httpx.Response:
    client.cookies.delete("plmail_session")
    return await sign_in(client, EMAIL, PASSWORD)


async def _code(client: httpx.AsyncClient, code: str, **extra: str) -> httpx.Response:
    token = await csrf_token(client, "/login/code")
    return await client.post("/login/code", data={"code": code, "_csrf_token": token, **extra})


def _next_step_code(secret: str) -> str:
    """A code of the following time step (still within ±1 step), so it was not used yet."""
    return pyotp.TOTP(secret).at(time.time() + 30)


async def test_enrol_then_sign_in_with_a_code_once_and_with_a_recovery_code_once(
        client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    secret, codes = await _enrol(client)
    assert len(codes) == 8 and len(set(codes)) == 8
    stored = await services.db.fetch("SELECT code_hash FROM recovery_code")
    assert len(stored) == 8 and all(c not in str(stored) for c in codes)  # hashed
    sealed = await services.db.fetchval("SELECT totp_secret FROM app_user")
    assert secret.encode() not in sealed  # sealed with the installation key
    settings = await client.get("/settings/two-factor")
    assert "single-factor by design" in settings.text and "8 recovery codes left." in settings.text

    asked = await _password_step(client)
    assert asked.url.path == "/login/code" and "authenticator app" in asked.text
    assert (await client.get("/", follow_redirects=False)).status_code == 303  # the password alone is not enough
    code = pyotp.TOTP(secret).now()
    assert (await _code(client, code)).url.path == "/"
    assert (await client.get("/", follow_redirects=False)).status_code == 200

    await _password_step(client)
    replayed = await _code(client, code)
    assert replayed.status_code == 401 and "wrong or was used already" in replayed.text
    early = await _code(client, _next_step_code(secret))  # the next step's code: within ±1 step
    assert early.url.path == "/"

    await _password_step(client)
    assert (await _code(client, codes[0].upper())).url.path == "/"  # typed any case
    await _password_step(client)
    assert (await _code(client, codes[0])).status_code == 401  # once only
    assert (await _code(client, codes[1].replace("-", ""))).url.path == "/"
    left = await client.get("/settings/two-factor")
    assert "6 recovery codes left." in left.text


async def test_a_remembered_browser_skips_the_code_and_others_do_not(client: httpx.AsyncClient, web_app: Litestar,
                                                                    services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    secret, _ = await _enrol(client)
    await _password_step(client)
    assert (await _code(client, pyotp.TOTP(secret).now(), remember_device="on")).url.path == "/"
    until = await services.db.fetchval("SELECT second_factor_until - now() FROM trusted_device")
    assert 29 <= until.days <= 30
    skipped = await _password_step(client)
    assert skipped.url.path == "/"  # this browser is remembered: no code
    async with browser(web_app, "198.51.100.30") as other:
        assert (await sign_in(other, EMAIL, PASSWORD)).url.path == "/login/code"
    await services.db.execute("UPDATE trusted_device SET second_factor_until = now() - interval '1 second'")
    assert (await _password_step(client)).url.path == "/login/code"  # after 30 days, a code again


async def test_password_and_code_guessing_alternated_over_many_addresses_is_counted_per_user(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    """Issue 39 rule 2, as the attack: a thief who knows the password (not the phone) guesses codes, gives the
    password again whenever asked, and comes from a new address each time. Five wrong codes per sign-in attempt,
    then the password again; twenty per hour for the user, then no code is checked until the shown time."""
    await sign_up_admin(client, EMAIL, PASSWORD)
    secret, _ = await _enrol(client)
    await _password_step(client)
    assert (await _code(client, pyotp.TOTP(secret).now(), remember_device="on")).url.path == "/"  # the owner
    guesses = (f"{n:06d}" for n in itertools.count(1))
    for round_ in range(4):
        async with browser(web_app, f"198.51.100.{40 + round_}") as thief:
            assert (await sign_in(thief, EMAIL, PASSWORD)).url.path == "/login/code"
            flow = thief.cookies.get("plmail_flow")
            answers = [await _code(thief, next(guesses)) for _ in range(5)]
            assert [a.status_code for a in answers] == [401] * 4 + [429 if round_ == 3 else 401]
            if round_ < 3:
                # The fifth wrong code ends this attempt: the password again, and the old flow cookie replayed
                # does not start the count over.
                assert answers[-1].url.path == "/login/code" and "Enter your password again" in answers[-1].text
                assert (await thief.get("/login/code")).url.path == "/login"
                thief.cookies.set("plmail_flow", flow or "", domain="plmail.test")
                replayed = await _code(thief, next(guesses))
                assert replayed.status_code == 401 and "Enter your password again" in replayed.text
    # Twenty wrong codes within the hour: even the right code (after the right password, from yet another address)
    # is not checked until the hour is over, and the page says until when.
    async with browser(web_app, "198.51.100.60") as thief:
        assert (await sign_in(thief, EMAIL, PASSWORD)).url.path == "/login/code"
        waiting = await _code(thief, pyotp.TOTP(secret).now())
        assert waiting.status_code == 429
        assert 55 * 60 < int(waiting.headers["retry-after"]) <= 60 * 60
        ends = await services.db.fetchval(
            "SELECT locked_until FROM login_throttle WHERE key LIKE 'web:code-user:%'")
        shown = ends.astimezone(zoneinfo.ZoneInfo("Europe/Berlin")).strftime("%-I:%M")  # the admin's zone, 12 h
        assert f"Try again after {shown}" in waiting.text, re.findall(r'role="alert">([^<]*)', waiting.text)
    # The owner's browser that remembers the second factor needs no code and gets in.
    assert (await _password_step(client)).url.path == "/"


async def test_the_admin_resets_a_lost_second_factor_and_the_user_can_switch_it_off(
        client: httpx.AsyncClient, web_app: Litestar, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    bob = await services.users.create_user("bob@example.org", PASSWORD)
    async with browser(web_app, "198.51.100.32") as bobs:
        await sign_in(bobs, "bob@example.org", PASSWORD)
        await _enrol(bobs)
        bobs.cookies.delete("plmail_session")
        assert (await sign_in(bobs, "bob@example.org", PASSWORD)).url.path == "/login/code"
        admin = await client.get("/admin")
        assert f'action="/admin/users/{bob.id}/reset-second-factor"' in admin.text
        reset = await post_form(client, f"/admin/users/{bob.id}/reset-second-factor", {}, token_from="/admin")
        assert reset.status_code == 200 and "Second factor removed" in reset.text
        bobs.cookies.delete("plmail_session")
        assert (await sign_in(bobs, "bob@example.org", PASSWORD)).url.path == "/"
        assert await services.db.fetchval("SELECT count(*) FROM recovery_code WHERE user_id = $1", bob.id) == 0

        await _enrol(bobs)
        wrong = await post_form(bobs, "/settings/two-factor/disable", {"password": "nope"},
                                token_from="/settings/two-factor")
        assert wrong.status_code == 400 and (await services.users.by_id(bob.id)).two_factor
        off = await post_form(bobs, "/settings/two-factor/disable", {"password": PASSWORD},
                              token_from="/settings/two-factor")
        assert "Two-factor sign-in is off." in off.text and not (await services.users.by_id(bob.id)).two_factor


async def test_the_command_line_resets_a_second_factor_for_an_admin_locked_out_of_it(
        client: httpx.AsyncClient, services: Services, database_url: str, tmp_path: Path) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    await _enrol(client)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(tmp_path / "data")})

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "plmail.cli", "user", "reset-second-factor", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    unknown = cli("nobody@example.org")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "No user with the address nobody@example.org" in unknown.stderr
    assert (await services.users.by_email(EMAIL)).two_factor
    done = cli(EMAIL)
    assert done.returncode == 0, done.stderr
    assert f"two-factor sign-in removed for {EMAIL}" in done.stdout
    assert not (await services.users.by_email(EMAIL)).two_factor
    assert await services.db.fetchval("SELECT count(*) FROM recovery_code") == 0
    assert (await _password_step(client)).url.path == "/"  # the password alone signs in again
