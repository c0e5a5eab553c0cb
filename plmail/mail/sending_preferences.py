"""A user's choices for writing mail (Settings → Sending): which identity new mail starts from, whether an
answer quotes the original, plain text or rich text by default, and the undo delay (kept by the outbox)."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.db.repos.users import UserRepository
from plmail.domain.errors import ValidationError
from plmail.domain.outgoing import Identity, ReplyQuoting, SendingPreferences
from plmail.mail.identities import IdentityService
from plmail.mail.outbox import OutboxService

_QUOTING = "reply_quoting"
_PLAIN = "plain_text_default"
_IDENTITY = "default_identity_id"


class SendingPreferencesService:
    def __init__(self, db: Database, identities: IdentityService, outbox: OutboxService) -> None:
        self.users = UserRepository(db)
        self.identities = identities
        self.outbox = outbox

    async def load(self, user_id: int) -> SendingPreferences:
        stored = await self.users.settings(user_id)
        quoting = str(stored.get(_QUOTING))
        identity = stored.get(_IDENTITY)
        return SendingPreferences(
            undo_delay=await self.outbox.undo_delay(user_id),
            reply_quoting=ReplyQuoting(quoting) if quoting in ReplyQuoting._value2member_map_ else ReplyQuoting.BELOW,
            plain_text=stored.get(_PLAIN) is True,
            default_identity_id=identity if isinstance(identity, int) else None,
        )

    async def save(self, user_id: int, *, undo_delay: int, reply_quoting: str, plain_text: bool,
                   default_identity_id: int | None) -> SendingPreferences:
        if reply_quoting not in ReplyQuoting._value2member_map_:
            raise ValidationError("Quote the original below the answer, or not at all.", field="reply_quoting")
        if default_identity_id is not None:
            await self.identities.sendable(user_id, default_identity_id)
        await self.outbox.set_undo_delay(user_id, undo_delay)
        await self.users.merge_settings(user_id, {_QUOTING: reply_quoting, _PLAIN: plain_text,
                                                  _IDENTITY: default_identity_id})
        return await self.load(user_id)

    async def default_identity(self, user_id: int, prefs: SendingPreferences | None = None) -> Identity | None:
        """The chosen default while it can send; else the first account's primary address."""
        identities = await self.identities.for_user(user_id)
        chosen = (prefs or await self.load(user_id)).default_identity_id
        by_id = {i.id: i for i in identities}
        if chosen in by_id:
            return by_id[chosen]
        return next((i for i in identities if i.is_primary), identities[0] if identities else None)
