"""`plmail gmail skipped [--forget ACCOUNT]`: the Gmail messages that were looked at and not stored."""

from __future__ import annotations

import argparse
from typing import Any

from plmail.config import Settings
from plmail.domain.commands import CommandContext, CommandHost


def add_commands(sub: Any, host: CommandHost) -> None:
    """Register the subcommands on the main parser's subparsers."""
    gmail = sub.add_parser("gmail", help="Gmail accounts").add_subparsers(dest="gmail_command", required=True)
    skipped = gmail.add_parser("skipped", help="list the Gmail messages noted and not stored, by kind")
    skipped.add_argument("--account", type=int, help="only this account id")
    skipped.add_argument("--forget", type=int, metavar="ACCOUNT",
                         help="forget the notes of this account id, so its next listing asks Gmail about them again")
    skipped.set_defaults(handler=lambda settings, args: cmd_gmail_skipped(settings, args, host))


def cmd_gmail_skipped(settings: Settings, args: argparse.Namespace, host: CommandHost) -> int:
    from plmail.providers.gmail.plugin import GmailServices

    async def run(context: CommandContext) -> list[str]:
        gmail = context.offered.get(GmailServices)
        if args.forget is not None:
            forgotten = await gmail.forget_skipped(args.forget)
            return [f"forgot {forgotten} skipped message(s) of account {args.forget}; "
                    f"its next listing asks Gmail about them again"]
        rows = await gmail.skipped_summary(args.account)
        if not rows:
            return ["no skipped Gmail messages"]
        lines: list[str] = []
        current: int | None = None
        for row in rows:
            if row.account_id != current:
                current = row.account_id
                lines.append(f"account {row.account_id} ({row.email})")
            latest = row.latest.isoformat(timespec="seconds") if row.latest else "-"
            lines.append(f"  {row.reason:<9} {row.count:>6}  latest {latest}")
        return lines

    print("\n".join(host.run(settings, run)))
    return 0
