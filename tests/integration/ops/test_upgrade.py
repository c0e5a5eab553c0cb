"""Upgrades keep data: a `plmail backup` archive made by an earlier release (tests/fixtures/upgrade/, made by its
make_fixture.py) restores into an empty database, takes every later migration, and keeps what it held: the user,
their IMAP account, mail, labels, events, drafts, a scheduled send, an app password and two-factor sign-in.
Every schema change must keep these archives restorable; a release that changes the schema adds its own archive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyotp
import pytest

from plmail.services import Services
from tests.support.pg import PgTestCluster
from tests.support.upgrade import COUNTS
from tests.support.web import csrf_token, sign_in

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "upgrade"
ARCHIVES = sorted(FIXTURES.glob("plmail-*.plmail-backup"))

def _cli(database_url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update(PLMAIL_DATABASE_URL=database_url, PLMAIL_DATA_DIR=str(data_dir))
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(params=ARCHIVES, ids=[a.name for a in ARCHIVES])
def archive(request: pytest.FixtureRequest) -> Path:
    return Path(request.param)


@pytest.fixture
def expected(archive: Path) -> dict[str, Any]:
    return dict(json.loads(archive.with_suffix(".json").read_text()))


@pytest.fixture
def database_url(pg: PgTestCluster, archive: Path, data_dir: Path) -> Iterator[str]:
    """Overrides the suite's migrated copy: an empty database, the old archive restored, then `plmail migrate`."""
    name = f"upgrade_{uuid.uuid4().hex[:10]}"
    dsn = pg.create_database(name)
    try:
        restored = _cli(dsn, data_dir, "restore", str(archive))
        assert restored.returncode == 0, restored.stderr
        migrated = _cli(dsn, data_dir, "migrate")
        assert migrated.returncode == 0, migrated.stderr
        yield dsn
    finally:
        pg.drop_database(name)


def test_there_is_an_archive_of_the_current_release_or_an_earlier_one() -> None:
    assert ARCHIVES, f"no upgrade fixture in {FIXTURES}"


async def test_an_old_archive_restores_migrates_and_keeps_every_count(
        services: Services, expected: dict[str, Any]) -> None:
    counts = {name: int(await services.db.fetchval(sql)) for name, sql in COUNTS.items()}
    assert counts == expected["counts"]
    applied = await services.db.fetchval("SELECT count(*) FROM migration WHERE app_name = 'plmail'")
    shipped = list((Path(__file__).resolve().parents[3] / "plmail/db/migrations").glob("plmail_*.py"))
    assert applied == len(shipped), "every migration of this release ran on the old archive"


async def test_the_restored_user_signs_in_with_password_and_code_and_the_app_password_opens_jmap(
        client: httpx.AsyncClient, expected: dict[str, Any]) -> None:
    asked = await sign_in(client, expected["email"], expected["password"])
    assert asked.url.path == "/login/code"  # two-factor sign-in survived the upgrade
    token = await csrf_token(client, "/login/code")
    done = await client.post("/login/code", data={"code": pyotp.TOTP(expected["totp_secret"]).now(),
                                                   "_csrf_token": token})
    assert done.url.path == "/"
    inbox = await client.get("/")
    assert inbox.status_code == 200 and "Quarterly note" in inbox.text

    session = await client.get("/.well-known/jmap", auth=(expected["email"], expected["app_password"]))
    assert session.status_code == 200
    assert "urn:ietf:params:jmap:mail" in session.json()["capabilities"]
