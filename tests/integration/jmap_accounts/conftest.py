"""A real JMAP upstream for the JMAP-account provider: a second plmail (`plmail serve` on its own database), with
a user, an app password and mail put in by the services its command line uses (`user add`, `app-password create`,
`import-mbox`, `account add-imap`; tests/support/upstream_setup.py), read and changed through its JMAP API as any
client would."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plmail.config import Settings
from tests.support.dovecot import DovecotUser
from tests.support.jmap_peer import JmapPeer
from tests.support.mail import make_message
from tests.support.pg import PgTestCluster
from tests.support.serve import ServeProcess
from tests.support.smtp import SmtpServer

_ROOT = Path(__file__).resolve().parents[3]  # where `tests` is imported from, for the set-up process


@dataclass
class UpstreamServer:
    serve: ServeProcess
    env: dict[str, str]
    data_dir: Path

    def cli(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=self.env, input=stdin,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def set_up(self, request: dict[str, Any]) -> dict[str, Any]:
        """`tests.support.upstream_setup`: the command line's set-up steps in one process."""
        done = subprocess.run([sys.executable, "-m", "tests.support.upstream_setup"], env=self.env, cwd=_ROOT,
                              input=json.dumps(request), capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return answer


@dataclass
class UpstreamUser(JmapPeer):
    server: UpstreamServer
    email: str
    token: str

    @property
    def url(self) -> str:
        return self.server.serve.url

    @property
    def session_url(self) -> str:
        return f"{self.url}/jmap/session"

    @property
    def authorization(self) -> str:
        return f"Bearer {self.token}"


def write_mbox(path: Path, messages: Sequence[bytes]) -> Path:
    with path.open("wb") as out:
        for raw in messages:
            out.write(b"From sender@example.net Sat Jan  1 00:00:00 2026\n")
            for line in raw.replace(b"\r\n", b"\n").split(b"\n"):
                out.write((b">" + line if line.startswith(b"From ") else line) + b"\n")
            out.write(b"\n")
    return path


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The upstream listens on loopback, which a typed server address may reach only in tests."""
    return dataclasses.replace(settings, test_fetch_allow=(ipaddress.ip_network("127.0.0.0/8"),))


@pytest.fixture(scope="module")
def upstream_server(pg: PgTestCluster, migrated_template: str, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[UpstreamServer]:
    dsn = pg.create_database(f"jmap_upstream_{uuid.uuid4().hex[:10]}", template=migrated_template)
    data_dir = tmp_path_factory.mktemp("upstream") / "data"
    data_dir.mkdir(parents=True)
    serve = ServeProcess(data_dir, database_url=dsn).start()
    try:
        serve.wait_healthy()
        yield UpstreamServer(serve, dict(serve.env), data_dir)
    finally:
        serve.terminate()


def make_upstream_user(server: UpstreamServer, tmp_path: Path, *, inbox: int, projects: int) -> UpstreamUser:
    """A user of the upstream with `inbox` messages in its Inbox and `projects` under a label Projects, dated a
    minute apart (subjects "Inbox 0"…, "Projects 0"…, the highest number the newest)."""
    from datetime import UTC, datetime, timedelta

    email = f"up{uuid.uuid4().hex[:8]}@example.org"
    start = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    mboxes = []
    for label, count in (("Inbox", inbox), ("Projects", projects)):
        if count:
            mbox = write_mbox(tmp_path / f"{label}-{email}.mbox", [
                make_message(subject=f"{label} {i}", message_id=f"{label.lower()}-{i}-{email}",
                             sender="Carol <carol@example.net>", to=[email],
                             date=start + timedelta(minutes=i + (1000 if label == "Projects" else 0)))
                for i in range(count)])
            mboxes.append((label, str(mbox)))
    answer = server.set_up({"email": email, "create": True, "password": "correct horse battery",
                            "device": "downstream", "mboxes": mboxes})
    assert answer["imported"] == [count for _, count in (("Inbox", inbox), ("Projects", projects)) if count]
    token = answer["token"]
    return UpstreamUser(server, email, token)


def upstream_sends_through(server: UpstreamServer, up: UpstreamUser, mail: DovecotUser, smtp: SmtpServer) -> str:
    """The upstream sends through an IMAP account of its own, whose SMTP server is the suite's; its address. Added
    as `plmail account add-imap` adds it: its sign-in is tested first."""
    sender = f"{mail.name}@example.org"
    imap = mail.imap()
    server.set_up({"email": up.email, "imap": {
        "email": sender, "host": imap.host, "port": imap.port, "tls": "none", "username": mail.name,
        "password": mail.password, "ca_file": str(smtp.ca_file), "smtp_host": smtp.host, "smtp_port": smtp.port,
        "smtp_tls": "starttls", "smtp_username": smtp.username, "smtp_password": smtp.password}})
    return sender
