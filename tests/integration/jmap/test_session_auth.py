"""Session resource and app-password authentication: Bearer, Basic, refusals, throttling, last use."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import httpx

from plmail.config import Settings
from plmail.domain.enums import ProviderKind
from tests.integration.jmap.conftest import JmapBox
from tests.support.repos import account_rows
from tests.support.web import sign_in


def basic(user: str, secret: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()}


async def test_well_known_redirects_to_a_session_with_capabilities_accounts_and_urls(box: JmapBox) -> None:
    redirect = await box.http.get("/.well-known/jmap", follow_redirects=False)
    assert redirect.status_code in (301, 302, 307, 308)
    assert redirect.headers["location"].endswith("/jmap/session")
    session = (await box.http.get("/.well-known/jmap", headers=box.headers)).json()

    core = session["capabilities"]["urn:ietf:params:jmap:core"]
    assert core["maxSizeUpload"] == 50_000_000 and core["maxConcurrentUpload"] == 4
    assert core["maxSizeRequest"] == 10_000_000 and core["maxConcurrentRequests"] == 4
    assert core["maxCallsInRequest"] == 32 and core["maxObjectsInGet"] == 500 and core["maxObjectsInSet"] == 500
    assert {"urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission",
            "urn:plmail:params:jmap:categories"} <= set(session["capabilities"])
    account = session["accounts"][box.account]
    # each connected account is named by its name and address, so two of one address stay apart
    assert account["name"] == "Archive <reader@example.org>" and account["isPersonal"] and not account["isReadOnly"]
    assert "urn:ietf:params:jmap:mail" in account["accountCapabilities"]
    # the primary account is the unified one: every account's mail behind the user's labels
    unified = f"u{box.user.id}"
    assert session["primaryAccounts"]["urn:ietf:params:jmap:mail"] == unified
    assert session["primaryAccounts"]["urn:ietf:params:jmap:submission"] == unified
    assert session["accounts"][unified]["name"] == "All accounts (reader@example.org)"
    assert "urn:ietf:params:jmap:vacationresponse" in session["accounts"][unified]["accountCapabilities"]
    assert session["capabilities"]["urn:ietf:params:jmap:websocket"] == {"url": "ws://plmail.test/jmap/ws",
                                                                         "supportsPush": True}
    assert session["username"] == "reader@example.org"
    assert session["apiUrl"] == "http://plmail.test/jmap/api"
    assert session["downloadUrl"] == ("http://plmail.test/jmap/download/{accountId}/{blobId}/{name}"
                                      "?accept={type}")
    assert session["uploadUrl"] == "http://plmail.test/jmap/upload/{accountId}"
    assert session["eventSourceUrl"] == ("http://plmail.test/jmap/eventsource?types={types}"
                                         "&closeafter={closeafter}&ping={ping}")


async def test_session_state_changes_when_accounts_change(box: JmapBox) -> None:
    before = (await box.http.get("/jmap/session", headers=box.headers)).json()
    api = (await box.request([["Core/echo", {"hello": True}, "e"]])).json()
    assert api["sessionState"] == before["state"]
    await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL, name="Second",
                                       email="second@example.org")
    after = (await box.http.get("/jmap/session", headers=box.headers)).json()
    assert after["state"] != before["state"]
    assert len(after["accounts"]) == 3  # the unified account and the two connected ones
    assert (await box.request([["Core/echo", {}, "e"]])).json()["sessionState"] == after["state"]


async def test_missing_or_wrong_credentials_are_401_problem_json(box: JmapBox) -> None:
    for headers in ({}, {"Authorization": "Bearer plmail_" + "0" * 64}, {"Authorization": "Bearer nonsense"},
                    {"Authorization": "Digest abc"}, basic("reader@example.org", "wrong")):
        response = await box.http.get("/jmap/session", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["type"] == "urn:ietf:params:jmap:error:unauthorized"
        assert response.headers["www-authenticate"] == 'Basic realm="plmail JMAP"'


async def test_basic_needs_the_owners_address_and_bearer_needs_the_prefix(box: JmapBox) -> None:
    secret = box.token.removeprefix("plmail_")
    assert (await box.http.get("/jmap/session", headers=basic("Reader@Example.org", secret))).status_code == 200
    assert (await box.http.get("/jmap/session", headers=basic("reader@example.org", box.token))).status_code == 200
    other = await box.services.users.create_user("other@example.org", "correct horse")
    assert (await box.http.get("/jmap/session", headers=basic("other@example.org", secret))).status_code == 401
    assert other.email == "other@example.org"
    assert (await box.http.get("/jmap/session",
                               headers={"Authorization": f"Bearer {secret}"})).status_code == 401


async def test_the_web_session_cookie_is_not_a_jmap_credential(box: JmapBox) -> None:
    assert (await sign_in(box.http, "reader@example.org", "correct horse")).status_code == 200
    assert box.http.cookies.get("plmail_session")
    response = await box.http.post("/jmap/api", json={"using": [], "methodCalls": []})
    assert response.status_code == 401


async def test_a_revoked_app_password_stops_working(box: JmapBox) -> None:
    listed = await box.services.app_passwords.active(box.user.id)
    await box.services.app_passwords.revoke(box.user.id, listed[0].id)
    assert (await box.http.get("/jmap/session", headers=box.headers)).status_code == 401
    assert await box.services.app_passwords.active(box.user.id) == []


async def test_failures_are_throttled_with_retry_after(box: JmapBox) -> None:
    wrong = basic("reader@example.org", "f" * 64)
    statuses = [(await box.http.get("/jmap/session", headers=wrong)).status_code for _ in range(6)]
    assert statuses[:5] == [401] * 5
    locked = await box.http.get("/jmap/session", headers=wrong)
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1
    assert locked.headers["content-type"].startswith("application/problem+json")
    # The lock is per address for Basic; the web sign-in keeps its own counters.
    assert (await sign_in(box.http, "reader@example.org", "correct horse")).status_code == 200


async def test_a_valid_app_password_works_after_a_hundred_failures_from_its_address(box: JmapBox) -> None:
    wrong_bearer = {"Authorization": "Bearer plmail_" + "e" * 64}
    wrong_basic = basic("reader@example.org", "d" * 64)
    statuses = [(await box.http.get("/jmap/session", headers=wrong_bearer if n % 2 else wrong_basic)).status_code
                for n in range(100)]
    assert set(statuses) == {401, 429} and statuses[-1] == 429  # the guesses are slowed down...
    # ...but from the same client address, the owner's valid app password is never refused.
    assert (await box.http.get("/jmap/session", headers=box.headers)).status_code == 200
    secret = box.token.removeprefix("plmail_")
    assert (await box.http.get("/jmap/session", headers=basic("reader@example.org", secret))).status_code == 200
    api = await box.request([["Core/echo", {"ok": True}, "e"]])
    assert api.status_code == 200


async def test_last_use_is_recorded_at_most_every_five_minutes(box: JmapBox) -> None:
    db = box.services.db
    assert await db.fetchval("SELECT last_used_at FROM app_password WHERE user_id = $1", box.user.id) is None
    await box.http.get("/jmap/session", headers=box.headers)
    first = await db.fetchval("SELECT last_used_at FROM app_password WHERE user_id = $1", box.user.id)
    assert first is not None
    await box.http.get("/jmap/session", headers=box.headers)
    assert await db.fetchval("SELECT last_used_at FROM app_password WHERE user_id = $1", box.user.id) == first
    await db.execute("UPDATE app_password SET last_used_at = now() - interval '301 seconds' WHERE user_id = $1",
                     box.user.id)
    await box.http.get("/jmap/session", headers=box.headers)
    later = await db.fetchval("SELECT last_used_at FROM app_password WHERE user_id = $1", box.user.id)
    assert later > first


async def test_app_password_cli_creates_lists_and_revokes(box: JmapBox, settings: Settings, database_url: str
                                                          ) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(settings.data_dir)})
    created = subprocess.run(
        [sys.executable, "-m", "plmail.cli", "app-password", "create", "--user", "reader@example.org",
         "--name", "Laptop"], env=env, capture_output=True, text=True, timeout=120, check=True)
    token = created.stdout.strip()
    assert token.startswith("plmail_") and len(token) == 71
    response = await box.http.get("/jmap/session", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    listing = subprocess.run([sys.executable, "-m", "plmail.cli", "app-password", "list", "--user",
                              "reader@example.org"], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert "Laptop" in listing.stdout and "Phone" in listing.stdout
    assert token not in listing.stdout
    laptop = next(line.split("\t")[0] for line in listing.stdout.splitlines() if "Laptop" in line)
    subprocess.run([sys.executable, "-m", "plmail.cli", "app-password", "revoke", "--user", "reader@example.org",
                    laptop], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert (await box.http.get("/jmap/session",
                               headers={"Authorization": f"Bearer {token}"})).status_code == 401


async def test_stored_secret_is_a_hash(box: JmapBox) -> None:
    stored = await box.services.db.fetchval("SELECT secret_hash FROM app_password WHERE user_id = $1", box.user.id)
    assert box.token.removeprefix("plmail_") not in stored and len(stored) == 64


async def test_unknown_paths_under_jmap_are_not_pages(box: JmapBox, client: httpx.AsyncClient) -> None:
    response = await client.get("/jmap/nothing", headers=box.headers)
    assert response.status_code in (404, 405)
