"""Who a JMAP request is: an app password as Bearer or Basic, for the API, blobs, push and the WebSocket alike."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection

from plmail.domain.errors import AuthenticationError, LoginThrottledError
from plmail.domain.models import Principal
from plmail.jmap.errors import RequestError
from plmail.services import services_from

REALM = 'Basic realm="plmail JMAP"'


async def authenticate(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    """The principal, or the RequestError (401, or 429 while throttled) the client gets instead."""
    client = connection.client.host if connection.client else "unknown"
    try:
        return await services_from(connection).app_passwords.authenticate(connection.headers.get("authorization"),
                                                                          client=client)
    except LoginThrottledError as exc:
        raise RequestError("about:blank", f"Too many failed attempts. Try again in {exc.retry_after} seconds.",
                           status=429, headers={"Retry-After": str(exc.retry_after)}) from None
    except AuthenticationError as exc:
        raise RequestError("unauthorized", str(exc), status=401, headers={"WWW-Authenticate": REALM}) from None
