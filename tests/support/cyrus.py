"""A private Cyrus IMAP as a second real JMAP upstream (RFC 8620/8621) for the JMAP-account provider: Debian's
build (`cyrus-imapd` + `cyrus-caldav`), in its own directory, with only `imap` and `http` on free loopback ports,
in our own process group.

Debian's 3.6.1 carries JMAP: `cyr_buildinfo` says `"jmap": true`, and its httpd serves the session, the API,
upload and download with `httpmodules: jmap`. It is built without wslay (`"wslay": false`), and Cyrus turns JMAP
push on only with WebSocket support, so its EventSource endpoint answers 204 No Content to every request (even
with `jmap_pushpoll` set): a Cyrus account is synced by the poll, never pushed.

Cyrus JMAP needs the conversations database (`conversations: yes`); CalDAV is not needed for mail. Users sign in
through SASL's sasldb at a path of our own (`sasl_pwcheck_method: auxprop`), with `virtdomains: userid` so a
user's login is its address and Identity/get offers that address to send as. EmailSubmission hands mail to the
suite's SMTP server (`smtp_backend: host`): Cyrus asks its EHLO for the session's submission capability and
sends through it, with STARTTLS checked against the suite's CA (`tls_server_ca_file`; the `/tls` suffix of
`smtp_host` would mean implicit TLS) and AUTH as its account (`smtp_auth_authname`). Cyrus logs only to syslog.

Fixtures (import them into a test package's conftest.py):
  cyrus        the session's server (skips cleanly, with the reason, where the Cyrus packages are missing)
  cyrus_user   a fresh user on it per test: INBOX and Archive, Drafts, Sent, Trash, Junk with special-use
"""

from __future__ import annotations

import base64
import imaplib
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.jmap_peer import JmapPeer
from tests.support.net import free_port
from tests.support.smtp import SmtpServer

CYRUS_BIN = Path(os.environ.get("PLMAIL_TEST_CYRUS_BIN", "/usr/lib/cyrus/bin"))
# Debian's cyrus-imapd conflicts with dovecot-imapd (both provide imap-server), which the suite needs too: tools/test
# installs cyrus-common and cyrus-caldav and unpacks cyrus-imapd's one binary here instead of installing the package.
UNPACKED_IMAPD = Path(__file__).resolve().parents[2] / ".cache/cyrus-imapd/usr/lib/cyrus/bin/imapd"
IMAPD = Path(os.environ.get("PLMAIL_TEST_CYRUS_IMAPD", "")) if os.environ.get("PLMAIL_TEST_CYRUS_IMAPD") else (
    CYRUS_BIN / "imapd" if (CYRUS_BIN / "imapd").exists() else UNPACKED_IMAPD)
SASLPASSWD = shutil.which("saslpasswd2") or "/usr/sbin/saslpasswd2"
HOST = "127.0.0.1"
DOMAIN = "example.org"
REALM = "plmail-test"  # the server's own name: the SASL realm of a login without a domain (the admin's)
ADMIN = "admin"
PASSWORD = "secret"
# Created by the user itself (CREATE ... USE, RFC 6154), so Cyrus stores them as that user's special-use.
SPECIAL_FOLDERS = {"Archive": "\\Archive", "Drafts": "\\Drafts", "Sent": "\\Sent", "Trash": "\\Trash",
                   "Junk": "\\Junk"}


def missing() -> str | None:
    """Why Cyrus cannot be started here, or None."""
    needed = [CYRUS_BIN / "master", IMAPD, CYRUS_BIN / "httpd", Path(SASLPASSWD)]
    absent = [str(p) for p in needed if not p.exists()]
    if absent:
        return (f"Cyrus IMAP is not installed ({', '.join(absent)} missing): apt-get install cyrus-common "
                "cyrus-caldav sasl2-bin, and cyrus-imapd's imapd unpacked into .cache (tools/test does both)")
    return None


