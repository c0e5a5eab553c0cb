"""A private Dovecot for the IMAP tests: its own directory, free loopback ports, our own process group.

Two variants share this code: a plain one (`ssl = no`) and a TLS one whose self-signed CA is made here
with `cryptography`, offering STARTTLS on `port` and implicit TLS on `tls_port`.

Fixtures (import them into a test package's conftest.py; tests/conftest.py stays provider-free):
  dovecot, dovecot_tls    session-scoped servers
  dovecot_user            a fresh user on `dovecot` per test (empty mailbox, special-use folders)
  dovecot_tls_user        the same on `dovecot_tls`
  imap_client             a logged-in plmail ImapClient for `dovecot_user`, closed after the test
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import imaplib
import ipaddress
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from plmail.domain.account_services import TlsMode
from plmail.providers.imap import ImapClient, ImapServer
from tests.support.net import free_port

DOVECOT_BIN = Path(os.environ.get("PLMAIL_TEST_DOVECOT", "/usr/sbin/dovecot"))
HOST = "127.0.0.1"
PASSWORD = "secret"

# Declared in the namespace because Dovecot keeps a special-use flag only from its config (a CREATE with
# USE is accepted but not remembered without an attribute dict). `auto = subscribe` makes them exist for
# every user; "All Mail" and "Flagged" are declared but created only when a test asks.
SPECIAL_FOLDERS: dict[str, tuple[str, bool]] = {
    "Drafts": ("\\Drafts", True),
    "Sent": ("\\Sent", True),
    "Trash": ("\\Trash", True),
    "Junk": ("\\Junk", True),
    "Archive": ("\\Archive", True),
    "All Mail": ("\\All", False),
    "Flagged": ("\\Flagged", False),
}

_MAILDIR_FLAGS = {"\\Draft": "D", "\\Flagged": "F", "\\Answered": "R", "\\Seen": "S", "\\Deleted": "T"}


@dataclass(frozen=True)
class DovecotUser:
    name: str
    password: str
    server: DovecotServer

    @property
    def home(self) -> Path:
        return self.server.mail_root / self.name

    def imap(self, tls: TlsMode = TlsMode.NONE, **overrides: Any) -> ImapServer:
        """Connection settings for plmail's client; `overrides` go to ImapServer (timeouts, knobs)."""
        return self.server.imap(tls, **overrides)

    def peer(self) -> DovecotPeer:
        """A second, independent connection (stdlib imaplib) for seeding and assertions."""
        return DovecotPeer(self.server, self.name, self.password)

    def deliver(
        self, messages: Iterable[bytes], folder: str = "INBOX", flags: Iterable[str] = (),
        internaldate: dt.datetime | None = None,
    ) -> int:
        """Write messages as Maildir files (thousands per second); they get UIDs in the given order on the
        next access. Call before the mailbox is selected by anyone, or follow with a NOOP. Returns the count."""
        return self.server.deliver(self, messages, folder, flags, internaldate)

    def append(
        self, messages: Iterable[bytes], folder: str = "INBOX", flags: Sequence[str] = (),
        when: dt.datetime | None = None,
    ) -> list[int]:
        """Seed through IMAP APPEND on one peer connection (about 500 a second); returns the new UIDs."""
        with self.peer() as peer:
            return [peer.append(raw, folder, flags, when) for raw in messages]

    def create_folder(self, name: str) -> None:
        """Create a folder; names in SPECIAL_FOLDERS get their special-use flag from the config."""
        with self.peer() as peer:
            peer.create(name)


