"""Driving the web UI over HTTP like a browser would: CSRF tokens, forms, sign-in."""

from __future__ import annotations

import re

import httpx

_CSRF_INPUT = re.compile(r'name="_csrf_token" value="([^"]+)"')


async def csrf_token(client: httpx.AsyncClient, path: str = "/login") -> str:
    page = await client.get(path)
    match = _CSRF_INPUT.search(page.text)
    if match:
        return match.group(1)
    cookie = client.cookies.get("plmail_csrf")
    assert cookie, f"no CSRF token on {path}"
    return cookie


async def post_form(
    client: httpx.AsyncClient, path: str, data: dict[str, str], *, token_from: str = "/login"
) -> httpx.Response:
    token = await csrf_token(client, token_from)
    return await client.post(path, data={**data, "_csrf_token": token})


async def sign_up_admin(
    client: httpx.AsyncClient, email: str = "admin@example.org", password: str = "correct horse"
) -> httpx.Response:
    token = await csrf_token(client, "/setup")
    return await client.post(
        "/setup",
        data={"email": email, "password": password, "display_name": "Admin", "locale": "en",
              "time_zone": "Europe/Berlin", "_csrf_token": token},
    )


async def sign_in(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await post_form(client, "/login", {"email": email, "password": password})
