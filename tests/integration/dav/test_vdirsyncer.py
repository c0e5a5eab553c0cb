"""Two-way sync with vdirsyncer, a real CalDAV client run as its command line: discovery from the server's root,
the plmail calendar copied to a folder of .ics files, an event written in the folder uploaded into plmail, a change
made in plmail copied down, and a second run that has nothing to do (the ETags and the sync state agree)."""

from __future__ import annotations

import asyncio
import sys
from datetime import date
from pathlib import Path

from plmail.calendar.editor import EventForm
from plmail.services import Services
from tests.integration.dav.conftest import DavUser

VDIRSYNCER = str(Path(sys.executable).with_name("vdirsyncer"))
LAPTOP_EVENT = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Laptop//EN
BEGIN:VEVENT
UID:laptop-1@example.org
DTSTAMP:20261201T080000Z
DTSTART:20261214T130000Z
DTEND:20261214T140000Z
SUMMARY:From the laptop
END:VEVENT
END:VCALENDAR
"""


def _config(tmp_path: Path, base_url: str, who: DavUser) -> Path:
    config = tmp_path / "vdirsyncer.conf"
    config.write_text(f"""[general]
status_path = "{tmp_path}/status/"

[pair calendars]
a = "laptop"
b = "plmail"
collections = ["from b"]

[storage laptop]
type = "filesystem"
path = "{tmp_path}/calendars/"
fileext = ".ics"

[storage plmail]
type = "caldav"
url = "{base_url}/"
username = "{who.email}"
password = "{who.password}"
""", encoding="utf-8")
    return config


async def _run(config: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        VDIRSYNCER, "-c", str(config), *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(process.communicate(b"y\n" * 8), timeout=120)
    text = output.decode("utf-8", "replace")
    assert process.returncode == 0, text
    return text


async def test_two_way_sync_then_nothing_left_to_do(tmp_path: Path, base_url: str, owner: DavUser,
                                                    services: Services) -> None:
    made = await services.calendar.editor.create(owner.user.id, EventForm(
        title="Made in plmail", start=date(2026, 12, 11), end=date(2026, 12, 12), all_day=True),
        user_zone="Europe/Berlin")
    config = _config(tmp_path, base_url, owner)
    await _run(config, "discover")
    await _run(config, "sync")
    [folder] = [p for p in (tmp_path / "calendars").iterdir() if p.is_dir()]
    [copied] = list(folder.glob("*.ics"))
    assert "SUMMARY:Made in plmail" in copied.read_text(encoding="utf-8")

    (folder / "laptop-1.ics").write_text(LAPTOP_EVENT, encoding="utf-8")
    await services.calendar.editor.update(owner.user.id, made, EventForm(
        title="Made in plmail, renamed", start=date(2026, 12, 11), end=date(2026, 12, 12), all_day=True),
        user_zone="Europe/Berlin")
    await _run(config, "sync")

    uploaded = [e for e in await services.calendar.objects.events_of(owner.user.id, None, limit=10)
                if e.uid == "laptop-1@example.org"]
    assert [e.values.title for e in uploaded] == ["From the laptop"]
    assert "SUMMARY:Made in plmail\\, renamed" in copied.read_text(encoding="utf-8")

    second = await _run(config, "sync")
    assert "Copying" not in second and "Deleting" not in second, second
