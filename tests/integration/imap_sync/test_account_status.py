"""An account says the truth: "Connected" only while its last sync worked; a server that refuses or is down shows
what went wrong in plmail's words (never OpenSSL's WRONG_VERSION_NUMBER), when it last worked, and Retry; the first
import says "Counting messages…" until it knows how many; a refused settings form keeps what was typed."""

from __future__ import annotations

import re

import httpx
import pytest

from plmail.domain.enums import AccountStatus
from plmail.domain.errors import PlmailError
from plmail.services import Services
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message
from tests.support.net import free_port
from tests.support.repos import account_admin
from tests.support.web import post_form, sign_up_admin


def _form(mail: DovecotUser, **changes: str) -> dict[str, str]:
    server = mail.imap()
    data = {"email": f"{mail.name}@example.org", "name": "Work", "host": server.host, "port": str(server.port),
            "tls": "none", "username": mail.name, "password": mail.password}
    data.update(changes)
    return data


async def _added(client: httpx.AsyncClient, mail: DovecotUser) -> int:
    await sign_up_admin(client)
    await post_form(client, "/admin/connections", {"any_port": "on"}, token_from="/admin")
    created = await post_form(client, "/accounts/", _form(mail), token_from="/accounts/new")
    match = re.search(r"/accounts/(\d+)$", str(created.url))
    assert match, created.url
    return int(match.group(1))


def _status(page: str) -> str:
    match = re.search(r'<div class="account-status">(.*?)</div>', page, re.S)
    assert match, "no status on the page"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(1))).strip()


async def _point_at(services: Services, account_id: int, port: int, tls: str = "none") -> None:
    await services.db.execute(
        "UPDATE account SET settings = jsonb_set(jsonb_set(settings, '{imap,port}', to_jsonb($2::int)), "
        "'{imap,tls}', to_jsonb($3::text)), updated_at = now() WHERE id = $1", account_id, port, tls)


async def test_connected_only_after_a_sync_worked_and_counting_until_the_total_is_known(
    client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser,
) -> None:
    account_id = await _added(client, dovecot_user)
    page = (await client.get(f"/accounts/{account_id}")).text
    assert "Connected" not in _status(page) and "Connecting…" in _status(page)
    assert "Counting messages…" in page  # importing, the total not known yet: no "0 of 0"
    assert "0 of 0" not in page
    sidebar = (await client.get(f"/accounts/{account_id}/sidebar")).text
    assert "Counting messages…" in sidebar and "0 %" not in sidebar
    dovecot_user.deliver([message(i) for i in range(1, 4)])
    await services.sync.run(account_id)
    page = (await client.get(f"/accounts/{account_id}")).text
    assert _status(page).startswith("Connected · last sync")
    assert "Importing: 0 of 3 messages" in page and "Counting messages…" not in page


async def test_a_server_that_is_down_shows_why_when_it_last_worked_and_retry_brings_it_back(
    client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser,
) -> None:
    account_id = await _added(client, dovecot_user)
    await services.sync.run(account_id)
    assert _status((await client.get(f"/accounts/{account_id}")).text).startswith("Connected")
    working_port = dovecot_user.imap().port
    await _point_at(services, account_id, free_port())  # nothing listens there: the connection is refused
    with pytest.raises(PlmailError) as refused:
        await services.sync.run(account_id)
    assert refused.value.retryable  # a refused connection: the job tries again later
    status = _status((await client.get(f"/accounts/{account_id}")).text)
    assert not status.startswith("Connected") and "Not connected: the last sync failed." in status
    assert "Could not connect to" in status and "the server refused the connection" in status
    assert "Connect call failed" not in status  # asyncio's words stay in the log
    assert "Last worked" in status and "Retry" in status
    # the server is back; Retry syncs now and the account is connected again
    await _point_at(services, account_id, working_port)
    retried = await post_form(client, f"/accounts/{account_id}/retry", {}, token_from=f"/accounts/{account_id}")
    assert retried.status_code == 200
    await services.sync.run(account_id)  # the sync Retry queued, run as the worker would
    assert _status((await client.get(f"/accounts/{account_id}")).text).startswith("Connected")


async def test_tls_spoken_to_a_plain_port_is_explained_in_words(
    client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser,
) -> None:
    account_id = await _added(client, dovecot_user)
    await _point_at(services, account_id, dovecot_user.imap().port, tls="implicit")  # TLS to a plain IMAP port
    assert await services.sync.run(account_id) == []  # not retryable: the sync stops, the account says why
    page = (await client.get(f"/accounts/{account_id}")).text
    status = _status(page)
    assert "WRONG_VERSION_NUMBER" not in page and "SSL" not in status
    assert "does not speak TLS on this port" in status and "Retry" in status
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.status is AccountStatus.AUTH_FAILED
    # Retry gives the stopped account one more try (the settings fixed meanwhile by the server's owner, say)
    await _point_at(services, account_id, dovecot_user.imap().port)
    await post_form(client, f"/accounts/{account_id}/retry", {}, token_from=f"/accounts/{account_id}")
    await services.sync.run(account_id)
    assert _status((await client.get(f"/accounts/{account_id}")).text).startswith("Connected")


async def test_a_refused_settings_form_keeps_what_was_typed(
    client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser,
) -> None:
    account_id = await _added(client, dovecot_user)
    refused = await post_form(client, f"/accounts/{account_id}",
                              _form(dovecot_user, name="Typed name", host="127.0.0.1", port="notaport",
                                    smtp_host="smtp.typed.example"), token_from=f"/accounts/{account_id}")
    assert refused.status_code == 400 and "The port must be a number." in refused.text
    assert 'value="Typed name"' in refused.text and 'value="notaport"' in refused.text
    assert 'value="smtp.typed.example"' in refused.text
    new = await post_form(client, "/accounts/", _form(dovecot_user, name="Second", password="wrong"),
                          token_from="/accounts/new")
    assert new.status_code == 400 and 'value="Second"' in new.text and f'value="{dovecot_user.name}"' in new.text
