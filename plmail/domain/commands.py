"""What the command line offers a provider plugin's own subcommands (`plmail gmail …`, `plmail account add-imap`),
so a plugin brings its commands without the command line importing it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from plmail.domain.account_services import ServiceRole
from plmail.domain.models import User

T = TypeVar("T")


class ServiceLookup(Protocol):
    """The providers' own services, found by class or by role (`OfferedServices`)."""

    def get(self, cls: type[T] | ServiceRole[T]) -> T: ...


@dataclass(frozen=True, slots=True)
class CommandContext:
    offered: ServiceLookup
    user_by_email: Callable[[str], Awaitable[User]]  # NotFoundError when there is none


class CommandHost(Protocol):
    account_commands: Any  # the subparsers of `plmail account`, for a provider's `add-…`

    def run(self, settings: Any, work: Callable[[CommandContext], Awaitable[T]]) -> T: ...  # settings: config.Settings


CommandAdder = Callable[[Any, CommandHost], None]
