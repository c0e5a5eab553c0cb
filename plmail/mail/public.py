"""What other areas may use of mail: the calendar reads stored messages, their headers and categories, follows the
change log's states, and answers invitations through drafts and the outbox. Everything else in `mail/` is its own
business; an import contract holds the calendar to this module."""

from __future__ import annotations

from plmail.mail.blobs import BlobStore, RawMessageResolver
from plmail.mail.bounds import bound_message
from plmail.mail.categorizer import CategoryFacts, MessageCategorizer
from plmail.mail.charsets import READING_POLICY
from plmail.mail.compose import parse_address_list
from plmail.mail.drafts import DraftService
from plmail.mail.headers import has_header, header, header_values, names_a_meeting
from plmail.mail.identities import IdentityService
from plmail.mail.mime import parse_mime
from plmail.mail.outbox import OutboxService
from plmail.mail.states import ChangeSet, collect_changes, parse_state
from plmail.mail.steps import EnrichmentRouter

__all__ = [
    "READING_POLICY",
    "BlobStore",
    "CategoryFacts",
    "ChangeSet",
    "DraftService",
    "EnrichmentRouter",
    "IdentityService",
    "MessageCategorizer",
    "OutboxService",
    "RawMessageResolver",
    "bound_message",
    "collect_changes",
    "has_header",
    "header",
    "header_values",
    "names_a_meeting",
    "parse_address_list",
    "parse_mime",
    "parse_state",
]
