"""The second factor for web sign-in: TOTP (RFC 6238) codes from an authenticator app, and recovery codes.

App passwords for JMAP stay single-factor by design: they are 256 random bits, one per device, revocable
on their own, and a phone's mail app has no way to ask for a code.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Final

import pyotp
import segno

from plmail.db.database import Database
from plmail.db.repos.users import UserRepository
from plmail.domain.errors import CredentialError, ValidationError
from plmail.domain.models import User
from plmail.keys import CredentialBox
from plmail.users.repos.sessions import RecoveryCodeRepository

ISSUER: Final = "plmail"
RECOVERY_CODES: Final = 8
DRIFT_STEPS: Final = 1  # codes of the step before and after are accepted too: clocks and typing take time
_RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i to misread


@dataclass(frozen=True, slots=True)
class Enrolment:
    """A secret not yet stored: shown as a QR code and as text until the user confirms it with a code."""

    secret: str
    uri: str
    qr_svg: str


def _normalise_recovery(code: str) -> str:
    return "".join(ch for ch in code.lower() if ch.isalnum())


def _recovery_hash(code: str) -> str:
    return hashlib.sha256(_normalise_recovery(code).encode()).hexdigest()


def _new_recovery_code() -> str:
    raw = "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(10))
    return f"{raw[:5]}-{raw[5:]}"


def matching_step(secret: str, code: str, at: float | None = None) -> int | None:
    """The time step whose code this is (within ±DRIFT_STEPS of now), or None. Every step in the window is
    generated and compared in constant time, whichever matches: how long the check takes says nothing about the
    code. That a step is used once is the caller's part (`accept_step`)."""
    digits = "".join(code.split())
    well_formed = len(digits) == 6 and digits.isdigit()
    candidate = digits if well_formed else "000000"
    totp = pyotp.TOTP(secret)
    now_step = int((time.time() if at is None else at) // totp.interval)  # RFC 6238: T = (now - T0) / X
    found: int | None = None
    for offset in range(-DRIFT_STEPS, DRIFT_STEPS + 1):
        if hmac.compare_digest(totp.generate_otp(now_step + offset).encode(), candidate.encode()) and found is None:
            found = now_step + offset
    return found if well_formed else None


class TwoFactorService:
    def __init__(self, db: Database, box: CredentialBox) -> None:
        self.users = UserRepository(db)
        self.codes = RecoveryCodeRepository(db)
        self.box = box

    @staticmethod
    def new_enrolment(user: User, secret: str | None = None) -> Enrolment:
        secret = secret or pyotp.random_base32()
        uri = pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name=ISSUER)
        qr = segno.make(uri, error="m")
        return Enrolment(secret, uri, qr.svg_inline(scale=4, border=2, title="TOTP"))

    async def confirm(self, user: User, secret: str, code: str) -> list[str]:
        """Store the secret once a code from it checks out; returns the new recovery codes (shown once)."""
        try:
            valid_secret = len(pyotp.TOTP(secret).byte_secret()) >= 10
        except (ValueError, TypeError):
            valid_secret = False
        if not valid_secret:
            raise ValidationError("Start the set-up again: the secret is not valid.")
        step = matching_step(secret, code)
        if step is None:
            raise ValidationError("That code does not match. Check the time on your phone and try again.")
        await self.users.set_second_factor(user.id, self.box.seal({"totp": secret}), last_step=step)
        return await self.new_recovery_codes(user.id)

    async def new_recovery_codes(self, user_id: int) -> list[str]:
        codes = [_new_recovery_code() for _ in range(RECOVERY_CODES)]
        await self.codes.replace(user_id, [_recovery_hash(c) for c in codes])
        return codes

    async def recovery_codes_left(self, user_id: int) -> int:
        return await self.codes.remaining(user_id)

    async def verify(self, user_id: int, code: str) -> bool:
        """A current TOTP code not used before, or an unused recovery code (which is then spent)."""
        state = await self.users.second_factor(user_id)
        if state.sealed_secret is None:
            return False
        try:
            secret = str(self.box.open(state.sealed_secret).get("totp", ""))
        except CredentialError:
            return False
        step = matching_step(secret, code)
        if step is not None:
            return await self.users.accept_step(user_id, step)
        normalised = _normalise_recovery(code)
        if len(normalised) != 10:
            return False
        return await self.codes.use(user_id, _recovery_hash(normalised))

    async def remove(self, user_id: int) -> None:
        """No second factor any more (the user switching it off, or an administrator resetting it)."""
        await self.users.set_second_factor(user_id, None)
        await self.codes.delete(user_id)
