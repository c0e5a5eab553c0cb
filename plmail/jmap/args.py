"""Reading a method's arguments with RFC 8620's rules: wrong types and unknown names are
invalidArguments, omitted arguments take their defaults, and null means the default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from plmail.jmap.errors import MethodError, invalid_arguments

MAX_UNSIGNED = 2**53 - 1


class Args:
    def __init__(self, values: Mapping[str, Any], allowed: Iterable[str]) -> None:
        unknown = sorted(set(values) - set(allowed))
        if unknown:
            raise MethodError("invalidArguments", f"Unknown argument(s): {', '.join(unknown)}.", arguments=unknown)
        self.values = values

    def has(self, name: str) -> bool:
        return self.values.get(name) is not None

    def raw(self, name: str) -> Any:
        return self.values.get(name)

    def string(self, name: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.values.get(name)
        if value is None:
            if required:
                raise invalid_arguments(f"'{name}' is required.")
            return default
        if not isinstance(value, str):
            raise invalid_arguments(f"'{name}' must be a string.")
        return value

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.values.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise invalid_arguments(f"'{name}' must be true or false.")
        return value

    def integer(self, name: str, default: int | None = None, *, minimum: int | None = None) -> int | None:
        value = self.values.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_UNSIGNED:
            raise invalid_arguments(f"'{name}' must be an integer.")
        if minimum is not None and value < minimum:
            raise invalid_arguments(f"'{name}' must be at least {minimum}.")
        return value

    def strings(self, name: str, *, required: bool = False) -> list[str] | None:
        value = self.values.get(name)
        if value is None:
            if required:
                raise invalid_arguments(f"'{name}' is required.")
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid_arguments(f"'{name}' must be a list of strings.")
        return list(dict.fromkeys(value))

    def mapping(self, name: str) -> dict[str, Any] | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise invalid_arguments(f"'{name}' must be an object.")
        return value

    def objects(self, name: str) -> dict[str, dict[str, Any]] | None:
        value = self.mapping(name)
        if value is not None and not all(isinstance(v, dict) for v in value.values()):
            raise invalid_arguments(f"Every value of '{name}' must be an object.")
        return value
