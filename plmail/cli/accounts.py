"""`plmail account add --kind`, `receivers`, `plmail sync` and `plmail outbox`: adding an account by the form its
provider's plugin offers, its trusted receivers, syncing it, and what it is sending, from the command line (a plugin
may add its own `plmail account add-…`, as IMAP does)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from plmail.config import Settings
from plmail.domain.errors import PlmailError

if TYPE_CHECKING:
    from plmail.domain.providers import ImportProgress
    from plmail.services import Services

def add_account_commands(sub: Any) -> Any:
    """Register the subcommands on the main parser's subparsers; returns `plmail account`'s, where each provider
    plugin adds its own `add-…`."""
    account = sub.add_parser("account", help="manage mail accounts").add_subparsers(dest="account_command",
                                                                                    required=True)

    generic = account.add_parser(
        "add", help="add an account of a kind a provider plugin offers a form for (e.g. --kind jmap); the fields "
                    "are the ones its page asks for, secrets read from standard input, one a line")
    generic.add_argument("--kind", required=True, help="the provider kind, e.g. jmap")
    generic.add_argument("--user", required=True, help="email address of the plmail user who owns the account")
    generic.add_argument("--field", action="append", default=[], metavar="NAME=VALUE",
                         help="a field of the form (repeat it); --field list shows the kind's fields")
    generic.set_defaults(handler=cmd_account_add)

    receivers = account.add_parser(
        "receivers", help="show or set the receiving servers whose Authentication-Results an account believes")
    receivers.add_argument("--account", type=int, required=True, help="the account id")
    chosen = receivers.add_mutually_exclusive_group()
    chosen.add_argument("--set", metavar="IDS", help="authserv-ids, separated by commas (e.g. mx.example.org)")
    chosen.add_argument("--learn", action="store_true", help="forget the ids set and learn them from the Inbox")
    receivers.set_defaults(handler=cmd_account_receivers)

    sync = sub.add_parser("sync", help="sync an account (and with --wait, import its history in the foreground)")
    sync.add_argument("--account", type=int, required=True, help="the account id")
    sync.add_argument("--wait", action="store_true", help="sync and import here until done, showing progress")
    sync.set_defaults(handler=cmd_sync)
    return account


def cmd_account_add(settings: Settings, args: argparse.Namespace) -> int:
    """The form a plugin offers the web pages (domain/account_forms.py), at the command line: its plain fields as
    --field NAME=VALUE, its secret ones read from standard input in the form's order."""
    from plmail.cli.runtime import with_services
    from plmail.domain.enums import ProviderKind

    given: dict[str, str] = {}
    for item in args.field:
        name, sep, value = item.partition("=")
        if not sep and item != "list":
            raise PlmailError(f"--field takes NAME=VALUE, not {item!r}.")
        given[name.strip()] = value

    async def run(services: Services) -> str:
        try:
            setup = services.provider_roles.account_forms.get(ProviderKind(args.kind))
        except ValueError:
            setup = None
        if setup is None:
            kinds = ", ".join(sorted(f.kind.value for f in services.provider_roles.account_forms)) or "none"
            raise PlmailError(f"No installed provider offers a form for {args.kind!r} (offered: {kinds}).")
        if "list" in given:
            return "\n".join(f"{f.name}\t{f.kind}{' (required)' if f.required else ''}\t{f.label}"
                             for f in setup.fields)
        unknown = sorted(set(given) - {f.name for f in setup.fields})
        if unknown:
            raise PlmailError(f"{args.kind} accounts have no field {', '.join(unknown)} (see --field list).")
        values = dict(given)
        for field in setup.fields:
            if field.secret:
                if field.name in given:
                    raise PlmailError(f"{field.name} is read from standard input, never a command-line argument.")
                values[field.name] = sys.stdin.readline().rstrip("\r\n")
        user = await services.users.by_email(args.user)
        account_id = await setup.add(user.id, values)
        return (f"added account {account_id}; its first sync is queued "
                f"(or run: plmail sync --account {account_id} --wait)")

    print(with_services(settings, run))
    return 0


def cmd_account_receivers(settings: Settings, args: argparse.Namespace) -> int:
    """The administrator's side of what the account page lets its owner do (issue 30)."""
    from plmail.cli.runtime import with_services
    from plmail.mail.authentication import parse_ids

    async def run(services: Services) -> str:
        owner = await services.sender_auth.owner_of(args.account)
        if args.set is not None:
            await services.sender_auth.set_receivers(owner, args.account, parse_ids(args.set))
        elif args.learn:
            await services.sender_auth.set_receivers(owner, args.account, None)
        shown = await services.sender_auth.receiver_settings(owner, args.account)
        ids = ", ".join(sorted(i or "(Exchange Online)" for i in shown.believed)) or "none yet"
        origin = ("the provider's own" if shown.fixed else "set" if shown.configured is not None
                  else "learned from the Inbox, not confirmed" if shown.learned else "not known")
        return f"account {args.account} believes: {ids} ({origin})"

    print(with_services(settings, run))
    return 0


class _ProgressLine:
    """One self-overwriting line on stderr: share done, messages, rate, time left."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.first: int | None = None
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, progress: ImportProgress) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = progress.done
        if progress.importing and now - self.last < 0.5:
            return
        self.last = now
        rate = (progress.done - self.first) / max(now - self.started, 1e-6)
        left = f"  about {_duration(progress.eta_seconds)} left" if progress.eta_seconds is not None else ""
        line = (f"importing {progress.percent:3d}%  {progress.done:,} of {progress.total:,} messages  "
                f"{rate:,.0f}/s{left}")
        print(("\r" + line.ljust(78)) if self.tty else line, end="" if self.tty else "\n", file=sys.stderr,
              flush=True)

    def finish(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def cmd_sync(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.cli.runtime import with_services

    async def run(services: Services) -> str:
        line = _ProgressLine()
        try:
            if not await services.accounts.exists(args.account):
                raise PlmailError(f"There is no account {args.account}.")
            if not args.wait:
                await services.sync.request(args.account)
                return f"sync of account {args.account} queued"
            started = time.monotonic()
            final = await services.sync.run_until_done(args.account, progress=line)
            seconds = time.monotonic() - started
        finally:
            line.finish()
        done = final.done if final is not None else 0
        return f"account {args.account} is up to date: {done:,} messages ({seconds:.1f} s)"

    print(with_services(settings, run))
    return 0
