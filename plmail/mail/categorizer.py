"""The inbox tab of a message, decided from stored data alone.

Everything read here is persisted on the message row (raw headers, sender, Gmail's labels), so the
same decision runs at arrival and in `plmail backfill category`, and `explain()` recomputes the
answer on demand instead of trusting a column written by an older version of these rules.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Sequence
from dataclasses import dataclass
from enum import StrEnum

from plmail.domain.enums import Category
from plmail.domain.messages import RawHeaders
from plmail.mail.headers import has_header, header

# Small and high-signal on purpose: a miss lands in Updates or General, a false hit hides mail.
SOCIAL_DOMAINS = frozenset({
    "facebookmail.com", "facebook.com", "linkedin.com", "x.com", "twitter.com", "instagram.com", "reddit.com",
    "redditmail.com", "youtube.com", "pinterest.com", "tiktok.com", "nextdoor.com", "meetup.com", "xing.com",
    "mastodon.social",
})
_GMAIL_CATEGORIES = {
    "CATEGORY_SOCIAL": Category.SOCIAL,
    "CATEGORY_PROMOTIONS": Category.PROMOTIONS,
    "CATEGORY_UPDATES": Category.UPDATES,
    "CATEGORY_FORUMS": Category.FORUMS,
    "CATEGORY_PERSONAL": Category.GENERAL,
}
_FORUM_HEADERS = ("list-post", "x-mailman-version", "x-google-group-id", "x-discourse-post-id", "mailing-list")
_PROMOTION_HEADERS = ("list-unsubscribe", "feedback-id", "x-csa-complaints")
_NO_REPLY_MARKERS = ("no-reply", "noreply", "do-not-reply", "donotreply")


class Stage(StrEnum):
    GMAIL = "gmail"
    CORRESPONDENT = "correspondent"
    ASSISTANT = "assistant"
    FORUMS = "forums"
    PROMOTIONS = "promotions"
    SOCIAL = "social"
    UPDATES = "updates"
    DEFAULT = "default"
    SWITCHED_OFF = "switched_off"


@dataclass(frozen=True, slots=True)
class CategoryFacts:
    """The stored fields the cascade reads."""

    from_address: str | None
    headers: RawHeaders
    provider_labels: Sequence[str] | None
    ai_category: str | None = None  # the assistant's verdict; None when not asked or the user sorts by rules


@dataclass(frozen=True, slots=True)
class CategoryVerdict:
    category: Category
    stage: Stage
    signal: str | None
    overridden: Category | None = None  # what the cascade chose when that category is switched off

    @property
    def verdict_could_decide(self) -> bool:
        """False when a Gmail label or a known correspondent settled the tab: the assistant cannot change it."""
        return self.stage not in (Stage.GMAIL, Stage.CORRESPONDENT)


def sender_domain(address: str | None) -> str:
    if not address or "@" not in address:
        return ""
    return address.rsplit("@", 1)[1].strip().lower().rstrip(".")


def is_social_domain(domain: str) -> bool:
    """Exact domain or a subdomain of it: `notlinkedin.com` and `linkedin.com.evil.net` are not LinkedIn."""
    return any(domain == known or domain.endswith("." + known) for known in SOCIAL_DOMAINS)


class MessageCategorizer:
    def explain(
        self,
        facts: CategoryFacts,
        *,
        correspondents: Container[str] = (),
        disabled: Collection[Category] = (),
    ) -> CategoryVerdict:
        verdict = self._cascade(facts, correspondents)
        if verdict.category in disabled and verdict.category is not Category.GENERAL:
            # A switched-off tab gets no mail; the rest of the cascade is not asked, so switching off
            # Forums never turns a mailing list into Promotions.
            return CategoryVerdict(Category.GENERAL, Stage.SWITCHED_OFF, verdict.signal, overridden=verdict.category)
        return verdict

    def categorize(
        self, facts: CategoryFacts, *, correspondents: Container[str] = (), disabled: Collection[Category] = ()
    ) -> Category:
        return self.explain(facts, correspondents=correspondents, disabled=disabled).category

    def _cascade(self, facts: CategoryFacts, correspondents: Container[str]) -> CategoryVerdict:
        headers = facts.headers
        # Gmail already filed it; contradicting that inside a Gmail account means a tab that does not
        # match Gmail's own web interface.
        if facts.provider_labels is not None:
            for label in facts.provider_labels:
                if label in _GMAIL_CATEGORIES:
                    return CategoryVerdict(_GMAIL_CATEGORIES[label], Stage.GMAIL, label)
            return CategoryVerdict(Category.GENERAL, Stage.GMAIL, None)
        sender = (facts.from_address or "").lower()
        if sender and sender in correspondents:
            return CategoryVerdict(Category.GENERAL, Stage.CORRESPONDENT, sender)
        # The assistant read the mail; header rules only guess from how it was sent.
        if facts.ai_category is not None and facts.ai_category in Category._value2member_map_:
            return CategoryVerdict(Category(facts.ai_category), Stage.ASSISTANT, "assistant")
        # Discussion lists carry List-Unsubscribe too: asking about promotions first would file every
        # mailing list as marketing.
        for name in _FORUM_HEADERS:
            if has_header(headers, name):
                return CategoryVerdict(Category.FORUMS, Stage.FORUMS, name)
        precedence = (header(headers, "precedence") or "").strip().lower()
        for name in _PROMOTION_HEADERS:
            if has_header(headers, name):
                return CategoryVerdict(Category.PROMOTIONS, Stage.PROMOTIONS, name)
        if precedence == "bulk":
            return CategoryVerdict(Category.PROMOTIONS, Stage.PROMOTIONS, "precedence: bulk")
        domain = sender_domain(sender)
        if domain and is_social_domain(domain):
            return CategoryVerdict(Category.SOCIAL, Stage.SOCIAL, domain)
        auto = (header(headers, "auto-submitted") or "").strip().lower()
        if auto and auto != "no":
            return CategoryVerdict(Category.UPDATES, Stage.UPDATES, f"auto-submitted: {auto}")
        if precedence == "auto_reply":
            return CategoryVerdict(Category.UPDATES, Stage.UPDATES, "precedence: auto_reply")
        if has_header(headers, "x-auto-response-suppress"):
            return CategoryVerdict(Category.UPDATES, Stage.UPDATES, "x-auto-response-suppress")
        local = sender.split("@", 1)[0]
        if any(marker in local for marker in _NO_REPLY_MARKERS):
            return CategoryVerdict(Category.UPDATES, Stage.UPDATES, f"{local}@")
        return CategoryVerdict(Category.GENERAL, Stage.DEFAULT, None)
