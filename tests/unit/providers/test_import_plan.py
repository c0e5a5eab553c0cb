"""The IMAP import plan (seed: "Ein erster Import ist kein Abgleich"): folders in the order a person wants their
history, roles from the server's flags or the usual names, and folder paths becoming label chains."""

from __future__ import annotations

import random

from plmail.domain.enums import LabelRole
from plmail.providers.imap.folders import _label_path, assign_roles, import_rank, role_of
from plmail.providers.imap.models import Mailbox
from plmail.providers.imap.repos.mailboxes import MailboxRow


def _row(path: str, special_use: str | None, n: int = 0) -> MailboxRow:
    return MailboxRow(id=n, account_id=1, name=path, full_path=path, delimiter="/", special_use=special_use,
                      uid_validity=1, last_seen_uid=10, import_floor_uid=11, highest_modseq=None, total_messages=None,
                      unread_messages=None, is_sync_enabled=True, is_idle_enabled=False, synced_at=None,
                      swept_at=None, label_id=None)


def test_folders_come_inbox_sent_drafts_own_folders_archive_spam_trash() -> None:
    """Seed: "Posteingang, Gesendet, Entwürfe, eigene Ordner, das Archiv und zuletzt Spam und Papierkorb"."""
    rows = [_row("Trash", "\\Trash"), _row("Projects", None), _row("Junk", "\\Junk"), _row("INBOX", "\\Inbox"),
            _row("archive", "\\Archive"), _row("Drafts", "\\Drafts"), _row("Receipts", None), _row("Sent", "\\Sent"),
            _row("bills", None)]
    for seed in range(3):
        random.Random(seed).shuffle(rows)
        assert [r.full_path for r in sorted(rows, key=import_rank)] == [
            "INBOX", "Sent", "Drafts", "bills", "Projects", "Receipts", "archive", "Junk", "Trash"]


def test_role_of_a_special_use_flag() -> None:
    assert [role_of(f) for f in ("\\Inbox", "\\Sent", "\\Drafts", "\\Trash", "\\Junk", "\\Archive")] == [
        LabelRole.INBOX, LabelRole.SENT, LabelRole.DRAFTS, LabelRole.TRASH, LabelRole.SPAM, LabelRole.ARCHIVE]
    assert role_of(None) is None and role_of("") is None and role_of("\\Important") is None


def _box(path: str, *flags: str, delimiter: str | None = "/") -> Mailbox:
    return Mailbox(path, delimiter, frozenset(flags))


def test_roles_come_from_the_servers_flags_first_one_folder_per_role() -> None:
    boxes = [_box("INBOX"), _box("Sent Items", "\\Sent"), _box("Sent", "\\Sent"), _box("All Mail", "\\All"),
             _box("Starred", "\\Flagged"), _box("Trash"), _box("Deleted Items", "\\Trash")]
    assert assign_roles(boxes) == {"INBOX": "\\Inbox", "Sent Items": "\\Sent", "All Mail": "\\All",
                                   "Starred": "\\Flagged", "Deleted Items": "\\Trash"}


def test_without_special_use_the_usual_names_give_the_roles_left_once_each() -> None:
    boxes = [_box("INBOX"), _box("Gesendet"), _box("Sent"), _box("Entwürfe"), _box("Papierkorb"),
             _box("Spam"), _box("Archiv"), _box("Projects/Sent"), _box("Receipts")]
    assert assign_roles(boxes) == {"INBOX": "\\Inbox", "Gesendet": "\\Sent", "Entwürfe": "\\Drafts",
                                   "Papierkorb": "\\Trash", "Spam": "\\Junk", "Archiv": "\\Archive"}
    assert assign_roles([_box(" Junk E-Mail ")]) == {" Junk E-Mail ": "\\Junk"}
    assert assign_roles([_box("inbox")]) == {"inbox": "\\Inbox"}  # INBOX is case-insensitive (RFC 3501)


def test_a_folder_path_is_a_label_chain_and_inbox_children_nest_under_the_inbox_label() -> None:
    assert _label_path(_box("Projects/2026")) == ("Projects", "2026")
    assert _label_path(_box("INBOX/Receipts")) == ("Inbox", "Receipts")
    assert _label_path(_box("inbox.Receipts", delimiter=".")) == ("Inbox", "Receipts")
    assert _label_path(_box("INBOX")) == ("INBOX",)
    assert _label_path(_box("Projects/2026", delimiter=None)) == ("Projects/2026",)


def test_own_folders_are_ordered_by_their_lower_cased_path() -> None:
    rows = [_row("Teams", None), _row("team_b", None), _row("Team_a", None)]
    assert [r.full_path for r in sorted(rows, key=import_rank)] == ["Team_a", "team_b", "Teams"]


def test_a_nested_folder_gets_no_role_by_its_name() -> None:
    assert assign_roles([_box("Sent Items", delimiter=" ")]) == {}  # "Sent" inside "Items"? no: two levels
    assert assign_roles([_box("Sent Items", delimiter="/")]) == {"Sent Items": "\\Sent"}