@dataclass
class CyrusUser(JmapPeer):
    """A Cyrus user, seen through JMAP with HTTP Basic (the app password of a JMAP account)."""

    name: str
    password: str
    server: CyrusServer

    @property
    def email(self) -> str:
        return self.name

    @property
    def url(self) -> str:
        """What a person types as the server: its bare address (the session is found by /.well-known/jmap)."""
        return self.server.url

    @property
    def session_url(self) -> str:
        return f"{self.server.url}/jmap/"

    @property
    def authorization(self) -> str:
        return "Basic " + base64.b64encode(f"{self.name}:{self.password}".encode()).decode("ascii")

    def imap(self) -> imaplib.IMAP4:
        conn = imaplib.IMAP4(self.server.host, self.server.imap_port)
        conn.login(self.name, self.password)
        return conn


class CyrusServer:
    """One private Cyrus. `start()` returns once both ports listen; `stop()` ends only our process group."""

    _counter = itertools.count(1)

    def __init__(self, base: Path, smtp: SmtpServer | None = None) -> None:
        self.base = base
        self.smtp = smtp
        self.host = HOST
        self.imap_port = free_port()
        self.http_port = free_port()
        self.config = base / "imapd.conf"
        self.sasldb = base / "sasldb2"
        self.proc: subprocess.Popen[bytes] | None = None
        # Cyrus's processes leave root for the `cyrus` user Debian's package made; without root they run as us.
        if os.geteuid() == 0:
            entry = pwd.getpwnam("cyrus")
            self.user, self.uid, self.gid = entry.pw_name, entry.pw_uid, entry.pw_gid
        else:
            self.user, self.uid, self.gid = pwd.getpwuid(os.getuid()).pw_name, os.getuid(), os.getgid()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> CyrusServer:
        # what Cyrus's mkimap makes: the database and socket-lock directories under the config directory
        for sub in ("conf/db", "conf/socket", "spool", "sieve", "run/proc", "run/lock", "run/socket"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        if self.smtp is not None:  # Cyrus's own user must read it; the SMTP server's directory is private
            shutil.copyfile(self.smtp.ca_file, self.base / "smtp-ca.crt")
        self.config.write_text(self._imapd_conf())
        (self.base / "cyrus.conf").write_text(self._cyrus_conf())
        self._saslpasswd(ADMIN, REALM, PASSWORD)
        self._own(self.base)
        log = open(self.base / "master.log", "ab")  # noqa: SIM115 (inherited by the child)
        # The master stays in the foreground without -d, so its PID is ours; a new session makes its group ours.
        self.proc = subprocess.Popen(
            [str(CYRUS_BIN / "master"), "-C", str(self.config), "-M", str(self.base / "cyrus.conf"),
             "-p", str(self.base / "run" / "master.pid")],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 20
        ports = [self.imap_port, self.http_port]
        while ports:
            if self.proc.poll() is not None:
                raise RuntimeError(f"cyrus master exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"cyrus did not listen within 20 s:\n{self.log()}")
            try:
                socket.create_connection((self.host, ports[0]), timeout=0.2).close()
                ports.pop(0)
            except OSError:
                time.sleep(0.01)
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        pgid = proc.pid  # session leader: its group holds only the master and the services it forked
        try:
            os.killpg(pgid, signal.SIGTERM)  # the master ends its children and waits for them on SIGTERM
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)

    def log(self) -> str:
        """Cyrus logs to syslog, which a container rarely has; the master's own output is what is left."""
        path = self.base / "master.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    # -- users ---------------------------------------------------------------------------------------

    def add_user(self, local: str | None = None, password: str = PASSWORD) -> CyrusUser:
        """A new user, usable at once: its SASL secret, its INBOX made by the admin, its special folders made by
        itself."""
        local = local or f"c{next(self._counter)}x{os.getpid()}"
        name = f"{local}@{DOMAIN}"
        self._saslpasswd(local, DOMAIN, password)
        admin = imaplib.IMAP4(self.host, self.imap_port)
        try:
            admin.login(ADMIN, PASSWORD)
            _ok(admin.create(f"user/{name}"))
        finally:
            admin.logout()
        user = CyrusUser(name, password, self)
        conn = user.imap()
        try:
            for folder, use in SPECIAL_FOLDERS.items():
                _ok(conn._simple_command("CREATE", folder, f"(USE ({use}))"))
        finally:
            conn.logout()
        return user

    def _saslpasswd(self, user: str, realm: str, password: str) -> None:
        subprocess.run([SASLPASSWD, "-f", str(self.sasldb), "-u", realm, "-p", "-c", user], input=password.encode(),
                       check=True, capture_output=True, timeout=10)
        self._own(self.sasldb)

    def _own(self, path: Path) -> None:
        if os.geteuid() != 0:
            return
        os.chown(path, self.uid, self.gid)
        for root, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                os.chown(os.path.join(root, name), self.uid, self.gid)

    # -- config --------------------------------------------------------------------------------------

    def _imapd_conf(self) -> str:
        b = self.base
        lines = {
            "cyrus_user": self.user,
            "servername": REALM,
            "configdirectory": f"{b}/conf",
            "defaultpartition": "default",
            "partition-default": f"{b}/spool",
            "sievedir": f"{b}/sieve",
            "proc_path": f"{b}/run/proc",
            "mboxname_lockpath": f"{b}/run/lock",
            "lmtpsocket": f"{b}/run/socket/lmtp",
            "idlesocket": f"{b}/run/socket/idle",
            "notifysocket": f"{b}/run/socket/notify",
            "syslog_prefix": f"plmail-test-cyrus-{self.http_port}",
            "admins": ADMIN,
            "virtdomains": "userid",
            "defaultdomain": REALM,
            "altnamespace": "yes",
            "unixhierarchysep": "yes",
            "allowplaintext": "yes",
            "sasl_pwcheck_method": "auxprop",
            "sasl_auxprop_plugin": "sasldb",
            "sasl_sasldb_path": str(self.sasldb),
            "sasl_mech_list": "PLAIN LOGIN",
            # JMAP: the module, and the per-user conversations database its threads and states come from
            "httpmodules": "jmap",
            "conversations": "yes",
            "conversations_db": "twoskip",
            "jmap_preview_annot": "/shared/vendor/messagingengine.com/preview",
        }
        if self.smtp is not None:
            # EmailSubmission: the suite's submission server, STARTTLS ("/tls") checked against its CA, and AUTH
            lines |= {
                "smtp_backend": "host",
                "smtp_host": f"{self.smtp.host}:{self.smtp.port}",
                "smtp_auth_authname": self.smtp.username,
                "smtp_auth_password": self.smtp.password,
                "tls_server_ca_file": str(self.base / "smtp-ca.crt"),
            }
        return "".join(f"{key}: {value}\n" for key, value in lines.items())

    def _cyrus_conf(self) -> str:
        conf = f"-C {self.config}"
        bin_ = CYRUS_BIN
        # Each service is told the config file: the master does not hand its own -C on to them.
        return (
            "START {\n"
            f'  recover cmd="{bin_}/ctl_cyrusdb {conf} -r"\n'
            "}\n"
            "SERVICES {\n"
            f'  imap cmd="{IMAPD} {conf}" listen="{self.host}:{self.imap_port}" prefork=0\n'
            f'  http cmd="{bin_}/httpd {conf}" listen="{self.host}:{self.http_port}" prefork=0\n'
            "}\n"
            "EVENTS {\n"
            "}\n"
        )


def _ok(result: tuple[str, list[object]]) -> None:
    typ, data = result
    assert typ == "OK", data


# -- fixtures --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def cyrus(smtp_server: SmtpServer) -> Iterator[CyrusServer]:
    reason = missing()
    if reason:
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="plmail-test-cyrus-"))
    os.chmod(base, 0o755)  # the cyrus user must pass through
    server = CyrusServer(base, smtp_server).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def cyrus_user(cyrus: CyrusServer) -> CyrusUser:
    return cyrus.add_user()
