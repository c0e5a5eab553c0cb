"""Ids as clients and URLs carry them: positive integers written as decimal strings."""

from __future__ import annotations


def parse_id(value: object) -> int | None:
    """Our ids are positive integers as strings; anything else names nothing (not found, not an error)."""
    if not isinstance(value, str) or not value.isdigit() or len(value) > 18:
        return None
    number = int(value)
    return number if number > 0 else None
