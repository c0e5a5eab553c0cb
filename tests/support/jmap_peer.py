"""Another client of a JMAP upstream (RFC 8620/8621), deliberately not plmail's: plain synchronous httpx, led by
the server's own session resource (its apiUrl and uploadUrl), so the same calls seed and inspect every upstream
the suite starts (a second plmail, Cyrus). A subclass says where the session is and how to sign in."""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import quote, urljoin

import httpx

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission"]


class JmapPeer:
    """`session_url` and `authorization` (the Authorization header's value) come from the subclass."""

    @property
    def session_url(self) -> str:
        raise NotImplementedError

    @property
    def authorization(self) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        return {"Authorization": self.authorization}

    def session(self) -> dict[str, Any]:
        response = httpx.get(self.session_url, headers=self.headers(), timeout=30, follow_redirects=True)
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    @functools.cached_property
    def _session(self) -> dict[str, Any]:
        return self.session()

    @property
    def account_id(self) -> str:
        return str(self._session["primaryAccounts"]["urn:ietf:params:jmap:mail"])

    def _url(self, key: str) -> str:
        return urljoin(self.session_url, str(self._session[key]))

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {"using": USING, "methodCalls": [[name, {"accountId": self.account_id, **arguments}, "0"]]}
        response = httpx.post(self._url("apiUrl"), json=body, headers=self.headers(), timeout=60)
        assert response.status_code == 200, response.text
        [[answered, result, _]] = response.json()["methodResponses"][:1]
        assert answered == name, result
        found: dict[str, Any] = result
        return found

    def mailboxes(self) -> dict[str, dict[str, Any]]:
        """By role, else by name."""
        return {(m.get("role") or m["name"]): m for m in self.call("Mailbox/get", {"ids": None})["list"]}

    def emails(self) -> dict[str, dict[str, Any]]:
        """By subject: mailboxIds and keywords."""
        ids = self.call("Email/query", {})["ids"]
        got = self.call("Email/get", {"ids": ids, "properties": ["subject", "mailboxIds", "keywords"]})["list"]
        return {e["subject"]: e for e in got}

    def deliver(self, raw: bytes, mailbox: str = "inbox") -> str:
        """New mail at the upstream: uploaded and put in a mailbox with Email/import (RFC 8621 §4.8), with CRLF line
        ends as mail arrives over SMTP (RFC 5321 §2.3.8; Cyrus refuses a message with bare newlines)."""
        raw = re.sub(rb"\r?\n", b"\r\n", raw)
        url = self._url("uploadUrl").replace("{accountId}", quote(self.account_id, safe=""))
        upload = httpx.post(url, content=raw, headers={**self.headers(), "Content-Type": "message/rfc822"},
                            timeout=30)
        assert upload.status_code in (200, 201), upload.text
        target = self.mailboxes()[mailbox]["id"]
        answer = self.call("Email/import", {"emails": {"new": {"blobId": upload.json()["blobId"],
                                                               "mailboxIds": {target: True}}}})
        assert answer.get("created"), answer
        return str(answer["created"]["new"]["id"])
