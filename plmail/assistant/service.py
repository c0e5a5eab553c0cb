"""The assistant: ask the model about new mail, file its verdict, and catch up on old mail once imports end.

A message is asked about once. Whatever happens on the way (timeout, refusal, garbage, a host that is
down) the message keeps the rule cascade's category and is released from holding; no mail is lost or
filed by a guess.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from plmail.assistant.classifier import Classifier, MailForModel, Verdict
from plmail.assistant.model import ModelError
from plmail.assistant.priority import LiveMailPriority
from plmail.assistant.release import HeldMailReleaser
from plmail.assistant.settings import AssistantSettings, AssistantSettingsStore
from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.assistant import AssistantRepository, HoldStats, MessageForModel
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.contacts import ContactRepository
from plmail.db.repos.queues import QueueStatsRepository
from plmail.db.repos.threads import CategoryMove
from plmail.domain.enums import Category, QueueName
from plmail.domain.ingest import AccountFacts
from plmail.domain.jobs import CLASSIFY_MESSAGES
from plmail.domain.ports import Enqueuer
from plmail.mail.categorizer import CategoryFacts, CategoryVerdict, MessageCategorizer
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.headers import has_header
from plmail.mail.steps import InitialImportState
from plmail.tls import verifying_context

log = logging.getLogger(__name__)

CLASSIFY_BATCH = 25
CATCH_UP_PER_USER = 200
_LIST_HEADERS = ("list-id", "list-post", "list-unsubscribe")
_NOT_ASKED = "not asked: a Gmail label or a known correspondent decides this tab"

SAMPLE = MailForModel(
    sender="Sunny Shoes <news@sunny-shoes.example>",
    subject="48 hours only: 30% off all summer sandals",
    text="Our summer sale ends Sunday. Use code SUN30 at checkout. Unsubscribe from these e-mails at any time.",
    list_mail=True,
)


@dataclass(slots=True)
class ClassifyReport:
    asked: int = 0
    moved: int = 0
    failed: int = 0
    released: int = 0
    skipped: int = 0
    waited_seconds: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        return {"asked": self.asked, "moved": self.moved, "failed": self.failed, "released": self.released,
                "skipped": self.skipped, "waited_seconds": round(self.waited_seconds, 3), "errors": self.errors}


@dataclass(frozen=True, slots=True)
class ConnectionTest:
    outcome: str  # "ok", "not_configured", or a ModelError kind: timeout, refused, garbage, unavailable, error
    detail: str
    milliseconds: int
    category: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


def mail_for_model(message: MessageForModel) -> MailForModel:
    sender = f"{message.from_name} <{message.from_address}>" if message.from_name else (message.from_address or "")
    return MailForModel(sender=sender, subject=message.subject, text=message.text,
                        list_mail=any(has_header(message.headers, name) for name in _LIST_HEADERS))


class AssistantService:
    def __init__(self, db: Database, settings: AssistantSettingsStore, queues: Enqueuer, *,
                 http: httpx.AsyncClient | None = None, categorizer: MessageCategorizer | None = None,
                 priority: LiveMailPriority | None = None, releaser: HeldMailReleaser | None = None) -> None:
        self.db = db
        self.settings = settings
        self.queues = queues
        self.http = http or httpx.AsyncClient(verify=verifying_context())
        self.classifier = Classifier(self.http)
        self.categorizer = categorizer or MessageCategorizer()
        self.stats_repo = QueueStatsRepository(db)
        self.priority = priority or LiveMailPriority(self.stats_repo)
        self.repo = AssistantRepository(db)
        self.accounts = AccountRepository(db)
        self.contacts = ContactRepository(db)
        self.change_log = ChangeLogRepository(db)
        self.releaser = releaser or HeldMailReleaser(db)
        self._bulk_turn = asyncio.Lock()

    async def close(self) -> None:
        await self.http.aclose()

    async def classify(self, message_ids: Sequence[int], queue: QueueName) -> ClassifyReport:
        """Ask about each message once and file the answer; bulk queues give way to live mail first."""
        report = ClassifyReport()
        settings = await self.settings.load()
        api_key = await self.settings.api_key()
        facts_cache: dict[int, AccountFacts | None] = {}
        host_down = False  # after a timeout or an unreachable host, the rest of the job waits for the catch-up
        for message_id in message_ids:
            found = await self.repo.messages([message_id])
            if not found:
                report.skipped += 1
                continue
            message = found[0]
            if message.account_id not in facts_cache:
                facts_cache[message.account_id] = await self.accounts.facts(message.account_id)
            facts = facts_cache[message.account_id]
            if host_down or facts is None or not await self._worth_asking(message, facts, settings):
                report.skipped += 1
                report.released += await self.releaser.release([message.id]) if message.held else 0
                continue
            report.asked += 1
            try:
                verdict = await self._ask(queue, settings, api_key, message, report)
            except ModelError as exc:
                report.failed += 1
                report.errors[exc.kind] = report.errors.get(exc.kind, 0) + 1
                log.warning("the assistant could not classify message %s: %s", message.id, exc)
                host_down = exc.kind in ("timeout", "unavailable")
                report.released += await self._give_up(message, exc)
                continue
            except Exception as exc:  # anything unexpected costs this message's verdict, never the mail
                log.exception("classifying message %s failed", message.id)
                report.failed += 1
                report.errors["error"] = report.errors.get("error", 0) + 1
                report.released += await self._give_up(message, ModelError(str(exc), "error"))
                continue
            moved, released = await self.file_verdict(message, facts, verdict)
            report.moved += moved
            report.released += released
        return report

    async def _ask(self, queue: QueueName, settings: AssistantSettings, api_key: str | None,
                   message: MessageForModel, report: ClassifyReport) -> Verdict:
        if queue is QueueName.ENRICH_LIVE:
            return await self.classifier.classify(settings, api_key, mail_for_model(message))
        # Bulk calls go one at a time and each first gives way to live work, so live mail waits behind
        # at most the one bulk call already at the host.
        async with self._bulk_turn:
            report.waited_seconds += await self.priority.wait_turn(queue)
            return await self.classifier.classify(settings, api_key, mail_for_model(message))

    async def _worth_asking(self, message: MessageForModel, facts: AccountFacts, settings: AssistantSettings
                            ) -> bool:
        """Asked once; never for a user who sorts by rules; and not where the answer cannot change the tab."""
        if message.ai_categorised_at is not None or not settings.classifying or facts.sorts_by_rules:
            return False
        if not (await self._cascade(message, facts, None)).verdict_could_decide:
            await self.repo.record_verdict(message.id, None, None, _NOT_ASKED)
            return False
        return True

    async def _cascade(self, message: MessageForModel, facts: AccountFacts, ai_category: Category | None
                       ) -> CategoryVerdict:
        correspondents = await self.contacts.correspondents(facts.user_id, [message.from_address or ""])
        disabled = {Category(c) for c in facts.disabled_categories if c in Category._value2member_map_}
        return self.categorizer.explain(
            CategoryFacts(message.from_address, message.headers, message.provider_labels,
                          ai_category.value if ai_category is not None else None),
            correspondents=correspondents, disabled=disabled,
        )

    async def _give_up(self, message: MessageForModel, error: ModelError) -> int:
        """No usable answer: the cascade's category stands. A host that was unreachable leaves the message
        unasked, so the catch-up asks again later; any other failure counts as the one question."""
        if error.kind != "unavailable":
            await self.repo.record_verdict(message.id, None, None, f"{error.kind}: {error}"[:500])
        return await self.releaser.release([message.id]) if message.held else 0

    async def file_verdict(self, message: MessageForModel, facts: AccountFacts, verdict: Verdict) -> tuple[int, int]:
        """Record the answer, move the message (and its thread) if the tab changes, and release it."""
        answer = await self._cascade(message, facts, verdict.category)
        state = StateManager(self.change_log)
        recorder = MailChangeRecorder(state)
        async with self.db.transaction():
            await self.repo.record_verdict(message.id, verdict.category.value, verdict.reason, None)
            changed = await self.repo.set_category(message.id, answer.category.value)
            released = await self.releaser.release_within([message.id], recorder)
            moves: list[CategoryMove] = []
            if changed:
                recorder.email_changed(message.account_id, message.id)
                if message.thread_id is not None:
                    moves = await self.releaser.refresh_threads([message.thread_id], recorder)
            await state.write()
            await state.announce()
        await self.releaser.tell(released)
        return len(moves), len(released)

    async def test_connection(self, settings: AssistantSettings | None = None, *, api_key: str | None = None
                              ) -> ConnectionTest:
        """Ask the host about a sample newsletter and report what came back; `api_key` None uses the stored one."""
        settings = settings or await self.settings.load()
        if settings.host is None or not settings.host.model:
            return ConnectionTest("not_configured", "", 0)
        started = time.monotonic()
        key = api_key or await self.settings.api_key(for_url=settings.host.url)
        try:
            verdict = await self.classifier.classify(settings, key, SAMPLE)
        except ModelError as exc:
            return ConnectionTest(exc.kind, str(exc), int((time.monotonic() - started) * 1000))
        except Exception as exc:  # the page shows the failure instead of an error page
            return ConnectionTest("error", f"{type(exc).__name__}: {exc}", int((time.monotonic() - started) * 1000))
        return ConnectionTest("ok", "", int((time.monotonic() - started) * 1000), verdict.category.value,
                              verdict.reason)

    async def hold_stats(self) -> HoldStats:
        return await self.repo.hold_stats()

    async def release_held(self, message_ids: Sequence[int]) -> int:
        return await self.releaser.release(message_ids)

    async def release_overdue(self) -> int:
        settings = await self.settings.load()
        return await self.releaser.release_overdue(settings.hold_max_seconds)


class ClassificationCatchUp:
    """Every quarter hour: the newest never-asked mail goes onto enrich_backlog, but only for a user whose
    accounts all finished importing, and only while that queue is empty; ai_categorised_at is the progress mark."""

    def __init__(self, db: Database, settings: AssistantSettingsStore, queues: Enqueuer,
                 import_state: InitialImportState, *, per_user: int = CATCH_UP_PER_USER) -> None:
        self.settings = settings
        self.queues = queues
        self.import_state = import_state
        self.per_user = per_user
        self.repo = AssistantRepository(db)
        self.stats = QueueStatsRepository(db)
        self.accounts = AccountRepository(db)

    async def run(self) -> int:
        if not (await self.settings.load()).classifying:
            return 0
        if await self.stats.waiting_or_running(QueueName.ENRICH_BACKLOG) > 0:
            return 0
        queued = 0
        for user_id, account_ids, own in await self.repo.users_with_accounts():
            if await self._still_importing(account_ids):
                continue
            facts = await self.accounts.facts(account_ids[0])
            if facts is None or facts.sorts_by_rules:
                continue
            ids = await self.repo.never_asked(user_id, own, self.per_user)
            for start in range(0, len(ids), CLASSIFY_BATCH):
                await self.queues.enqueue(CLASSIFY_MESSAGES, queue=QueueName.ENRICH_BACKLOG,
                                          message_ids=ids[start:start + CLASSIFY_BATCH],
                                          on_queue=QueueName.ENRICH_BACKLOG.value)
            queued += len(ids)
        return queued

    async def _still_importing(self, account_ids: Sequence[int]) -> bool:
        for account_id in account_ids:
            facts = await self.accounts.facts(account_id)
            if facts is None or await self.import_state.is_importing(facts.provider_kind, account_id):
                return True
        return False
