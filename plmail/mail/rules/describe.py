"""A rule restated in plain English or German, so the user can check it before saving."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plmail.domain.enums import Locale

_CONDITIONS = {
    "en": {
        "from": "the sender contains “{v}”", "to": "To contains “{v}”", "cc": "Cc contains “{v}”",
        "bcc": "Bcc contains “{v}”", "subject": "the subject contains “{v}”", "body": "the text contains “{v}”",
        "text": "the message mentions “{v}” anywhere", "listId": "it came through the mailing list “{v}”",
        "filename": "an attachment is named like “{v}”", "hasAttachment": "it has an attachment",
        "minSize": "it is larger than {v} bytes", "maxSize": "it is smaller than {v} bytes",
        "before": "it arrived before {v}", "after": "it arrived after {v}", "hasLabel": "it has the label “{v}”",
        "notLabel": "it does not have the label “{v}”", "account": "it arrived in the account “{v}”",
        "hasKeyword": "it is {v}", "notKeyword": "it is not {v}", "header": "it has the header {v}",
    },
    "de": {
        "from": "der Absender „{v}“ enthält", "to": "An „{v}“ enthält", "cc": "Cc „{v}“ enthält",
        "bcc": "Bcc „{v}“ enthält", "subject": "der Betreff „{v}“ enthält", "body": "der Text „{v}“ enthält",
        "text": "die Nachricht irgendwo „{v}“ erwähnt", "listId": "sie über die Mailingliste „{v}“ kam",
        "filename": "ein Anhang wie „{v}“ heißt", "hasAttachment": "sie einen Anhang hat",
        "minSize": "sie größer als {v} Byte ist", "maxSize": "sie kleiner als {v} Byte ist",
        "before": "sie vor {v} ankam", "after": "sie nach {v} ankam", "hasLabel": "sie das Label „{v}“ trägt",
        "notLabel": "sie das Label „{v}“ nicht trägt", "account": "sie im Konto „{v}“ ankam",
        "hasKeyword": "sie {v} ist", "notKeyword": "sie nicht {v} ist", "header": "sie den Header {v} hat",
    },
}
_KEYWORDS = {"en": {"$seen": "read", "$flagged": "starred", "$draft": "a draft", "$answered": "answered"},
             "de": {"$seen": "gelesen", "$flagged": "markiert", "$draft": "ein Entwurf", "$answered": "beantwortet"}}
_ACTIONS = {
    "en": {"applyLabel": "label it “{v}”", "removeLabel": "remove the label “{v}”", "archive": "archive it",
           "trash": "move it to the trash", "markSpam": "mark it as spam", "star": "star it",
           "markRead": "mark it as read", "fileIntoCategory": "file it under {v}"},
    "de": {"applyLabel": "sie mit „{v}“ labeln", "removeLabel": "das Label „{v}“ entfernen",
           "archive": "sie archivieren", "trash": "sie in den Papierkorb legen", "markSpam": "sie als Spam markieren",
           "star": "sie markieren", "markRead": "sie als gelesen markieren",
           "fileIntoCategory": "sie unter {v} ablegen"},
}
_JOIN = {"en": {"AND": " and ", "OR": " or ", "NOT": " nor "}, "de": {"AND": " und ", "OR": " oder ", "NOT": " noch "}}
_FRAME = {"en": ("If {c}, then {a}.", "For every message, {a}.", "neither "),
          "de": ("Wenn {c}, dann {a}.", "Für jede Nachricht: {a}.", "weder ")}
_CATEGORY = {"en": {"primary": "General", "promotions": "Promotions", "social": "Social", "updates": "Updates",
                    "forums": "Forums"},
             "de": {"primary": "Allgemein", "promotions": "Werbung", "social": "Soziale Netzwerke",
                    "updates": "Benachrichtigungen", "forums": "Foren"}}


def describe_rule(conditions: Mapping[str, Any], actions: list[dict[str, Any]], locale: Locale,
                  label_names: Mapping[int, str], account_names: Mapping[int, str]) -> str:
    lang = "de" if locale is Locale.DE else "en"
    acts = [_action(a, lang, label_names) for a in actions]
    action_text = ""
    if acts:
        action_text = acts[0] if len(acts) == 1 else ", ".join(acts[:-1]) + _JOIN[lang]["AND"] + acts[-1]
    if not conditions:
        return _FRAME[lang][1].format(a=action_text)
    return _FRAME[lang][0].format(c=_node(conditions, lang, label_names, account_names, 0), a=action_text)


def _node(node: Mapping[str, Any], lang: str, labels: Mapping[int, str], accounts: Mapping[int, str],
          depth: int) -> str:
    if "operator" in node:
        parts = [_node(child, lang, labels, accounts, depth + 1) for child in node.get("conditions", [])]
        operator = node["operator"]
        joined = _JOIN[lang][operator].join(parts)
        if operator == "NOT":
            return _FRAME[lang][2] + joined
        return f"({joined})" if depth > 0 and len(parts) > 1 else joined
    parts = []
    for name, value in node.items():
        template = _CONDITIONS[lang].get(name, name + " {v}")
        shown: Any = value
        if name in ("hasLabel", "notLabel"):
            shown = labels.get(int(value), value)
        elif name == "account":
            shown = accounts.get(int(value), value)
        elif name in ("hasKeyword", "notKeyword"):
            shown = _KEYWORDS[lang].get(str(value), value)
        elif name == "header" and isinstance(value, list):
            shown = ": ".join(str(v) for v in value)
        parts.append(template.format(v=shown))
    return _JOIN[lang]["AND"].join(parts)


def _action(action: Mapping[str, Any], lang: str, labels: Mapping[int, str]) -> str:
    kind = str(action.get("type"))
    template = _ACTIONS[lang].get(kind, kind)
    if kind in ("applyLabel", "removeLabel"):
        return template.format(v=labels.get(int(action.get("labelId", 0)), "?"))
    if kind == "fileIntoCategory":
        return template.format(v=_CATEGORY[lang].get(str(action.get("category")), action.get("category")))
    return template
