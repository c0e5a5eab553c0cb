"""Where the suite's scratch files go: memory when the machine has room for them there."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

# Room the suite may take in memory: its PostgreSQL clusters (one per worker, WAL included), Dovecot's and Cyrus's
# mail, the data directories of the `plmail serve` processes it starts, and each test's tmp_path.
_ROOM_NEEDED = 4 << 30


def use_memory_for_scratch(shm: Path = Path("/dev/shm")) -> Path | None:
    """Point TMPDIR (this process's and its children's) at a tmpfs folder, unless TMPDIR is set or there is no room.

    Why: on this machine's disk a copy of the migrated template database cost 0.25 s of CPU (the file system's
    journal, not PostgreSQL), and every test that opens a database makes one; in memory it cost 0.02 s."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        if not os.access(shm, os.W_OK) or shutil.disk_usage(shm).free < _ROOM_NEEDED:
            return None
        folder = shm / f"plmail-tests-{os.getuid()}"
        folder.mkdir(mode=0o755, exist_ok=True)
    except OSError:
        return None
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = str(folder)
    return folder
