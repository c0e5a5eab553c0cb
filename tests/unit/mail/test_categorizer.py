"""The category cascade: one test per stage and per pitfall the seed names."""

from __future__ import annotations

import pytest

from plmail.domain.enums import Category
from plmail.mail.categorizer import CategoryFacts, MessageCategorizer, Stage, is_social_domain, sender_domain

cat = MessageCategorizer()


def facts(sender: str = "someone@example.org", gmail: list[str] | None = None, **headers: str) -> CategoryFacts:
    return CategoryFacts(sender, {k.replace("_", "-").title(): v for k, v in headers.items()}, gmail)


def test_gmail_category_labels_win_outright() -> None:
    verdict = cat.explain(facts(gmail=["INBOX", "CATEGORY_PROMOTIONS"], list_post="<mailto:l@x>"),
                          correspondents={"someone@example.org"})
    assert (verdict.category, verdict.stage, verdict.signal) == (Category.PROMOTIONS, Stage.GMAIL,
                                                                 "CATEGORY_PROMOTIONS")
    # A Gmail message without a category label is General, whatever its headers say.
    assert cat.explain(facts(gmail=["SENT"], list_unsubscribe="<x>")).category is Category.GENERAL


def test_correspondents_beat_bulk_headers() -> None:
    verdict = cat.explain(facts("shop@example.org", list_unsubscribe="<mailto:u@x>"),
                          correspondents={"shop@example.org"})
    assert (verdict.category, verdict.stage) == (Category.GENERAL, Stage.CORRESPONDENT)


def test_mailing_list_with_unsubscribe_is_forums_not_promotions() -> None:
    verdict = cat.explain(facts(list_post="<mailto:dev@lists.example.org>", list_unsubscribe="<mailto:u@x>",
                                list_id="<dev.lists.example.org>"))
    assert (verdict.category, verdict.signal) == (Category.FORUMS, "list-post")
    assert cat.categorize(facts(x_mailman_version="2.1")) is Category.FORUMS


@pytest.mark.parametrize("header_name", ["list_unsubscribe", "feedback_id", "x_csa_complaints"])
def test_bulk_headers_are_promotions(header_name: str) -> None:
    assert cat.categorize(facts(**{header_name: "x"})) is Category.PROMOTIONS
    assert cat.categorize(facts(precedence="bulk")) is Category.PROMOTIONS


def test_social_by_sender_domain_and_not_look_alikes() -> None:
    assert cat.explain(facts("notification@facebookmail.com")).stage is Stage.SOCIAL
    assert cat.categorize(facts("messages-noreply@linkedin.com")) is Category.SOCIAL
    assert cat.categorize(facts("hi@notlinkedin.com")) is Category.GENERAL
    assert cat.categorize(facts("hi@linkedin.com.evil.example")) is Category.GENERAL


def test_updates_and_auto_submitted_no_is_not_updates() -> None:
    assert cat.explain(facts(auto_submitted="auto-generated")).stage is Stage.UPDATES
    assert cat.categorize(facts(auto_submitted="no")) is Category.GENERAL
    assert cat.categorize(facts("no-reply@shop.example")) is Category.UPDATES
    assert cat.categorize(facts(precedence="auto_reply")) is Category.UPDATES


def test_default_is_general() -> None:
    verdict = cat.explain(facts())
    assert (verdict.category, verdict.stage, verdict.signal) == (Category.GENERAL, Stage.DEFAULT, None)


def test_a_switched_off_tab_sends_mail_to_general_without_asking_the_next_rule() -> None:
    verdict = cat.explain(facts(list_post="<x>", list_unsubscribe="<y>"), disabled={Category.FORUMS})
    # Forums being off never turns a mailing list into Promotions.
    assert (verdict.category, verdict.stage, verdict.overridden) == (Category.GENERAL, Stage.SWITCHED_OFF,
                                                                     Category.FORUMS)
    assert cat.categorize(facts(gmail=["CATEGORY_SOCIAL"]), disabled={Category.SOCIAL}) is Category.GENERAL


def test_the_assistant_ranks_below_gmail_and_correspondents_and_above_header_rules() -> None:
    c = MessageCategorizer()
    listed = {"List-Unsubscribe": ["<mailto:x@shop.example>"]}
    asked = CategoryFacts("news@shop.example", listed, None, ai_category="updates")
    verdict = c.explain(asked)
    assert (verdict.category, verdict.stage) == (Category.UPDATES, Stage.ASSISTANT)
    assert verdict.verdict_could_decide
    known = c.explain(asked, correspondents={"news@shop.example"})
    assert (known.category, known.stage, known.verdict_could_decide) == (Category.GENERAL, Stage.CORRESPONDENT, False)
    gmail = c.explain(CategoryFacts("news@shop.example", listed, ["CATEGORY_SOCIAL"], ai_category="updates"))
    assert (gmail.category, gmail.verdict_could_decide) == (Category.SOCIAL, False)
    off = c.explain(asked, disabled={Category.UPDATES})
    assert (off.category, off.stage, off.overridden) == (Category.GENERAL, Stage.SWITCHED_OFF, Category.UPDATES)
    unknown = c.explain(CategoryFacts("news@shop.example", listed, None, ai_category="spam"))
    assert unknown.stage is Stage.PROMOTIONS  # a stored verdict that is no tab is ignored


