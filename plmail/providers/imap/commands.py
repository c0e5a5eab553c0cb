"""`plmail account add-imap`: an IMAP account from the command line (its sign-in is tested before it is saved)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from plmail.domain.commands import CommandContext, CommandHost
from plmail.domain.errors import PlmailError

# The command line is parsed before anything heavy is imported; these mirror TlsMode's values.
_TLS_MODES = ("implicit", "starttls", "none")


def add_commands(sub: Any, host: CommandHost) -> None:
    """`plmail account add-imap`, in the command line's `account` group."""
    add = host.account_commands.add_parser("add-imap",
                                           help="add an IMAP account (the sign-in is tested before saving)")
    add.add_argument("--user", required=True, help="email address of the plmail user who owns the account")
    add.add_argument("--host", required=True, help="IMAP server name")
    add.add_argument("--port", type=int, help="port (default 993 for implicit TLS, else 143)")
    add.add_argument("--tls", choices=_TLS_MODES, default="implicit",
                     help="implicit TLS, STARTTLS, or none (allowed only to this machine)")
    add.add_argument("--username", required=True, help="the IMAP user name")
    add.add_argument("--email", help="the account's address (default: the user name when it is one)")
    add.add_argument("--name", help="name shown in the sidebar")
    add.add_argument("--ca-file", help="trust this CA certificate (PEM) instead of the system's, for a self-hosted "
                                       "server with its own CA")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add.add_argument("--smtp-host", help="SMTP server for sending (default: the known provider's, else none)")
    add.add_argument("--smtp-port", type=int, help="SMTP port (default 465 for implicit TLS, 587 for STARTTLS)")
    add.add_argument("--smtp-tls", choices=_TLS_MODES, default="starttls",
                     help="SMTP encryption: implicit TLS, STARTTLS (default), or none (this machine only)")
    add.add_argument("--smtp-username", help="SMTP user name (default: the IMAP one)")
    add.add_argument("--smtp-password-stdin", action="store_true",
                     help="read a separate SMTP password from standard input (the line after the IMAP password)")
    add.set_defaults(handler=lambda settings, args: cmd_account_add_imap(settings, args, host))


def cmd_account_add_imap(settings: Any, args: argparse.Namespace, host: CommandHost) -> int:
    from plmail.domain.account_services import MailServerAccountInput
    from plmail.providers.imap.accounts import ImapAccountService

    if not args.password_stdin:
        raise PlmailError(
            "Pass the password on standard input with --password-stdin (it is never a command-line argument)."
        )
    password = sys.stdin.readline().rstrip("\r\n")
    smtp_password = sys.stdin.readline().rstrip("\r\n") if args.smtp_password_stdin else ""
    port = args.port or (993 if args.tls == "implicit" else 143)
    email = args.email or (args.username if "@" in args.username else "")
    ca_file = str(Path(args.ca_file).resolve()) if args.ca_file else None

    async def run(context: CommandContext) -> int:
        user = await context.user_by_email(args.user)
        return await context.offered.get(ImapAccountService).add(user.id, MailServerAccountInput(
            email=email or user.email, host=args.host, port=port, tls=args.tls, username=args.username,
            password=password, name=args.name or "", ca_file=ca_file, smtp_host=args.smtp_host or "",
            smtp_port=args.smtp_port, smtp_tls=args.smtp_tls if args.smtp_host else "",
            smtp_username=args.smtp_username or "", smtp_password=smtp_password,
        ), operator=True)

    account_id = host.run(settings, run)
    print(f"added account {account_id}; its first sync is queued (or run: plmail sync --account {account_id} --wait)")
    return 0
