"""What the IMAP plugin brings before any service is built: `plmail account add-imap`, and `plmail doctor`'s
sign-in to each IMAP account's server (sending's SMTP check would join it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plmail.domain.enums import ProviderKind
from plmail.providers.imap.commands import add_commands

__all__ = ["add_commands", "server_checks"]


def server_checks() -> Mapping[ProviderKind, Sequence[Any]]:
    from plmail.providers.imap.doctor import reach_imap

    return {ProviderKind.IMAP: (reach_imap,)}
