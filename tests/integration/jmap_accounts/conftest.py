"""A real JMAP upstream for the JMAP-account provider: a second plmail (`plmail serve` on its own database), with
a user, an app password and mail put in by its own command line (`import-mbox`), read and changed through its
JMAP API as any client would."""

from __future__ import annotations

import dataclasses
import ipaddress
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from plmail.config import Settings
from tests.support.jmap_peer import JmapPeer
from tests.support.mail import make_message
from tests.support.pg import PgTestCluster
from tests.support.serve import ServeProcess


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
    server.cli("user", "add", email, "--password-stdin", stdin="correct horse battery\n")
    token = server.cli("app-password", "create", "--user", email, "--name", "downstream").strip().splitlines()[-1]
    start = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    for label, count in (("Inbox", inbox), ("Projects", projects)):
        if count:
            mbox = write_mbox(tmp_path / f"{label}-{email}.mbox", [
                make_message(subject=f"{label} {i}", message_id=f"{label.lower()}-{i}-{email}",
                             sender="Carol <carol@example.net>", to=[email],
                             date=start + timedelta(minutes=i + (1000 if label == "Projects" else 0)))
                for i in range(count)])
            server.cli("import-mbox", "--user", email, "--label", label, str(mbox))
    return UpstreamUser(server, email, token)
