"""A private, throwaway PostgreSQL cluster for a benchmark run, with plmail's embedded settings."""

from __future__ import annotations

import os
import shutil
import subprocess
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
def private_cluster(name: str, extra_settings: Mapping[str, str] | None = None, *, seed: Path | None = None,
                    keep: Path | None = None) -> Iterator[Cluster]:
    """A cluster in a scratch directory: started from a copy of `seed`'s data directory if given, and its data
    directory moved to `keep` when it stops (a long fill is kept for more than one measurement)."""
    base = Path(tempfile.mkdtemp(prefix=f"plmail-bench-{name}-"))
    os.chmod(base, 0o755)  # the cluster may run as a dedicated user when we are root
    if seed is not None:
        # cp -a keeps the owner: the cluster may run as a dedicated user, and PostgreSQL refuses a foreign data dir.
        subprocess.run(["cp", "-a", str(seed), str(base / "data")], check=True)
    kwargs = {"extra_settings": dict(extra_settings)} if extra_settings else {}
    pg = EmbeddedPostgres(base / "data", find_pg_binaries(), resolve_run_as(None), **kwargs)
    try:
        dsn = pg.start()
        yield Cluster(base, dsn, Settings.from_env({"PLMAIL_DATA_DIR": str(base / "data"),
                                                    "PLMAIL_DATABASE_URL": dsn}))
    finally:
        pg.stop()
        if keep is not None:
            shutil.move(base / "data", keep)
        shutil.rmtree(base, ignore_errors=True)
