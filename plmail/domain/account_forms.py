"""How a provider plugin offers its "add an account" form to the web pages and the command line, without either
naming the provider: the fields it asks for, and one call that adds the account from what was typed.

A plugin adds an `AccountSetup` to `host.providers.account_forms`; `web/controllers/account_forms.py` renders any
of them at `/accounts/new/<kind>` and `plmail account add --kind <kind>` asks for the same fields. Labels and
help are written in English and marked with `N_` here, so `tools/i18n` extracts them; they are translated where
they are shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from plmail.domain.enums import ProviderKind


def N_(text: str) -> str:
    """gettext_noop: marks `text` for extraction; translation happens where it is shown."""
    return text


@dataclass(frozen=True, slots=True)
class FormField:
    name: str
    label: str
    kind: str = "text"  # text | email | url | password | checkbox
    required: bool = False
    help: str = ""
    autocomplete: str = "off"

    @property
    def secret(self) -> bool:
        """Typed hidden on a page, read from standard input on the command line (never an argument)."""
        return self.kind == "password"


class AccountSetup(Protocol):
    """A provider's account form: the fields, and adding the account (checked before it is saved)."""

    @property
    def kind(self) -> ProviderKind: ...

    @property
    def title(self) -> str:
        """The form's heading and link, e.g. "Add a JMAP account (Fastmail, Stalwart, Cyrus)"; marked with N_."""
        ...

    @property
    def fields(self) -> Sequence[FormField]: ...

    async def add(self, user_id: int, values: Mapping[str, str]) -> int:
        """Add the account for `user_id` from the typed values (field name -> text; a checkbox is "on" or
        missing); raises ValidationError (with `field`) on what to change. Returns the account id."""
        ...