# Every stage with the signal "Why is this here?" shows for it: explain() is what the message view renders.
VERDICTS = [
    ({"gmail": ["INBOX"]}, (Category.GENERAL, Stage.GMAIL, None)),
    ({"gmail": ["CATEGORY_UPDATES", "CATEGORY_SOCIAL"]}, (Category.UPDATES, Stage.GMAIL, "CATEGORY_UPDATES")),
    ({"gmail": ["CATEGORY_PERSONAL"]}, (Category.GENERAL, Stage.GMAIL, "CATEGORY_PERSONAL")),
    ({"list_post": "<mailto:l@x>"}, (Category.FORUMS, Stage.FORUMS, "list-post")),
    ({"x_mailman_version": "2.1"}, (Category.FORUMS, Stage.FORUMS, "x-mailman-version")),
    ({"x_google_group_id": "1"}, (Category.FORUMS, Stage.FORUMS, "x-google-group-id")),
    ({"x_discourse_post_id": "7"}, (Category.FORUMS, Stage.FORUMS, "x-discourse-post-id")),
    ({"mailing_list": "list x"}, (Category.FORUMS, Stage.FORUMS, "mailing-list")),
    ({"list_unsubscribe": "<x>"}, (Category.PROMOTIONS, Stage.PROMOTIONS, "list-unsubscribe")),
    ({"feedback_id": "1:2"}, (Category.PROMOTIONS, Stage.PROMOTIONS, "feedback-id")),
    ({"x_csa_complaints": "x"}, (Category.PROMOTIONS, Stage.PROMOTIONS, "x-csa-complaints")),
    ({"precedence": " Bulk "}, (Category.PROMOTIONS, Stage.PROMOTIONS, "precedence: bulk")),
    ({"sender": "Notify@M.Facebook.com"}, (Category.SOCIAL, Stage.SOCIAL, "m.facebook.com")),
    ({"auto_submitted": "Auto-Generated"}, (Category.UPDATES, Stage.UPDATES, "auto-submitted: auto-generated")),
    ({"precedence": "auto_reply"}, (Category.UPDATES, Stage.UPDATES, "precedence: auto_reply")),
    ({"x_auto_response_suppress": "All"}, (Category.UPDATES, Stage.UPDATES, "x-auto-response-suppress")),
    ({"sender": "DoNotReply@shop.example"}, (Category.UPDATES, Stage.UPDATES, "donotreply@")),
    ({"sender": "noreply@relay@shop.example"}, (Category.UPDATES, Stage.UPDATES, "noreply@")),
    ({"precedence": "first-class", "x_auto_response_suppress": " "}, (Category.GENERAL, Stage.DEFAULT, None)),
]


@pytest.mark.parametrize(("given", "expected"), VERDICTS, ids=[str(g) for g, _ in VERDICTS])
def test_each_stage_names_the_signal_it_fired_on(given: dict[str, object], expected: tuple[object, ...]) -> None:
    kw = dict(given)
    sender = str(kw.pop("sender", "someone@example.org"))
    gmail = kw.pop("gmail", None)
    verdict = cat.explain(facts(sender, gmail, **{k: str(v) for k, v in kw.items()}))  # type: ignore[arg-type]
    assert (verdict.category, verdict.stage, verdict.signal) == expected


def test_the_correspondent_and_assistant_stages_name_their_signal() -> None:
    known = cat.explain(facts("Shop@Example.org", list_unsubscribe="<x>"), correspondents={"shop@example.org"})
    assert (known.category, known.stage, known.signal) == (Category.GENERAL, Stage.CORRESPONDENT, "shop@example.org")
    asked = cat.explain(CategoryFacts("news@shop.example", {}, None, ai_category="promotions"))
    assert (asked.category, asked.stage, asked.signal) == (Category.PROMOTIONS, Stage.ASSISTANT, "assistant")
    # categorize() asks the same cascade, correspondents included
    assert cat.categorize(facts("shop@example.org", list_unsubscribe="<x>"),
                          correspondents={"shop@example.org"}) is Category.GENERAL


def test_a_switched_off_tab_keeps_the_signal_that_would_have_filed_it() -> None:
    verdict = cat.explain(facts(list_unsubscribe="<x>"), disabled={Category.PROMOTIONS})
    assert (verdict.stage, verdict.signal, verdict.overridden) == (Stage.SWITCHED_OFF, "list-unsubscribe",
                                                                   Category.PROMOTIONS)
    assert cat.explain(facts(), disabled={Category.GENERAL}).stage is Stage.DEFAULT  # General is never off


@pytest.mark.parametrize(("address", "domain"), [
    ("a@Example.COM.", "example.com"), ("a@ mail.example.org ", "mail.example.org"), ("a@b@c.example", "c.example"),
    ("no-at-sign", ""), ("", ""), (None, ""),
])
def test_sender_domain(address: str | None, domain: str) -> None:
    assert sender_domain(address) == domain


def test_social_domains_match_the_domain_and_its_subdomains_only() -> None:
    assert is_social_domain("linkedin.com") and is_social_domain("e.linkedin.com")
    assert not is_social_domain("notlinkedin.com") and not is_social_domain("linkedin.com.evil.example")
