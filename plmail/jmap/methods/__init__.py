"""Every JMAP method this server answers, one module per data type, merged into one registry."""

from __future__ import annotations

from plmail.jmap.registry import MethodRegistry


def build_registry() -> MethodRegistry:
    from plmail.jmap.methods import (
        calendar,
        contacts,
        copying,
        core,
        email_get,
        email_query,
        email_set,
        identity,
        mailbox,
        misc,
        push_subscription,
        quota,
        submission,
        thread,
        vacation,
    )

    return MethodRegistry([core.table, mailbox.table, email_get.table, email_query.table, email_set.table,
                           thread.table, misc.table, identity.table, submission.table, calendar.table, copying.table,
                           vacation.table, quota.table, push_subscription.table, contacts.table])