class DovecotServer:
    """One private Dovecot. `start()` returns in well under a second; `stop()` ends only our process group."""

    _counter = itertools.count(1)

    def __init__(self, base: Path, *, tls: bool = False) -> None:
        self.base = base
        self.tls = tls
        self.host = HOST
        self.port = free_port()
        self.tls_port: int | None = free_port() if tls else None
        self.ca_file: Path | None = None
        self.mail_root = base / "mail"
        self.passwd_dir = base / "passwd.d"
        self.proc: subprocess.Popen[bytes] | None = None
        self._epoch = int(time.time())
        self._files = itertools.count(1)
        # Mail processes may not run as root; as root the users' files belong to nobody.
        self.mail_uid, self.mail_gid = (65534, 65534) if os.geteuid() == 0 else (os.getuid(), os.getgid())

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> DovecotServer:
        for sub in ("run", "state", "mail", "passwd.d"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o755)  # the mail user must pass through to its home
        os.chmod(self.mail_root, 0o755)
        if self.tls:
            self.ca_file = make_tls_files(self.base / "tls")
        (self.base / "dovecot.conf").write_text(self._config())
        log = open(self.base / "stdout.log", "ab")  # noqa: SIM115 (inherited by the child)
        # -F keeps the master in the foreground so its PID is ours; a new session makes its group ours alone.
        self.proc = subprocess.Popen(
            [str(DOVECOT_BIN), "-F", "-c", str(self.base / "dovecot.conf")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 10
        ports = [p for p in (self.port, self.tls_port) if p]
        while ports:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dovecot exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"dovecot did not listen within 10 s:\n{self.log()}")
            try:
                socket.create_connection((self.host, ports[0]), timeout=0.2).close()
                ports.pop(0)
            except OSError:
                time.sleep(0.005)
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        pgid = proc.pid  # session leader: its process group id is its pid, and only Dovecot's children are in it
        try:
            os.killpg(pgid, signal.SIGTERM)
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                # still up (a daemonized master takes seconds to free the port): the whole group is ours to kill
                os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)

    def log(self) -> str:
        parts = []
        for name in ("dovecot.log", "stdout.log"):
            path = self.base / name
            if path.exists():
                parts.append(path.read_text(errors="replace")[-4000:])
        return "\n".join(parts)

    # -- users and mail ------------------------------------------------------------------------------

    def add_user(self, name: str | None = None, password: str = PASSWORD) -> DovecotUser:
        """A new user, usable at once: each user has its own passwd-file (the path is templated on the
        user), so Dovecot reads it fresh instead of re-checking one shared file at most once a second."""
        name = name or f"u{next(self._counter)}x{os.getpid()}"
        home = self.mail_root / name
        home.mkdir()
        os.chown(home, self.mail_uid, self.mail_gid)
        line = f"{name}:{{PLAIN}}{password}:{self.mail_uid}:{self.mail_gid}::{home}::\n"
        (self.passwd_dir / name).write_text(line)
        return DovecotUser(name, password, self)

    def imap(self, tls: TlsMode = TlsMode.NONE, **overrides: Any) -> ImapServer:
        if tls is TlsMode.IMPLICIT:
            assert self.tls_port is not None, "implicit TLS needs the dovecot_tls server"
            port = self.tls_port
        else:
            port = self.port
        return dataclasses.replace(ImapServer(self.host, port, tls, self.ca_file), **overrides)

    def deliver(
        self, user: DovecotUser, messages: Iterable[bytes], folder: str, flags: Iterable[str],
        internaldate: dt.datetime | None,
    ) -> int:
        maildir = self._maildir(user, folder)
        info = "".join(sorted(_MAILDIR_FLAGS[f] for f in flags))
        stamp = (internaldate or dt.datetime.now(dt.UTC)).timestamp()
        # Dovecot sorts new files by the time and then the rest of the name before giving UIDs, so one fixed
        # second and a zero-padded counter (never reset: names must stay unique) keep our order.
        count = 0
        for raw in messages:
            count += 1
            # S= and W= (the size with CRLF line ends, IMAP's RFC822.SIZE) as Dovecot's own delivery names files,
            # so the server knows sizes without reading every file, as it does for mail it delivered itself
            virtual = len(raw) + raw.count(b"\n") - raw.count(b"\r\n")
            name = (f"{self._epoch}.M{next(self._files):09d}P{os.getpid()}.plmail-test,S={len(raw)},W={virtual}"
                    f":2,{info}")
            path = maildir / "cur" / name
            path.write_bytes(raw)
            os.utime(path, (stamp, stamp))  # Maildir's INTERNALDATE is the file's mtime
            os.chown(path, self.mail_uid, self.mail_gid)
        return count

    def _maildir(self, user: DovecotUser, folder: str) -> Path:
        root = user.home / "Maildir"
        # Maildir++ on disk: INBOX is the root, "a/b" is ".a.b".
        path = root if folder.upper() == "INBOX" else root / ("." + folder.replace("/", "."))
        for p in (root, path, path / "cur", path / "new", path / "tmp"):
            if not p.exists():
                p.mkdir()
                os.chown(p, self.mail_uid, self.mail_gid)
        if path != root and not (path / "maildirfolder").exists():
            (path / "maildirfolder").touch()
            os.chown(path / "maildirfolder", self.mail_uid, self.mail_gid)
        return path

    def kick(self, user: str) -> None:
        """Disconnect every session of `user`, from the server side."""
        subprocess.run(
            ["doveadm", "-c", str(self.base / "dovecot.conf"), "kick", user],
            check=True, capture_output=True, timeout=10,
        )

    # -- config --------------------------------------------------------------------------------------

    def _config(self) -> str:
        b = self.base
        rootless = ""
        if os.geteuid() != 0:
            import grp
            import pwd

            me = pwd.getpwuid(os.getuid()).pw_name
            group = grp.getgrgid(os.getgid()).gr_name
            rootless = f"default_internal_user = {me}\ndefault_internal_group = {group}\ndefault_login_user = {me}\n"
        if self.tls:
            assert self.tls_port is not None
            ssl = (
                "ssl = yes\n"
                f"ssl_cert = <{b}/tls/server.crt\n"
                f"ssl_key = <{b}/tls/server.key\n"
                "ssl_min_protocol = TLSv1.2\n"
                # a real server's stance: no password before TLS
                "disable_plaintext_auth = yes\n"
            )
            imaps = (
                f"  inet_listener imaps {{\n    address = {self.host}\n    port = {self.tls_port}\n"
                "    ssl = yes\n  }\n"
            )
        else:
            ssl = "ssl = no\ndisable_plaintext_auth = no\n"
            imaps = "  inet_listener imaps {\n    port = 0\n  }\n"
        folders = "".join(
            f"  mailbox \"{name}\" {{\n    special_use = {flag}\n    auto = {'subscribe' if auto else 'no'}\n  }}\n"
            for name, (flag, auto) in SPECIAL_FOLDERS.items()
        )
        # Every block spans lines: Dovecot rejects `name { key = value }` on one line.
        return (
            f"base_dir = {b}/run\n"
            f"state_dir = {b}/state\n"
            f"instance_name = plmail-test-{self.port}\n"
            f"log_path = {b}/dovecot.log\n"
            f"{rootless}"
            "protocols = imap\n"
            f"listen = {self.host}\n"
            f"{ssl}"
            "auth_mechanisms = plain login\n"
            "auth_failure_delay = 0\n"  # else 2 s per wrong password; Dovecot still answers on a 0.5 s tick
            "first_valid_uid = 1\n"
            "mail_location = maildir:~/Maildir\n"
            "mail_fsync = never\n"
            "maildir_very_dirty_syncs = yes\n"
            "mail_max_userip_connections = 100\n"
            # mode 0 keeps the auth process out of anvil's penalty socket, which turns the per-IP penalty off:
            # each wrong password would otherwise delay every later sign-in from 127.0.0.1 by up to 15 s
            "service anvil {\n  chroot =\n  unix_listener anvil-auth-penalty {\n    mode = 0\n  }\n}\n"
            "service imap-login {\n  chroot =\n"
            f"  inet_listener imap {{\n    address = {self.host}\n    port = {self.port}\n  }}\n"
            f"{imaps}"
            "}\n"
            "passdb {\n  driver = passwd-file\n"
            f"  args = scheme=PLAIN {self.passwd_dir}/%u\n}}\n"
            "userdb {\n  driver = passwd-file\n"
            f"  args = {self.passwd_dir}/%u\n}}\n"
            "namespace inbox {\n  inbox = yes\n  separator = /\n"
            f"{folders}"
            "}\n"
        )


