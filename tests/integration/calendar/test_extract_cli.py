"""`plmail extract FILE... --json`: the extractors over files, in a process of its own, without a database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.calendar.conftest import INVITATIONS
from tests.integration.calendar.test_step_job_backfill import booking_mail

FIELDS = {"uid", "dedup_key", "title", "start", "end", "time_zone", "all_day", "status", "kind", "extractor",
          "confidence", "sequence", "location"}


def extract(tmp_path: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env["PLMAIL_DATA_DIR"] = str(tmp_path / "unused")  # no database is started or reached
    done = subprocess.run([sys.executable, "-m", "plmail.cli", "extract", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, lines, done.stdout


def test_corpus_invitations_print_the_documented_json(tmp_path: Path) -> None:
    names = ["single-event.eml", "cancel-repeat-event.eml", "meet-meeting-invite.eml", "outlook-test-invite.eml"]
    code, shown, _ = extract(tmp_path, "--json", *(str(INVITATIONS / name) for name in names))
    assert code == 0
    assert [item["file"] for item in shown] == [str(INVITATIONS / name) for name in names]
    for item in shown:
        assert set(item) == {"file", "events", "proposals"} and item["proposals"] == []
        assert all(set(event) == FIELDS for event in item["events"])
    single, cancel, meet, outlook = (item["events"] for item in shown)
    assert single == [{
        "uid": "02e79b96", "dedup_key": "ics:02e79b96", "title": "Single Event", "start": "2022-03-16T11:00:00Z",
        "end": "2022-03-16T11:30:00Z", "time_zone": None, "all_day": False, "status": "confirmed",
        "kind": "meeting", "extractor": "ics", "confidence": 100, "sequence": 0, "location": "Somewhere",
    }]
    assert (cancel[0]["status"], cancel[0]["start"], cancel[0]["sequence"]) == ("cancelled", None, 1)
    assert meet[0]["uid"] == "65m17hsdolmotv3kvmrtg40ont@google.com" and meet[0]["start"] == "2021-03-22T09:30:00Z"
    assert outlook[0]["time_zone"] in {"Europe/Kiev", "Europe/Kyiv"} and outlook[0]["start"] == "2021-11-27T07:00:00Z"


def test_bookings_floating_and_all_day_times_and_unreadable_files(tmp_path: Path) -> None:
    booking = tmp_path / "booking.eml"
    booking.write_bytes(booking_mail())
    floating = tmp_path / "floating.ics"
    floating.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:float@x\r\nDTSTART:20260705T090000\r\n"
                        "SUMMARY:Local breakfast\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:day@x\r\n"
                        "DTSTART;VALUE=DATE:20260706\r\nSUMMARY:Holiday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    code, shown, _ = extract(tmp_path, "--json", "--tz", "Europe/Berlin", "--me", "eva@example.org", "--lang", "de",
                             str(booking), str(floating), str(tmp_path / "missing.eml"))
    assert code == 1  # one file could not be read; the others were
    flight, ics, missing = shown
    assert [(e["extractor"], e["kind"], e["title"], e["start"], e["end"], e["time_zone"], e["confidence"])
            for e in flight["events"]] == [("structured_data", "flight", "Flight UA110 SFO → JFK",
                                            "2026-04-21T04:15:00Z", "2026-04-21T09:30:00Z", None, 90)]
    assert flight["events"][0]["dedup_key"].startswith("jsonld:")
    # Floating 09:00 read in Berlin in summer is 07:00 UTC; an all-day event gives its dates.
    assert [(e["uid"], e["start"], e["end"], e["all_day"]) for e in ics["events"]] == [
        ("float@x", "2026-07-05T07:00:00Z", "2026-07-05T08:00:00Z", False),
        ("day@x", "2026-07-06", "2026-07-07", True)]
    assert missing["events"] == [] and "No such file" in missing["error"]


def test_without_json_it_prints_lines_for_people(tmp_path: Path) -> None:
    code, shown, stdout = extract(tmp_path, str(INVITATIONS / "update-major.eml"))
    assert code == 0 and shown == []
    assert "1 event(s)" in stdout and "2022-03-16T05:00:00Z" in stdout and "seq 2" in stdout
