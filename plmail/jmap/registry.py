"""Methods by name, and what one method call gets to work with.

A method resolves its arguments, checks the account against the principal, calls one service and
renders the result; it never writes SQL and never decides what an operation means.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plmail.domain.mailstore import MailScope
from plmail.domain.models import Principal
from plmail.jmap.args import Args
from plmail.jmap.errors import MethodError, invalid_arguments
from plmail.mail.states import StateReader

if TYPE_CHECKING:
    from plmail.services import Services

Handler = Callable[["Call"], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    name: str
    capability: str  # the method is unknown unless the request lists this in `using`
    handler: Handler


@dataclass(slots=True)
class MethodTable:
    """The methods of one module, collected by decorator and merged into the registry."""

    specs: list[MethodSpec] = field(default_factory=list)

    def method(self, name: str, capability: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.specs.append(MethodSpec(name, capability, handler))
            return handler
        return register


class MethodRegistry:
    def __init__(self, tables: Iterable[MethodTable] = ()) -> None:
        self._methods: dict[str, MethodSpec] = {}
        for table in tables:
            for spec in table.specs:
                if spec.name in self._methods:
                    raise ValueError(f"two JMAP methods are named {spec.name!r}")
                self._methods[spec.name] = spec

    def get(self, name: str) -> MethodSpec | None:
        return self._methods.get(name)

    def names(self) -> list[str]:
        return sorted(self._methods)


@dataclass(slots=True)
class RequestContext:
    """Shared by the method calls of one API request."""

    principal: Principal
    services: Services
    using: frozenset[str]
    states: StateReader
    created_ids: dict[str, str] = field(default_factory=dict)
    bound_scopes: set[MailScope] = field(default_factory=set)
    base_url: str = ""  # this server's URL as the client reached it (links the server mails out start with it)

    def creation_id(self, value: str) -> str | None:
        """A "#creationId" names an object created earlier in this request; anything else is itself."""
        if value.startswith("#"):
            return self.created_ids.get(value[1:])
        return value


@dataclass(slots=True)
class Call:
    ctx: RequestContext
    name: str
    arguments: dict[str, Any]
    # Responses of calls the method made on the client's behalf (RFC 8621 §7.5: EmailSubmission/set's
    # implicit Email/set), answered right after its own, under the same call id.
    implicit: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def args(self, *allowed: str) -> Args:
        return Args(self.arguments, allowed)

    def scope(self, args: Args, name: str = "accountId") -> MailScope:
        """The mail the call's accountId names: the unified account or one connected account of the user."""
        value = args.raw(name)
        if value is None:
            raise invalid_arguments(f"'{name}' is required.")
        if not isinstance(value, str):
            raise invalid_arguments(f"'{name}' must be a string.")
        scope = self.ctx.principal.scope(value)
        if scope is None:
            raise MethodError("accountNotFound", f"No account {value!r} is available to you.")
        return scope

    def jmap_id(self, scope: MailScope) -> str:
        return self.ctx.principal.jmap_id(scope)

    def uses(self, capability: str) -> bool:
        return capability in self.ctx.using
