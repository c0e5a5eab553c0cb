"""The installation key and what is derived from it.

``secret.key`` lives in the data directory, apart from the database, so a database dump alone
does not reveal mail passwords or OAuth tokens. Each use gets its own key derived with HKDF, so
the cookie key can never decrypt a credential.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from py_vapid import Vapid

from plmail.domain.errors import ConfigurationError, CredentialError

KEY_BYTES = 32
_NONCE_BYTES = 12
_FORMAT = b"\x01"  # first byte of every ciphertext: lets a later key rotation tell formats apart


def load_or_create_key(path: Path) -> bytes:
    """Read the installation key, creating it (mode 0600) on first start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes()
        if len(key) != KEY_BYTES:
            raise ConfigurationError(
                f"{path} holds {len(key)} bytes, expected {KEY_BYTES}. Restore the original key file; "
                f"without it stored account passwords cannot be read."
            ) from None
        return key
    key = secrets.token_bytes(KEY_BYTES)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def derive_key(master: bytes, purpose: str, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=f"plmail:{purpose}".encode()).derive(master)


class CredentialBox:
    """AES-GCM encryption of account credentials (passwords, OAuth tokens) at rest."""

    def __init__(self, master: bytes) -> None:
        self._aead = AESGCM(derive_key(master, "credentials"))

    def seal(self, value: dict[str, Any]) -> bytes:
        nonce = secrets.token_bytes(_NONCE_BYTES)
        plaintext = json.dumps(value, separators=(",", ":")).encode()
        return _FORMAT + nonce + self._aead.encrypt(nonce, plaintext, _FORMAT)

    def open(self, sealed: bytes) -> dict[str, Any]:
        if len(sealed) < 1 + _NONCE_BYTES + 16 or sealed[:1] != _FORMAT:
            raise CredentialError("Stored credentials are in an unknown format.")
        nonce = sealed[1 : 1 + _NONCE_BYTES]
        try:
            plaintext = self._aead.decrypt(nonce, sealed[1 + _NONCE_BYTES :], _FORMAT)
        except InvalidTag:
            raise CredentialError(
                "Stored credentials cannot be decrypted: secret.key in the data directory is not the key "
                "they were saved with. Restore the original key, or enter the account password again."
            ) from None
        value = json.loads(plaintext)
        if not isinstance(value, dict):
            raise CredentialError("Stored credentials are corrupt.")
        return value


class InstallationKeys:
    """Everything derived from secret.key, built once per process."""

    def __init__(self, master: bytes) -> None:
        self.credentials = CredentialBox(master)
        self.session_cookie = derive_key(master, "session-cookie")
        self.csrf_secret = derive_key(master, "csrf").hex()
        self.push_actions = derive_key(master, "push-actions")  # signs a notification's Archive / Mark read

    @classmethod
    def load(cls, path: Path) -> InstallationKeys:
        return cls(load_or_create_key(path))


class VapidKey:
    """The server's VAPID key pair (RFC 8292): it signs every Web Push request, and its public half is what a
    device subscribes with (RFC 9749 advertises it in the JMAP session). Kept as ``vapid.pem`` beside
    secret.key: a new key would silently orphan every subscription a phone or browser made."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey) -> None:
        self.vapid = Vapid(private_key)
        raw = private_key.public_key().public_bytes(serialization.Encoding.X962,
                                                    serialization.PublicFormat.UncompressedPoint)
        self.public_key = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    @classmethod
    def load(cls, path: Path) -> VapidKey:
        """Read the key, creating it (mode 0600) on first start."""
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            try:
                loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
            except ValueError:
                loaded = None
            if not isinstance(loaded, ec.EllipticCurvePrivateKey) or not isinstance(loaded.curve, ec.SECP256R1):
                raise ConfigurationError(
                    f"{path} is not a P-256 private key in PEM. Restore the original file; without it every push "
                    f"subscription has to be made again.") from None
            return cls(loaded)
        key = ec.generate_private_key(ec.SECP256R1())
        try:
            os.write(fd, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
            os.fsync(fd)
        finally:
            os.close(fd)
        return cls(key)
