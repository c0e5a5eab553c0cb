"""The Microsoft Graph fake over real HTTP: folders, delta rounds, moves, expiry, throttling, tokens."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.support.fakes import FakeServer, GraphFake, ManualClock, pkce_challenge, rfc822


def _error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()["error"]
    assert set(body) >= {"code", "message", "innerError"}
    assert {"date", "request-id", "client-request-id"} <= set(body["innerError"])
    return dict(body)


def _round(http: httpx.Client, url: str, *, page_size: int | None = None,
           params: dict[str, str] | None = None) -> tuple[list[list[dict[str, Any]]], str]:
    """Follow nextLinks to the end of a delta round: (pages of values, deltaLink)."""
    headers = {"Prefer": f"odata.maxpagesize={page_size}"} if page_size else {}
    pages: list[list[dict[str, Any]]] = []
    response = http.get(url, params=params, headers=headers)
    while True:
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append(body["value"])
        if "@odata.deltaLink" in body:
            assert "@odata.nextLink" not in body
            return pages, body["@odata.deltaLink"]
        assert "$skiptoken=" in body["@odata.nextLink"]
        response = http.get(body["@odata.nextLink"], headers=headers)


def _ids(pages: list[list[dict[str, Any]]]) -> list[str]:
    return [item["id"] for page in pages for item in page]


def test_requests_without_a_valid_token_get_graphs_401(graph: FakeServer[GraphFake], clock: ManualClock) -> None:
    missing = httpx.get(f"{graph.url}/v1.0/me")
    assert missing.status_code == 401
    assert _error(missing) | {"innerError": None} == {"code": "InvalidAuthenticationToken",
                                                      "message": "Access token is empty.", "innerError": None}
    assert "authorization_uri" in missing.headers["www-authenticate"]
    clock.advance(3600)
    expired = httpx.get(f"{graph.url}/v1.0/me", headers=graph.app.auth_headers())
    assert _error(expired)["message"] == "Lifetime validation failed, the token is expired."


def test_me_and_folders_with_well_known_names_and_child_folders(graph_http: httpx.Client) -> None:
    me = graph_http.get("/me").json()
    assert me["userPrincipalName"] == "alex@outlook.com" and me["displayName"] == "Alex Wilber"

    top = graph_http.get("/me/mailFolders").json()
    names = {f["displayName"]: f for f in top["value"]}
    assert set(names) == {"Inbox", "Drafts", "Sent Items", "Deleted Items", "Junk Email", "Archive", "Outbox"}
    inbox = graph_http.get("/me/mailFolders/inbox").json()
    assert inbox["id"] == names["Inbox"]["id"]
    for alias, display in (("sentitems", "Sent Items"), ("drafts", "Drafts"), ("deleteditems", "Deleted Items"),
                           ("junkemail", "Junk Email"), ("archive", "Archive")):
        assert graph_http.get(f"/me/mailFolders/{alias}").json()["id"] == names[display]["id"]
    root = graph_http.get("/me/mailFolders/msgfolderroot").json()
    assert inbox["parentFolderId"] == root["id"]

    created = graph_http.post("/me/mailFolders/inbox/childFolders", json={"displayName": "Invoices"})
    assert created.status_code == 201
    assert created.json()["parentFolderId"] == inbox["id"]
    assert graph_http.post("/me/mailFolders/inbox/childFolders", json={"displayName": "invoices"}).status_code == 409
    children = graph_http.get(f"/me/mailFolders('{inbox['id']}')/childFolders").json()["value"]
    assert [c["displayName"] for c in children] == ["Invoices"]
    assert graph_http.get("/me/mailFolders/inbox").json()["childFolderCount"] == 1

    paged = graph_http.get("/me/mailFolders", params={"$top": 3}).json()
    assert len(paged["value"]) == 3
    second = graph_http.get(paged["@odata.nextLink"]).json()
    last = graph_http.get(second["@odata.nextLink"]).json()
    assert (len(second["value"]), len(last["value"])) == (3, 1) and "@odata.nextLink" not in last
    assert {f["id"] for f in paged["value"] + second["value"] + last["value"]} == {f["id"] for f in top["value"]}

    missing = graph_http.get("/me/mailFolders/AQMkADnope")
    assert missing.status_code == 404 and _error(missing)["code"] == "ErrorItemNotFound"


def test_message_resource_value_patch_and_delete(graph: FakeServer[GraphFake], graph_http: httpx.Client) -> None:
    fake = graph.app
    first = fake.add_message(rfc822("Quarterly numbers", sender="Dana <dana@contoso.example>",
                                     to="Alex <alex@outlook.com>", cc="Sam <sam@contoso.example>",
                                     message_id="<q1@contoso.example>", body="See attached numbers."),
                             received=datetime(2026, 3, 1, 8, 0, tzinfo=UTC), categories=["Work"])
    reply = fake.add_message(rfc822("Re: Quarterly numbers", in_reply_to="<q1@contoso.example>"))
    invite = fake.add_message(rfc822("Invitation: planning"), meeting_message_type="meetingRequest")

    got = graph_http.get(f"/me/messages/{first.id}").json()
    assert got["subject"] == "Quarterly numbers"
    assert got["receivedDateTime"] == "2026-03-01T08:00:00Z"
    assert got["internetMessageId"] == "<q1@contoso.example>"
    assert got["from"] == {"emailAddress": {"name": "Dana", "address": "dana@contoso.example"}}
    assert got["toRecipients"] == [{"emailAddress": {"name": "Alex", "address": "alex@outlook.com"}}]
    assert got["ccRecipients"][0]["emailAddress"]["address"] == "sam@contoso.example"
    assert got["parentFolderId"] == fake.mailbox.folder("inbox").id
    assert got["isRead"] is False and got["flag"] == {"flagStatus": "notFlagged"} and got["categories"] == ["Work"]
    assert got["bodyPreview"] == "See attached numbers."
    assert got["@odata.etag"].startswith('W/"')
    assert graph_http.get(f"/me/messages/{reply.id}").json()["conversationId"] == got["conversationId"]
    event = graph_http.get(f"/me/messages/{invite.id}").json()
    assert event["@odata.type"] == "#microsoft.graph.eventMessage"
    assert event["meetingMessageType"] == "meetingRequest"
    selected = graph_http.get(f"/me/messages/{first.id}", params={"$select": "subject,isRead"}).json()
    assert set(selected) == {"@odata.context", "@odata.etag", "id", "subject", "isRead"}

    raw = graph_http.get(f"/me/messages/{first.id}/$value")
    assert raw.status_code == 200 and raw.content == first.raw

    patched = graph_http.patch(f"/me/messages/{first.id}", json={
        "isRead": True, "flag": {"flagStatus": "flagged"}, "categories": ["Work", "Urgent"]}).json()
    assert (patched["isRead"], patched["flag"]["flagStatus"], patched["categories"]) == (
        True, "flagged", ["Work", "Urgent"])
    assert patched["changeKey"] != got["changeKey"]
    bad = graph_http.patch(f"/me/messages/{first.id}", json={"subject": "rewritten"})
    assert bad.status_code == 400 and _error(bad)["code"] == "RequestBodyRead"

    assert graph_http.delete(f"/me/messages/{first.id}").status_code == 204
    gone = graph_http.get(f"/me/messages/{first.id}")
    assert gone.status_code == 404
    assert _error(gone) | {"innerError": None} == {
        "code": "ErrorItemNotFound", "message": "The specified object was not found in the store.", "innerError": None}


def test_delta_first_round_in_pages_then_only_changes(graph: FakeServer[GraphFake], graph_http: httpx.Client) -> None:
    fake = graph.app
    seeded = [fake.add_message(rfc822(f"message {n}")) for n in range(5)]
    url = "/me/mailFolders/inbox/messages/delta"
    params = {"$select": "subject,isRead,parentFolderId", "$orderby": "receivedDateTime desc"}

    first = graph_http.get(url, params=params, headers={"Prefer": "odata.maxpagesize=2"})
    assert first.headers["preference-applied"] == "odata.maxpagesize=2"
    pages, delta_link = _round(graph_http, url, page_size=2, params=params)
    assert [len(p) for p in pages] == [2, 2, 1]
    assert _ids(pages) == [m.id for m in reversed(seeded)]  # newest first, as asked
    item = pages[0][0]
    assert set(item) == {"@odata.type", "@odata.etag", "id", "subject", "isRead", "parentFolderId"}
    assert item["@odata.type"] == "#microsoft.graph.message"
    assert "$deltatoken=" in delta_link

    by_top, _ = _round(graph_http, url, params={"$top": "3"})
    assert [len(p) for p in by_top] == [3, 2]

    nothing, delta_link = _round(graph_http, delta_link)
    assert nothing == [[]]

    archive_pages, archive_link = _round(graph_http, "/me/mailFolders/archive/messages/delta")
    assert archive_pages == [[]]

    graph_http.patch(f"/me/messages/{seeded[0].id}", json={"isRead": True})
    moved = graph_http.post(f"/me/messages/{seeded[1].id}/move", json={"destinationId": "archive"})
    assert moved.status_code == 201
    assert moved.json()["id"] == seeded[1].id  # immutable ids by default
    assert moved.json()["parentFolderId"] == fake.mailbox.folder("archive").id
    arrived = fake.add_message(rfc822("new mail"))
    graph_http.delete(f"/me/messages/{seeded[2].id}")

    changes, delta_link = _round(graph_http, delta_link)
    by_id = {item["id"]: item for item in changes[0]}
    assert set(by_id) == {seeded[0].id, seeded[1].id, arrived.id, seeded[2].id}
    assert by_id[seeded[0].id]["isRead"] is True
    assert set(by_id[seeded[0].id]) == {"@odata.type", "@odata.etag", "id", "subject", "isRead", "parentFolderId"}
    assert by_id[seeded[1].id] == {"@odata.type": "#microsoft.graph.message", "id": seeded[1].id,
                                   "@removed": {"reason": "deleted"}}
    assert by_id[seeded[2].id]["@removed"] == {"reason": "deleted"}
    assert by_id[arrived.id]["subject"] == "new mail"

    archived, _ = _round(graph_http, archive_link)
    assert [(i["id"], i["parentFolderId"]) for i in archived[0]] == [(seeded[1].id, fake.mailbox.folder("archive").id)]

    again, _ = _round(graph_http, delta_link)
    assert again == [[]]


def test_moves_change_ids_when_the_mailbox_has_no_immutable_ids(clock: ManualClock) -> None:
    fake = GraphFake(clock=clock, immutable_ids=False, move_removed_reason="changed")
    message = fake.add_message(rfc822("drafted"), "drafts")
    old_id = message.id
    with FakeServer(fake) as server, httpx.Client(base_url=f"{server.url}/v1.0", headers=fake.auth_headers()) as http:
        _, drafts_link = _round(http, "/me/mailFolders/drafts/messages/delta")
        _, trash_link = _round(http, "/me/mailFolders/deleteditems/messages/delta")
        moved = http.post(f"/me/messages/{old_id}/move", json={"destinationId": "deleteditems"}).json()
        assert moved["id"] != old_id
        assert fake.mailbox.renamed == {old_id: moved["id"]}
        assert http.get(f"/me/messages/{old_id}").status_code == 404
        assert http.get(f"/me/messages/{moved['id']}").json()["parentFolderId"] == fake.mailbox.folder(
            "deleteditems").id

        source, _ = _round(http, drafts_link)
        target, _ = _round(http, trash_link)
        assert source == [[{"@odata.type": "#microsoft.graph.message", "id": old_id,
                            "@removed": {"reason": "changed"}}]]
        assert _ids(target) == [moved["id"]]


def test_expired_delta_links_and_skip_tokens_answer_410(graph: FakeServer[GraphFake], graph_http: httpx.Client,
                                                        clock: ManualClock) -> None:
    fake = graph.app
    for n in range(3):
        fake.add_message(rfc822(f"m{n}"))
    _, inbox_link = _round(graph_http, "/me/mailFolders/inbox/messages/delta")
    _, sent_link = _round(graph_http, "/me/mailFolders/sentitems/messages/delta")
    half = graph_http.get("/me/mailFolders/inbox/messages/delta", headers={"Prefer": "odata.maxpagesize=1"}).json()

    fake.mailbox.expire_delta_links("inbox")
    expired = graph_http.get(inbox_link)
    assert expired.status_code == 410
    assert _error(expired)["code"] == "syncStateNotFound"
    assert graph_http.get(half["@odata.nextLink"]).status_code == 410
    assert graph_http.get(sent_link).status_code == 200  # other folders keep their links

    pages, fresh_link = _round(graph_http, "/me/mailFolders/inbox/messages/delta")  # back to enumeration
    assert len(_ids(pages)) == 3
    assert graph_http.get(fresh_link).status_code == 200

    fake.mailbox.delta_link_ttl = 600
    clock.advance(600)
    assert graph_http.get(fresh_link).status_code == 410
    assert graph_http.get("/me/mailFolders/inbox/messages/delta?$deltatoken=made-up").status_code == 410


def test_delta_filter_change_type_and_default_order(graph: FakeServer[GraphFake], graph_http: httpx.Client) -> None:
    fake = graph.app
    old = fake.add_message(rfc822("old"), received=datetime(2025, 1, 1, tzinfo=UTC))
    new = fake.add_message(rfc822("new"), received=datetime(2026, 6, 1, tzinfo=UTC))
    pages, _ = _round(graph_http, "/me/mailFolders/inbox/messages/delta",
                      params={"$filter": "receivedDateTime ge 2026-01-01T00:00:00Z"})
    assert _ids(pages) == [new.id]
    bad = graph_http.get("/me/mailFolders/inbox/messages/delta", params={"$filter": "subject eq 'x'"})
    assert bad.status_code == 400

    pages, link = _round(graph_http, "/me/mailFolders/inbox/messages/delta", params={"changeType": "created"})
    assert _ids(pages) == [old.id, new.id]  # without $orderby: not newest first
    fake.mailbox.update(old.id, is_read=True)
    later = fake.add_message(rfc822("later"))
    created_only, _ = _round(graph_http, link)
    assert _ids(created_only) == [later.id]


def test_throttling_answers_429_with_retry_after_and_recovers(clock: ManualClock) -> None:
    fake = GraphFake(clock=clock, requests_per_window=3)
    with FakeServer(fake) as server, httpx.Client(base_url=f"{server.url}/v1.0", headers=fake.auth_headers()) as http:
        for _ in range(3):
            assert http.get("/me").status_code == 200
        throttled = http.get("/me/mailFolders")
        assert throttled.status_code == 429
        assert throttled.headers["retry-after"] == "600"
        assert _error(throttled)["code"] == "TooManyRequests"
        clock.advance(600)
        assert http.get("/me").status_code == 200

        fake.throttle.throttle_next(2, retry_after=7)
        forced = [http.get("/me") for _ in range(3)]
        assert [r.status_code for r in forced] == [429, 429, 200]
        assert forced[0].headers["retry-after"] == "7"
    assert fake.throttle.throttled == 3
    assert [c.status for c in fake.calls].count(429) == 3


async def test_a_fifth_request_in_flight_at_once_is_refused_with_429_and_retry_after() -> None:
    """Outlook service limits: "Outlook can execute up to 4 concurrent requests" per app; beyond them Graph answers
    429 ("Application is over its MailboxConcurrency limit.") with Retry-After, and the next request goes through."""
    fake = GraphFake()
    fake.latency = 1.5  # long enough that five requests sent together are all in flight at once, even under load
    async with FakeServer(fake) as server, httpx.AsyncClient(base_url=f"{server.url}/v1.0",
                                                             headers=fake.auth_headers(), timeout=10) as http:
        answers = await asyncio.gather(*(http.get("/me") for _ in range(5)))
        statuses = sorted(r.status_code for r in answers)
        assert statuses == [200, 200, 200, 200, 429]
        refused = next(r for r in answers if r.status_code == 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert _error(refused)["code"] == "ApplicationThrottled"
        assert "MailboxConcurrency" in _error(refused)["message"]
        assert (await http.get("/me")).status_code == 200  # the four have finished: room again
    assert fake.throttle.concurrency_refused == 1
    assert [c.status for c in fake.calls].count(429) == 1


def test_the_published_budget_is_10000_requests_per_10_minutes_per_mailbox(clock: ManualClock) -> None:
    """Outlook service limits: "10,000 API requests in a 10 minute period" per app and mailbox, by default."""
    fake = GraphFake(clock=clock)
    second = fake.add_mailbox("megan@outlook.com", "Megan Bowen")
    with FakeServer(fake) as server, httpx.Client(base_url=f"{server.url}/v1.0", headers=fake.auth_headers()) as http:
        fake.throttle.check(fake.mailbox.user_principal_name.lower())  # the window starts now
        clock.advance(1)
        for _ in range(9_998):
            assert fake.throttle.check(fake.mailbox.user_principal_name.lower()) is None
        assert http.get("/me").status_code == 200  # the 10,000th request in the window
        throttled = http.get("/me")
        assert throttled.status_code == 429 and throttled.headers["retry-after"] == "599"
        assert fake.throttle.check(second.user_principal_name.lower()) is None  # another mailbox: its own budget
        clock.advance(599)
        assert http.get("/me").status_code == 200


def test_identity_platform_tokens_pkce_rotation_and_invalid_grant(graph: FakeServer[GraphFake]) -> None:
    fake = graph.app
    verifier = "a-very-long-code-verifier-" + "x" * 30
    redirect = "http://plmail.test/oauth/microsoft/callback"
    consent = httpx.get(f"{graph.url}/common/oauth2/v2.0/authorize", params={
        "client_id": fake.client_id, "redirect_uri": redirect, "response_type": "code", "state": "st",
        "scope": "offline_access Mail.ReadWrite", "code_challenge": pkce_challenge(verifier),
        "code_challenge_method": "S256"})
    assert consent.status_code == 302
    code = parse_qs(urlsplit(consent.headers["location"]).query)["code"][0]

    token_url = f"{graph.url}/common/oauth2/v2.0/token"
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
            "client_id": fake.client_id, "client_secret": fake.client_secret or ""}
    mismatch = httpx.post(token_url, data={**form, "code_verifier": "wrong"})
    assert mismatch.status_code == 400
    assert mismatch.json()["error"] == "invalid_grant" and mismatch.json()["error_codes"] == [501481]
    tokens = httpx.post(token_url, data={**form, "code_verifier": verifier}).json()
    assert set(tokens) == {"token_type", "scope", "expires_in", "ext_expires_in", "access_token", "refresh_token"}
    me = httpx.get(f"{graph.url}/v1.0/me", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert me.status_code == 200

    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
               "client_id": fake.client_id, "client_secret": fake.client_secret or ""}
    rotated = httpx.post(token_url, data=refresh).json()
    assert rotated["refresh_token"] != tokens["refresh_token"]  # Microsoft rotates refresh tokens

    fake.oauth.revoke_user("alex@outlook.com")
    revoked = httpx.post(token_url, data={**refresh, "refresh_token": rotated["refresh_token"]})
    assert revoked.status_code == 400
    body = revoked.json()
    assert body["error"] == "invalid_grant" and body["error_codes"] == [50173] and body["suberror"] == "bad_token"
    assert body["error_description"].startswith("AADSTS50173:")
    assert set(body) >= {"timestamp", "trace_id", "correlation_id", "error_uri"}
    bad_secret = httpx.post(token_url, data={**refresh, "client_secret": "wrong"})
    assert (bad_secret.status_code, bad_secret.json()["error"]) == (401, "invalid_client")


def test_a_json_create_is_a_sent_item_only_with_pr_message_flags_without_the_unsent_bit(
        graph: FakeServer[GraphFake], graph_http: httpx.Client) -> None:
    """Exchange's rule, as the fake answers it: a message created from JSON is a draft unless PR_MESSAGE_FLAGS
    (`Integer 0x0E07`) leaves mfUnsent (0x8) out — "The message is still being composed and is treated as a Draft
    Message object" (MS-OXCMSG 2.2.1.6) — and mfRead (0x1) makes it read; a MIME body always makes a draft."""
    fake = graph.app
    base = {"subject": "Lunch", "body": {"contentType": "html", "content": "<p>Noon?</p>"},
            "toRecipients": [{"emailAddress": {"name": "Bob", "address": "bob@example.net"}}]}
    sent = graph_http.post("/me/mailFolders/sentitems/messages", json={
        **base, "internetMessageId": "<lunch@example.org>",
        "internetMessageHeaders": [{"name": "X-Mailer", "value": "laptop"}],
        "singleValueExtendedProperties": [{"id": "Integer 0x0E07", "value": "1"},
                                          {"id": "SystemTime 0x0039", "value": "2026-03-01T08:00:00Z"},
                                          {"id": "SystemTime 0x0E06", "value": "2026-03-01T08:00:05Z"}]})
    assert sent.status_code == 201, sent.text
    item = sent.json()
    sent_items = fake.mailbox.folder("sentitems").id
    assert (item["isDraft"], item["isRead"], item["parentFolderId"]) == (False, True, sent_items)
    assert (item["sentDateTime"], item["receivedDateTime"]) == ("2026-03-01T08:00:00Z", "2026-03-01T08:00:05Z")
    assert item["internetMessageId"] == "<lunch@example.org>" and item["body"]["contentType"] == "html"
    assert item["from"]["emailAddress"]["address"] == "alex@outlook.com"  # the mailbox's own when none is given
    assert b"X-Mailer: laptop" in fake.messages[item["id"]].raw

    unflagged = graph_http.post("/me/mailFolders/sentitems/messages", json=base).json()
    assert unflagged["isDraft"] is True
    unsent = graph_http.post("/me/mailFolders/sentitems/messages", json={
        **base, "singleValueExtendedProperties": [{"id": "Integer 0x0E07", "value": "9"}]}).json()
    assert unsent["isDraft"] is True
    mime = graph_http.post("/me/mailFolders/sentitems/messages", content=base64.b64encode(rfc822("From MIME")),
                           headers={"Content-Type": "text/plain"}).json()
    assert mime["isDraft"] is True

    attached = graph_http.post(f"/me/messages/{item['id']}/attachments", json={
        "@odata.type": "#microsoft.graph.fileAttachment", "name": "menu.pdf", "contentType": "application/pdf",
        "contentBytes": base64.b64encode(b"%PDF-1.4 menu").decode()})
    assert attached.status_code == 201 and attached.json()["size"] == len(b"%PDF-1.4 menu")
    assert graph_http.get(f"/me/messages/{item['id']}").json()["hasAttachments"] is True
    assert b"menu.pdf" in fake.messages[item["id"]].raw


