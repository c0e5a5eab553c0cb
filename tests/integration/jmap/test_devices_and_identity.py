"""Settings → Devices (create with the secret shown once, list with last use, revoke) and Identity/get."""

from __future__ import annotations

import re

from tests.integration.jmap.conftest import JmapBox
from tests.support.web import post_form, sign_in

SUBMISSION = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:submission"]


async def test_devices_page_creates_lists_and_revokes(box: JmapBox) -> None:
    assert (await sign_in(box.http, box.user.email, "correct horse")).status_code == 200
    settings = await box.http.get("/settings")
    assert 'href="/settings/devices"' in settings.text
    page = await box.http.get("/settings/devices")
    assert page.status_code == 200 and "Phone" in page.text and "never" in page.text

    created = await post_form(box.http, "/settings/devices", {"name": "Tablet", "password": "correct horse"},
                              token_from="/settings/devices")
    assert created.status_code == 200
    token = re.search(r"data-secret>(plmail_[0-9a-f]{64})<", created.text)
    assert token is not None
    assert (await box.http.get("/jmap/session", headers={"Authorization": f"Bearer {token.group(1)}"})
            ).status_code == 200
    listed = await box.http.get("/settings/devices")
    assert token.group(1) not in listed.text and "Tablet" in listed.text  # shown once, never again
    rows = re.findall(r'data-device-id="(\d+)"', listed.text)
    assert len(rows) == 2
    assert "never" not in listed.text.split("Tablet")[1].split("</tr>")[0]  # its last use is shown

    tablet = await box.services.db.fetchval("SELECT id FROM app_password WHERE name = 'Tablet'")
    revoked = await post_form(box.http, f"/settings/devices/{tablet}/revoke", {}, token_from="/settings/devices")
    assert revoked.status_code == 200 and "Tablet" not in revoked.text
    assert (await box.http.get("/jmap/session", headers={"Authorization": f"Bearer {token.group(1)}"})
            ).status_code == 401
    empty = await post_form(box.http, "/settings/devices", {"name": "   "}, token_from="/settings/devices")
    assert empty.status_code == 400


async def test_devices_page_speaks_german(box: JmapBox) -> None:
    await box.services.users.update_preferences(box.user, display_name="Rea", locale="de", time_zone="UTC")
    assert (await sign_in(box.http, box.user.email, "correct horse")).status_code == 200
    page = await box.http.get("/settings/devices")
    assert "Geräte" in page.text and "App-Passwort erstellen" in page.text and "Widerrufen" in page.text


async def test_someone_elses_device_cannot_be_revoked(box: JmapBox) -> None:
    other = await box.services.users.create_user("other@example.org", "correct horse")
    theirs = await box.services.app_passwords.create(other.id, "Their phone")
    assert (await sign_in(box.http, box.user.email, "correct horse")).status_code == 200
    response = await post_form(box.http, f"/settings/devices/{theirs.id}/revoke", {},
                               token_from="/settings/devices")
    assert response.status_code == 404
    assert (await box.http.get("/jmap/session", headers={"Authorization": f"Bearer {theirs.token}"})
            ).status_code == 200


async def test_identities_from_the_account_address_and_aliases(box: JmapBox) -> None:
    response = (await box.request([["Identity/get", {"accountId": box.account}, "i"]], using=SUBMISSION)).json()
    name, result, _ = response["methodResponses"][0]
    assert name == "Identity/get"
    assert [i["email"] for i in result["list"]] == ["reader@example.org", "alias.reader@example.org"]
    first = result["list"][0]
    assert first["name"] == "Rea Der" and first["mayDelete"] is False and first["replyTo"] is None
    again = (await box.request([["Identity/get", {"accountId": box.account, "ids": [first["id"], "nope"],
                                                  "properties": ["email"]}, "i"]], using=SUBMISSION)).json()
    assert again["methodResponses"][0][1]["list"] == [{"id": first["id"], "email": "reader@example.org"}]
    assert again["methodResponses"][0][1]["notFound"] == ["nope"]
    assert again["methodResponses"][0][1]["state"] == result["state"]
