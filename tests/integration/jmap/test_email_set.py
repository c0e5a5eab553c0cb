"""Email/set through ThreadOperations: keywords, mailboxes and their patches, destroy to Trash, ifInState;
the web UI and the provider-change queue see the same thing."""

from __future__ import annotations

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.web import sign_in


async def _two(box: JmapBox) -> tuple[str, str]:
    result = await box.ingest(make_message(message_id="s1@x", subject="First one"),
                              make_message(message_id="s2@x", subject="Second one"))
    return str(result.messages[0].id), str(result.messages[1].id)


async def _get(box: JmapBox, email: str) -> dict[str, object]:
    return (await box.call("Email/get", {"ids": [email], "properties": ["keywords", "mailboxIds"]}))["list"][0]


async def test_keywords_whole_and_patched(box: JmapBox) -> None:
    first, second = await _two(box)
    result = await box.call("Email/set", {"update": {first: {"keywords": {"$seen": True, "$flagged": True}},
                                                     second: {"keywords/$seen": True}}})
    assert result["updated"] == {first: None, second: None} and result["newState"] != result["oldState"]
    assert (await _get(box, first))["keywords"] == {"$flagged": True, "$seen": True}
    assert (await _get(box, second))["keywords"] == {"$seen": True}
    await box.call("Email/set", {"update": {first: {"keywords/$flagged": None}}})
    assert (await _get(box, first))["keywords"] == {"$seen": True}
    # every keyword (RFC 8621 §4.1.1), custom ones too, case-insensitively
    kept = await box.call("Email/set", {"update": {first: {"keywords/$answered": True, "keywords/$Forwarded": True,
                                                           "keywords/Project-X": True}}})
    assert kept["updated"] == {first: None}
    assert (await _get(box, first))["keywords"] == {"$answered": True, "$forwarded": True, "$seen": True,
                                                   "project-x": True}
    await box.call("Email/set", {"update": {first: {"keywords/project-x": None}}})
    assert (await _get(box, first))["keywords"] == {"$answered": True, "$forwarded": True, "$seen": True}
    refused = await box.call("Email/set", {"update": {first: {"keywords/bad(keyword": True},
                                                      second: {"keywords": {"$seen": True, "sp ace": True}},
                                                      "424242": {"keywords/$seen": True}}})
    assert refused["notUpdated"][first]["type"] == "invalidProperties"
    assert refused["notUpdated"][second]["type"] == "invalidProperties"
    assert refused["notUpdated"]["424242"]["type"] == "notFound"
    both = await box.call("Email/set", {"update": {first: {"keywords": {}, "keywords/$seen": True}}})
    assert both["notUpdated"][first]["type"] == "invalidPatch"
    other = await box.call("Email/set", {"update": {first: {"subject": "New"}}})
    assert other["notUpdated"][first] == {"type": "invalidProperties", "properties": ["subject"],
                                          "description": "Only keywords and mailboxIds can be changed."}
    seen = await box.services.db.fetchval("SELECT seen_at IS NOT NULL FROM message WHERE id = $1", int(second))
    assert seen is True  # the same column the web UI reads


async def test_mailbox_patches_archive_and_the_inbox_page_agrees(box: JmapBox) -> None:
    first, second = await _two(box)
    inbox, archive = await box.mailbox_id(LabelRole.INBOX), await box.mailbox_id(LabelRole.ARCHIVE)
    label = (await box.call("Mailbox/set", {"create": {"l": {"name": "Later"}}}))["created"]["l"]["id"]
    await box.call("Email/set", {"update": {first: {f"mailboxIds/{inbox}": None, f"mailboxIds/{archive}": True},
                                            second: {"mailboxIds": {inbox: True, label: True}}}})
    assert (await _get(box, first))["mailboxIds"] == {archive: True}
    assert (await _get(box, second))["mailboxIds"] == {inbox: True, label: True}
    empty = await box.call("Email/set", {"update": {first: {"mailboxIds": {}}, second: {
        f"mailboxIds/{inbox}": None, f"mailboxIds/{label}": None}}})
    assert empty["notUpdated"][first]["type"] == "invalidProperties"
    assert empty["notUpdated"][second]["type"] == "invalidProperties"
    unknown = await box.call("Email/set", {"update": {second: {"mailboxIds/424242": True}}})
    assert unknown["notUpdated"][second]["properties"] == ["mailboxIds"]
    assert await box.services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND kind = 'labels'", box.account_id) >= 2
    assert (await sign_in(box.http, box.user.email, "correct horse")).status_code == 200
    page = (await box.http.get("/")).text
    assert "Second one" in page and "First one" not in page  # archived from the phone, gone from the inbox


