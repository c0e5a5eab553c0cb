"""Form payloads posted by the pages (URL-encoded), as frozen dataclasses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from litestar.enums import RequestEncodingType
from litestar.params import Body

from plmail.domain.errors import ValidationError

T = TypeVar("T")


@dataclass(frozen=True)
class LoginForm:
    email: str = ""
    password: str = ""
    next: str = "/"
    remember: str = ""  # "on": keep me signed in (a persistent cookie)


@dataclass(frozen=True)
class CodeForm:
    code: str = ""
    remember_device: str = ""  # "on": skip the code on this browser for 30 days


@dataclass(frozen=True)
class SetupForm:
    email: str = ""
    password: str = ""
    display_name: str = ""
    locale: str = "en"
    time_zone: str = "UTC"


@dataclass(frozen=True)
class PreferencesForm:
    display_name: str = ""
    locale: str = "en"
    time_zone: str = "UTC"


@dataclass(frozen=True)
class PasswordForm:
    current_password: str = ""
    new_password: str = ""


@dataclass(frozen=True)
class NewUserForm:
    email: str = ""
    password: str = ""
    display_name: str = ""
    is_admin: str = ""


URLENCODED = Body(media_type=RequestEncodingType.URL_ENCODED)


def parse_form(form: Mapping[str, Any], cls: type[T]) -> T:
    """Build a form dataclass from a multi-valued form: list fields take every value (a single checked box
    arrives as one value, not a list), int fields must be whole numbers or empty."""
    getall = getattr(form, "getall", None)
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for item in fields(cls):  # type: ignore[arg-type]
        hint = hints[item.name]
        raw = [str(v) for v in getall(item.name, [])] if getall else ([form[item.name]] if item.name in form else [])
        if get_origin(hint) is list:
            inner = get_args(hint)[0]
            try:
                values[item.name] = [inner(v) for v in raw if str(v).strip() != ""]
            except ValueError:
                raise ValidationError(f"'{item.name}' must hold whole numbers.") from None
        elif raw:
            first = raw[0]
            if int in get_args(hint) or hint is int:
                if first.strip() == "":
                    values[item.name] = None
                elif first.strip().lstrip("-").isdigit():
                    values[item.name] = int(first)
                else:
                    raise ValidationError(f"'{item.name}' must be a whole number.")
            else:
                values[item.name] = first
    return cls(**values)
