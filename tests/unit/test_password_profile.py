"""Password hashes: RFC 9106's low-memory argon2id unless PLMAIL_ARGON2_PROFILE names another of argon2's sets
(the suite runs on CHEAPEST: tests/conftest.py); a hash made under one profile still verifies under another."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from plmail.domain.errors import ConfigurationError
from plmail.users import passwords


@pytest.fixture
def profile(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    passwords._hasher.cache_clear()
    try:
        yield monkeypatch
    finally:
        monkeypatch.undo()
        passwords._hasher.cache_clear()


async def test_unset_means_rfc_9106_low_memory_argon2id(profile: pytest.MonkeyPatch) -> None:
    profile.delenv("PLMAIL_ARGON2_PROFILE", raising=False)
    hashed = await passwords.hash_password("correct horse battery")
    # RFC 9106 §4, the second recommended option: argon2id, t=3 passes, p=4 lanes, m=2^16 KiB (64 MiB)
    assert hashed.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert await passwords.verify_password(hashed, "correct horse battery")
    assert not await passwords.verify_password(hashed, "correct horse battery!")


async def test_a_hash_of_another_profile_verifies_and_is_made_anew(profile: pytest.MonkeyPatch) -> None:
    profile.setenv("PLMAIL_ARGON2_PROFILE", "CHEAPEST")
    cheap = await passwords.hash_password("correct horse battery")
    assert cheap.startswith("$argon2id$v=19$m=8,t=1,p=1$")
    passwords._hasher.cache_clear()
    profile.setenv("PLMAIL_ARGON2_PROFILE", "RFC_9106_LOW_MEMORY")
    assert await passwords.verify_password(cheap, "correct horse battery")  # nobody is locked out
    assert passwords.needs_rehash(cheap)


async def test_an_unknown_profile_is_refused_with_the_names_it_takes(profile: pytest.MonkeyPatch) -> None:
    profile.setenv("PLMAIL_ARGON2_PROFILE", "fast")
    with pytest.raises(ConfigurationError, match="RFC_9106_LOW_MEMORY, RFC_9106_HIGH_MEMORY, CHEAPEST"):
        passwords.check_profile()