async def test_created_mailbox_referenced_in_the_same_request(box: JmapBox) -> None:
    first, _ = await _two(box)
    response = (await box.request([
        ["Mailbox/set", {"accountId": box.account, "create": {"new": {"name": "Projects"}}}, "m"],
        ["Email/set", {"accountId": box.account, "update": {first: {"mailboxIds/#new": True}}}, "e"],
    ], createdIds={})).json()
    created = response["methodResponses"][0][1]["created"]["new"]["id"]
    assert response["createdIds"] == {"new": created}
    assert created in (await _get(box, first))["mailboxIds"]


async def test_junk_and_notjunk_are_the_spam_moves(box: JmapBox) -> None:
    first, _ = await _two(box)
    spam, inbox = await box.mailbox_id(LabelRole.SPAM), await box.mailbox_id(LabelRole.INBOX)
    await box.call("Email/set", {"update": {first: {"keywords/$junk": True}}})
    junk = await _get(box, first)
    assert junk == {"id": first, "keywords": {"$junk": True}, "mailboxIds": {spam: True}}
    await box.call("Email/set", {"update": {first: {"keywords/$junk": None, "keywords/$notjunk": True}}})
    assert await _get(box, first) == {"id": first, "keywords": {"$notjunk": True}, "mailboxIds": {inbox: True}}
    both = await box.call("Email/set", {"update": {first: {"keywords": {"$junk": True, "$notjunk": True}}}})
    assert both["notUpdated"][first]["type"] == "invalidProperties"


async def test_destroy_is_destroy(box: JmapBox) -> None:
    first, _ = await _two(box)
    state = await box.state("Email")
    result = await box.call("Email/set", {"destroy": [first, "424242"]})
    assert result["destroyed"] == [first] and result["notDestroyed"]["424242"]["type"] == "notFound"
    assert await box.services.db.fetchval("SELECT count(*) FROM message WHERE id = $1", int(first)) == 0
    assert (await box.call("Email/get", {"ids": [first]}))["notFound"] == [first]
    assert (await box.call("Email/changes", {"sinceState": state}))["destroyed"] == [first]
    again = await box.call("Email/set", {"destroy": [first]})
    assert again["notDestroyed"][first]["type"] == "notFound"


async def test_if_in_state_and_create_refused(box: JmapBox) -> None:
    first, _ = await _two(box)
    state = await box.state("Email")
    ok = await box.call("Email/set", {"ifInState": state, "update": {first: {"keywords/$seen": True}},
                                      "create": {"d": {"subject": "Draft"}}})
    # RFC 8621 §4.6: an email is created in at least one mailbox
    assert ok["updated"] == {first: None} and ok["notCreated"]["d"]["type"] == "invalidProperties"
    assert ok["notCreated"]["d"]["properties"] == ["mailboxIds"]
    stale = await box.error("Email/set", {"accountId": box.account, "ifInState": state,
                                          "update": {first: {"keywords/$seen": None}}})
    assert stale["type"] == "stateMismatch"
    assert (await _get(box, first))["keywords"] == {"$seen": True}


async def test_an_email_of_another_account_of_the_same_user_is_not_found_here(box: JmapBox) -> None:
    second_account = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL,
                                                        name="B", email="b@example.org")
    stored = await box.services.pipeline.ingest([parse_message(make_message(message_id="o@x"),
                                                               account_id=second_account,
                                                               label_ids=(box.roles[LabelRole.INBOX],))])
    foreign = str(stored.messages[0].id)
    result = await box.call("Email/set", {"update": {foreign: {"keywords/$seen": True}}, "destroy": [foreign]})
    assert result["notUpdated"][foreign]["type"] == "notFound"
    assert result["notDestroyed"][foreign]["type"] == "notFound"
    assert (await box.call("Email/get", {"ids": [foreign]}))["notFound"] == [foreign]
    assert await box.services.db.fetchval("SELECT seen_at FROM message WHERE id = $1", int(foreign)) is None