def test_a_json_create_and_an_attachment_are_refused_as_graph_refuses_them(
        graph: FakeServer[GraphFake], graph_http: httpx.Client) -> None:
    """Custom headers must be named x- ("name them starting with x-", Graph's message resource), sentDateTime is
    read-only, an extended property id must be in one of Graph's formats, an attachment under 3 MB by this POST."""
    def create(body: object) -> httpx.Response:
        return graph_http.post("/me/mailFolders/sentitems/messages", json=body)

    assert _error(create([]))["code"] == "RequestBodyRead"
    assert _error(create({"sentDateTime": "2026-03-01T08:00:00Z"}))["code"] == "RequestBodyRead"
    assert _error(create({"internetMessageHeaders": [{"name": "References", "value": "<a@b>"}]}))["code"] == (
        "InvalidInternetMessageHeader")
    assert _error(create({"singleValueExtendedProperties": [{"id": "Integer 0x0E7", "value": "1"}]}))["code"] == (
        "ErrorInvalidProperty")
    assert _error(create({"singleValueExtendedProperties": [{"id": "Integer 0x0E07", "value": "one"}]}))[
        "code"] == "ErrorInvalidExtendedPropertyValue"
    made = create({"subject": "x"}).json()
    too_large = graph_http.post(f"/me/messages/{made['id']}/attachments", json={
        "@odata.type": "#microsoft.graph.fileAttachment", "name": "big.bin",
        "contentBytes": base64.b64encode(b"\0" * (3 * 1024 * 1024)).decode()})
    assert too_large.status_code == 413
    graph.app.fail_next("createMessage", "throttled", retry_after=7)
    throttled = create({"subject": "y"})
    assert throttled.status_code == 429 and throttled.headers["retry-after"] == "7"


