"""`plmail backup` and `plmail restore` with PLMAIL_DATABASE_URL: the server's own pg_dump (here the system's
PostgreSQL of the suite's cluster), restore only into an empty database, and the key with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

import asyncpg

from plmail.config import Settings
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.pg import PgTestCluster


def _cli(database_url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update(PLMAIL_DATABASE_URL=database_url, PLMAIL_DATA_DIR=str(data_dir))
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


async def _counts(dsn: str) -> dict[str, int]:
    conn = await asyncpg.connect(dsn)
    try:
        return {name: int(await conn.fetchval(f"SELECT count(*) FROM {table}")) for name, table in (
            ("users", "app_user"), ("accounts", "account"), ("messages", "message"), ("threads", "message_thread"),
            ("labels", "label"), ("events", "calendar_event"))}
    finally:
        await conn.close()


async def test_external_database_backup_restores_into_an_empty_database_only(
    services: Services, settings: Settings, database_url: str, pg: PgTestCluster, tmp_path: Path,
) -> None:
    user = await services.users.create_user("far@example.org", "correct horse")
    mbox = tmp_path / "archive.mbox"
    mbox.write_bytes(b"".join(
        b"From a@example.org Mon Jan  1 00:00:00 2024\n" + make_message(subject=f"Note {n}",
                                                                         message_id=f"n{n}@example.org") + b"\n"
        for n in range(5)))
    await services.archive_importer.import_path(user, mbox, account_name=None, label_name=None)
    server_major = int(await services.db.fetchval("SHOW server_version_num")) // 10000

    archive = tmp_path / "external.plmail-backup"
    made = _cli(database_url, settings.data_dir, "backup", str(archive))
    assert made.returncode == 0, made.stderr
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert manifest["pg_dump_major"] == server_major and manifest["embedded"] is False
    assert manifest["counts"] == await _counts(database_url)
    assert manifest["counts"]["messages"] == 5

    name = f"restore_{uuid.uuid4().hex[:10]}"
    empty = pg.create_database(name)
    elsewhere = tmp_path / "elsewhere"
    try:
        restored = _cli(empty, elsewhere, "restore", str(archive))
        assert restored.returncode == 0, restored.stderr
        assert await _counts(empty) == manifest["counts"]
        assert (elsewhere / "secret.key").read_bytes() == settings.secret_key_path.read_bytes()
        # the VAPID key comes along: the push subscriptions in the database were made for it (issue 33)
        assert (elsewhere / "vapid.pem").read_bytes() == settings.vapid_key_path.read_bytes()
        again = _cli(empty, tmp_path / "third", "restore", str(archive))
        assert again.returncode == 2 and "not empty" in again.stderr
        assert await _counts(empty) == manifest["counts"]  # refused, and nothing was touched
    finally:
        pg.drop_database(name)
