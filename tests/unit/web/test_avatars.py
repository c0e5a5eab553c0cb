"""Issue 32's sender avatars: initials from the name (else the address), a colour that follows from the address."""

from __future__ import annotations

import pytest

from plmail.web.pages import avatar_colour, initials


@pytest.mark.parametrize(("name", "address", "expected"), [
    ("Ada Lovelace", "ada@example.org", "AL"),
    ("Grace Brewster Murray Hopper", "grace@example.org", "GH"),  # first and last word
    ("Müller, Hans", "hans@example.de", "MH"),
    ("bea", "bea@example.net", "B"),
    ("", "carl@example.com", "C"),
    (None, "dan@example.com", "D"),
    ("eve@example.org", "eve@example.org", "E"),  # a name that is the address
    (None, None, "?"),
])
def test_initials_come_from_the_name_else_the_address(name: str | None, address: str | None, expected: str) -> None:
    assert initials(name, address) == expected


def test_an_address_keeps_its_colour_whatever_its_case() -> None:
    assert avatar_colour("Ada@Example.org") == avatar_colour(" ada@example.org ")
    colours = {avatar_colour(f"person{i}@example.org") for i in range(200)}
    assert len(colours) == 10 and all(c.startswith("av-") for c in colours)  # all ten colours come up
