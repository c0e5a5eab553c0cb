"""How extraction finds a message's calendar parts (the context it hands extractors is `ExtractionContext`,
in domain/calendar.py)."""

from __future__ import annotations

# Calendar parts are found by content type alone, never by disposition: Gmail sends invitations
# inline so that no paperclip shows, and over IMAP the same part may arrive either way.
CALENDAR_CONTENT_TYPES = frozenset({"text/calendar", "application/ics"})
