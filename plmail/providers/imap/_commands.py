"""The two commands aioimaplib cannot send: AUTHENTICATE with a continuation, and XLIST."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import aioimaplib


class SaslCommand(aioimaplib.Command):  # type: ignore[misc]  # aioimaplib is untyped
    """AUTHENTICATE <mechanism>, answering the server's `+` continuations.

    aioimaplib only sends AUTHENTICATE with the whole exchange on the command line (its XOAUTH2), and a
    continuation line for any other command is merely appended to the response. We watch for it here and
    write the next client response; once the prepared ones are used up we send `on_extra` (an empty line
    makes an XOAUTH2 server finish with NO after its error challenge; "*" cancels anything else)."""

    def __init__(
        self, tag: str, mechanism: str, *, initial: bytes | None, responses: list[bytes], on_extra: bytes,
        transport: asyncio.Transport, loop: asyncio.AbstractEventLoop,
    ) -> None:
        args = [mechanism] if initial is None else [mechanism, base64.b64encode(initial).decode() or "="]
        super().__init__("AUTHENTICATE", tag, *args, loop=loop)
        self._responses = list(responses)
        self._on_extra = on_extra
        self._transport = transport
        self.challenges: list[bytes] = []
        self._args_text = f"{tag} AUTHENTICATE {mechanism}"

    def __repr__(self) -> str:
        return self._args_text if len(self.args) == 1 else f"{self._args_text} {self.args[1]}"

    def append_to_resp(self, line: bytes, result: str = "Pending") -> None:
        if result == "Pending" and isinstance(line, bytes) and line.startswith(b"+"):
            self.challenges.append(line[1:].strip())
            reply = base64.b64encode(self._responses.pop(0)) if self._responses else self._on_extra
            self._transport.write(reply + b"\r\n")
        super().append_to_resp(line, result)


class XlistCommand(aioimaplib.Command):  # type: ignore[misc]  # aioimaplib is untyped
    """Gmail's pre-RFC 6154 XLIST. aioimaplib only executes names from its command table, so it runs under
    LIST's entry (same states, same asynchronous handling) and only the wire text says XLIST."""

    def __init__(self, tag: str, *args: Any, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__("LIST", tag, *args, untagged_resp_name="XLIST", loop=loop)

    def __repr__(self) -> str:
        return f"{self.tag} XLIST {' '.join(str(a) for a in self.args)}"
