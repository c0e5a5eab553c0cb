"""Bad input to the operations commands gets a clear error and leaves nothing behind; --version names the package."""

from __future__ import annotations

import importlib.metadata
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env["PLMAIL_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_restore_of_something_that_is_no_backup_is_refused_and_leaves_no_data_dir(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    garbage = tmp_path / "notes.txt"
    garbage.write_text("not an archive\n")
    refused = _cli(target, "restore", str(garbage))
    assert refused.returncode == 2 and "cannot be read as a plmail backup" in refused.stderr
    assert not target.exists()

    partial = tmp_path / "partial.plmail-backup"
    with tarfile.open(partial, "w") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    incomplete = _cli(target, "restore", str(partial))
    assert incomplete.returncode == 2 and "lacks database.dump, secret.key" in incomplete.stderr
    assert not target.exists()

    missing = _cli(target, "restore", str(tmp_path / "nowhere.plmail-backup"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_backup_without_a_key_writes_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    # The key is looked for before the database is reached, so this server need not exist.
    env.update(PLMAIL_DATA_DIR=str(data_dir), PLMAIL_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    made = subprocess.run([sys.executable, "-m", "plmail.cli", "backup", str(tmp_path / "b.plmail-backup")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 2 and "secret.key is missing" in made.stderr
    assert not (tmp_path / "b.plmail-backup").exists()


def test_version_is_the_installed_packages() -> None:
    shown = subprocess.run([sys.executable, "-m", "plmail.cli", "--version"], capture_output=True, text=True,
                           timeout=30)
    assert shown.returncode == 0 and shown.stdout.strip() == f"plmail {importlib.metadata.version('plmail')}"
