"""The "Why is this here?" sentence for a category verdict, in the reader's language."""

from __future__ import annotations

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
