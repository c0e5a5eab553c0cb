"""The search box's address operators: whole words by default, a substring when a star asks for one."""

from __future__ import annotations

import pytest

from plmail.domain.errors import FilterError
from plmail.mail.repos.filter_sql import address_words
from plmail.mail.search import parse_search


@pytest.mark.parametrize(("query", "condition"), [
    ("from:anna", {"fromWords": "anna"}),
    ("to:anna@example.org", {"toWords": "anna@example.org"}),
    ("cc:example.org", {"ccWords": "example.org"}),
    ("BCC:Anna", {"bccWords": "Anna"}),
    ('to:"Anna Müller"', {"toWords": "Anna Müller"}),
    # A star: the JMAP filter's text condition (RFC 8621 §4.4.1: the header "contains" the text).
    ("to:*corp*", {"to": "corp"}),
    ("from:müll*", {"from": "müll"}),
    ("cc:*@example.org", {"cc": "@example.org"}),
    ("bcc:*x*", {"bcc": "x"}),
])
def test_address_operators(query: str, condition: dict[str, str]) -> None:
    parsed = parse_search(query)
    assert parsed.conditions == [condition]
    assert parsed.text == ""


def test_a_star_alone_is_dropped_like_an_empty_value() -> None:
    parsed = parse_search("to:* hello")
    assert parsed.conditions == []
    assert parsed.text == "hello"


def test_address_words_are_lowercased_with_umlauts_and_capped() -> None:
    assert address_words("Jürgen MÜLLER", "fromWords") == ["jürgen", "müller"]
    assert address_words("ÄRZTIN <praxis@gesundheit.example>", "toWords") == ["ärztin", "praxis@gesundheit.example"]
    assert len(address_words(" ".join(f"w{n}" for n in range(20)), "toWords")) == 8
    with pytest.raises(FilterError):
        address_words("...", "toWords")  # punctuation is not a word
    with pytest.raises(FilterError):
        address_words(7, "toWords")

