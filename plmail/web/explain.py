"""The "Why is this here?" sentence for a category verdict, in the reader's language."""

from __future__ import annotations

from plmail.domain.authentication import AuthReason, SenderVerdict
from plmail.domain.enums import Category, Locale
from plmail.mail.categorizer import CategoryVerdict, Stage
from plmail.web.i18n import translate

TAB_NAMES = {Category.GENERAL: "General", Category.PROMOTIONS: "Promotions", Category.SOCIAL: "Social",
             Category.UPDATES: "Updates", Category.FORUMS: "Forums"}

_SENTENCES = {
    Stage.GMAIL: "Gmail filed it under {tab} ({signal}).",
    Stage.CORRESPONDENT: "You have written to {signal} before, so it stays in General.",
    Stage.FORUMS: "It came through a mailing list (header {signal}).",
    Stage.PROMOTIONS: "It carries bulk-mail headers ({signal}).",
    Stage.SOCIAL: "It comes from a social network ({signal}).",
    Stage.UPDATES: "It was sent automatically ({signal}).",
    Stage.DEFAULT: "Nothing marks it as bulk or automatic mail, so it is in General.",
    Stage.SWITCHED_OFF: "It would be in {original}, but that tab is switched off, so it stays in General.",
}


def explain_text(verdict: CategoryVerdict, locale: Locale) -> str:
    tab = translate(TAB_NAMES[verdict.category], locale)
    original = translate(TAB_NAMES[verdict.overridden], locale) if verdict.overridden else ""
    signal = verdict.signal or translate("no category label", locale)
    return translate(_SENTENCES[verdict.stage], locale, tab=tab, signal=signal, original=original)


# Why a sender could not be verified, after "plmail could not verify that this message came from {domain}."
_UNVERIFIED_BECAUSE = {
    AuthReason.DMARC_FAILED: "The receiving server's DMARC check did not pass ({detail}).",
    AuthReason.DMARC_OTHER_DOMAIN: "The receiving server's DMARC check was about another domain ({detail}).",
    AuthReason.NOT_ALIGNED: "What passed belongs to another domain ({detail}).",
    AuthReason.NO_PASS: "None of the receiving server's checks passed ({detail}).",
    AuthReason.NO_RESULT: "The receiving server checked nothing.",
    AuthReason.NO_TRUSTED_HEADER: "The account's receiving server left no result of its own.",
    AuthReason.NO_RECEIVER: "The account's receiving server is not known yet; set it on the account's page.",
}
_VERIFIED_BY = {
    AuthReason.DMARC_PASS: "DMARC passed",
    AuthReason.DKIM_ALIGNED: "it carries a DKIM signature of that domain",
    AuthReason.SPF_ALIGNED: "SPF passed for that domain",
}


def unverified_text(verdict: SenderVerdict, locale: Locale) -> str:
    """The thread view's warning for a sender whose authentication did not pass."""
    first = translate("plmail could not verify that this message came from {domain}.", locale,
                      domain=verdict.domain)
    reason = _UNVERIFIED_BECAUSE.get(verdict.reason)
    return f"{first} {translate(reason, locale, detail=verdict.detail)}" if reason else first


def filing_text(filed: str | None, withheld: str | None, verdict: SenderVerdict | None, locale: Locale) -> str:
    """What "Why is this here?" says when a filter's "file into category" was decided by the sender verdict."""
    category = filed or withheld
    if category is None or category not in Category._value2member_map_ or verdict is None:
        return ""
    tab = translate(TAB_NAMES[Category(category)], locale)
    if filed and verdict.passed:
        how = translate(_VERIFIED_BY.get(verdict.reason, "DMARC passed"), locale)
        return translate("A filter filed it under {tab}: plmail verified that it came from {domain} ({how}).",
                         locale, tab=tab, domain=verdict.domain, how=how)
    if withheld and not verdict.passed:
        return translate("A filter would file it under {tab}, but plmail could not verify that it came from "
                         "{domain}, so it was not filed.", locale, tab=tab, domain=verdict.domain)
    return ""
