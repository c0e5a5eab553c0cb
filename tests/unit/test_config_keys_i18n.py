"""Settings, the installation key, translations and small web helpers: no I/O beyond a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from plmail.config import Settings
from plmail.domain.errors import ConfigurationError, CredentialError
from plmail.keys import CredentialBox, InstallationKeys, load_or_create_key
from plmail.users.service import ThrottlePolicy
from plmail.web.auth import safe_next
from plmail.web.i18n import pick_locale, translate


def test_settings_defaults_and_validation(tmp_path: Path) -> None:
    s = Settings.from_env({"PLMAIL_DATA_DIR": str(tmp_path)})
    assert s.data_dir == tmp_path
    assert s.embedded_database
    assert s.port == 8025
    assert s.secret_key_path == tmp_path / "secret.key"
    with pytest.raises(ConfigurationError, match="PLMAIL_PORT must be between"):
        Settings.from_env({"PLMAIL_DATA_DIR": str(tmp_path), "PLMAIL_PORT": "70000"})
    with pytest.raises(ConfigurationError, match="whole number"):
        Settings.from_env({"PLMAIL_DATA_DIR": str(tmp_path), "PLMAIL_PORT": "eighty"})
    with pytest.raises(ConfigurationError, match="true or false"):
        Settings.from_env({"PLMAIL_DATA_DIR": str(tmp_path), "PLMAIL_SECURE_COOKIES": "maybe"})
    external = Settings.from_env({"PLMAIL_DATA_DIR": str(tmp_path), "PLMAIL_DATABASE_URL": "postgresql://x/y"})
    assert not external.embedded_database


def test_key_file_is_created_once_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "secret.key"
    first = load_or_create_key(path)
    assert len(first) == 32
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_create_key(path) == first
    path.write_bytes(b"short")
    with pytest.raises(ConfigurationError, match="expected 32"):
        load_or_create_key(path)


def test_credentials_round_trip_and_reject_tampering_and_wrong_key() -> None:
    box = CredentialBox(b"k" * 32)
    sealed = box.seal({"password": "hunter2", "n": 1})
    assert b"hunter2" not in sealed
    assert box.open(sealed) == {"password": "hunter2", "n": 1}
    assert box.seal({"password": "hunter2"}) != box.seal({"password": "hunter2"})  # fresh nonce each time
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(CredentialError, match="cannot be decrypted"):
        box.open(tampered)
    with pytest.raises(CredentialError, match="cannot be decrypted"):
        CredentialBox(b"x" * 32).open(sealed)
    with pytest.raises(CredentialError, match="unknown format"):
        box.open(b"\x02" + sealed[1:])


def test_derived_keys_differ_per_purpose() -> None:
    keys = InstallationKeys(b"m" * 32)
    assert len(keys.session_cookie) == 32
    assert keys.session_cookie.hex() != keys.csrf_secret


def test_translate_formats_and_falls_back() -> None:
    assert translate("Inbox", "de") == "Posteingang"
    assert translate("Inbox", "en") == "Inbox"
    assert translate("no such text", "de") == "no such text"
    assert "30 Sekunden" in translate("Too many failed sign-in attempts. Try again in {seconds} seconds.", "de",
                                      seconds=30)


@pytest.mark.parametrize(
    ("header", "expected"),
    [(None, "en"), ("de-DE,de;q=0.9,en;q=0.8", "de"), ("fr-FR, en;q=0.5, de;q=0.7", "de"), ("en-GB", "en"),
     ("de;q=garbage, en;q=0.1", "en")],
)
def test_pick_locale(header: str | None, expected: str) -> None:
    assert pick_locale(header).value == expected


@pytest.mark.parametrize(
    ("target", "expected"),
    [("/label/4", "/label/4"), ("https://evil.example/", "/"), ("//evil.example", "/"), ("/\\evil", "/"),
     ("", "/"), (None, "/")],
)
def test_safe_next_refuses_off_site_redirects(target: str | None, expected: str) -> None:
    assert safe_next(target) == expected


def test_throttle_lock_grows_and_is_capped() -> None:
    policy = ThrottlePolicy()
    assert policy.lock_seconds(5, 5) == 30
    assert policy.lock_seconds(6, 5) == 60
    assert policy.lock_seconds(50, 5) == 15 * 60
