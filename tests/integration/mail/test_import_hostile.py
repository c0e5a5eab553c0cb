"""One crafted message costs only itself: `plmail import-mbox` of an archive holding a 5,000-deep multipart, a huge
header line, 20,000 attachments and binary garbage between good messages stores every good message, stores each
hostile one with a note of what was not read, exits 0 and says what it did (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from plmail.services import Services
from tests.support.hostile import deep_multipart, garbage, good, long_header_line, many_attachments, write_mbox

MB = 1024 * 1024


def _cli(tmp_path: Path, database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(tmp_path / "data")})
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300)


async def test_a_hostile_archive_stores_every_good_message_and_notes_what_it_cut(
        tmp_path: Path, database_url: str, services: Services) -> None:
    await services.users.create_user("me@example.org", "correct horse")
    entries = [good(0), good(1), deep_multipart(5_000), good(2), long_header_line(3 * MB), good(3),
               many_attachments(20_000), good(4), garbage(4096, seed=7), good(5)]
    archive = tmp_path / "hostile.mbox"
    write_mbox(archive, entries, between={1: garbage(2048, seed=1), 5: b"\x00\xff" * 500})

    first = _cli(tmp_path, database_url, "import-mbox", str(archive), "--user", "me@example.org")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported 10, duplicates 0, skipped 0"), first.stdout
    assert "3 stored with a note" in first.stdout

    rows = await services.db.fetch("SELECT rfc_message_id, parse_note, subject FROM message")
    ids = [r["rfc_message_id"] for r in rows]
    assert {f"good{n}@x" for n in range(6)} <= set(ids)
    assert len(ids) == len(set(ids)) == 10  # each once (the garbage entry has no Message-ID)
    notes = {r["rfc_message_id"]: r["parse_note"] for r in rows if r["parse_note"]}
    assert set(notes) == {"deep@x", "long@x", "parts@x"}
    assert "deeper than 100 levels" in notes["deep@x"] and "64 KB" in notes["long@x"] and "10,000" in notes["parts@x"]
    parts = await services.db.fetchval(
        "SELECT count(*) FROM message_part p JOIN message m ON m.id = p.message_id WHERE m.rfc_message_id = 'parts@x'")
    assert parts == 10_000 - 1  # the text body, then attachments up to the 10,000th part
    assert await services.db.fetchval("SELECT count(*) FROM message") == 10

    again = _cli(tmp_path, database_url, "import-mbox", str(archive), "--user", "me@example.org")
    assert again.returncode == 0 and again.stdout.startswith("imported 0, duplicates 10, skipped 0"), again.stdout
