"""The JMAP Session resource (RFC 8620 §2): what the server can do and which accounts the user has.

The primary account is the user's unified one (`u<user id>`): every connected account's mail behind the user's
labels, as the web UI shows it. Each connected account is a further JMAP account of its own.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from plmail.domain.models import AccountRow, Principal
from plmail.jmap.capabilities import (
    CALENDARS,
    CATEGORIES,
    CONTACTS,
    MAIL,
    QUOTA,
    SUBMISSION,
    VACATION,
    WEBSOCKET,
    account_capabilities,
    session_capabilities,
)

DOWNLOAD_TEMPLATE = "/jmap/download/{accountId}/{blobId}/{name}?accept={type}"
UPLOAD_TEMPLATE = "/jmap/upload/{accountId}"
EVENT_SOURCE_TEMPLATE = "/jmap/eventsource?types={types}&closeafter={closeafter}&ping={ping}"
WEBSOCKET_PATH = "/jmap/ws"
UNIFIED_NAME = "All accounts"


def session_state(principal: Principal) -> str:
    """Changes whenever the set of accounts (or what the session says about them) changes."""
    digest = hashlib.sha256(f"{principal.unified_id}\x01".encode())
    for account in principal.accounts:
        digest.update(f"{account.id}\x00{account.email}\x00{account.name}\x01".encode())
    return digest.hexdigest()[:16]


def account_names(accounts: tuple[AccountRow, ...]) -> dict[int, str]:
    """A distinct name for each connected account: its name and address, and its kind where those repeat."""
    def plain(account: AccountRow) -> str:
        if account.name and account.email and account.name.lower() != account.email.lower():
            return f"{account.name} <{account.email}>"
        return account.email or account.name or f"Account {account.id}"

    names = {a.id: plain(a) for a in accounts}
    repeated = Counter(names.values())
    for account in accounts:
        if repeated[names[account.id]] > 1:
            names[account.id] = f"{names[account.id]} ({account.provider_kind.value} {account.id})"
    return names


def websocket_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    return ("wss://" + base[len("https://"):] if base.startswith("https://")
            else "ws://" + base[len("http://"):] if base.startswith("http://") else base) + WEBSOCKET_PATH


def build_session(principal: Principal, base_url: str, *, vapid_public_key: str | None = None) -> dict[str, Any]:
    base = base_url.rstrip("/")
    names = account_names(principal.accounts)
    accounts: dict[str, Any] = {
        principal.unified_id: {
            "name": f"{UNIFIED_NAME} ({principal.email})",
            "isPersonal": True,
            "isReadOnly": False,
            "accountCapabilities": account_capabilities(unified=True),
        },
    }
    for account in principal.accounts:
        accounts[str(account.id)] = {
            "name": names[account.id],
            "isPersonal": True,
            "isReadOnly": False,
            "accountCapabilities": account_capabilities(unified=False),
        }
    primary = dict.fromkeys((MAIL, SUBMISSION, CATEGORIES, VACATION, QUOTA, CALENDARS, CONTACTS), principal.unified_id)
    return {
        "capabilities": session_capabilities(websocket=websocket_url(base), vapid_public_key=vapid_public_key),
        "accounts": accounts,
        "primaryAccounts": primary,
        "username": principal.email,
        "apiUrl": f"{base}/jmap/api",
        "downloadUrl": base + DOWNLOAD_TEMPLATE,
        "uploadUrl": base + UPLOAD_TEMPLATE,
        "eventSourceUrl": base + EVENT_SOURCE_TEMPLATE,
        "state": session_state(principal),
    }


__all__ = ["WEBSOCKET", "build_session", "session_state"]
