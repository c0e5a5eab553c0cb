"""The classifier against a model host over HTTP (OpenAI-compatible and Ollama), and the hold decision."""

from __future__ import annotations

import httpx
import pytest

from plmail.assistant.classifier import Classifier, MailForModel, parse_verdict
from plmail.assistant.hold import NoHold, reasons_not_to_hold
from plmail.assistant.model import ModelError
from plmail.assistant.settings import AssistantSettings, ModelHost
from plmail.domain.enums import Category
from plmail.domain.ingest import HoldQuestion
from plmail.mail.categorizer import CategoryVerdict, Stage
from tests.support.fakes.model import Behaviour, ModelFake
from tests.support.fakes.server import FakeServer

MAIL = MailForModel(sender="Shop <news@shop.example>", subject="Sale: 30% off", text="Buy now.\n" * 500,
                    list_mail=True)


@pytest.mark.parametrize(("answer", "expected"), [
    ('{"category": "promotions", "reason": "a sale"}', (Category.PROMOTIONS, "a sale")),
    ('Sure!\n```json\n{"category": "Updates", "reason": "  a   receipt "}\n```', (Category.UPDATES, "a receipt")),
    ('{"category": "general", "reason": ""}', (Category.GENERAL, "")),
    ('{"category": "forum"}', (Category.FORUMS, "")),
])
def test_a_clean_answer_is_read(answer: str, expected: tuple[Category, str]) -> None:
    verdict = parse_verdict(answer)
    assert (verdict.category, verdict.reason) == expected


@pytest.mark.parametrize("answer", [
    "", "promotions", "I think this is promotions.", '{"category": "spam"}', '{"category": ["promotions"]}',
    '{"category": "promotions"', "[1, 2]", '{"tab": "promotions"}', '{"category": "promotions\\u0000"}',
])
def test_anything_else_is_garbage_never_a_guess(answer: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_verdict(answer)
    assert caught.value.kind == "garbage"


def test_a_long_reason_is_cut() -> None:
    assert len(parse_verdict('{"category": "social", "reason": "' + "x" * 5000 + '"}').reason) == 200


def _settings(url: str, kind: str, timeout: float = 2.0) -> AssistantSettings:
    return AssistantSettings(host=ModelHost(kind, url, "llama3.2:3b", False), timeout_seconds=timeout)


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_both_host_kinds_are_asked_with_the_mail_and_answer(kind: str) -> None:
    fake = ModelFake(default=Behaviour.answer("promotions", "shop newsletter"))
    async with FakeServer(fake) as server, httpx.AsyncClient() as http:
        verdict = await Classifier(http).classify(_settings(server.url, kind), None, MAIL)
    assert (verdict.category, verdict.reason) == (Category.PROMOTIONS, "shop newsletter")
    [request] = fake.requests
    assert request.api == kind and not request.stream
    assert "Subject: Sale: 30% off" in request.prompt and "mailing list" in request.prompt
    assert len(request.prompt) < 1700  # the body is cut before it is sent
    assert "promotions" in request.system


async def test_an_api_key_is_sent_and_a_wrong_one_is_an_unavailable_host() -> None:
    fake = ModelFake(api_key="sk-right", default=Behaviour.answer("social", "network"))
    async with FakeServer(fake) as server, httpx.AsyncClient() as http:
        classifier = Classifier(http)
        verdict = await classifier.classify(_settings(server.url, "openai"), "sk-right", MAIL)
        assert verdict.category is Category.SOCIAL
        with pytest.raises(ModelError) as caught:
            await classifier.classify(_settings(server.url, "openai"), "sk-wrong", MAIL)
    assert caught.value.kind == "unavailable" and "401" in str(caught.value)


@pytest.mark.parametrize(("behaviour", "kind"), [
    (Behaviour.hang(), "timeout"),
    (Behaviour.refuse("I can't help with that."), "refused"),
    (Behaviour.garbage(), "garbage"),
    (Behaviour.broken_body(), "garbage"),
    (Behaviour.error(503), "unavailable"),
])
@pytest.mark.parametrize("api", ["openai", "ollama"])
async def test_failures_have_a_kind(behaviour: Behaviour, kind: str, api: str) -> None:
    async with FakeServer(ModelFake(default=behaviour)) as server, httpx.AsyncClient() as http:
        with pytest.raises(ModelError) as caught:
            await Classifier(http).classify(_settings(server.url, api, timeout=0.5), None, MAIL)
    # Ollama has no refusal field: a refusal is prose, which is garbage.
    assert caught.value.kind == ("garbage" if (api, kind) == ("ollama", "refused") else kind)


def _facts(**changes: object) -> HoldQuestion:
    general = CategoryVerdict(Category.GENERAL, Stage.DEFAULT, None)
    values: dict[str, object] = dict(holding_enabled=True, user_sorts_by_rules=False, live=True, recent=True,
                                     own_sent_copy=False, verdict=general)
    values.update(changes)
    verdict = values.pop("verdict")
    assert isinstance(verdict, CategoryVerdict)
    return HoldQuestion(**values, verdict_could_decide=verdict.verdict_could_decide)  # type: ignore[arg-type]


def test_the_reasons_not_to_hold() -> None:
    assert reasons_not_to_hold(_facts()) == []
    assert reasons_not_to_hold(_facts(verdict=CategoryVerdict(Category.PROMOTIONS, Stage.PROMOTIONS, "x"))) == []
    assert reasons_not_to_hold(_facts(holding_enabled=False)) == [NoHold.SWITCHED_OFF]
    assert reasons_not_to_hold(_facts(user_sorts_by_rules=True)) == [NoHold.USER_SORTS_BY_RULES]
    assert reasons_not_to_hold(_facts(live=False, recent=False)) == [NoHold.IMPORT, NoHold.OLD]
    assert reasons_not_to_hold(_facts(own_sent_copy=True)) == [NoHold.OWN_SENT_COPY]
    for stage in (Stage.GMAIL, Stage.CORRESPONDENT):
        verdict = CategoryVerdict(Category.GENERAL, stage, None)
        assert reasons_not_to_hold(_facts(verdict=verdict)) == [NoHold.ALREADY_DECIDED]
