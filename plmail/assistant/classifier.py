"""Asking the model for one of the five tabs, and refusing anything but a clean answer."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import httpx

from plmail.assistant.model import CLIENTS, ModelError
from plmail.assistant.settings import AssistantSettings
from plmail.domain.enums import Category

SYSTEM = (
    "You sort one e-mail into exactly one inbox tab. Tabs: primary (personal or work conversation, anything a "
    "person wrote to the reader), promotions (marketing, offers, shop newsletters), social (social networks and "
    "their notifications), updates (automatic notices: receipts, confirmations, bills, alerts, shipping), forums "
    "(mailing lists and discussion groups). Answer with JSON only, nothing else: "
    '{"category": "<one of primary|promotions|social|updates|forums>", "reason": "<at most 12 words>"}'
)
_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)
_ALIASES = {"general": "primary", "personal": "primary", "promotion": "promotions", "forum": "forums",
            "update": "updates"}
MAX_BODY = 1500


@dataclass(frozen=True, slots=True)
class MailForModel:
    sender: str
    subject: str
    text: str
    list_mail: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    category: Category
    reason: str


def prompt(mail: MailForModel) -> str:
    lines = [f"From: {mail.sender}", f"Subject: {mail.subject}"]
    if mail.list_mail:
        lines.append("(sent through a mailing list)")
    lines += ["", mail.text[:MAX_BODY]]
    return "\n".join(lines)


def parse_verdict(answer: str) -> Verdict:
    """The model's JSON, validated: an unknown category or prose instead of JSON is garbage, never a guess."""
    match = _OBJECT.search(answer)
    if match is None:
        raise ModelError("The model did not answer with JSON.", "garbage")
    try:
        data = json.loads(match.group(0))
    except ValueError:
        raise ModelError("The model's JSON is broken.", "garbage") from None
    raw = str(data.get("category", "")).strip().lower() if isinstance(data, dict) else ""
    category = _ALIASES.get(raw, raw)
    if category not in Category._value2member_map_:
        raise ModelError(f"The model named no known tab ({raw[:30]!r}).", "garbage")
    reason = " ".join(str(data.get("reason", "")).split())[:200]
    return Verdict(Category(category), reason)


class Classifier:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def classify(self, settings: AssistantSettings, api_key: str | None, mail: MailForModel) -> Verdict:
        if settings.host is None:
            raise ModelError("No model host is configured.", "unavailable")
        client = CLIENTS.get(settings.host.kind)
        if client is None:
            raise ModelError(f"Unknown model host kind {settings.host.kind!r}.", "unavailable")
        answer = await client.chat(self.http, settings.host, api_key, SYSTEM, prompt(mail), settings.timeout_seconds)
        return parse_verdict(answer)
