"""Connecting Gmail and Microsoft 365 accounts through the app, over HTTP, against the fake providers:
consent with PKCE and state, tokens sealed at rest, clear errors in English and German, the admin's client
settings, and an account whose access was withdrawn connected again in place."""

from __future__ import annotations

import re

import httpx

from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import AccountStatus, Locale, ProviderKind
from plmail.providers.oauth_accounts import OAuthServices
from plmail.services import Services
from tests.integration.oauth.conftest import consent, query_of, start_consent
from tests.support.fakes import FakeServer, GmailFake, GraphFake
from tests.support.repos import account_admin
from tests.support.web import post_form, sign_in, sign_up_admin


def _account_id(response: httpx.Response) -> int:
    match = re.search(r"/accounts/(\d+)$", str(response.url))
    assert match, (response.url, response.text[:500])
    return int(match.group(1))


async def test_connect_gmail_creates_the_account_with_sealed_tokens(
    client: httpx.AsyncClient, services: Services, google: FakeServer[GmailFake],
) -> None:
    await sign_up_admin(client)
    page = await client.get("/accounts")
    assert "Connect Gmail" in page.text and "Connect Microsoft 365 / Outlook" in page.text

    started = await start_consent(client, "google")
    asked = query_of(started.headers["location"])
    assert started.headers["location"].startswith(f"{google.url}/o/oauth2/v2/auth?")
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert asked["access_type"] == "offline" and asked["redirect_uri"] == "http://plmail.test/accounts/oauth/google/callback"
    assert "https://mail.google.com/" in asked["scope"].split()  # full access: deleting for good needs it
    assert "verifier" not in started.headers["location"] and asked["state"]

    async with httpx.AsyncClient() as browser:
        answer = await browser.get(started.headers["location"], follow_redirects=False)
    callback = answer.headers["location"]
    done = await client.get(callback)
    account_id = _account_id(done)
    assert "alice@gmail.com" in done.text
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.provider_kind is ProviderKind.GMAIL and record.status is AccountStatus.OK
    assert record.email == "alice@gmail.com" and record.credentials is not None
    tokens = services.providers.get(OAuthServices).tokens.tokens_of(record)
    assert tokens.access_token.encode() not in record.credentials  # sealed, never plaintext
    assert tokens.refresh_token is not None and tokens.refresh_token.encode() not in record.credentials
    assert google.app.oauth.check_access_token(tokens.access_token)[0] == "alice@gmail.com"
    exchanged = [r for r in google.app.oauth.token_requests if r.grant_type == "authorization_code"]
    assert [r.ok for r in exchanged] == [True]  # the PKCE verifier matched the challenge

    # the callback works once: the same URL again is refused, and no second account appears
    replay = await client.get(callback)
    assert replay.status_code == 400 and "did not start here" in replay.text
    assert len(await services.accounts.for_user(record.user_id)) == 1

    # connecting the same mailbox again gives the one account fresh tokens instead of a twin
    again = await consent(client, "google")
    assert _account_id(again) == account_id
    assert len(await services.accounts.for_user(record.user_id)) == 1


async def test_a_declined_consent_and_a_forged_callback_are_explained_in_english_and_german(
    client: httpx.AsyncClient, services: Services, google: FakeServer[GmailFake],
) -> None:
    await sign_up_admin(client)
    google.app.oauth.deny_consent = True
    declined = await consent(client, "google")
    assert declined.status_code == 400
    assert "Access was not granted at Google, so no account was connected." in declined.text
    forged = await client.get("/accounts/oauth/google/callback", params={"state": "forged", "code": "x"})
    assert forged.status_code == 400 and "This sign-in did not start here" in forged.text

    await post_form(client, "/logout", {}, token_from="/")
    german = await services.users.create_user("anna@example.org", "correct horse", locale=Locale.DE)
    await sign_in(client, "anna@example.org", "correct horse")
    declined = await consent(client, "google")
    assert declined.status_code == 400
    assert "Bei Google wurde der Zugriff nicht erlaubt, daher wurde kein Konto verbunden." in declined.text
    forged = await client.get("/accounts/oauth/google/callback", params={"state": "forged", "code": "x"})
    assert forged.status_code == 400 and "wurde nicht hier begonnen" in forged.text
    assert await services.accounts.for_user(german.id) == []


async def test_the_admin_sets_up_microsoft_and_a_microsoft_365_account_connects(
    client: httpx.AsyncClient, services: Services, microsoft: FakeServer[GraphFake],
) -> None:
    await sign_up_admin(client)
    unset = await start_consent(client, "microsoft")
    assert unset.status_code == 400 and "Microsoft sign-in is not set up yet" in unset.text

    admin = await client.get("/admin")
    assert "http://plmail.test/accounts/oauth/microsoft/callback" in admin.text
    secret = microsoft.app.client_secret
    assert secret is not None
    saved = await post_form(client, "/admin/oauth/microsoft", {"client_id": microsoft.app.client_id,
                                                               "client_secret": secret}, token_from="/admin")
    assert saved.status_code == 200 and "Saved." in saved.text
    stored = await services.db.fetchval("SELECT value::text FROM app_setting WHERE key = 'oauth'")
    assert microsoft.app.client_id in stored and secret not in stored  # the secret is sealed
    # a blank secret keeps the stored one
    await post_form(client, "/admin/oauth/microsoft", {"client_id": microsoft.app.client_id, "client_secret": ""},
                    token_from="/admin")
    client_creds = await services.providers.get(OAuthServices).apps.client(OAuthProvider.MICROSOFT)
    assert client_creds is not None and client_creds.client_secret == secret

    done = await consent(client, "microsoft")
    account_id = _account_id(done)
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.provider_kind is ProviderKind.GRAPH
    assert record.email == microsoft.app.mailbox.user_principal_name.lower()
    refreshed = await services.providers.get(OAuthServices).tokens.refresh(record.account)
    assert microsoft.app.oauth.check_access_token(refreshed)[0] is not None


async def test_a_withdrawn_grant_asks_for_a_reconnect_which_keeps_the_account(
    client: httpx.AsyncClient, services: Services, google: FakeServer[GmailFake],
) -> None:
    await sign_up_admin(client)
    account_id = _account_id(await consent(client, "google"))
    google.app.oauth.revoke_user("alice@gmail.com")
    await services.sync.run(account_id)  # the sync meets the revoked grant
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.status is AccountStatus.RECONNECT
    assert "Connect the account again" in record.status_detail
    assert account_id not in await account_admin(services).syncable_ids()
    assert not await services.importer.ensure_running(account_id)
    page = await client.get(f"/accounts/{account_id}")
    assert "Access was withdrawn" in page.text and "Connect again" in page.text
    calls = len(google.app.calls)
    assert await services.sync.run(account_id) == []
    assert len(google.app.calls) == calls  # its jobs stop: nothing is asked of Gmail

    started = await start_consent(client, "google", account_id=account_id, page=f"/accounts/{account_id}")
    assert query_of(started.headers["location"])["login_hint"] == "alice@gmail.com"
    back = await consent(client, "google", account_id=account_id)
    assert _account_id(back) == account_id
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.status is AccountStatus.OK and record.status_detail == ""
    await services.sync.run(account_id)
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.status is AccountStatus.OK and "gmail" in record.sync_state