class DovecotPeer:
    """Another client, deliberately not plmail's: stdlib imaplib, synchronous, direct to Dovecot."""

    def __init__(self, server: DovecotServer, user: str, password: str) -> None:
        if server.tls:
            import ssl

            context = ssl.create_default_context(cafile=str(server.ca_file))
            assert server.tls_port is not None
            self.conn: imaplib.IMAP4 = imaplib.IMAP4_SSL(server.host, server.tls_port, ssl_context=context)
        else:
            self.conn = imaplib.IMAP4(server.host, server.port)
        self.conn.login(user, password)

    def __enter__(self) -> DovecotPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            self.conn.logout()

    def _ok(self, result: tuple[str, list[Any]]) -> list[Any]:
        typ, data = result
        assert typ == "OK", data
        return data

    def create(self, name: str) -> None:
        self._ok(self.conn.create(_q(name)))

    def append(
        self, raw: bytes, folder: str = "INBOX", flags: Sequence[str] = (), when: dt.datetime | None = None
    ) -> int:
        """APPEND; returns the new UID from APPENDUID."""
        date = imaplib.Time2Internaldate(when) if when else None
        data = self._ok(self.conn.append(_q(folder), f"({' '.join(flags)})" if flags else None, date, raw))
        text = data[-1].decode() if isinstance(data[-1], bytes) else str(data[-1])
        return int(text.split("]")[0].split()[-1])

    def select(self, folder: str = "INBOX", readonly: bool = False) -> int:
        return int(self._ok(self.conn.select(_q(folder), readonly))[0])

    def uids(self, folder: str = "INBOX") -> list[int]:
        self.select(folder, readonly=True)
        data = self._ok(self.conn.uid("SEARCH", "ALL"))
        return [int(u) for u in data[0].split()]

    def flags(self, uid: int, folder: str = "INBOX") -> set[str]:
        self.select(folder, readonly=True)
        data = self._ok(self.conn.uid("FETCH", str(uid), "(FLAGS)"))
        assert data and data[0] is not None, f"no message with UID {uid} in {folder}"
        parsed = imaplib.ParseFlags(data[0])
        return {f.decode() for f in parsed}

    def store(self, uid: int, op: str, flags: str, folder: str = "INBOX") -> None:
        self.select(folder)
        self._ok(self.conn.uid("STORE", str(uid), op, flags))

    def raw(self, uid: int, folder: str = "INBOX") -> bytes:
        self.select(folder, readonly=True)
        data = self._ok(self.conn.uid("FETCH", str(uid), "(BODY.PEEK[])"))
        item = data[0]
        assert isinstance(item, tuple), data
        return bytes(item[1])

    def expunge(self, folder: str = "INBOX") -> None:
        """EXPUNGE: removes the messages marked \\Deleted."""
        self.select(folder)
        self._ok(self.conn.expunge())


