"""The JMAP Session resource (RFC 8620 §2): what the server can do and which accounts the user has."""

from __future__ import annotations

import hashlib
from typing import Any

from plmail.domain.models import Principal
from plmail.jmap.capabilities import (
    CALENDARS,
    CATEGORIES,
    MAIL,
    SUBMISSION,
    account_capabilities,
    session_capabilities,
)

DOWNLOAD_TEMPLATE = "/jmap/download/{accountId}/{blobId}/{name}?accept={type}"
UPLOAD_TEMPLATE = "/jmap/upload/{accountId}"
EVENT_SOURCE_TEMPLATE = "/jmap/eventsource?types={types}&closeafter={closeafter}&ping={ping}"


def session_state(principal: Principal) -> str:
    """Changes whenever the set of accounts (or what the session says about them) changes."""
    digest = hashlib.sha256()
    for account in principal.accounts:
        digest.update(f"{account.id}\x00{account.email}\x00{account.name}\x01".encode())
    return digest.hexdigest()[:16]


def build_session(principal: Principal, base_url: str) -> dict[str, Any]:
    base = base_url.rstrip("/")
    accounts = {
        str(a.id): {
            "name": a.email or a.name,
            "isPersonal": True,
            "isReadOnly": False,
            "accountCapabilities": account_capabilities(primary=index == 0),
        }
        for index, a in enumerate(principal.accounts)
    }
    primary = {capability: str(principal.accounts[0].id)
               for capability in (MAIL, SUBMISSION, CATEGORIES, CALENDARS)} if principal.accounts else {}
    return {
        "capabilities": session_capabilities(),
        "accounts": accounts,
        "primaryAccounts": primary,
        "username": principal.email,
        "apiUrl": f"{base}/jmap/api",
        "downloadUrl": base + DOWNLOAD_TEMPLATE,
        "uploadUrl": base + UPLOAD_TEMPLATE,
        "eventSourceUrl": base + EVENT_SOURCE_TEMPLATE,
        "state": session_state(principal),
    }
