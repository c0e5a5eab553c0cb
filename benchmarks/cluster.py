"""A private, throwaway PostgreSQL cluster for a benchmark run, with plmail's embedded settings."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plmail.config import Settings
from plmail.db.embedded import EmbeddedPostgres, find_pg_binaries, resolve_run_as


@dataclass(frozen=True)
class Cluster:
    base: Path  # scratch space that is removed with the cluster
    dsn: str
    settings: Settings


@contextmanager
def private_cluster(name: str, extra_settings: Mapping[str, str] | None = None) -> Iterator[Cluster]:
    base = Path(tempfile.mkdtemp(prefix=f"plmail-bench-{name}-"))
    os.chmod(base, 0o755)  # the cluster may run as a dedicated user when we are root
    kwargs = {"extra_settings": dict(extra_settings)} if extra_settings else {}
    pg = EmbeddedPostgres(base / "data", find_pg_binaries(), resolve_run_as(None), **kwargs)
    try:
        dsn = pg.start()
        yield Cluster(base, dsn, Settings.from_env({"PLMAIL_DATA_DIR": str(base / "data"),
                                                    "PLMAIL_DATABASE_URL": dsn}))
    finally:
        pg.stop()
        shutil.rmtree(base, ignore_errors=True)
