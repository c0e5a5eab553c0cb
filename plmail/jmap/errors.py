"""JMAP's three kinds of failure: a request that is refused as a whole (RFC 8620 §3.6.1, a problem
document with an HTTP status), a method call that fails (§3.6.2, an "error" response in its place),
and one object of a /set that fails (§5.3, a SetError beside the others that succeeded)."""

from __future__ import annotations

from typing import Any

from plmail.domain.errors import (
    ConflictError,
    FilterError,
    ForbiddenError,
    InvalidMessageError,
    NotFoundError,
    PlmailError,
    TooLargeError,
    UnanswerableError,
    ValidationError,
)
from plmail.domain.outgoing import SubmissionRefused

PROBLEM_PREFIX = "urn:ietf:params:jmap:error:"


class RequestError(Exception):
    """The whole request is refused; answered as application/problem+json."""

    def __init__(self, kind: str, detail: str, *, status: int = 400, limit: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.status = status
        self.limit = limit
        self.headers = headers or {}

    def problem(self) -> dict[str, Any]:
        # A kind with a colon is a full type URI (such as about:blank); the rest are JMAP's own.
        kind = self.kind if ":" in self.kind else PROBLEM_PREFIX + self.kind
        body: dict[str, Any] = {"type": kind, "status": self.status, "detail": self.detail}
        if self.limit is not None:
            body["limit"] = self.limit
        return body


class MethodError(Exception):
    """One method call failed; the response holds ["error", {type, description}, callId] in its place."""

    def __init__(self, kind: str, description: str = "", **extra: Any) -> None:
        super().__init__(description or kind)
        self.kind = kind
        self.description = description
        self.extra = extra

    def arguments(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.kind}
        if self.description:
            body["description"] = self.description
        body.update(self.extra)
        return body


def invalid_arguments(description: str) -> MethodError:
    return MethodError("invalidArguments", description)


class SetError(Exception):
    """One create, update or destroy of a /set was refused; the others still happen."""

    def __init__(self, kind: str, description: str = "", *, properties: list[str] | None = None,
                 **extra: Any) -> None:
        super().__init__(description or kind)
        self.kind = kind
        self.description = description
        self.properties = properties
        self.extra = extra  # the error's own properties: notFound of blobNotFound, maxSize of tooLarge, …

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.kind}
        if self.description:
            body["description"] = self.description
        if self.properties is not None:
            body["properties"] = self.properties
        for name, value in self.extra.items():
            parts = name.split("_")
            body[parts[0] + "".join(p.title() for p in parts[1:])] = value
        return body


def invalid_properties(description: str, *properties: str) -> SetError:
    return SetError("invalidProperties", description, properties=list(properties))


def method_error(exc: PlmailError) -> MethodError | None:
    """The method error a service's refusal means; None for an error that is the server's own fault."""
    if isinstance(exc, FilterError):
        return MethodError(exc.kind, str(exc))
    if isinstance(exc, UnanswerableError):
        return MethodError(exc.reason, str(exc))
    if isinstance(exc, ValidationError):
        return MethodError("invalidArguments", str(exc))
    if isinstance(exc, NotFoundError):
        return MethodError("invalidArguments", str(exc))
    if isinstance(exc, ForbiddenError):
        return MethodError("forbidden", str(exc))
    return None


def set_error(exc: PlmailError) -> SetError | None:
    """The SetError a service's refusal of one object means; None for an error that is the server's own fault."""
    if isinstance(exc, NotFoundError):
        return SetError("notFound", str(exc))
    if isinstance(exc, InvalidMessageError):
        return SetError("invalidEmail", str(exc))
    if isinstance(exc, ForbiddenError):
        return SetError("forbidden", str(exc))
    if isinstance(exc, ConflictError):
        return SetError(exc.reason, str(exc))
    if isinstance(exc, TooLargeError):
        return SetError("tooLarge", str(exc), max_size=exc.max_size)
    if isinstance(exc, SubmissionRefused):
        if exc.reason == "invalidRecipients":
            return SetError(exc.reason, str(exc), invalid_recipients=list(exc.recipients))
        return SetError(exc.reason, str(exc))
    if isinstance(exc, ValidationError):
        return invalid_properties(str(exc), *([exc.field] if exc.field else []))
    return None


def refusal(exc: SetError | PlmailError) -> dict[str, Any]:
    """The JSON of one refused object of a /set; re-raises an error that is the server's own fault."""
    found = exc if isinstance(exc, SetError) else set_error(exc)
    if found is None:
        raise exc
    return found.as_json()
