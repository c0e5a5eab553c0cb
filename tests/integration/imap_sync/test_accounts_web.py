"""The account pages: add with presets and a connection test, edit (a blank password keeps it), pause,
choose folders, watch the import, remove (its mail goes); and nobody sees another user's account."""

from __future__ import annotations

import re

import httpx

from plmail.domain.enums import AccountStatus
from plmail.services import Services
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message
from tests.support.repos import account_admin
from tests.support.web import post_form, sign_in, sign_up_admin


def _form(mail: DovecotUser, **changes: str) -> dict[str, str]:
    server = mail.imap()
    data = {"email": f"{mail.name}@example.org", "name": "Work", "host": server.host, "port": str(server.port),
            "tls": "none", "username": mail.name, "password": mail.password}
    data.update(changes)
    return data


async def _account_id(response: httpx.Response) -> int:
    match = re.search(r"/accounts/(\d+)$", str(response.url))
    assert match, response.url
    return int(match.group(1))


async def _allow_any_port(client: httpx.AsyncClient) -> None:
    """The test Dovecot listens on a free port, not a mail port: the administrator allows any port."""
    saved = await post_form(client, "/admin/connections", {"any_port": "on"}, token_from="/admin")
    assert saved.status_code == 200


async def test_add_test_edit_pause_and_remove_an_account(
    client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser,
) -> None:
    await sign_up_admin(client)
    await _allow_any_port(client)
    preset = await client.get("/accounts/preset", params={"email": "someone@gmail.com"})
    assert 'value="imap.gmail.com"' in preset.text and 'value="993"' in preset.text
    assert "app password" in preset.text
    guessed = await client.get("/accounts/new", params={"email": "me@example.net"})
    assert 'value="imap.example.net"' in guessed.text

    failed = await post_form(client, "/accounts/test", _form(dovecot_user, password="nope"), token_from="/accounts/new")
    assert "The connection failed" in failed.text and "refused the sign-in" in failed.text
    works = await post_form(client, "/accounts/test", _form(dovecot_user), token_from="/accounts/new")
    assert "Connection and sign-in work." in works.text and "Not encrypted." in works.text

    refused = await post_form(client, "/accounts/", _form(dovecot_user, password="nope"), token_from="/accounts/new")
    assert refused.status_code == 400 and "refused the sign-in" in refused.text
    created = await post_form(client, "/accounts/", _form(dovecot_user), token_from="/accounts/new")
    assert created.status_code == 200
    account_id = await _account_id(created)
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.credentials is not None
    assert dovecot_user.password.encode() not in record.credentials  # sealed, never plaintext

    # the sync the page queued, run here; then the folders and the import show
    dovecot_user.deliver([message(i) for i in range(1, 61)])
    await services.sync.run(account_id)
    page = await client.get(f"/accounts/{account_id}")
    assert "INBOX" in page.text and "Importing: 0 of 60 messages" in page.text
    sidebar = await client.get(f"/accounts/{account_id}/sidebar")
    assert "0 %" in sidebar.text
    listing = await client.get("/accounts")
    assert "Importing: 0 of 60 messages" in listing.text
    home = await client.get("/")
    assert f'hx-get="/accounts/{account_id}/sidebar"' in home.text
    await services.importer.run_page(account_id, chain=False)
    progress = await client.get(f"/accounts/{account_id}/progress")
    assert "Importing: 50 of 60 messages" in progress.text and 'hx-trigger="every 3s"' in progress.text
    await services.importer.run_page(account_id, chain=False)
    progress = await client.get(f"/accounts/{account_id}/progress")
    assert "All mail is in: 60 messages" in progress.text and "hx-trigger" not in progress.text

    # edit with a blank password: the stored one is kept (and tested)
    edited = await post_form(client, f"/accounts/{account_id}", _form(dovecot_user, password="", name="Job"),
                             token_from=f"/accounts/{account_id}")
    assert edited.status_code == 200
    after = await account_admin(services).for_job(account_id)
    assert after is not None and after.name == "Job" and after.credentials == record.credentials
    tested = await post_form(client, f"/accounts/{account_id}/test", _form(dovecot_user, password=""),
                             token_from=f"/accounts/{account_id}")
    assert "Connection and sign-in work." in tested.text

    # a folder switched off; the account paused and resumed
    inbox = await services.db.fetchval("SELECT id FROM mailbox WHERE account_id = $1 AND full_path = 'INBOX'",
                                       account_id)
    await post_form(client, f"/accounts/{account_id}/folders/{inbox}", {}, token_from=f"/accounts/{account_id}")
    assert not await services.db.fetchval("SELECT is_sync_enabled FROM mailbox WHERE id = $1", inbox)
    await post_form(client, f"/accounts/{account_id}/active", {}, token_from=f"/accounts/{account_id}")
    paused = await account_admin(services).for_job(account_id)
    assert paused is not None and not paused.is_active
    assert await services.sync.run(account_id) == []
    await post_form(client, f"/accounts/{account_id}/active", {"enabled": "on"}, token_from=f"/accounts/{account_id}")
    resumed = await account_admin(services).for_job(account_id)
    assert resumed is not None and resumed.is_active

    listing = await client.get("/accounts")
    assert "Job" in listing.text and "Connected" in listing.text
    removed = await post_form(client, f"/accounts/{account_id}/delete", {}, token_from=f"/accounts/{account_id}")
    assert removed.status_code == 200
    assert await services.db.fetchval("SELECT count(*) FROM message") == 0
    assert await services.db.fetchval("SELECT count(*) FROM mailbox") == 0


async def test_a_failed_sign_in_shows_why_and_other_users_see_nothing(
    client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser,
) -> None:
    await sign_up_admin(client)
    await _allow_any_port(client)
    created = await post_form(client, "/accounts/", _form(dovecot_user), token_from="/accounts/new")
    account_id = await _account_id(created)
    await account_admin(services).set_status(account_id, AccountStatus.AUTH_FAILED,
                                                  "127.0.0.1 refused the sign-in for u1: [AUTHENTICATIONFAILED]")
    page = await client.get(f"/accounts/{account_id}")
    assert "Sign-in failed; plmail stopped trying" in page.text and "AUTHENTICATIONFAILED" in page.text
    home = await client.get("/")
    assert "Sign-in failed" in home.text

    await services.users.create_user("other@example.org", "correct horse")
    await client.post("/logout", headers={"x-csrftoken": client.cookies.get("plmail_csrf") or ""})
    client.cookies.clear()
    await sign_in(client, "other@example.org", "correct horse")
    assert (await client.get(f"/accounts/{account_id}")).status_code == 404
    assert (await client.get(f"/accounts/{account_id}/progress")).status_code == 404
    forbidden = await post_form(client, f"/accounts/{account_id}/delete", {}, token_from="/accounts")
    assert forbidden.status_code == 404
    assert await account_admin(services).for_job(account_id) is not None
