"""The sign-in side of the IMAP client: SASL payloads and what a refused sign-in means."""

from __future__ import annotations

import base64
import json

from plmail.providers.imap.errors import ImapAuthError, ImapConnectionError, ImapError, ImapProtocolError

# Response codes (RFC 5530) that say the credentials themselves were refused, and ones that say only "not now".
AUTH_REFUSED = {"AUTHENTICATIONFAILED", "AUTHORIZATIONFAILED", "EXPIRED", "PRIVACYREQUIRED", "CONTACTADMIN"}
AUTH_LATER = {"UNAVAILABLE", "INUSE", "SERVERBUG"}


def plain_payload(username: str, password: str) -> bytes:
    """SASL PLAIN carries any UTF-8; the authorization identity left empty means the same user."""
    return b"\0" + username.encode() + b"\0" + password.encode()


def xoauth2_payload(username: str, access_token: str) -> bytes:
    return f"user={username}\x01auth=Bearer {access_token}\x01\x01".encode()


def xoauth2_error(challenge: bytes) -> str | None:
    """The JSON status an XOAUTH2 server sends as its last challenge before NO."""
    try:
        data = json.loads(base64.b64decode(challenge))
    except (ValueError, TypeError):
        return None
    if isinstance(data, dict) and data.get("status"):
        return f"OAuth status {data.get('status')}"
    return None


def sign_in_failure(host: str, username: str, result: str, code: str | None, text: str) -> ImapError | None:
    """None when the sign-in worked; else the error to raise. ImapConnectionError means try again later (the
    caller drops the connection), ImapAuthError means the credentials are wrong and retrying cannot help."""
    if result == "OK":
        return None
    if code in AUTH_LATER:
        return ImapConnectionError(f"{host} cannot check the password right now", code=code, said=text)
    if result == "BAD" and code not in AUTH_REFUSED:
        return ImapProtocolError(f"{host} rejected the sign-in command", code=code, said=text)
    return ImapAuthError(f"{host} refused the sign-in for {username}", code=code, said=text)
