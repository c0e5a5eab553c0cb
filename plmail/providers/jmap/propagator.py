"""Telling the upstream what the user did here, by `Email/set` (RFC 8621 §4.6).

Each message with pending changes is sent its state as plmail has it now, not the changes one by one: read and
starred as `$seen`/`$flagged` patches, and its mailboxes as the upstream mailboxes of its labels (a message in
no upstream mailbox, archived here, goes to the Archive mailbox; without one it stays where it is). Sending the
present state makes a change that was already made, or superseded since, harmless to send again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from plmail.domain.enums import AccountStatus
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.providers.jmap.connection import JMAP
from plmail.providers.jmap.sync import JmapMail

log = logging.getLogger(__name__)


class JmapPropagator:
    kind = JMAP

    def __init__(self, mail: JmapMail) -> None:
        self.mail = mail

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        record = await self.mail.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()  # the changes wait until the account can be reached again
        upstream = await self.mail.connector.open(record)
        mailboxes = await self.mail.store.mailboxes(account_id)
        by_label = {m.label_id: m.mailbox_id for m in mailboxes if m.label_id is not None}
        archive = next((m.mailbox_id for m in mailboxes if m.role == "archive"), None)
        states = {s.message_id: s for s in await self.mail.store.local_states(
            account_id, sorted({c.message_id for c in changes}))}
        update: dict[str, dict[str, Any]] = {}
        change_ids: dict[str, list[int]] = {}
        done: list[int] = []
        for change in changes:
            state = states.get(change.message_id)
            if state is None:  # the message is gone here, or never reached the upstream
                done.append(change.id)
                continue
            patch = update.setdefault(state.email_id, {})
            change_ids.setdefault(state.email_id, []).append(change.id)
            if change.kind == "seen":
                patch["keywords/$seen"] = True if state.seen else None
            elif change.kind == "starred":
                patch["keywords/$flagged"] = True if state.starred else None
            elif change.kind.startswith("keyword:"):
                patch[f"keywords/{change.kind.removeprefix('keyword:')}"] = True if change.flag_value else None
            else:  # labels
                wanted = {by_label[label] for label in state.label_ids if label in by_label}
                if not wanted and archive is not None:
                    wanted = {archive}
                if wanted:
                    patch["mailboxIds"] = dict.fromkeys(sorted(wanted), True)
        failed: dict[int, str] = {}
        if update:
            answer = await self.mail.call(upstream, "Email/set", {"update": update})
            for email_id, error in (answer.get("notUpdated") or {}).items():
                ids = change_ids.get(str(email_id), [])
                if error.get("type") == "notFound":  # deleted upstream meanwhile: the next sync removes it here
                    continue
                reason = f"{error.get('type')}: {error.get('description') or ''}".strip(": ")
                failed.update(dict.fromkeys(ids, reason))
            done.extend(i for email_id, ids in change_ids.items() for i in ids if i not in failed)
        return PropagationOutcome(done=tuple(done), failed=failed)
