"""argon2id password hashing, run off the event loop (a hash takes tens of milliseconds of CPU)."""

from __future__ import annotations

import asyncio
import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024  # argon2 accepts more, but nobody types this much and it caps CPU per request

_hasher = PasswordHasher()  # argon2id with the RFC 9106 low-memory parameters


@functools.cache
def _dummy_hash() -> str:
    """Verified when the email is unknown, so a miss costs the same time as a wrong password."""
    return _hasher.hash("plmail-timing-equaliser")


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    def check() -> bool:
        try:
            return _hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(check)


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)
