"""Setting up a phone's own calendar and contacts apps in one step (issue 34), with an app password just made:
an Apple configuration profile for iPhone and iPad, and for Android a DAVx⁵ login URL and its QR code.

The secret goes into what is handed over (the profile, the URL) because that is what makes it one step; it is
shown only when the app password is created, as the password itself is, and revoking the device ends both.
"""

from __future__ import annotations

import plistlib
import uuid
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import segno

DAV_ROOT = "/dav/"  # RFC 6764's context path: /.well-known/caldav and /.well-known/carddav lead here
PROFILE_TYPE = "application/x-apple-aspen-config"


@dataclass(frozen=True, slots=True)
class PhoneSetup:
    android_url: str  # caldav(s)://user:password@host/dav/, which DAVx⁵ opens with everything filled in
    android_qr_svg: str


def _server(base_url: str) -> tuple[str, int, bool]:
    parts = urlsplit(base_url)
    secure = parts.scheme == "https"
    return parts.hostname or "localhost", parts.port or (443 if secure else 80), secure


def principal_path(user_id: int) -> str:
    return f"{DAV_ROOT}{user_id}/"


def android_setup(base_url: str, email: str, secret: str) -> PhoneSetup:
    """DAVx⁵ opens caldav:// and caldavs:// URLs with the user and password in them (its manual, "Integration"),
    and finds the address books from the same start (one account for both)."""
    host, port, secure = _server(base_url)
    default = 443 if secure else 80
    where = host if port == default else f"{host}:{port}"
    url = f"{'caldavs' if secure else 'caldav'}://{quote(email, safe='')}:{quote(secret, safe='')}@{where}{DAV_ROOT}"
    svg = segno.make(url, error="m").svg_inline(scale=4, border=2, title="DAVx⁵")
    return PhoneSetup(url, svg)


def apple_profile(base_url: str, *, email: str, user_id: int, secret: str, device: str) -> bytes:
    """A configuration profile (unsigned) with a CalDAV and a CardDAV account, as iOS's Settings installs it
    (Apple's Configuration Profile Reference: CalDAV and CardDAV payloads)."""
    host, port, secure = _server(base_url)
    principal = principal_path(user_id)
    identifier = f"org.plmail.{host}.{user_id}"
    calendar = {
        "PayloadType": "com.apple.caldav.account", "PayloadVersion": 1,
        "PayloadIdentifier": f"{identifier}.caldav", "PayloadUUID": str(uuid.uuid4()).upper(),
        "PayloadDisplayName": "plmail Calendar", "CalDAVAccountDescription": f"plmail ({email})",
        "CalDAVHostName": host, "CalDAVPort": port, "CalDAVUseSSL": secure, "CalDAVUsername": email,
        "CalDAVPassword": secret, "CalDAVPrincipalURL": principal,
    }
    contacts = {
        "PayloadType": "com.apple.carddav.account", "PayloadVersion": 1,
        "PayloadIdentifier": f"{identifier}.carddav", "PayloadUUID": str(uuid.uuid4()).upper(),
        "PayloadDisplayName": "plmail Contacts", "CardDAVAccountDescription": f"plmail ({email})",
        "CardDAVHostName": host, "CardDAVPort": port, "CardDAVUseSSL": secure, "CardDAVUsername": email,
        "CardDAVPassword": secret, "CardDAVPrincipalURL": principal,
    }
    profile = {
        "PayloadType": "Configuration", "PayloadVersion": 1, "PayloadIdentifier": identifier,
        "PayloadUUID": str(uuid.uuid4()).upper(), "PayloadDisplayName": f"plmail: {device}",
        "PayloadDescription": f"Calendar and contacts of {email} on {host}", "PayloadOrganization": "plmail",
        "PayloadRemovalDisallowed": False, "PayloadContent": [calendar, contacts],
    }
    return plistlib.dumps(profile, fmt=plistlib.FMT_XML)
