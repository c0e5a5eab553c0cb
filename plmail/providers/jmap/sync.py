"""Bringing an upstream's mail in: its mailboxes as labels, the first import newest first, then its changes.

The first sync notes the upstream's Email state before anything is read, so whatever arrives, changes or goes
while the import walks `Email/query` (receivedAt descending, one page per job, anchored on the last id read) is
found by `Email/changes` since that state afterwards. A known message met again only has its state applied.
Keywords map to plmail's read, starred and draft (RFC 8621 §4.1.1); mailboxes to labels by role (§2).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import LabelRole
from plmail.domain.ingest import IngestedMessage, PostIngestResult, ProviderRef
from plmail.domain.models import Account
from plmail.domain.providers import ImportPage
from plmail.mail.ingest import parse_message
from plmail.mail.labels import LabelResolver
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.settle import announce, settle_deleted
from plmail.providers.jmap.client import JmapClient
from plmail.providers.jmap.connection import JMAP, STATE_KEY, JmapConnector, Upstream
from plmail.providers.jmap.errors import JmapMethodError
from plmail.providers.jmap.repos.upstream import EmailState, JmapStore, KnownEmail, UpstreamMailbox

log = logging.getLogger(__name__)

ROLES = {"inbox": LabelRole.INBOX, "sent": LabelRole.SENT, "drafts": LabelRole.DRAFTS, "trash": LabelRole.TRASH,
         "junk": LabelRole.SPAM, "archive": LabelRole.ARCHIVE}
PAGE = 250  # messages per import page (one job)
CHANGES = 256  # maxChanges per Email/changes call
DOWNLOADS = 8  # blob downloads at once
BATCH = 50  # messages per pipeline batch
_PROPERTIES = ["id", "blobId", "threadId", "mailboxIds", "keywords", "receivedAt", "messageId"]


def _stamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(slots=True)
class Taken:
    stored: int = 0
    changed: int = 0
    failed: int = 0


class JmapMail:
    """What the syncer and the importer share: the mailbox list, and taking a list of Emails in."""

    def __init__(self, db: Database, accounts: AccountAdminRepository, connector: JmapConnector,
                 pipeline: PostIngestPipeline, resolver: LabelResolver) -> None:
        self.db = db
        self.accounts = accounts
        self.connector = connector
        self.client: JmapClient = connector.client
        self.pipeline = pipeline
        self.resolver = resolver
        self.store = JmapStore(db)

    async def call(self, upstream: Upstream, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.client.one(upstream.session, upstream.credentials, name,
                                     {"accountId": upstream.session.account_id, **arguments})

    async def save_state(self, account_id: int, **values: Any) -> None:
        await self.accounts.merge_state(account_id, STATE_KEY, values)

    # -- mailboxes ------------------------------------------------------------------------------------------

    async def sync_mailboxes(self, upstream: Upstream) -> list[int]:
        """Read the mailboxes again when `Mailbox/changes` says anything changed (or cannot say)."""
        since = upstream.state.get("mailbox_state")
        if since:
            try:
                changes = await self.call(upstream, "Mailbox/changes", {"sinceState": since})
                if not (changes.get("created") or changes.get("updated") or changes.get("destroyed")):
                    return []
            except JmapMethodError as exc:
                if exc.kind != "cannotCalculateChanges":
                    raise
        got = await self.call(upstream, "Mailbox/get", {"ids": None})
        listed = {str(m["id"]): m for m in got.get("list", [])}

        def path(mailbox: dict[str, Any]) -> list[str]:
            """The mailbox's name under its parents' names: a nested label."""
            names: list[str] = []
            seen: set[str] = set()
            current: dict[str, Any] | None = mailbox
            while current is not None and str(current.get("id")) not in seen:
                seen.add(str(current.get("id")))
                names.insert(0, str(current.get("name") or current.get("id")))
                current = listed.get(str(current.get("parentId") or ""))
            return names

        record = upstream.record
        found: list[UpstreamMailbox] = []
        for mailbox_id, mailbox in listed.items():
            role = ROLES.get(str(mailbox.get("role") or "").lower())
            resolved = await self.resolver.resolve(user_id=record.user_id, account_id=record.id, path=path(mailbox),
                                                   role=role)
            found.append(UpstreamMailbox(mailbox_id, resolved.label_id, mailbox.get("role"), str(mailbox["name"])))
        gone = [m.mailbox_id for m in await self.store.mailboxes(record.id) if m.mailbox_id not in listed]
        async with self.db.transaction():
            await self.store.put_mailboxes(record.id, found)
            await self.store.drop_mailboxes(record.id, gone)
        await self.save_state(record.id, mailbox_state=got.get("state"))
        return [m.label_id for m in found if m.label_id is not None]

    # -- emails ---------------------------------------------------------------------------------------------

    async def take(self, upstream: Upstream, emails: Sequence[dict[str, Any]]) -> Taken:
        """Emails as `Email/get` gave them: the known ones' state applied, the new ones downloaded and ingested."""
        taken = Taken()
        record = upstream.record
        mailboxes = {m.mailbox_id: m.label_id for m in await self.store.mailboxes(record.id)
                     if m.label_id is not None}
        known = await self.store.known(record.id, [str(e["id"]) for e in emails])
        known.update(await self._adopt(record.id, [e for e in emails if str(e["id"]) not in known]))

        def labels(email: dict[str, Any]) -> tuple[int, ...]:
            ids = [mailboxes[m] for m, on in (email.get("mailboxIds") or {}).items() if on and m in mailboxes]
            return tuple(dict.fromkeys(ids))

        def keywords(email: dict[str, Any]) -> dict[str, bool]:
            return {str(k).lower(): bool(v) for k, v in (email.get("keywords") or {}).items()}

        states = [EmailState(known[str(e["id"])].message_id, keywords(e).get("$seen", False),
                             keywords(e).get("$flagged", False), labels(e))
                  for e in emails if str(e["id"]) in known]
        if states:
            async with self.db.transaction():
                changed, touched_labels = await self.store.apply(record.id, states, sorted(set(mailboxes.values())))
                if changed:
                    threads = {k.message_id: k.thread_id for k in known.values() if k.message_id in changed}
                    await announce(self.db, record.id, threads, sorted(touched_labels))
            taken.changed = len(changed)
        fresh = [e for e in emails if str(e["id"]) not in known]
        limit = asyncio.Semaphore(DOWNLOADS)

        async def fetch(email: dict[str, Any]) -> tuple[dict[str, Any], bytes | Exception]:
            async with limit:
                try:
                    return email, await self.client.download(upstream.session, upstream.credentials,
                                                             str(email["blobId"]))
                except Exception as exc:  # one message that will not download costs only itself
                    return email, exc

        # Every download starts at once (DOWNLOADS at a time); each batch is ingested as soon as its own messages
        # are in, while the later ones keep downloading.
        downloads = [asyncio.ensure_future(fetch(e)) for e in fresh]
        passing: list[Exception] = []
        try:
            for start in range(0, len(downloads), BATCH):
                batch: list[IngestedMessage] = []
                email_of: dict[int, str] = {}
                for email, raw in await asyncio.gather(*downloads[start:start + BATCH]):
                    if isinstance(raw, Exception):
                        if getattr(raw, "retryable", False):
                            passing.append(raw)
                        else:
                            log.warning("Email %s of account %s could not be downloaded: %s", email["id"], record.id,
                                        raw)
                        taken.failed += 1
                        continue
                    message = self._parsed(record.id, email, raw, labels(email), keywords(email))
                    if message is None:
                        taken.failed += 1
                        continue
                    batch.append(message)
                    email_of[id(message.parsed)] = str(email["id"])
                if batch:
                    taken.stored += await self._ingest(record.id, batch, email_of)
        finally:
            for download in downloads:
                download.cancel()
        if passing:  # the server is unreachable for now: the page (or the changes) are read again later
            raise passing[0]
        return taken

    @staticmethod
    def _parsed(account_id: int, email: dict[str, Any], raw: bytes, label_ids: tuple[int, ...],
                words: dict[str, bool]) -> IngestedMessage | None:
        draft = words.get("$draft", False)
        try:
            return parse_message(
                raw, account_id=account_id, received_at=_stamp(email.get("receivedAt")),
                provider_thread_key=str(email.get("threadId") or "") or None, seen=words.get("$seen", False),
                starred=words.get("$flagged", False), is_draft=draft, flags=("\\Draft",) if draft else (),
                label_ids=label_ids, source_ref=f"jmap:{email['id']}", ref=ProviderRef(key=str(email["id"])))
        except Exception as exc:
            log.warning("Email %s of account %s could not be read: %s", email["id"], account_id, exc)
            return None

    async def _adopt(self, account_id: int, emails: Sequence[dict[str, Any]]) -> dict[str, KnownEmail]:
        """Emails that are messages plmail stored itself before the upstream had them (what was sent through it,
        filed in its Sent): the stored row is the upstream's Email from now on, not stored twice."""
        wanted = {str(e["id"]): str(ids[0]) for e in emails if (ids := e.get("messageId"))}
        if not wanted:
            return {}
        found = await self.store.unmatched_by_rfc_id(account_id, sorted(set(wanted.values())))
        adopted: dict[str, KnownEmail] = {}
        for email_id, rfc_id in wanted.items():
            row = found.pop(rfc_id, None)
            if row is not None:
                adopted[email_id] = KnownEmail(email_id, row[0], row[1])
        await self.store.note(account_id, [(e, k.message_id) for e, k in adopted.items()])
        return adopted

    async def _ingest(self, account_id: int, batch: list[IngestedMessage], email_of: dict[int, str]) -> int:
        ahead = await self.pipeline.prepare_ahead(batch)
        # Noted before the commit under the ids allocated ahead: a crash between the two leaves no message
        # stored twice by the next sync.
        await self.store.note(account_id, [(email_of[id(m.parsed)], f.message_id) for m, f in
                                           zip(ahead.messages, ahead.fields, strict=True) if f is not None])
        results: list[PostIngestResult] = []
        try:
            results.append(await self.pipeline.ingest(batch, ahead=ahead))
        except Exception:
            log.exception("a batch of %s JMAP messages failed as a whole; storing them one by one", len(batch))
            for message in batch:
                try:
                    results.append(await self.pipeline.ingest([message], ahead=ahead))
                except Exception:
                    log.exception("could not store %s of account %s", message.source_ref, account_id)
        stored = [(email_of[id(s.parsed)], s.id) for r in results for s in r.messages if id(s.parsed) in email_of]
        await self.store.note(account_id, stored)
        return len(stored)

    async def get(self, upstream: Upstream, ids: Sequence[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        got = await self.call(upstream, "Email/get", {"ids": list(ids), "properties": _PROPERTIES})
        return list(got.get("list", []))


class JmapSyncer:
    kind = JMAP

    def __init__(self, mail: JmapMail) -> None:
        self.mail = mail

    async def sync(self, account: Account) -> list[int]:
        record = await self.mail.accounts.for_job(account.id)
        if record is None:
            return []
        upstream = await self.mail.connector.open(record)
        touched = set(await self.mail.sync_mailboxes(upstream))
        record = await self.mail.accounts.for_job(account.id) or record
        upstream = Upstream(record, upstream.session, upstream.credentials)
        since = upstream.state.get("email_state")
        if not since:
            await self._start_import(upstream)
        else:
            touched |= await self._changes(upstream, str(since))
        await self.mail.accounts.synced(account.id)
        return sorted(touched)

    async def _start_import(self, upstream: Upstream) -> None:
        """Note the state everything after this is a change since; the importer walks the rest."""
        state = (await self.mail.call(upstream, "Email/get", {"ids": []})).get("state")
        await self.mail.save_state(upstream.record.id, email_state=state, import_position=0, import_anchor=None,
                                   import_done=False)

    async def _changes(self, upstream: Upstream, since: str) -> set[int]:
        touched: set[int] = set()
        record = upstream.record
        while True:
            try:
                changes = await self.mail.call(upstream, "Email/changes", {"sinceState": since, "maxChanges": CHANGES})
            except JmapMethodError as exc:
                if exc.kind != "cannotCalculateChanges":
                    raise
                await self._resync(upstream)
                return touched
            ids = [str(i) for i in (*changes.get("created", []), *changes.get("updated", []))]
            await self.mail.take(upstream, await self.mail.get(upstream, ids))
            destroyed = [str(i) for i in changes.get("destroyed", [])]
            if destroyed:
                async with self.mail.db.transaction():
                    deleted = await self.mail.store.delete(record.id, destroyed)
                    await settle_deleted(self.mail.db, record.id, {m.id: m.thread_id for m in deleted},
                                         {label for m in deleted for label in m.labels})
            since = str(changes.get("newState"))
            await self.mail.save_state(record.id, email_state=since)
            if not changes.get("hasMoreChanges"):
                return touched

    async def _resync(self, upstream: Upstream) -> None:
        """The upstream cannot say what changed since our state (RFC 8620 §5.2 cannotCalculateChanges): what it
        no longer has is deleted here, and the import walks the whole mailbox again from a fresh state (known
        messages only have their state applied)."""
        record = upstream.record
        log.info("account %s: the JMAP server cannot calculate changes; resyncing", record.id)
        state = (await self.mail.call(upstream, "Email/get", {"ids": []})).get("state")
        listed: set[str] = set()
        position = 0
        while True:
            page = await self.mail.call(upstream, "Email/query", {"position": position, "limit": 1000})
            ids = [str(i) for i in page.get("ids", [])]
            listed |= set(ids)
            position += len(ids)
            if not ids:
                break
        ours = await self.mail.db.fetch("SELECT email_id FROM jmap_email WHERE account_id = $1", record.id)
        gone = [r["email_id"] for r in ours if r["email_id"] not in listed]
        if gone:
            async with self.mail.db.transaction():
                deleted = await self.mail.store.delete(record.id, gone)
                await settle_deleted(self.mail.db, record.id, {m.id: m.thread_id for m in deleted},
                                     {label for m in deleted for label in m.labels})
        await self.mail.save_state(record.id, email_state=state, import_position=0, import_anchor=None,
                                   import_done=False)
        await self.mail.connector.accounts.request_resync(record.id)


class JmapImporter:
    """The first import: one page of `Email/query` (receivedAt descending) per job, newest mail first."""

    kind = JMAP

    def __init__(self, mail: JmapMail) -> None:
        self.mail = mail

    async def _state(self, account_id: int) -> dict[str, Any]:
        record = await self.mail.accounts.for_job(account_id)
        found = record.sync_state.get(STATE_KEY) if record is not None else None
        return found if isinstance(found, dict) else {}

    async def has_history(self, account_id: int) -> bool:
        state = await self._state(account_id)
        return bool(state.get("email_state")) and not state.get("import_done")

    async def counts(self, account_id: int) -> tuple[int, int]:
        state = await self._state(account_id)
        return await self.mail.store.stored_count(account_id), int(state.get("import_total") or 0)

    async def import_page(self, account: Account) -> ImportPage:
        record = await self.mail.accounts.for_job(account.id)
        if record is None:
            return ImportPage()
        upstream = await self.mail.connector.open(record)
        state = upstream.state
        if not state.get("email_state") or state.get("import_done"):
            return ImportPage()
        position = int(state.get("import_position") or 0)
        query: dict[str, Any] = {"sort": [{"property": "receivedAt", "isAscending": False}], "limit": PAGE,
                                 "calculateTotal": True}
        anchor = state.get("import_anchor")
        try:
            if anchor:
                page = await self.mail.call(upstream, "Email/query", {**query, "anchor": anchor, "anchorOffset": 1})
            else:
                page = await self.mail.call(upstream, "Email/query", {**query, "position": position})
        except JmapMethodError as exc:
            if exc.kind != "anchorNotFound":
                raise
            # the last message read is gone since: go on from the place it had
            page = await self.mail.call(upstream, "Email/query", {**query, "position": position})
        ids = [str(i) for i in page.get("ids", [])]
        taken = await self.mail.take(upstream, await self.mail.get(upstream, ids))
        start = int(page.get("position") or 0)
        done = not ids or start + len(ids) >= int(page.get("total") or 0)
        await self.mail.save_state(record.id, import_position=start + len(ids),
                                   import_anchor=ids[-1] if ids else anchor, import_total=page.get("total"),
                                   import_done=done)
        return ImportPage(stored=taken.stored + taken.changed, failed=taken.failed, more=not done)


class JmapImportState:
    """An account is importing until the first walk through its mail has ended."""

    kind = JMAP

    def __init__(self, importer: JmapImporter) -> None:
        self.importer = importer

    async def is_importing(self, account_id: int) -> bool:
        return await self.importer.has_history(account_id)
