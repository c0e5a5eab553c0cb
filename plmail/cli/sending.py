"""`plmail outbox`: what is waiting to be sent, scheduled, or went wrong."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from plmail.config import Settings

if TYPE_CHECKING:
    from plmail.domain.outgoing import OutboxEntry
    from plmail.services import Services

# What each state means to the person reading the list.
_STATE_TEXT = {
    "pending": "waiting",
    "sending": "sending",
    "failed": "failed, back in Drafts",
    "uncertain": "may have been sent",
}


def add_sending_commands(sub: Any) -> None:
    outbox = sub.add_parser("outbox", help="list pending, scheduled and failed submissions")
    outbox.add_argument("--user", help="only this plmail user's (email address); default: everyone's")
    outbox.set_defaults(handler=cmd_outbox)


def outbox_lines(entries: list[OutboxEntry]) -> list[str]:
    if not entries:
        return ["the outbox is empty"]
    lines = [f"{'id':>6}  {'state':<22} {'send at (UTC)':<17} {'tries':>5}  {'account':<28} to / subject"]
    for entry in entries:
        s = entry.submission
        recipients = ", ".join(s.envelope.rcpt_to[:3]) + (f" (+{len(s.envelope.rcpt_to) - 3})"
                                                          if len(s.envelope.rcpt_to) > 3 else "")
        lines.append(f"{s.id:>6}  {_STATE_TEXT.get(s.state.value, s.state.value):<22} "
                     f"{s.send_at.strftime('%Y-%m-%d %H:%M'):<17} {s.attempts:>5}  {entry.account_email:<28} "
                     f"{recipients} — {entry.subject or '(no subject)'}")
        if s.last_error:
            lines.append(f"{'':>8}{s.last_error}")
    return lines


def cmd_outbox(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.cli.runtime import with_services

    async def run(services: Services) -> list[OutboxEntry]:
        user_id = (await services.users.by_email(args.user)).id if args.user else None
        return await services.outbox.outbox(user_id)

    print("\n".join(outbox_lines(with_services(settings, run))))
    return 0
