"""Setting up a phone's own calendar and contacts apps in one step (issue 34): with an app password just made,
Settings → Devices hands over an Apple configuration profile (Apple's Configuration Profile Reference: a
"Configuration" profile whose PayloadContent holds `com.apple.caldav.account` and `com.apple.carddav.account`
payloads with host, port, SSL, user name, password and principal URL) and the caldav(s):// URL with user and
password that DAVx⁵ opens pre-filled (DAVx⁵ manual, "Integration": "launch a caldav(s):// or carddav(s)://
Intent"), shown as a QR code. Only the user's own live app password ever goes into either."""

from __future__ import annotations

import base64
import html
import plistlib
import re
from urllib.parse import unquote, urlsplit

import httpx

from plmail.services import Services
from tests.support.web import post_form, sign_up_admin

EMAIL = "admin@example.org"
PASSWORD = "correct horse"


async def _new_device(client: httpx.AsyncClient, name: str = "Anna's iPhone") -> tuple[str, httpx.Response]:
    page = await post_form(client, "/settings/devices", {"name": name, "password": PASSWORD},
                           token_from="/settings/devices")
    assert page.status_code == 200, page.text
    token = re.search(r'data-secret>(plmail_[0-9a-f]{64})<', page.text)
    assert token, "the new app password is shown"
    return token.group(1), page


async def test_a_new_app_password_comes_with_a_davx5_link_and_its_qr_code(
        client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    token, page = await _new_device(client)
    link = re.search(r'href="(caldavs?://[^"]+)"', page.text)
    assert link, "the DAVx⁵ link is on the page"
    url = urlsplit(html.unescape(link.group(1)))
    # the test client speaks plain http, so the link says caldav://, not caldavs://
    assert url.scheme == "caldav" and url.path == "/dav/"
    assert (unquote(url.username or ""), unquote(url.password or "")) == (EMAIL, token)
    assert "<svg" in page.text.split("phone-setup", 1)[1]  # the QR code, drawn inline
    # what the link carries opens the account: the same credentials sign in to the JMAP session
    basic = base64.b64encode(f"{EMAIL}:{token}".encode()).decode()
    session = await client.get("/jmap/session", headers={"Authorization": f"Basic {basic}"})
    assert session.status_code == 200


async def test_the_profile_carries_a_caldav_and_a_carddav_account_and_only_for_its_owner(
        client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    token, _ = await _new_device(client)
    user = await services.users.by_email(EMAIL)
    assert user is not None
    answer = await post_form(client, "/settings/devices/apple-profile", {"secret": token, "device": "Anna's iPhone"},
                             token_from="/settings/devices")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/x-apple-aspen-config")
    assert "attachment" in answer.headers["content-disposition"]
    profile = plistlib.loads(answer.content)
    assert profile["PayloadType"] == "Configuration"
    payloads = {p["PayloadType"]: p for p in profile["PayloadContent"]}
    assert set(payloads) == {"com.apple.caldav.account", "com.apple.carddav.account"}
    host = urlsplit(str(client.base_url)).hostname
    for prefix, payload in (("CalDAV", payloads["com.apple.caldav.account"]),
                            ("CardDAV", payloads["com.apple.carddav.account"])):
        assert payload[f"{prefix}Username"] == EMAIL and payload[f"{prefix}Password"] == token
        assert payload[f"{prefix}HostName"] == host and payload[f"{prefix}PrincipalURL"] == f"/dav/{user.id}/"
        assert isinstance(payload[f"{prefix}UseSSL"], bool) and isinstance(payload[f"{prefix}Port"], int)
    uuids = [profile["PayloadUUID"], *(p["PayloadUUID"] for p in profile["PayloadContent"])]
    assert len(set(uuids)) == 3  # each payload its own identity, as iOS requires

    # a made-up secret, or one that was revoked, is put in no profile
    made_up = await post_form(client, "/settings/devices/apple-profile", {"secret": "plmail_" + "0" * 64},
                              token_from="/settings/devices")
    assert made_up.status_code == 404
    [device] = await services.app_passwords.active(user.id)
    await services.app_passwords.revoke(user.id, device.id)
    revoked = await post_form(client, "/settings/devices/apple-profile", {"secret": token},
                              token_from="/settings/devices")
    assert revoked.status_code == 404


async def test_another_users_app_password_goes_into_no_profile(
        client: httpx.AsyncClient, services: Services) -> None:
    await sign_up_admin(client, EMAIL, PASSWORD)
    other = await services.users.create_user("bob@example.org", "another correct horse")
    theirs = await services.app_passwords.create(other.id, "Bob's phone")
    answer = await post_form(client, "/settings/devices/apple-profile", {"secret": theirs.token},
                             token_from="/settings/devices")
    assert answer.status_code == 404 and theirs.token not in answer.text
