"""The space a user's mail takes (JMAP Quota, RFC 9425): measured in the database, against the room the disk
holding plmail's data has left."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

from plmail.db.database import Database
from plmail.domain.mailstore import MailScope
from plmail.mail.repos.quota import QuotaRepository


@dataclass(frozen=True, slots=True)
class MailQuota:
    used: int  # octets
    hard_limit: int  # octets: what is used plus what the disk has free


class QuotaService:
    def __init__(self, db: Database, data_dir: Path) -> None:
        self.repo = QuotaRepository(db)
        self.data_dir = data_dir

    async def mail(self, scope: MailScope) -> MailQuota:
        used = await self.repo.used(scope.account_ids)
        free = await asyncio.to_thread(_free_octets, self.data_dir)
        return MailQuota(used, used + free)


def _free_octets(path: Path) -> int:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free
    except OSError:
        return 0
