"""What the Gmail plugin brings before any service is built: `plmail gmail skipped`."""

from plmail.providers.gmail.commands import add_commands

__all__ = ["add_commands"]
