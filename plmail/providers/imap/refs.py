"""IMAP's provider reference: the folder row (which holds the UIDVALIDITY the UID belongs to) and the UID."""

from __future__ import annotations

from plmail.domain.ingest import ProviderRef


def imap_ref(mailbox_id: int, uid: int | None) -> ProviderRef:
    """A message in a folder; without a UID (a server without UIDPLUS that did not say) only the folder is known."""
    return ProviderRef(container=str(mailbox_id), key=str(uid) if uid is not None else None, folder_id=mailbox_id)


def imap_place(ref: ProviderRef) -> tuple[int, int] | None:
    """(folder row id, UID) of a reference IMAP made; None for one without a UID or made by another provider."""
    if ref.key is None or not ref.container.isdigit() or not ref.key.isdigit():
        return None
    return int(ref.container), int(ref.key)
