"""What a refused IMAP sign-in means: wrong credentials (stop), try later (reconnect), or a broken command."""

from __future__ import annotations

import base64
import json

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap._auth import plain_payload, sign_in_failure, xoauth2_error, xoauth2_payload
from plmail.providers.imap.errors import ImapAuthError, ImapConnectionError, ImapProtocolError


def test_a_sign_in_is_told_apart_by_its_response_code() -> None:
    assert sign_in_failure("imap.example", "eve", "OK", None, "Logged in") is None
    wrong = sign_in_failure("imap.example", "eve", "NO", "AUTHENTICATIONFAILED", "[AUTHENTICATIONFAILED] nope")
    assert isinstance(wrong, ImapAuthError) and "eve" in str(wrong)
    later = sign_in_failure("imap.example", "eve", "NO", "UNAVAILABLE", "[UNAVAILABLE] backend down")
    assert isinstance(later, ImapConnectionError) and "right now" in str(later)
    broken = sign_in_failure("imap.example", "eve", "BAD", None, "Unknown command")
    assert isinstance(broken, ImapProtocolError)
    refused_bad = sign_in_failure("imap.example", "eve", "BAD", "AUTHENTICATIONFAILED", "no")
    assert isinstance(refused_bad, ImapAuthError)
    assert isinstance(sign_in_failure("imap.example", "eve", "NO", None, "Login failed"), ImapAuthError)


def test_sasl_payloads_and_the_xoauth2_status() -> None:
    assert plain_payload("eve", "pässword") == b"\0eve\0p\xc3\xa4ssword"
    assert xoauth2_payload("eve@gmail.com", "tok") == b"user=eve@gmail.com\x01auth=Bearer tok\x01\x01"
    challenge = base64.b64encode(json.dumps({"status": "401", "schemes": "Bearer"}).encode())
    assert xoauth2_error(challenge) == "OAuth status 401"
    assert xoauth2_error(b"not base64 json!") is None
    assert xoauth2_error(base64.b64encode(b"[1, 2]")) is None


def test_capability_and_enabled_lines() -> None:
    caps = syn.capabilities([b"CAPABILITY IMAP4rev1 idle Move", "not bytes"])
    assert caps == {"CAPABILITY", "IMAP4REV1", "IDLE", "MOVE"}
    assert syn.enabled_extensions([b"ENABLED condstore QRESYNC", b"OTHER X"]) == {"CONDSTORE", "QRESYNC"}
