"""Account tests are no port scanner: only mail ports (unless the administrator allows any), ten a minute per
user, and what answered is summarised, never echoed."""

from __future__ import annotations

import httpx

from plmail.services import Services
from tests.support.dovecot import DovecotUser
from tests.support.imap_proxy import imap_proxy
from tests.support.net import Listener
from tests.support.web import post_form, sign_in, sign_up_admin

# A loopback address of its own, so the well-known ports below are free for this test to open.
HOST = "127.0.0.19"


def _form(mail: DovecotUser, port: int, **changes: str) -> dict[str, str]:
    data = {"email": f"{mail.name}@example.org", "name": "Work", "host": HOST, "port": str(port), "tls": "none",
            "username": mail.name, "password": mail.password}
    data.update(changes)
    return data


async def test_only_mail_ports_are_tried_and_nothing_else_is_touched(
        client: httpx.AsyncClient, services: Services, dovecot_user: DovecotUser) -> None:
    await sign_up_admin(client)
    async with Listener(HOST, 8080) as web_server:
        refused = await post_form(client, "/accounts/test", _form(dovecot_user, 8080), token_from="/accounts/new")
        assert "plmail connects only to mail ports" in refused.text and "993" in refused.text
        added = await post_form(client, "/accounts/", _form(dovecot_user, 8080), token_from="/accounts/new")
        assert added.status_code == 400 and "plmail connects only to mail ports" in added.text
        assert web_server.accepted == 0  # refused without connecting

        imap = dovecot_user.imap()
        async with imap_proxy(imap.host, imap.port, host=HOST, port=993) as imaps:
            works = await post_form(client, "/accounts/test", _form(dovecot_user, 993), token_from="/accounts/new")
            assert "Connection and sign-in work." in works.text
            assert imaps.accepted == 1

        # The administrator can allow any port (a mail server on an unusual one).
        await post_form(client, "/admin/connections", {"any_port": "on"}, token_from="/admin")
        allowed = await post_form(client, "/accounts/test", _form(dovecot_user, 8080), token_from="/accounts/new")
        assert web_server.accepted == 1 and "mail ports" not in allowed.text
    assert await services.connection_tests.any_port_allowed()


async def test_what_answered_is_summarised_never_echoed(client: httpx.AsyncClient,
                                                        dovecot_user: DovecotUser) -> None:
    await sign_up_admin(client)
    banner = b"HTTP/1.1 400 Bad Request\r\nServer: internal-admin-panel-4711\r\n\r\n"
    async with Listener(HOST, 143, banner=banner) as other:
        answer = await post_form(client, "/accounts/test", _form(dovecot_user, 143), token_from="/accounts/new")
    assert other.accepted == 1
    assert f"{HOST}:143 is not an IMAP server" in answer.text
    assert "internal-admin-panel" not in answer.text and "HTTP/1.1" not in answer.text

    imap = dovecot_user.imap()
    async with imap_proxy(imap.host, imap.port, host=HOST, port=143):
        refused = await post_form(client, "/accounts/test", _form(dovecot_user, 143, password="nope"),
                                  token_from="/accounts/new")
    assert "refused the sign-in" in refused.text
    assert "the server said" not in refused.text and "Authentication failed" not in refused.text


async def test_ten_tests_a_minute_per_user(client: httpx.AsyncClient, services: Services,
                                           dovecot_user: DovecotUser) -> None:
    await sign_up_admin(client)
    async with Listener(HOST, 1143) as bridge:  # a bridge port, and nothing IMAP behind it
        for _ in range(10):
            await post_form(client, "/accounts/test", _form(dovecot_user, 1143), token_from="/accounts/new")
        assert bridge.accepted == 10
        limited = await post_form(client, "/accounts/test", _form(dovecot_user, 1143), token_from="/accounts/new")
        assert "Too many connection tests" in limited.text and bridge.accepted == 10
        # The allowance is per user.
        await services.users.create_user("other@example.org", "correct horse")
        client.cookies.clear()
        await sign_in(client, "other@example.org", "correct horse")
        await post_form(client, "/accounts/test", _form(dovecot_user, 1143), token_from="/accounts/new")
        assert bridge.accepted == 11


async def test_the_smtp_server_beside_it_passes_the_same_gate_and_is_summarised_too(
        client: httpx.AsyncClient, dovecot_user: DovecotUser) -> None:
    await sign_up_admin(client)
    imap = dovecot_user.imap()
    smtp = {"smtp_host": HOST, "smtp_tls": "none", "smtp_username": dovecot_user.name,
            "smtp_password": dovecot_user.password}
    async with imap_proxy(imap.host, imap.port, host=HOST, port=143) as imap_side, Listener(HOST, 8025) as other:
        refused = await post_form(client, "/accounts/test", _form(dovecot_user, 143, smtp_port="8025", **smtp),
                                  token_from="/accounts/new")
        assert "plmail connects only to mail ports" in refused.text
        assert other.accepted == 0 and imap_side.accepted == 0  # refused before anything connected
    banner = b"HTTP/1.1 400 Bad Request\r\nServer: internal-admin-panel-4711\r\n\r\n"
    async with imap_proxy(imap.host, imap.port, host=HOST, port=143), Listener(HOST, 587, banner=banner) as web:
        answer = await post_form(client, "/accounts/test", _form(dovecot_user, 143, smtp_port="587", **smtp),
                                 token_from="/accounts/new")
    assert web.accepted == 1
    assert f"SMTP ({HOST}:587)" in answer.text
    assert "internal-admin-panel" not in answer.text and "HTTP/1.1" not in answer.text and "400" not in answer.text
