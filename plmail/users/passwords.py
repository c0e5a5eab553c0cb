"""argon2id password hashing, run off the event loop (a hash takes tens of milliseconds of CPU)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from plmail.domain.errors import ConfigurationError

log = logging.getLogger(__name__)

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024  # argon2 accepts more, but nobody types this much and it caps CPU per request

PROFILE_VARIABLE = "PLMAIL_ARGON2_PROFILE"
DEFAULT_PROFILE = "RFC_9106_LOW_MEMORY"
# argon2-cffi's named parameter sets. CHEAPEST (8 KiB, one pass) protects nothing: it is for test suites, which
# sign in thousands of times (a hash or check at RFC 9106's low-memory parameters is 0.1 s of CPU each).
PROFILES = ("RFC_9106_LOW_MEMORY", "RFC_9106_HIGH_MEMORY", "CHEAPEST")


@functools.cache
def _hasher() -> PasswordHasher:
    """argon2id with the parameters PLMAIL_ARGON2_PROFILE names (RFC 9106's low-memory ones unless it is set).
    A hash keeps the parameters it was made with, so changing the profile never locks anybody out: older hashes
    still verify, and are made anew at the next sign-in (`needs_rehash`)."""
    name = os.environ.get(PROFILE_VARIABLE) or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ConfigurationError(f"{PROFILE_VARIABLE} must be one of {', '.join(PROFILES)}, not {name!r}.")
    if name == "CHEAPEST":
        log.warning("%s=CHEAPEST: passwords are hashed with argon2's weakest parameters (for test suites only)",
                    PROFILE_VARIABLE)
    return PasswordHasher.from_parameters(getattr(profiles, name))


def check_profile() -> None:
    """Raise ConfigurationError at start-up, not at the first sign-in, when PLMAIL_ARGON2_PROFILE is wrong."""
    _hasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified when the email is unknown, so a miss costs the same time as a wrong password."""
    return _hasher().hash("plmail-timing-equaliser")


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher().hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    def check() -> bool:
        try:
            return _hasher().verify(password_hash or _dummy_hash(), password) and password_hash is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(check)


def needs_rehash(password_hash: str) -> bool:
    return _hasher().check_needs_rehash(password_hash)
