"""The periodic check of the kept label counts: re-derive every thread's share, then every total.

The triggers keep the counts in the same transaction as each change; this repairs what they could still
miss (a row changed with the triggers disabled, a restore of a partial dump) and logs every repair, since
any drift means a path that the triggers do not see.
"""

from __future__ import annotations

import logging

from plmail.db.database import Database
from plmail.domain.mailstore import CountRepair
from plmail.mail.repos.label_counts import LabelCountRepository

log = logging.getLogger(__name__)

_CHUNK = 5_000  # threads per transaction: short enough not to hold writers back noticeably


class LabelCountKeeper:
    def __init__(self, db: Database) -> None:
        self.repo = LabelCountRepository(db)

    async def repair(self) -> CountRepair:
        moved = 0
        after = 0
        while ids := await self.repo.thread_ids_after(after, _CHUNK):
            moved += await self.repo.refresh_threads(ids)
            after = ids[-1]
        moved += await self.repo.refresh_threads(await self.repo.orphaned_share_threads())
        if moved:
            log.warning("label counts: %d thread shares had drifted and were re-derived", moved)
        drifted = await self.repo.repair_totals()
        for drift in drifted:
            log.warning("label count drifted: label %s, account %s, tab %r, binned %s: kept %s, derived %s",
                        drift.label_id, drift.account_id, drift.category, drift.binned, drift.kept, drift.derived)
        return CountRepair(moved, tuple(drifted))
