"""Rows to JMAP objects for Mailbox, Thread and Identity (Email has its own module)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plmail.domain.enums import LabelRole
from plmail.mail.mailboxes import USER_LABEL_SORT_ORDER, MailboxView

MAILBOX_PROPERTIES = ("id", "name", "parentId", "role", "sortOrder", "totalEmails", "unreadEmails", "totalThreads",
                      "unreadThreads", "myRights", "isSubscribed")
COUNT_PROPERTIES = frozenset({"totalEmails", "unreadEmails", "totalThreads", "unreadThreads"})

# Spam is JMAP's "junk"; Snoozed has no IANA role and keeps our own name.
_ROLES = {LabelRole.SPAM.value: "junk"}


def mailbox_role(role: str | None) -> str | None:
    return _ROLES.get(role, role) if role else None


def mailbox_rights(system: bool) -> dict[str, bool]:
    return {"mayReadItems": True, "mayAddItems": True, "mayRemoveItems": True, "maySetSeen": True,
            "maySetKeywords": True, "mayCreateChild": True, "mayRename": not system, "mayDelete": not system,
            "maySubmit": True}


def mailbox_json(view: MailboxView, properties: Iterable[str]) -> dict[str, Any]:
    row, counts = view.row, view.counts
    values: dict[str, Any] = {
        "id": str(row.binding_id),
        "name": row.name,
        "parentId": str(row.parent_binding_id) if row.parent_binding_id else None,
        "role": mailbox_role(row.role),
        "sortOrder": row.sort_order if row.sort_order is not None else USER_LABEL_SORT_ORDER,
        "myRights": mailbox_rights(row.role is not None),
        "isSubscribed": row.is_visible,
    }
    if counts is not None:
        values.update(totalEmails=counts.total_emails, unreadEmails=counts.unread_emails,
                      totalThreads=counts.total_threads, unreadThreads=counts.unread_threads)
    return {p: values.get(p) for p in properties}
