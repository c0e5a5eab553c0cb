"""Building what a syncer hands to the pipeline from raw bytes (`IngestedMessage` lives in domain/ingest.py)."""

from __future__ import annotations

from plmail.domain.ingest import IngestedMessage
from plmail.mail.mime import parse_mime


def parse_message(raw: bytes, *, account_id: int, **provider_facts: object) -> IngestedMessage:
    """Raw RFC 822 bytes to the DTO the pipeline ingests."""
    return IngestedMessage(account_id=account_id, parsed=parse_mime(raw), raw=raw, **provider_facts)  # type: ignore[arg-type]
