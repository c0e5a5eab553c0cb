"""Running rules: once per batch after threading (one query per rule), or over existing mail on request.

Rules run after threading and before the batch's threads are announced, so archive and trash actions
reach each message's thread, and the thread's labels are derived from its messages afterwards — a
union taken before the rule labelled the new mail would take the label straight off the thread again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import LabelRole
from plmail.domain.errors import FilterError, NotFoundError, ValidationError
from plmail.domain.jobs import APPLY_RULE_TO_EXISTING
from plmail.domain.models import RulePreviewMatch
from plmail.mail.authentication import SenderAuthentication
from plmail.mail.operations import ThreadOperations
from plmail.mail.repos.filter_sql import RULE_VOCABULARY, FilterCompiler, Params
from plmail.mail.repos.rules import RuleRepository, RuleRow
from plmail.mail.rules.model import RuleDraft, validate_actions, validate_conditions

log = logging.getLogger(__name__)

PREVIEW_CAP = 500
EXISTING_BATCH = 200


@dataclass(slots=True)
class RuleOutcome:
    accounts: set[int] = field(default_factory=set)  # accounts with provider changes to propagate
    threads: set[int] = field(default_factory=set)
    matched: dict[int, list[int]] = field(default_factory=dict)  # rule id -> message ids


class MailRuleEngine:
    def __init__(self, db: Database, operations: ThreadOperations) -> None:
        self.db = db
        self.operations = operations
        self.repo = RuleRepository(db)
        self.threads = ThreadRepository(db)
        self.compiler = FilterCompiler(RULE_VOCABULARY)
        self.sender_auth = SenderAuthentication(db)

    async def apply_to_batch(self, user_id: int, account_id: int, message_ids: Sequence[int]) -> RuleOutcome:
        """Inside the pipeline's transaction. A rule that fails is logged and skipped; the mail stays."""
        outcome = RuleOutcome()
        if not message_ids:
            return outcome
        rules = [r for r in await self.repo.for_user(user_id, enabled_only=True)
                 if r.account_id is None or r.account_id == account_id]
        claimed: set[int] = set()
        for rule in rules:
            candidates = [i for i in message_ids if i not in claimed]
            if not candidates:
                break
            matched: list[int] = []
            try:
                async with self.db.savepoint():
                    matched = await self._match(rule, candidates)
                    if matched:
                        await self._act(user_id, rule, matched, outcome)
            except Exception:  # one broken rule costs what it wanted to do, never the batch
                log.exception("rule %s of user %s failed on a batch", rule.id, user_id)
                continue
            if matched:
                outcome.matched[rule.id] = matched
                if rule.stop_processing:
                    claimed.update(matched)
        return outcome

    async def _match(self, rule: RuleRow, candidates: Sequence[int]) -> list[int]:
        params = Params()
        where = self.compiler.compile(rule.conditions, params)
        scope = params.add(list(candidates))
        return await self.repo.matching(f"m.id = ANY({scope}::bigint[]) AND {where}", params.values)

    async def _act(self, user_id: int, rule: RuleRow, matched: list[int], outcome: RuleOutcome) -> None:
        ops = self.operations
        roles = {role: await ops.repo.role_label(user_id, role)
                 for role in (LabelRole.INBOX, LabelRole.ARCHIVE, LabelRole.TRASH, LabelRole.SPAM)}
        for action in rule.actions:
            kind = action.get("type")
            result = None
            if kind == "applyLabel":
                result = await ops.relabel_within(user_id, matched, {int(action["labelId"])}, set())
            elif kind == "removeLabel":
                result = await ops.relabel_within(user_id, matched, set(), {int(action["labelId"])})
            elif kind == "archive":
                result = await ops.relabel_within(user_id, matched, set(), {roles[LabelRole.INBOX]})
            elif kind == "trash":
                result = await ops.relabel_within(user_id, matched, {roles[LabelRole.TRASH]},
                                                  {roles[LabelRole.INBOX], roles[LabelRole.ARCHIVE],
                                                   roles[LabelRole.SPAM]})
            elif kind == "markSpam":
                result = await ops.relabel_within(user_id, matched, {roles[LabelRole.SPAM]},
                                                  {roles[LabelRole.INBOX], roles[LabelRole.ARCHIVE],
                                                   roles[LabelRole.TRASH]})
            elif kind == "star":
                result = await ops.flag_within(user_id, matched, "starred", True)
            elif kind == "markRead":
                result = await ops.flag_within(user_id, matched, "seen", True)
            elif kind == "fileIntoCategory":
                outcome.threads.update(await self._file(matched, str(action["category"])))
                continue
            else:
                log.warning("rule %s has an unknown action %r; skipped", rule.id, kind)
                continue
            outcome.accounts.update(result.accounts)
            outcome.threads.update(result.threads)

    async def _file(self, matched: list[int], category: str) -> list[int]:
        """Writes rule_category, never category: five things recompute category from stored data and each
        would erase a verdict kept there. Only for senders whose authentication passed (the stored verdict); the
        others remember what was withheld, for "Why is this here?"."""
        verdicts = await self.sender_auth.verdicts(matched)
        trusted = [message_id for message_id in matched if (v := verdicts.get(message_id)) is not None and v.passed]
        refused = [message_id for message_id in matched if message_id not in trusted]
        if refused:
            await self.sender_auth.withheld(refused, category)
        if not trusted:
            return []
        threads = await self.repo.set_rule_category(trusted, category)
        await self.threads.recompute(threads)
        return threads

    # -- the rule editor ------------------------------------------------------------------------------

    async def for_user(self, user_id: int) -> list[RuleRow]:
        return await self.repo.for_user(user_id)

    async def owned(self, user_id: int, rule_id: int) -> RuleRow | None:
        return await self.repo.owned(user_id, rule_id)

    async def delete(self, user_id: int, rule_id: int) -> None:
        if not await self.repo.delete(user_id, rule_id):
            raise NotFoundError("No such rule.")

    async def preview(self, user_id: int, conditions: dict[str, Any], account_id: int | None) -> int:
        """How many stored messages the conditions match, capped: a live count while the user types."""
        where, params = self._matching(user_id, conditions, account_id)
        return await self.repo.count_matching(where, params.values, PREVIEW_CAP + 1)

    def _matching(self, user_id: int, conditions: dict[str, Any], account_id: int | None) -> tuple[str, Params]:
        """The conditions as SQL over the user's messages (of one account, when given)."""
        validate_conditions(conditions)
        params = Params()
        where = self.compiler.compile(conditions, params)
        user = params.add(user_id)
        account = params.add(account_id)
        return f"a.user_id = {user} AND ({account}::int IS NULL OR m.account_id = {account}) AND {where}", params

    async def preview_matches(self, user_id: int, conditions: dict[str, Any], account_id: int | None,
                              limit: int = 20) -> list[RulePreviewMatch]:
        """The first `limit` conversations the conditions match, newest arrival first, beside the count."""
        where, params = self._matching(user_id, conditions, account_id)
        return await self.repo.matching_conversations(where, params.values, limit)

    async def move(self, user_id: int, rule_id: int, step: int) -> None:
        """Filters run top to bottom: move one up (-1) or down (+1)."""
        if step not in (-1, 1) or not await self.repo.move(user_id, rule_id, step):
            raise NotFoundError("No such rule.")

    async def save(self, user_id: int, rule_id: int | None, draft: RuleDraft, owned_labels: set[int],
                   owned_accounts: set[int]) -> int:
        if draft.account_id is not None and draft.account_id not in owned_accounts:
            raise NotFoundError("No such account.")
        try:
            conditions = validate_conditions(draft.conditions)
        except FilterError as exc:
            raise ValidationError(str(exc)) from None
        actions = validate_actions(draft.actions, owned_labels)
        if rule_id is not None and await self.repo.owned(user_id, rule_id) is None:
            raise NotFoundError("No such rule.")
        return await self.repo.save(user_id, rule_id, name=draft.name.strip()[:200] or "Rule",
                                    account_id=draft.account_id, conditions=conditions, actions=actions,
                                    is_enabled=draft.is_enabled, stop_processing=draft.stop_processing)

    async def request_run(self, user_id: int, rule_id: int) -> bool:
        """Queue "apply to existing mail"; refused while a run is queued or running."""
        if await self.repo.owned(user_id, rule_id) is None:
            raise NotFoundError("No such rule.")
        if not await self.repo.claim_run(rule_id):
            return False
        if self.operations.queues is not None:
            await self.operations.queues.enqueue(APPLY_RULE_TO_EXISTING, rule_id=rule_id, user_id=user_id)
        return True

    async def apply_to_existing(self, user_id: int, rule_id: int) -> int:
        """Walk the user's mail in pages, recording progress on the rule after each page."""
        rule = await self.repo.owned(user_id, rule_id)
        if rule is None:
            raise NotFoundError("No such rule.")
        await self.repo.set_run_state(rule_id, "running")
        processed = matched_total = 0
        after = 0
        try:
            while True:
                page = await self.repo.user_message_page(user_id, rule.account_id, after, EXISTING_BATCH)
                if not page:
                    break
                outcome = RuleOutcome()
                async with self.db.transaction():
                    matched = await self._match(rule, page)
                    if matched:
                        await self._act(user_id, rule, matched, outcome)
                await self.operations.propagate(outcome.accounts)
                after = page[-1]
                processed += len(page)
                matched_total += len(matched)
                await self.repo.set_run_state(rule_id, "running", processed=processed, matched=matched_total)
        except Exception as exc:
            await self.repo.set_run_state(rule_id, "failed", error=f"{type(exc).__name__}: {exc}")
            raise
        await self.repo.set_run_state(rule_id, "completed", processed=processed, matched=matched_total)
        return matched_total
