"""The Gmail fake over real HTTP: auth, listing and paging, formats, history, quota, OAuth."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.fakes import FakeServer, GmailFake, ManualClock, pkce_challenge, rfc822


def _error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()["error"]
    assert set(body) >= {"code", "message", "errors", "status"}
    assert body["code"] == response.status_code
    assert set(body["errors"][0]) >= {"domain", "reason", "message"}
    return dict(body)


def _list_all(http: httpx.Client, **params: Any) -> tuple[list[str], int]:
    ids: list[str] = []
    pages = 0
    token: str | None = None
    while True:
        page = http.get("/messages", params={**params, **({"pageToken": token} if token else {})}).json()
        pages += 1
        ids += [m["id"] for m in page.get("messages", [])]
        token = page.get("nextPageToken")
        if not token:
            return ids, pages


def test_requests_without_a_valid_bearer_token_get_googles_401(
        gmail: FakeServer[GmailFake], clock: ManualClock) -> None:
    url = f"{gmail.url}/gmail/v1/users/me/profile"
    missing = httpx.get(url)
    assert missing.status_code == 401
    assert _error(missing)["status"] == "UNAUTHENTICATED"
    assert _error(missing)["errors"][0]["reason"] == "authError"
    assert "invalid_token" in missing.headers["www-authenticate"]
    assert httpx.get(url, headers={"Authorization": "Bearer nonsense"}).status_code == 401
    assert httpx.get(url, headers=gmail.app.auth_headers()).status_code == 200
    clock.advance(3600)  # access tokens live 3599 s
    assert httpx.get(url, headers=gmail.app.auth_headers()).status_code == 401


def test_another_users_mailbox_is_forbidden(gmail: FakeServer[GmailFake]) -> None:
    response = httpx.get(f"{gmail.url}/gmail/v1/users/bob@gmail.com/profile", headers=gmail.app.auth_headers())
    assert response.status_code == 403
    assert _error(response)["errors"][0]["reason"] == "forbidden"
    own = httpx.get(f"{gmail.url}/gmail/v1/users/alice@gmail.com/profile", headers=gmail.app.auth_headers())
    assert own.json()["emailAddress"] == "alice@gmail.com"
    bob = gmail.app.add_mailbox("bob@gmail.com")
    bob.add_message(rfc822("for bob"))
    theirs = httpx.get(f"{gmail.url}/gmail/v1/users/me/profile", headers=gmail.app.auth_headers("bob@gmail.com"))
    assert (theirs.json()["emailAddress"], theirs.json()["messagesTotal"]) == ("bob@gmail.com", 1)


def test_profile_counts_spam_and_trash_and_labels_list_system_and_nested_user_labels(
        gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    fake = gmail.app
    invoices = fake.add_label("Work/Invoices")
    first = fake.add_message(rfc822("one"), label_ids=["INBOX", invoices.id])
    fake.add_message(rfc822("reply"), thread_id=first.thread_id)
    fake.add_message(rfc822("spam"), label_ids=["SPAM"])
    fake.add_message(rfc822("trash"), label_ids=["TRASH"])

    profile = gmail_http.get("/profile").json()
    assert profile == {"emailAddress": "alice@gmail.com", "messagesTotal": 4, "threadsTotal": 3,
                       "historyId": str(fake.mailbox.history_id)}

    labels = {label["id"]: label for label in gmail_http.get("/labels").json()["labels"]}
    for system in ("INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "STARRED", "UNREAD", "IMPORTANT", "CHAT",
                   "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES",
                   "CATEGORY_FORUMS"):
        assert labels[system]["type"] == "system"
    assert labels[invoices.id] == {"id": invoices.id, "name": "Work/Invoices", "messageListVisibility": "show",
                                   "labelListVisibility": "labelShow", "type": "user"}
    detail = gmail_http.get(f"/labels/{invoices.id}").json()
    assert (detail["messagesTotal"], detail["threadsTotal"], detail["messagesUnread"]) == (1, 1, 0)


def test_listing_pages_newest_first_with_page_tokens_capped_at_500(
        gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    fake = gmail.app
    seeded = [fake.add_message(b"Subject: m\r\n\r\nx\r\n").id for _ in range(1203)]

    first = gmail_http.get("/messages", params={"maxResults": 1000}).json()
    assert len(first["messages"]) == 500  # maxResults is capped at 500
    assert first["resultSizeEstimate"] == 1203
    assert set(first["messages"][0]) == {"id", "threadId"}
    assert first["messages"][0]["id"] == seeded[-1]  # newest first

    ids, pages = _list_all(gmail_http, maxResults=500)
    assert pages == 3
    assert ids == list(reversed(seeded))

    small, small_pages = _list_all(gmail_http, maxResults=100)
    assert small == ids and small_pages == 13

    bad = gmail_http.get("/messages", params={"pageToken": "not-a-token"})
    assert bad.status_code == 400
    assert _error(bad)["errors"][0]["reason"] == "invalidArgument"
    assert gmail_http.get("/messages", params={"q": "in:sent"}).json() == {"resultSizeEstimate": 0}


def test_spam_and_trash_only_when_asked_chats_listed_and_minimal_queries(
        gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    fake = gmail.app
    invoices = fake.add_label("Work/Invoices")
    inbox = fake.add_message(rfc822("inbox"), label_ids=["INBOX", "UNREAD", "CATEGORY_PERSONAL"])
    read = fake.add_message(rfc822("read"), label_ids=["INBOX", "CATEGORY_PROMOTIONS"])
    filed = fake.add_message(rfc822("invoice"), label_ids=[invoices.id])
    spam = fake.add_message(rfc822("spam"), label_ids=["SPAM", "UNREAD"])
    trashed = fake.add_message(rfc822("trash"), label_ids=["INBOX"])
    fake.mailbox.trash(trashed.id)
    chat = fake.mailbox.add_chat("hi there")

    def listed(**params: Any) -> set[str]:
        return set(_list_all(gmail_http, **params)[0])

    assert listed() == {inbox.id, read.id, filed.id, chat.id}
    assert listed(includeSpamTrash="true") == {inbox.id, read.id, filed.id, chat.id, spam.id, trashed.id}
    assert listed(labelIds="SPAM") == {spam.id}
    assert listed(labelIds="TRASH") == {trashed.id}
    assert listed(q="in:inbox") == {inbox.id, read.id}
    assert listed(q="in:inbox", includeSpamTrash="true") == {inbox.id, read.id, trashed.id}
    assert listed(q="in:anywhere is:unread") == {inbox.id, spam.id}
    assert listed(q="label:work-invoices") == {filed.id}
    assert listed(q="label:Work/Invoices") == {filed.id}
    assert listed(q="category:promotions") == {read.id}
    assert listed(q="in:inbox -is:unread") == {read.id}
    assert listed(q="in:chats") == {chat.id}
    assert listed(labelIds=["INBOX", "UNREAD"]) == {inbox.id}
    assert gmail_http.get("/messages", params={"labelIds": "NOPE"}).status_code == 400
    unsupported = gmail_http.get("/messages", params={"q": "from:bob@example.org"})
    assert unsupported.status_code == 400
    assert "does not support" in _error(unsupported)["message"]


def test_get_in_every_format(gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    raw = rfc822("Grüße", body="Plain body here.", html="<p>Rich</p>",
                 attachments=[("note.txt", "text/plain", b"attached bytes")])
    message = gmail.app.add_message(raw, label_ids=["INBOX"])
    url = f"/messages/{message.id}"

    as_raw = gmail_http.get(url, params={"format": "raw"}).json()
    assert base64.urlsafe_b64decode(as_raw["raw"]) == raw
    assert as_raw["threadId"] == message.thread_id and as_raw["labelIds"] == ["INBOX"]
    assert as_raw["historyId"] == str(message.history_id)
    assert as_raw["internalDate"] == str(message.internal_date)
    assert as_raw["sizeEstimate"] == len(raw)
    assert as_raw["snippet"] == "Plain body here."
    assert "payload" not in as_raw

    metadata = gmail_http.get(url, params={"format": "metadata", "metadataHeaders": ["Subject", "From"]}).json()
    assert {h["name"] for h in metadata["payload"]["headers"]} == {"Subject", "From"}
    assert {h["name"]: h["value"] for h in metadata["payload"]["headers"]}["Subject"] == "Grüße"
    assert "raw" not in metadata and "parts" not in metadata["payload"]

    minimal = gmail_http.get(url, params={"format": "minimal"}).json()
    assert "payload" not in minimal and "raw" not in minimal
    assert set(minimal) >= {"id", "threadId", "labelIds", "snippet", "historyId", "internalDate", "sizeEstimate"}

    full = gmail_http.get(url).json()["payload"]
    assert full["mimeType"] == "multipart/mixed" and full["partId"] == ""
    alternative, attachment = full["parts"]
    assert [p["partId"] for p in alternative["parts"]] == ["0.0", "0.1"]
    assert base64.urlsafe_b64decode(alternative["parts"][0]["body"]["data"]).decode().strip() == "Plain body here."
    assert attachment["filename"] == "note.txt" and "data" not in attachment["body"]
    fetched = gmail_http.get(f"{url}/attachments/{attachment['body']['attachmentId']}").json()
    assert base64.urlsafe_b64decode(fetched["data"]) == b"attached bytes"

    assert gmail_http.get(url, params={"format": "bogus"}).status_code == 400
    assert gmail_http.get("/messages/not-hex!").status_code == 400
    assert gmail_http.get("/messages/0123456789abcdef").status_code == 404


def test_a_listed_then_gone_id_answers_404(gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    kept = gmail.app.add_message(rfc822("kept"))
    gone = gmail.app.add_message(rfc822("gone"))
    gmail.app.mailbox.mark_gone(gone.id)
    assert set(_list_all(gmail_http)[0]) == {kept.id, gone.id}
    response = gmail_http.get(f"/messages/{gone.id}", params={"format": "raw"})
    assert response.status_code == 404
    error = _error(response)
    assert error["status"] == "NOT_FOUND" and error["errors"][0]["reason"] == "notFound"
    assert gmail_http.post(f"/messages/{gone.id}/modify", json={"addLabelIds": ["STARRED"]}).status_code == 404


def test_changes_show_up_in_history(gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    fake = gmail.app
    a = fake.add_message(rfc822("a"))
    b = fake.add_message(rfc822("b"))
    start = gmail_http.get("/profile").json()["historyId"]

    assert gmail_http.post("/messages/batchModify", json={
        "ids": [a.id, b.id], "addLabelIds": ["STARRED"], "removeLabelIds": ["UNREAD"]}).status_code == 204
    modified = gmail_http.post(f"/messages/{a.id}/modify", json={"removeLabelIds": ["INBOX"]}).json()
    assert modified == {"id": a.id, "threadId": a.thread_id, "labelIds": ["STARRED"]}
    assert gmail_http.post(f"/messages/{b.id}/trash").json()["labelIds"] == ["INBOX", "STARRED", "TRASH"]
    assert gmail_http.post(f"/messages/{b.id}/untrash").json()["labelIds"] == ["INBOX", "STARRED"]
    c = fake.add_message(rfc822("c"), label_ids=["INBOX", "CATEGORY_UPDATES"])
    # deleting for good needs the full mail scope (gmail.modify, the default grant here, is refused)
    assert gmail_http.delete(f"/messages/{b.id}").status_code == 403
    full = fake.oauth.issue(fake.mailbox.email, scope="https://mail.google.com/").access_token
    assert gmail_http.delete(f"/messages/{b.id}", headers={"Authorization": f"Bearer {full}"}).status_code == 204
    bad = gmail_http.post("/messages/batchModify", json={"ids": [a.id], "addLabelIds": ["NOPE"]})
    assert bad.status_code == 400 and _error(bad)["message"] == "Invalid label: NOPE"

    history = gmail_http.get("/history", params={"startHistoryId": start}).json()
    assert history["historyId"] == gmail_http.get("/profile").json()["historyId"]
    records = history["history"]
    assert [int(r["id"]) for r in records] == sorted(int(r["id"]) for r in records)
    assert all(int(r["id"]) > int(start) for r in records)
    kinds = [next(k for k in r if k not in ("id", "messages")) for r in records]
    assert kinds == ["labelsAdded", "labelsAdded", "labelsRemoved", "labelsAdded", "labelsRemoved",
                     "messagesAdded", "messagesDeleted"]
    assert records[0]["labelsAdded"][0]["labelIds"] == ["STARRED"]
    assert records[0]["labelsRemoved"][0]["labelIds"] == ["UNREAD"]  # one record per message and change
    assert records[-2]["messagesAdded"][0]["message"] == {"id": c.id, "threadId": c.thread_id,
                                                          "labelIds": ["INBOX", "CATEGORY_UPDATES"]}
    assert records[-1]["messagesDeleted"][0]["message"]["id"] == b.id
    assert records[-1]["messages"] == [{"id": b.id, "threadId": b.thread_id}]

    added = gmail_http.get("/history", params={"startHistoryId": start, "historyTypes": "messageAdded"}).json()
    assert [r["messagesAdded"][0]["message"]["id"] for r in added["history"]] == [c.id]
    trash_only = gmail_http.get("/history", params={"startHistoryId": start, "labelId": "TRASH"}).json()
    assert [list(r)[1:] for r in trash_only["history"]] == [["labelsAdded", "messages"], ["labelsRemoved", "messages"]]

    paged: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page = gmail_http.get("/history", params={"startHistoryId": start, "maxResults": 2,
                                                  **({"pageToken": token} if token else {})}).json()
        paged += page["history"]
        token = page.get("nextPageToken")
        if not token:
            break
    assert paged == records

    latest = gmail_http.get("/history", params={"startHistoryId": history["historyId"]}).json()
    assert latest == {"historyId": history["historyId"]}


def test_history_older_than_the_retained_window_answers_404(
        gmail: FakeServer[GmailFake], gmail_http: httpx.Client) -> None:
    fake = gmail.app
    fake.add_message(rfc822("a"))
    old = gmail_http.get("/profile").json()["historyId"]
    fake.add_message(rfc822("b"))
    assert gmail_http.get("/history", params={"startHistoryId": old}).status_code == 200

    fake.mailbox.expire_history()
    expired = gmail_http.get("/history", params={"startHistoryId": old})
    assert expired.status_code == 404
    assert _error(expired)["errors"][0]["reason"] == "notFound"
    now = gmail_http.get("/profile").json()["historyId"]
    assert gmail_http.get("/history", params={"startHistoryId": now}).json() == {"historyId": now}

    fake.mailbox.history_retention = 2
    for n in range(4):
        fake.add_message(rfc822(f"later {n}"))
    assert gmail_http.get("/history", params={"startHistoryId": now}).status_code == 404
    kept = [int(r.id) for r in fake.mailbox.history]
    assert len(kept) == 2
    recent = gmail_http.get("/history", params={"startHistoryId": kept[0] - 1})
    assert recent.status_code == 200 and len(recent.json()["history"]) == 2
    assert gmail_http.get("/history").status_code == 400


def test_quota_rejects_with_429_and_retry_after_then_recovers(clock: ManualClock) -> None:
    fake = GmailFake(clock=clock, units_per_minute=130)
    fake.quota.set_fetch_units(60)
    ids = [fake.add_message(rfc822(f"m{n}")).id for n in range(3)]
    clock.set(1_779_999_970.0)  # ten seconds into a clock minute
    with FakeServer(fake) as server, httpx.Client(base_url=f"{server.url}/gmail/v1/users/me",
                                                  headers=fake.auth_headers()) as http:
        assert http.get(f"/messages/{ids[0]}", params={"format": "raw"}).status_code == 200
        assert http.get(f"/messages/{ids[1]}", params={"format": "raw"}).status_code == 200
        assert fake.quota.used("alice@gmail.com") == 120
        rejected = http.get(f"/messages/{ids[2]}", params={"format": "raw"})
        assert rejected.status_code == 429
        assert rejected.headers["retry-after"] == "50"
        error = _error(rejected)
        assert error["status"] == "RESOURCE_EXHAUSTED"
        assert error["errors"][0] | {"message": ""} == {"message": "", "domain": "usageLimits",
                                                        "reason": "rateLimitExceeded"}
        assert error["details"][0]["metadata"]["quota_limit_value"] == "130"
        # cheaper calls still fit: metadata costs 5, labels.list 1
        assert http.get(f"/messages/{ids[2]}", params={"format": "metadata"}).status_code == 200
        assert http.get("/labels").status_code == 200

        clock.advance(int(rejected.headers["retry-after"]))
        assert http.get(f"/messages/{ids[2]}", params={"format": "raw"}).status_code == 200
        assert http.get("/history", params={"startHistoryId": fake.mailbox.history_id}).status_code == 200
        assert http.get("/messages").status_code == 200
        assert http.get("/profile").status_code == 200
        assert http.post("/messages/batchModify", json={"ids": ids, "addLabelIds": ["STARRED"]}).status_code == 204
        assert fake.quota.used("alice@gmail.com") == 60 + 2 + 5 + 1 + 50
        assert http.post("/messages/batchModify", json={"ids": ids, "addLabelIds": ["UNREAD"]}).status_code == 429

    assert [(c.method, c.units, c.status) for c in fake.calls] == [
        ("users.messages.get", 60, 200), ("users.messages.get", 60, 200), ("users.messages.get", 0, 429),
        ("users.messages.get", 5, 200), ("users.labels.list", 1, 200), ("users.messages.get", 60, 200),
        ("users.history.list", 2, 200), ("users.messages.list", 5, 200), ("users.getProfile", 1, 200),
        ("users.messages.batchModify", 50, 204), ("users.messages.batchModify", 0, 429),
    ]
    assert len(fake.quota.rejections) == 2


def test_sliding_window_quota_and_user_rate_reason(clock: ManualClock) -> None:
    fake = GmailFake(clock=clock, units_per_minute=10, quota_window="sliding")
    fake.quota.reason = "userRateLimitExceeded"
    fake.quota.include_limit_in_error = False
    with FakeServer(fake) as server, httpx.Client(base_url=f"{server.url}/gmail/v1/users/me",
                                                  headers=fake.auth_headers()) as http:
        assert http.get("/messages").status_code == 200  # 5 units at t=0
        clock.advance(30)
        assert http.get("/messages").status_code == 200  # 5 units at t=30
        clock.advance(10)
        rejected = http.get("/messages")
        assert rejected.status_code == 429
        assert rejected.headers["retry-after"] == "20"  # the t=0 units expire at t=60
        assert _error(rejected)["errors"][0]["reason"] == "userRateLimitExceeded"
        assert _error(rejected)["message"].startswith("User-rate limit exceeded.  Retry after ")
        assert "details" not in _error(rejected)
        clock.advance(20)
        assert http.get("/messages").status_code == 200


def test_oauth_authorization_code_with_pkce_refresh_and_revocation(gmail: FakeServer[GmailFake]) -> None:
    fake = gmail.app
    verifier = "v" * 64
    redirect = "http://plmail.test/oauth/google/callback"
    consent = httpx.get(f"{gmail.url}/o/oauth2/v2/auth", params={
        "client_id": fake.client_id, "redirect_uri": redirect, "response_type": "code", "state": "s-1",
        "scope": "https://www.googleapis.com/auth/gmail.modify", "access_type": "offline",
        "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256"})
    assert consent.status_code == 302
    location = urlsplit(consent.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == redirect
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert query["state"] == "s-1"

    token_url = f"{gmail.url}/token"
    form = {"grant_type": "authorization_code", "code": query["code"], "redirect_uri": redirect,
            "client_id": fake.client_id, "client_secret": fake.client_secret}
    wrong = httpx.post(token_url, data={**form, "code_verifier": "w" * 64})
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    bad_client = httpx.post(token_url, data={**form, "client_secret": "nope", "code_verifier": verifier})
    assert (bad_client.status_code, bad_client.json()["error"]) == (401, "invalid_client")
    granted = httpx.post(token_url, data={**form, "code_verifier": verifier})
    assert granted.status_code == 200
    tokens = granted.json()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3599 and tokens["refresh_token"]
    assert httpx.post(token_url, data={**form, "code_verifier": verifier}).json()["error"] == "invalid_grant"

    profile = httpx.get(f"{gmail.url}/gmail/v1/users/me/profile",
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert profile.json()["emailAddress"] == "alice@gmail.com"

    refresh_form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                    "client_id": fake.client_id, "client_secret": fake.client_secret}
    refreshed = httpx.post(token_url, data=refresh_form).json()
    assert refreshed["access_token"] != tokens["access_token"] and "refresh_token" not in refreshed

    fake.oauth.revoke_user("alice@gmail.com")
    revoked = httpx.post(token_url, data=refresh_form)
    assert revoked.status_code == 400
    assert revoked.json() == {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
    assert httpx.get(f"{gmail.url}/gmail/v1/users/me/profile",
                     headers={"Authorization": f"Bearer {refreshed['access_token']}"}).status_code == 401
    assert [r.ok for r in fake.oauth.token_requests] == [False, False, True, False, True, False]


@pytest.mark.parametrize("deny", [True, False])
def test_consent_can_be_denied(gmail: FakeServer[GmailFake], deny: bool) -> None:
    gmail.app.oauth.deny_consent = deny
    response = httpx.get(f"{gmail.url}/o/oauth2/v2/auth", params={
        "client_id": gmail.app.client_id, "redirect_uri": "http://plmail.test/cb", "state": "x"})
    query = parse_qs(urlsplit(response.headers["location"]).query)
    assert ("error" in query) is deny and ("code" in query) is not deny
