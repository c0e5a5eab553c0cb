"""The commands on the messages of the selected mailbox: searching, fetching bodies and flags, changing flags,
moving and expunging. They act on whatever `ImapClient.select` opened last."""

from __future__ import annotations

from collections.abc import Iterable

import aioimaplib

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap._connection import ImapConnection
from plmail.providers.imap.batches import BATCH_MESSAGES
from plmail.providers.imap.errors import ImapCapabilityError
from plmail.providers.imap.models import FetchedMessage, FlagState, MoveResult

FETCH_BATCH = BATCH_MESSAGES  # messages per UID FETCH of bodies; callers bound their batches by bytes as well
_SET_BATCH = 500  # UIDs per STORE/MOVE/COPY command, keeping command lines short on sparse sets


class SelectedMailboxCommands(ImapConnection):
    """Search, fetch, store, move and expunge in the selected mailbox; part of `ImapClient`."""

    # -- searching and fetching -------------------------------------------------------------------------

    async def uid_search(self, criteria: str = "ALL") -> list[int]:
        """UIDs in the selected mailbox matching raw IMAP search criteria, ascending."""
        async with self._guard():
            return await self._uid_search(criteria)

    async def _uid_search(self, criteria: str) -> list[int]:
        self._require_selected()
        # aioimaplib would send CHARSET utf-8 always; ASCII criteria need none, and some servers reject it
        args: list[str] = [] if criteria.isascii() else ["CHARSET", "UTF-8"]
        esearch = "ESEARCH" in self._caps
        if esearch:
            args = ["RETURN", "(ALL)", *args]  # RFC 4731: one compact line such as "1:5000" instead of every UID
        command = aioimaplib.Command(
            "SEARCH", self._imap.new_tag(), *args, criteria, prefix="UID",
            untagged_resp_name="ESEARCH" if esearch else "SEARCH", loop=self._live_wire().loop,
        )
        reply = self._ok(await self._command(command, "searching"), "searching")
        return syn.parse_search(reply.lines, esearch=esearch)

    async def sizes_below(self, floor: int, *, low: int = 1) -> dict[int, int]:
        """UID -> RFC822.SIZE of the messages from `low` up to just below `floor` (the importer's window: existing
        history under the floor), ascending; with sizes, so a page can be bounded by bytes before it is fetched."""
        low = max(low, 1)
        if floor <= low:
            return {}
        return await self._sizes(f"{low}:{floor - 1}")

    async def sizes_above(self, last: int) -> dict[int, int]:
        """UID -> RFC822.SIZE of the messages strictly above `last` (new mail since the last sync), ascending."""
        found = await self._sizes(f"{last + 1}:*")
        # "n:*" always matches the highest UID, even when it is below n (RFC 3501 6.4.8)
        return {uid: size for uid, size in found.items() if uid > last}

    async def _sizes(self, uid_text: str) -> dict[int, int]:
        async with self._guard():
            self._require_selected()
            # a plain Command, as for flags: FetchCommand re-scans all lines per line, and sizes carry no literals
            command = aioimaplib.Command(
                "FETCH", self._imap.new_tag(), syn.check_uid_set(uid_text), "(UID RFC822.SIZE)", prefix="UID",
                loop=self._live_wire().loop,
            )
            reply = self._ok(await self._command(command, "listing messages"), "listing messages")
        return dict(sorted(syn.parse_sizes(reply.lines).items()))

    async def fetch_raw(self, uids: Iterable[int]) -> list[FetchedMessage]:
        """Full messages, byte for byte, in UID order, fetched FETCH_BATCH at a time without setting \\Seen.

        UIDs that no longer exist are simply missing from the result."""
        wanted = sorted(set(uids))
        if not wanted:
            return []
        items = "(UID FLAGS INTERNALDATE RFC822.SIZE BODY.PEEK[]" + (" MODSEQ)" if self.condstore else ")")
        out: list[FetchedMessage] = []
        async with self._guard():
            self._require_selected()
            wanted_set = set(wanted)
            for batch in syn.chunks(wanted, FETCH_BATCH):
                command = aioimaplib.FetchCommand(
                    self._imap.new_tag(), syn.uid_set(batch), items, prefix="UID", loop=self._live_wire().loop
                )
                reply = self._ok(await self._command(command, "fetching messages"), "fetching messages")
                for _, data in syn.parse_fetch(reply.lines):
                    message = syn.fetched_message(data)
                    if message is not None and message.uid in wanted_set:
                        out.append(message)
        out.sort(key=lambda m: m.uid)
        return out

    async def fetch_flags(
        self, uids: Iterable[int] | str = "1:*", *, changedsince: int | None = None
    ) -> list[FlagState]:
        """Flags (and MODSEQ with CONDSTORE) of the given UIDs or UID set text; with `changedsince`, only of
        messages whose MODSEQ is above it (RFC 7162 CHANGEDSINCE)."""
        if changedsince is not None and not self.condstore:
            raise ImapCapabilityError(f"{self.server.host} has no CONDSTORE, so changes cannot be asked for by MODSEQ.")
        if isinstance(uids, str):
            sets = [syn.check_uid_set(uids)]
        else:
            ordered = sorted(set(uids))
            sets = [syn.uid_set(batch) for batch in syn.chunks(ordered, _SET_BATCH)]
        items = "(UID FLAGS MODSEQ)" if self.condstore else "(UID FLAGS)"
        modifier = [f"(CHANGEDSINCE {changedsince})"] if changedsince is not None else []
        found: dict[int, FlagState] = {}
        async with self._guard():
            self._require_selected()
            for uid_text in sets:
                # a plain Command: FetchCommand re-scans all lines per line (quadratic on thousands of FLAGS lines),
                # and flag responses carry no literals that would need its parenthesis tracking
                command = aioimaplib.Command(
                    "FETCH", self._imap.new_tag(), uid_text, items, *modifier, prefix="UID",
                    loop=self._live_wire().loop,
                )
                reply = self._ok(await self._command(command, "fetching flags"), "fetching flags")
                for _, data in syn.parse_fetch(reply.lines):
                    state = syn.flag_state(data)
                    if state is not None:
                        found[state.uid] = state
        return [found[u] for u in sorted(found)]

    # -- changing -----------------------------------------------------------------------------------------

    async def store_flags(
        self, uids: Iterable[int], *, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> None:
        """Add and/or remove flags (`\\Seen`, `\\Flagged`, keywords) on messages of the selected mailbox."""
        ordered = sorted(set(uids))
        requested = (("+FLAGS.SILENT", list(add)), ("-FLAGS.SILENT", list(remove)))
        changes = [(op, syn.flag_list(flags)) for op, flags in requested if flags]
        if not ordered or not changes:
            return
        async with self._guard():
            self._require_selected(writable=True)
            await self._store(ordered, changes)

    async def _store(self, uids: list[int], changes: list[tuple[str, str]]) -> None:
        for op, flags in changes:
            for batch in syn.chunks(uids, _SET_BATCH):
                command = aioimaplib.Command(
                    "STORE", self._imap.new_tag(), syn.uid_set(batch), op, flags, prefix="UID",
                    untagged_resp_name="FETCH", loop=self._live_wire().loop,
                )
                self._ok(await self._command(command, "changing flags"), "changing flags")

    async def move(self, uids: Iterable[int], target: str) -> MoveResult:
        """Move messages from the selected mailbox to `target`.

        MOVE (RFC 6851) when offered; else COPY, \\Deleted and UID EXPUNGE of exactly these messages (UIDPLUS).
        Without UIDPLUS a plain EXPUNGE runs only if no other message is marked \\Deleted; otherwise the
        originals stay flagged \\Deleted and `expunged` is False. A missing target fails with code TRYCREATE."""
        ordered = sorted(set(uids))
        if not ordered:
            return MoveResult(target=target, uidvalidity=None)
        async with self._guard():
            self._require_selected(writable=True)
            mailbox = syn.mailbox_arg(target)
            uidvalidity: int | None = None
            uid_map: dict[int, int] = {}
            if "MOVE" in self._caps:
                for batch in syn.chunks(ordered, _SET_BATCH):
                    command = self._cmd("MOVE", syn.uid_set(batch), mailbox, prefix="UID")
                    reply = self._ok(await self._command(command, f"moving to {target!r}"), f"moving to {target!r}")
                    # COPYUID comes untagged after UID MOVE (RFC 6851 4.3), aioimaplib does not parse it
                    validity, mapping = syn.parse_copyuid(reply.lines)
                    uidvalidity = validity or uidvalidity
                    uid_map.update(mapping)
                return MoveResult(target=target, uidvalidity=uidvalidity, uid_map=uid_map)
            for batch in syn.chunks(ordered, _SET_BATCH):
                command = self._cmd("COPY", syn.uid_set(batch), mailbox, prefix="UID")
                reply = self._ok(await self._command(command, f"copying to {target!r}"), f"copying to {target!r}")
                # ... and in the tagged OK after UID COPY (RFC 4315)
                validity, mapping = syn.parse_copyuid(reply.lines)
                uidvalidity = validity or uidvalidity
                uid_map.update(mapping)
            await self._store(ordered, [("+FLAGS.SILENT", "(\\Deleted)")])
            expunged = await self._expunge(ordered)
            return MoveResult(
                target=target, uidvalidity=uidvalidity, uid_map=uid_map, method="copy+expunge", expunged=expunged
            )

    async def expunge(self, uids: Iterable[int] | None = None) -> bool:
        """Remove \\Deleted messages: only `uids` when given (UID EXPUNGE; without UIDPLUS only when no other
        message is \\Deleted, see `move`), else all of them. Returns whether the expunge ran."""
        async with self._guard():
            self._require_selected(writable=True)
            return await self._expunge(sorted(set(uids)) if uids is not None else None)

    async def _expunge(self, uids: list[int] | None) -> bool:
        loop = self._live_wire().loop
        if uids is None:
            command = aioimaplib.Command("EXPUNGE", self._imap.new_tag(), loop=loop)
            self._ok(await self._command(command, "expunging"), "expunging")
            return True
        if not uids:
            return True
        if "UIDPLUS" in self._caps:
            for batch in syn.chunks(uids, _SET_BATCH):
                command = aioimaplib.Command(
                    "EXPUNGE", self._imap.new_tag(), syn.uid_set(batch), prefix="UID", loop=loop
                )
                self._ok(await self._command(command, "expunging"), "expunging")
            return True
        # A plain EXPUNGE removes every \Deleted message, also those another client only marked.
        if not set(await self._uid_search("DELETED")) <= set(uids):
            return False
        command = aioimaplib.Command("EXPUNGE", self._imap.new_tag(), loop=loop)
        self._ok(await self._command(command, "expunging"), "expunging")
        return True
