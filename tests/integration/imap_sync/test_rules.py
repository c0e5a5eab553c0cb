"""The pure rules: where a message lives after a label change, which folder plays which role, presets."""

from __future__ import annotations

import pytest

from plmail.domain.account_services import TlsMode
from plmail.domain.enums import LabelRole
from plmail.providers.imap.folders import assign_roles
from plmail.providers.imap.models import Mailbox
from plmail.providers.imap.presets import preset_for
from plmail.providers.imap.propagator import Folders, choose_location
from plmail.providers.imap.repos.propagation import FolderLabel, PlacedMessage

INBOX, TRASH, SPAM, ARCHIVE, SENT, SNOOZED, RECEIPTS, PROJECTS, PLAIN = range(1, 10)
_FOLDERS = [
    FolderLabel(INBOX, LabelRole.INBOX, 101, "INBOX"), FolderLabel(TRASH, LabelRole.TRASH, 102, "Trash"),
    FolderLabel(SPAM, LabelRole.SPAM, 103, "Junk"), FolderLabel(ARCHIVE, LabelRole.ARCHIVE, 104, "Archive"),
    FolderLabel(SENT, LabelRole.SENT, 105, "Sent"), FolderLabel(RECEIPTS, None, 106, "Receipts"),
    FolderLabel(PROJECTS, None, 107, "Projects"),
]
FOLDERS = Folders({f.label_id: f for f in _FOLDERS}, {f.mailbox_id: f for f in _FOLDERS})


def _where(labels: set[int], location: int | None, order: dict[tuple[int, int], int] | None = None) -> str | None:
    found = choose_location(PlacedMessage(1, 0, 1, frozenset(labels)), location, FOLDERS, order or {})
    return found.path if found else None


@pytest.mark.parametrize(("labels", "location", "expected"), [
    ({RECEIPTS, PLAIN}, RECEIPTS, "Receipts"),  # a custom label added: the folder stays put
    ({RECEIPTS, TRASH}, RECEIPTS, "Trash"),  # a remaining Trash label wins
    ({PROJECTS, SPAM}, RECEIPTS, "Junk"),
    ({INBOX}, TRASH, "INBOX"),  # restored from the trash
    ({PLAIN}, INBOX, "Archive"),  # archived: nothing with a folder left
    ({SNOOZED}, INBOX, "Archive"),  # Snoozed has no provider folder
    ({SENT}, INBOX, "Sent"),
])
def test_the_new_location_follows_the_seed_order(labels: set[int], location: int, expected: str) -> None:
    assert _where(labels, location) == expected


def test_the_most_recently_added_own_label_wins() -> None:
    assert _where({RECEIPTS, PROJECTS}, INBOX, {(1, RECEIPTS): 7, (1, PROJECTS): 3}) == "Receipts"
    assert _where({RECEIPTS, PROJECTS}, INBOX, {(1, PROJECTS): 9}) == "Projects"
    no_archive = Folders({k: v for k, v in FOLDERS.by_label.items() if k != ARCHIVE}, FOLDERS.by_mailbox)
    assert choose_location(PlacedMessage(1, 0, 1, frozenset({PLAIN})), INBOX, no_archive, {}) is None


def test_roles_come_from_special_use_then_from_well_known_names() -> None:
    boxes = [Mailbox("INBOX", "/", frozenset()), Mailbox("Sent", "/", frozenset({"\\Sent"})),
             Mailbox("Sent Items", "/", frozenset()), Mailbox("Papierkorb", "/", frozenset()),
             Mailbox("Spam", "/", frozenset()), Mailbox("All Mail", "/", frozenset({"\\All"})),
             Mailbox("Work/Trash", "/", frozenset())]
    assert assign_roles(boxes) == {"INBOX": "\\Inbox", "Sent": "\\Sent", "Papierkorb": "\\Trash", "Spam": "\\Junk",
                                   "All Mail": "\\All"}


def test_presets_by_domain() -> None:
    gmail = preset_for("Someone@GMail.com")
    assert gmail is not None and (gmail.host, gmail.port, gmail.tls) == ("imap.gmail.com", 993, TlsMode.IMPLICIT)
    assert preset_for("a@posteo.de").host == "posteo.de"  # type: ignore[union-attr]
    assert preset_for("a@mailbox.org").host == "imap.mailbox.org"  # type: ignore[union-attr]
    assert preset_for("a@web.de").host == "imap.web.de"  # type: ignore[union-attr]
    guess = preset_for("me@example.net")
    assert guess is not None and guess.host == "imap.example.net" and "guess" in guess.note
    assert preset_for("no-domain") is None
