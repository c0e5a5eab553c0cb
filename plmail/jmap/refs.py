"""Result references (RFC 8620 §3.7): an argument "#name" takes its value from an earlier response.

The path is a JSON Pointer in which "*" maps over an array; where the mapped values are arrays
themselves they are flattened into one, which is what makes "/list/*/threadId" or
"/updated" → ids work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plmail.jmap.errors import MethodError, invalid_arguments


class _PathError(Exception):
    pass


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _PathError("a path starts with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _evaluate(value: Any, tokens: Sequence[str]) -> Any:
    if not tokens:
        return value
    step, rest = tokens[0], tokens[1:]
    if isinstance(value, list):
        if step == "*":
            result: list[Any] = []
            for item in value:
                mapped = _evaluate(item, rest)
                if isinstance(mapped, list):
                    result.extend(mapped)
                else:
                    result.append(mapped)
            return result
        if not step.isdigit() or int(step) >= len(value):
            raise _PathError(f"no element {step!r}")
        return _evaluate(value[int(step)], rest)
    if isinstance(value, Mapping):
        if step not in value:
            raise _PathError(f"no member {step!r}")
        return _evaluate(value[step], rest)
    raise _PathError(f"cannot descend into a value at {step!r}")


def resolve_references(arguments: Mapping[str, Any], responses: Sequence[tuple[str, Any, str]]) -> dict[str, Any]:
    """Arguments with every "#name" replaced by the referenced value."""
    resolved: dict[str, Any] = {}
    for key, value in arguments.items():
        if not key.startswith("#"):
            resolved[key] = value
            continue
        name = key[1:]
        if name in arguments:
            raise invalid_arguments(f"'{name}' is given both directly and as a result reference.")
        resolved[name] = _reference(value, responses)
    return resolved


def _reference(reference: Any, responses: Sequence[tuple[str, Any, str]]) -> Any:
    if (not isinstance(reference, Mapping) or not isinstance(reference.get("resultOf"), str)
            or not isinstance(reference.get("name"), str) or not isinstance(reference.get("path"), str)):
        raise MethodError("invalidResultReference", "A result reference needs resultOf, name and path.")
    found = next((r for r in responses if r[2] == reference["resultOf"]), None)
    if found is None:
        raise MethodError("invalidResultReference", f"No earlier response has the id {reference['resultOf']!r}.")
    if found[0] != reference["name"]:
        raise MethodError("invalidResultReference",
                          f"The response {reference['resultOf']!r} is {found[0]!r}, not {reference['name']!r}.")
    try:
        return _evaluate(found[1], _tokens(reference["path"]))
    except _PathError as exc:
        raise MethodError("invalidResultReference", f"The path {reference['path']!r} does not apply: {exc}.") from None
