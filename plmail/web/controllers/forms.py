"""Form payloads posted by the pages (URL-encoded), as frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.enums import RequestEncodingType
from litestar.params import Body


@dataclass(frozen=True)
class LoginForm:
    email: str = ""
    password: str = ""
    next: str = "/"


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
