"""Filter rules on new and existing mail, and the search box with its operators."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import LabelRole, Locale
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.mail.labels import LabelManager
from plmail.mail.rules.describe import describe_rule
from plmail.mail.rules.model import RuleDraft
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message

DMARC_PASS = "mx.example.net; dkim=pass header.d=bank.example; spf=pass smtp.mailfrom=bank.example; dmarc=pass"


async def _rule(mailbox: Mailbox, conditions: dict[str, object], actions: list[dict[str, object]],
                **extra: object) -> int:
    labels = {r["id"] for r in await mailbox.services.db.fetch("SELECT id FROM label")}
    draft = RuleDraft(name=str(extra.pop("name", "rule")), account_id=None, conditions=conditions,
                      actions=actions, **extra)  # type: ignore[arg-type]
    return await mailbox.services.rules.save(mailbox.user.id, None, draft, labels, {mailbox.account_id})


async def _label_names(mailbox: Mailbox, table: str, key: str, value: int) -> set[str]:
    rows = await mailbox.services.db.fetch(
        f"SELECT coalesce(l.role, l.name) AS n FROM {table} x JOIN label l ON l.id = x.label_id WHERE x.{key} = $1",
        value)
    return {r["n"] for r in rows}


async def test_a_rule_labels_new_mail_and_the_thread_carries_the_label(mailbox: Mailbox) -> None:
    receipts = await LabelManager(mailbox.services.db).create(mailbox.user.id, "Receipts")
    await _rule(mailbox, {"from": "shop.example"}, [{"type": "applyLabel", "labelId": receipts}, {"type": "archive"}])
    result = await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id="r1@x", sender="orders@shop.example", subject="Receipt")),
        mailbox.message(make_message(message_id="r2@x", sender="friend@example.org", subject="Hi")),
    ])
    shop, friend = result.messages
    assert await _label_names(mailbox, "message_label", "message_id", shop.id) == {"Receipts"}
    # The thread's labels are the union of its messages' labels *after* the rule ran.
    assert await _label_names(mailbox, "thread_label", "thread_id", shop.thread_id or 0) == {"Receipts"}
    assert await _label_names(mailbox, "message_label", "message_id", friend.id) == {"inbox"}
    jobs = await mailbox.services.db.fetch(
        "SELECT queue FROM saq_jobs WHERE convert_from(job, 'UTF8')::jsonb ->> 'function' = "
        "'propagate_provider_changes'")
    # the provider learns about the rule's changes after commit, on ingest: the deliberate difference from the
    # seed's export queue (the ingest worker holds the provider's connection)
    assert [r["queue"] for r in jobs] == ["ingest"]


async def test_stop_processing_flags_and_spam_actions(mailbox: Mailbox) -> None:
    await _rule(mailbox, {"subject": "urgent"}, [{"type": "star"}, {"type": "markRead"}], stop_processing=True)
    await _rule(mailbox, {"subject": "urgent"}, [{"type": "trash"}])  # never reached for claimed mail
    await _rule(mailbox, {"operator": "AND", "conditions": [{"subject": "prize"}, {"hasAttachment": False}]},
                [{"type": "markSpam"}])
    result = await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id="u@x", subject="URGENT: call me")),
        mailbox.message(make_message(message_id="p@x", subject="You won a prize")),
    ])
    urgent, prize = result.messages
    row = await mailbox.services.db.fetchrow("SELECT seen_at, starred_at FROM message WHERE id = $1", urgent.id)
    assert row["seen_at"] is not None and row["starred_at"] is not None
    assert await _label_names(mailbox, "message_label", "message_id", urgent.id) == {"inbox"}
    assert await _label_names(mailbox, "message_label", "message_id", prize.id) == {"spam"}
    thread = await mailbox.services.db.fetchrow("SELECT unread_count, starred_at FROM message_thread WHERE id = $1",
                                                urgent.thread_id)
    assert thread["unread_count"] == 0 and thread["starred_at"] is not None


async def test_file_into_category_only_for_authenticated_senders(mailbox: Mailbox) -> None:
    await _rule(mailbox, {"from": "bank.example"}, [{"type": "fileIntoCategory", "category": "updates"}])
    genuine = make_message(message_id="b1@x", sender="alerts@bank.example", subject="Statement",
                           headers={"Authentication-Results": DMARC_PASS})
    forged = make_message(message_id="b2@x", sender="alerts@bank.example", subject="Verify now",
                          headers={"Authentication-Results": "mx.example.net; dkim=fail; spf=softfail; dmarc=fail",
                                   "X-Spoof": "1"})
    result = await mailbox.services.pipeline.ingest([mailbox.message(genuine), mailbox.message(forged)])
    rows = await mailbox.services.db.fetch(
        "SELECT m.rule_category, m.category, t.user_category FROM message m JOIN message_thread t "
        "ON t.id = m.thread_id ORDER BY m.id")
    assert [(r["rule_category"], r["category"], r["user_category"]) for r in rows] == [
        ("updates", "primary", "updates"), (None, "primary", None)]  # category itself is never written by rules
    assert len(result.messages) == 2


async def test_a_broken_rule_is_skipped_and_the_mail_still_arrives(mailbox: Mailbox) -> None:
    rule_id = await _rule(mailbox, {"subject": "x"}, [{"type": "star"}])
    await mailbox.services.db.execute(
        "UPDATE mail_rule SET conditions = '{\"bogus\": 1}'::jsonb WHERE id = $1", rule_id)
    result = await mailbox.services.pipeline.ingest([mailbox.message(make_message(message_id="z@x", subject="x"))])
    assert result.stored == 1


async def test_rule_validation_preview_description_and_apply_to_existing(mailbox: Mailbox) -> None:
    rules = mailbox.services.rules
    labels = {r["id"] for r in await mailbox.services.db.fetch("SELECT id FROM label")}
    for bad_actions in ([], [{"type": "explode"}], [{"type": "applyLabel", "labelId": 999999}]):
        with pytest.raises(ValidationError):
            await rules.save(mailbox.user.id, None, RuleDraft("r", None, {"from": "a"}, bad_actions), labels, set())
    with pytest.raises(ValidationError):
        await rules.save(mailbox.user.id, None, RuleDraft("r", None, {"nonsense": "a"}, [{"type": "star"}]),
                         labels, set())
    await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id=f"old{i}@x", subject=f"Invoice {i}", date=BASE_DATE - timedelta(i)))
        for i in range(12)])
    assert await rules.preview(mailbox.user.id, {"subject": "invoice"}, None) == 12
    assert await rules.preview(mailbox.user.id, {"subject": "nothing like it"}, None) == 0
    archive_rule = await _rule(mailbox, {"subject": "invoice"}, [{"type": "archive"}])
    assert await rules.request_run(mailbox.user.id, archive_rule)
    assert not await rules.request_run(mailbox.user.id, archive_rule)  # one run at a time
    assert await rules.apply_to_existing(mailbox.user.id, archive_rule) == 12
    state = await mailbox.services.db.fetchrow("SELECT run_state, run_processed, run_matched FROM mail_rule "
                                               "WHERE id = $1", archive_rule)
    assert (state["run_state"], state["run_processed"], state["run_matched"]) == ("completed", 12, 12)
    inbox = (await mailbox.services.labels.role_ids(mailbox.user.id))[LabelRole.INBOX]
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM message_label WHERE label_id = $1", inbox) == 0
    text = describe_rule({"operator": "AND", "conditions": [{"from": "shop"}, {"hasAttachment": True}]},
                         [{"type": "applyLabel", "labelId": 5}, {"type": "archive"}], Locale.EN, {5: "Receipts"}, {})
    assert text == "If the sender contains “shop” and it has an attachment, then label it “Receipts” and archive it."
    german = describe_rule({"subject": "Rechnung"}, [{"type": "markRead"}], Locale.DE, {}, {})
    assert german == "Wenn der Betreff „Rechnung“ enthält, dann sie als gelesen markieren."


async def test_search_operators_and_free_text(mailbox: Mailbox) -> None:
    services = mailbox.services
    work = await LabelManager(services.db).create(mailbox.user.id, "Work")
    now = datetime.now(UTC)
    result = await services.pipeline.ingest([
        mailbox.message(make_message(message_id="s1@x", subject="Quarterly invoices", sender="bill@acme.example",
                                     body="Payment due Friday", date=now - timedelta(days=2))),
        mailbox.message(make_message(message_id="s2@x", subject="Lunch plans", sender="ann@friends.example",
                                     to=["team@acme.example"], body="Pizza at noon?", date=now - timedelta(days=40),
                                     headers={"List-Id": "<lunch.friends.example>"})),
        mailbox.message(make_message(message_id="s3@x", subject="Old invoice", sender="bill@acme.example",
                                     body="From last year", date=now - timedelta(days=400))),
    ])
    invoices, lunch, old = result.messages
    await services.operations.add_label(mailbox.user.id, work, message_ids=[lunch.id])
    await services.operations.set_seen(mailbox.user.id, True, message_ids=[old.id])
    await services.operations.set_starred(mailbox.user.id, True, message_ids=[invoices.id])
    await services.operations.trash(mailbox.user.id, message_ids=[old.id])
    # A local archive account is always importing: its mail is indexed for search afterwards.
    await services.search_index.catch_up()

    async def subjects(query: str, **kw: bool) -> list[str]:
        page = await services.reader.search(mailbox.user.id, query, **kw)
        return [t.subject for t in page.threads]

    assert await subjects("from:acme.example") == ["Quarterly invoices"]  # the old one is in the trash
    assert await subjects("from:acme.example in:trash") == ["Old invoice"]
    assert await subjects("to:team@acme.example") == ["Lunch plans"]
    assert await subjects("label:work") == ["Lunch plans"]
    assert await subjects("label:nosuchlabel") == []
    assert await subjects("is:starred") == ["Quarterly invoices"]
    assert await subjects("is:unread") == ["Quarterly invoices", "Lunch plans"]
    assert await subjects("list:lunch.friends.example") == ["Lunch plans"]
    assert await subjects("newer_than:7d") == ["Quarterly invoices"]
    assert await subjects("older_than:30d") == ["Lunch plans"]
    assert await subjects(f"after:{(now - timedelta(days=10)).date().isoformat()}") == ["Quarterly invoices"]
    assert await subjects("invoice payment") == ["Quarterly invoices"]  # free text, stemmed
    assert await subjects('"pizza at noon"') == ["Lunch plans"]  # a phrase
    assert await subjects("subject:") == []  # a known operator without a value is dropped: nothing left
    assert await subjects("colour:blue pizza") == []  # unknown operator stays free text (and matches nothing)
    assert await subjects("has:attachment") == []
    assert await subjects("invoices OR pizza", ranked=True) == ["Quarterly invoices", "Lunch plans"]


async def test_a_trash_rule_takes_every_other_place_off_the_message(mailbox: Mailbox) -> None:
    """Deliberately more than the seed's "Papierkorb dazu, Posteingang weg": Archive and Spam go as well, so a
    message is never in the bin and in another place at once."""
    roles = await mailbox.services.labels.role_ids(mailbox.user.id)
    await _rule(mailbox, {"subject": "junk"}, [{"type": "trash"}])
    result = await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id=f"t{n}@x", subject=f"junk {n}"), label_ids=(roles[role],))
        for n, role in enumerate((LabelRole.INBOX, LabelRole.ARCHIVE, LabelRole.SPAM))])
    for message in result.messages:
        assert await _label_names(mailbox, "message_label", "message_id", message.id) == {"trash"}
    operations = mailbox.services.operations
    kept = await mailbox.services.pipeline.ingest([mailbox.message(make_message(message_id="k@x", subject="keep"),
                                                                   label_ids=(roles[LabelRole.ARCHIVE],))])
    await operations.trash(mailbox.user.id, message_ids=[kept.messages[0].id])
    assert await _label_names(mailbox, "message_label", "message_id", kept.messages[0].id) == {"trash"}


async def test_the_rule_editor_lists_finds_and_deletes_only_the_users_own_rules(mailbox: Mailbox) -> None:
    rules = mailbox.services.rules
    first = await _rule(mailbox, {"subject": "a"}, [{"type": "star"}], name="First")
    second = await _rule(mailbox, {"subject": "b"}, [{"type": "markRead"}], name="Second")
    assert [r.id for r in await rules.for_user(mailbox.user.id)] == [first, second]
    found = await rules.owned(mailbox.user.id, second)
    assert found is not None and found.name == "Second"
    stranger = await mailbox.services.users.create_user("stranger@example.org", "correct horse")
    assert await rules.owned(stranger.id, second) is None
    with pytest.raises(NotFoundError):
        await rules.delete(stranger.id, second)  # another user's rule is not theirs to delete
    await rules.delete(mailbox.user.id, first)
    assert [r.id for r in await rules.for_user(mailbox.user.id)] == [second]
    with pytest.raises(NotFoundError):
        await rules.delete(mailbox.user.id, first)  # gone already
