"""What a message's row holds that depends only on the message and its id: the sanitised HTML, the digests of
the original and its parts, and the JSON columns.

The pipeline works these out inside a batch's transaction unless the caller did it beforehand: the IMAP import
does it for the page it reads ahead, while the page before waits on the database, so the sanitiser (the
largest piece of Python per message after the parser) no longer runs while the database waits on Python.
Categorising, the hold and the timestamps are not here: they depend on what the batches before have stored
(the correspondents) and on when the row is written.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from plmail.domain.ingest import IngestedMessage
from plmail.mail.sanitizer import sanitize_html

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RowFields:
    message_id: int
    safe_html: str | None
    raw_digest: str | None
    part_digests: tuple[str, ...]  # SHA-256 of each of the parsed message's parts, in order
    provider_labels: str | None
    headers: str
    to: str
    cc: str
    bcc: str
    reply_to: str
    in_reply_to: str
    references: str
    flags: str
    mime_tree: str | None


def row_fields(message: IngestedMessage, message_id: int) -> RowFields:
    parsed = message.parsed
    return RowFields(
        message_id=message_id,
        safe_html=sanitize_html(parsed.body_html, message_id=message_id).html if parsed.body_html else None,
        raw_digest=hashlib.sha256(message.raw).hexdigest() if message.raw is not None else None,
        part_digests=tuple(hashlib.sha256(part.data).hexdigest() for part in parsed.parts),
        provider_labels=json.dumps(list(message.provider_labels)) if message.provider_labels is not None else None,
        headers=json.dumps(parsed.headers),
        to=json.dumps([a.as_json() for a in parsed.to]),
        cc=json.dumps([a.as_json() for a in parsed.cc]),
        bcc=json.dumps([a.as_json() for a in parsed.bcc]),
        reply_to=json.dumps([a.as_json() for a in parsed.reply_to]),
        in_reply_to=json.dumps(list(parsed.in_reply_to)),
        references=json.dumps(list(parsed.references)),
        flags=json.dumps(list(message.flags)),
        mime_tree=json.dumps(parsed.mime_tree) if parsed.mime_tree is not None else None,
    )


@dataclass(frozen=True, slots=True)
class PreparedAhead:
    """Row fields worked out before a batch's transaction, for the very message objects they were made from
    (looked up by identity; the batch keeps them alive, so an identity is never reused meanwhile). A message
    missing here (its fields failed, or it was not in the batch) is prepared in the transaction as usual."""

    messages: tuple[IngestedMessage, ...] = ()
    fields: tuple[RowFields | None, ...] = ()
    _by_identity: dict[int, RowFields] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_identity.update(
            {id(m): f for m, f in zip(self.messages, self.fields, strict=True) if f is not None})

    def get(self, message: IngestedMessage) -> RowFields | None:
        return self._by_identity.get(id(message))


async def prepare_ahead(messages: Sequence[IngestedMessage], ids: Sequence[int]) -> PreparedAhead:
    """The row fields of each message under its id, giving the event loop a turn after each one so this runs in
    the gaps while another batch waits on the database. A message whose fields fail is left out, and costs
    only itself: the transaction tries it again and notes it as it always did."""
    fields: list[RowFields | None] = []
    for message, message_id in zip(messages, ids, strict=True):
        try:
            fields.append(row_fields(message, message_id))
        except Exception:
            log.info("preparing %s ahead failed; it is prepared with its batch", message.source_ref, exc_info=True)
            fields.append(None)
        await asyncio.sleep(0)
    return PreparedAhead(tuple(messages), tuple(fields))