def _q(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def make_tls_files(directory: Path) -> Path:
    """A CA and a server certificate for 127.0.0.1/localhost, signed by it; returns the CA file."""
    directory.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    # P-256 keys: generating RSA keys would cost more than starting Dovecot.
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "plmail test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False,
        ), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(HOST)),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (directory / "ca.crt").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    (directory / "server.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "server.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption(),
    ))
    os.chmod(directory / "server.key", 0o600)
    return directory / "ca.crt"


# -- fixtures --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def dovecot() -> Iterator[DovecotServer]:
    base = Path(tempfile.mkdtemp(prefix="plmail-test-dovecot-"))
    server = DovecotServer(base).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def dovecot_tls() -> Iterator[DovecotServer]:
    base = Path(tempfile.mkdtemp(prefix="plmail-test-dovecot-tls-"))
    server = DovecotServer(base, tls=True).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def dovecot_user(dovecot: DovecotServer) -> DovecotUser:
    return dovecot.add_user()


@pytest.fixture
def dovecot_tls_user(dovecot_tls: DovecotServer) -> DovecotUser:
    return dovecot_tls.add_user()


@pytest.fixture
async def imap_client(dovecot_user: DovecotUser) -> AsyncIterator[ImapClient]:
    client = ImapClient(dovecot_user.imap())
    await client.connect()
    try:
        await client.login(dovecot_user.name, dovecot_user.password)
        yield client
    finally:
        await client.close()
