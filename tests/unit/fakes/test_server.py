"""The runner: a fake on 127.0.0.1 on a free port, started and stopped from sync and async code."""

from __future__ import annotations

import socket

import httpx
import pytest

from tests.support.fakes import FakeServer, GmailFake, GraphFake, ModelFake


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_start_serves_on_loopback_and_stop_frees_the_port() -> None:
    server = FakeServer(GmailFake()).start()
    try:
        assert server.url == f"http://127.0.0.1:{server.port}" and server.running
        assert _port_open(server.port)
        with pytest.raises(RuntimeError):
            server.start()
    finally:
        server.stop()
    assert not server.running
    assert not _port_open(server.port)


def test_two_servers_get_different_ports_and_keep_their_own_state() -> None:
    with FakeServer(GraphFake()) as one, FakeServer(GraphFake()) as two:
        assert one.port != two.port
        one.app.add_message(b"Subject: only here\r\n\r\nx\r\n")
        counts = [httpx.get(f"{s.url}/v1.0/me/mailFolders/inbox", headers=s.app.auth_headers()).json()["totalItemCount"]
                  for s in (one, two)]
        assert counts == [1, 0]


async def test_async_context_manager_from_an_async_test() -> None:
    async with FakeServer(ModelFake()) as server, httpx.AsyncClient() as http:
        response = await http.get(f"{server.url}/api/version")
        assert response.status_code == 200
    assert not server.running


def test_unknown_paths_answer_in_the_providers_error_format() -> None:
    with FakeServer(GmailFake()) as gmail, FakeServer(GraphFake()) as graph:
        google = httpx.get(f"{gmail.url}/gmail/v1/nope").json()
        assert google["error"]["status"] == "NOT_FOUND"
        microsoft = httpx.get(f"{graph.url}/v1.0/me/nope", headers=graph.app.auth_headers()).json()
        assert microsoft["error"]["code"] == "BadRequest"
        assert httpx.put(f"{gmail.url}/gmail/v1/users/me/profile").status_code == 405