def test_an_upload_session_takes_a_file_of_3_mb_or_more_in_ordered_ranges(
        graph: FakeServer[GraphFake], graph_http: httpx.Client) -> None:
    """Microsoft: a file "between 3 MB and 150 MB" goes through createUploadSession, then PUTs of byte ranges, in
    order, to the pre-authenticated uploadUrl ("Do not specify an Authorization request header"); each answers 200
    with nextExpectedRanges, the last 201 with a Location header."""
    made = graph_http.post("/me/mailFolders/sentitems/messages", json={"subject": "Scan"}).json()
    small = graph_http.post(f"/me/messages/{made['id']}/attachments/createUploadSession", json={
        "AttachmentItem": {"attachmentType": "file", "name": "tiny.txt", "size": 10}})
    assert _error(small)["code"] == "ErrorAttachmentSizeShouldNotBeLessThanMinimumSize"
    content = b"\x01\x02" * 1_750_000
    session = graph_http.post(f"/me/messages/{made['id']}/attachments/createUploadSession", json={
        "AttachmentItem": {"attachmentType": "file", "name": "scan.bin", "size": len(content)}})
    assert session.status_code == 201 and session.json()["nextExpectedRanges"] == ["0-"]
    url = session.json()["uploadUrl"]
    first = {"Content-Type": "application/octet-stream", "Content-Range": f"bytes 0-1999999/{len(content)}"}
    assert httpx.put(url, content=content[:2_000_000], headers={**first, **graph.app.auth_headers()}
                     ).status_code == 401
    skipped = httpx.put(url, content=content[2_000_000:], headers={
        "Content-Type": "application/octet-stream", "Content-Range": f"bytes 2000000-3499999/{len(content)}"})
    assert skipped.status_code == 400
    part = httpx.put(url, content=content[:2_000_000], headers=first)
    assert part.status_code == 200 and part.json()["nextExpectedRanges"] == ["2000000"]
    last = httpx.put(url, content=content[2_000_000:], headers={
        "Content-Type": "application/octet-stream", "Content-Range": f"bytes 2000000-3499999/{len(content)}"})
    assert last.status_code == 201 and "Attachments(" in last.headers["location"]
    assert graph_http.get(f"/me/messages/{made['id']}").json()["hasAttachments"] is True
