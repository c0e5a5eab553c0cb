"""Settings from the environment, read once into one frozen dataclass."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from plmail.domain.errors import ConfigurationError

DEFAULT_PORT = 8025


def default_data_dir(environ: Mapping[str, str]) -> Path:
    """Where plmail keeps its database, key and files when PLMAIL_DATA_DIR is unset.

    As root the home directory is usually 0700, which the unprivileged PostgreSQL user cannot
    traverse, so root gets the conventional service location instead of ~/.local/share.
    """
    if os.geteuid() == 0:
        return Path("/var/lib/plmail")
    xdg = environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path(environ.get("HOME", str(Path.home()))) / ".local" / "share"
    return base / "plmail"


def _int(environ: Mapping[str, str], key: str, default: int, low: int, high: int) -> int:
    raw = environ.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"{key} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigurationError(f"{key} must be between {low} and {high}, got {value}")
    return value


def _flag(environ: Mapping[str, str], key: str, default: bool) -> bool:
    raw = environ.get(key)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigurationError(f"{key} must be true or false, got {raw!r}")


def _flag_or_auto(environ: Mapping[str, str], key: str) -> bool | None:
    """True or false as `_flag` reads them; None for "auto" or unset."""
    raw = environ.get(key)
    if raw is None or raw.strip().lower() in ("", "auto"):
        return None
    try:
        return _flag(environ, key, False)
    except ConfigurationError:
        raise ConfigurationError(f"{key} must be auto, true or false, got {raw!r}") from None


def _choice(environ: Mapping[str, str], key: str, default: str, allowed: tuple[str, ...]) -> str:
    raw = (environ.get(key) or default).strip().lower()
    if raw not in allowed:
        raise ConfigurationError(f"{key} must be one of {', '.join(allowed)}, got {raw!r}")
    return raw


def _path_list(raw: str | None) -> tuple[str, ...] | None:
    """A ':'-separated list; set but empty still means 'look nowhere', unlike unset."""
    if raw is None:
        return None
    return tuple(part for part in raw.split(os.pathsep) if part)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _networks(key: str, raw: str | None) -> tuple[Network, ...]:
    """Addresses or CIDR ranges, separated by commas or spaces."""
    result: list[Network] = []
    for part in (raw or "").replace(",", " ").split():
        try:
            result.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ConfigurationError(f"{key} must list IP addresses or networks such as 127.0.0.1 or 10.0.0.0/8, "
                                     f"got {part!r}") from None
    return tuple(result)


def _servers(key: str, raw: str | None) -> tuple[tuple[str, int], ...]:
    """IP addresses with an optional port ("127.0.0.1:5353", "[::1]:53"), separated by commas or spaces."""
    result: list[tuple[str, int]] = []
    for part in (raw or "").replace(",", " ").split():
        host, port = part, "53"
        if part.startswith("["):
            host, _bracket, rest = part[1:].partition("]")
            port = rest.lstrip(":") or "53"
        elif part.count(":") == 1:
            host, port = part.split(":")
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ConfigurationError(f"{key} must list IP addresses such as 127.0.0.1:53, got {part!r}") from None
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigurationError(f"{key}: {part!r} has no valid port") from None
        result.append((host, int(port)))
    return tuple(result)


def _public_url(raw: str | None) -> str | None:
    """An absolute http(s) URL without a trailing slash; providers send their notifications below it."""
    if not raw or not raw.strip():
        return None
    value = raw.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigurationError(f"PLMAIL_PUBLIC_URL must be an address such as https://mail.example.org, "
                                 f"got {raw!r}")
    return value


def _topic(raw: str | None) -> str | None:
    """A Pub/Sub topic's full name, as users.watch wants it: projects/<project>/topics/<topic>."""
    if not raw or not raw.strip():
        return None
    value = raw.strip()
    parts = value.split("/")
    if len(parts) != 4 or parts[0] != "projects" or parts[2] != "topics" or not parts[1] or not parts[3]:
        raise ConfigurationError(f"PLMAIL_GMAIL_PUBSUB_TOPIC must look like projects/<project>/topics/<topic>, "
                                 f"got {raw!r}")
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path
    database_url: str | None
    pg_bin: Path | None
    pg_run_as: str | None
    host: str
    port: int
    secure_cookies: bool
    log_level: str
    shutdown_grace_seconds: int
    db_pool_max: int
    # OAuth apps from the environment (the admin page's entries win); base URLs point a provider's hosts
    # elsewhere (tests: the fakes)
    google_client_id: str | None = None
    google_client_secret: str | None = None
    microsoft_client_id: str | None = None
    microsoft_client_secret: str | None = None
    google_base_url: str | None = None
    microsoft_base_url: str | None = None
    # where the system's PostgreSQL binaries are looked for (None: pg_config, then /usr/lib/postgresql/*/bin)
    pg_system_dirs: tuple[str, ...] | None = None
    metrics_token: str | None = None
    log_format: str = "text"
    # Reverse proxies whose X-Forwarded-For/-Proto/-Host are believed; nobody's by default.
    trusted_proxies: tuple[Network, ...] = ()
    sends_per_hour: int = 200  # per user: a stolen session cannot turn the installation into a spam cannon
    # The automatic reply answers one sender at most once in this many days (RFC 3834 §2)
    vacation_reply_days: int = 7
    # KItinerary's kitinerary-extractor: a path, "off", or None to look where Debian installs it
    kitinerary: str | None = None
    # Where adding an account looks for the provider's servers (providers/imap/autoconfig.py): autoconfig URL
    # templates with {domain} (None: Thunderbird's two locations) and DNS servers for the SRV records (empty: the
    # system's). Tests point both at loopback servers.
    autoconfig_urls: tuple[str, ...] | None = None
    dns_servers: tuple[tuple[str, int], ...] = ()
    # TESTS ONLY: networks that fetches of addresses from mail or users (autoconfig, one-click unsubscribe) may
    # reach although they are not public; in production every such fetch goes to the public internet only.
    test_fetch_allow: tuple[Network, ...] = ()
    # Web Push to loopback endpoints: for the test suite's push service only, never in production (SSRF).
    push_allow_loopback: bool = False
    # The IMAP first import parses the page it reads ahead in a child process (mail/parse_worker.py): True always,
    # False never, None (the default) while the machine has a CPU to spare (parse_worker.spare_cpu). It costs ~20%
    # more CPU in all (pickling both ways) to take ~40% off the importing process: 10,000 real messages imported
    # in 14-16 s instead of 17-19 s on a quiet 2-core machine, 4-14% faster at load 6, ~20% slower at load 8-9.
    parse_process: bool | None = None
    # Where the internet reaches this plmail (https://mail.example.org): with it, Gmail and Microsoft accounts
    # are told of new mail by push (Gmail's users.watch through Pub/Sub, Graph's change notifications) instead
    # of waiting for the 15-minute poll. Gmail needs its Pub/Sub topic and the push subscription's service account
    # (and, if the subscription names another, the audience of its tokens); the keys Google signs with are read
    # from google_jwks_url (None: Google's own, or the fake's under google_base_url).
    public_url: str | None = None
    gmail_pubsub_topic: str | None = None
    gmail_push_service_account: str | None = None
    gmail_push_audience: str | None = None
    google_jwks_url: str | None = None

    @property
    def embedded_database(self) -> bool:
        return self.database_url is None

    @property
    def secret_key_path(self) -> Path:
        return self.data_dir / "secret.key"

    @property
    def vapid_key_path(self) -> Path:
        return self.data_dir / "vapid.pem"

    @property
    def blob_dir(self) -> Path:
        """Where earlier versions kept blob files: still read, and moved into the database by a housekeeping job."""
        return self.data_dir / "blobs"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        data_dir = Path(env["PLMAIL_DATA_DIR"]).expanduser() if env.get("PLMAIL_DATA_DIR") else None
        pg_bin = env.get("PLMAIL_PG_BIN")
        return cls(
            data_dir=(data_dir or default_data_dir(env)).absolute(),
            database_url=env.get("PLMAIL_DATABASE_URL") or None,
            pg_bin=Path(pg_bin) if pg_bin else None,
            pg_run_as=env.get("PLMAIL_PG_RUN_AS") or None,
            host=env.get("PLMAIL_HOST", "127.0.0.1"),
            port=_int(env, "PLMAIL_PORT", DEFAULT_PORT, 0, 65535),
            secure_cookies=_flag(env, "PLMAIL_SECURE_COOKIES", False),
            log_level=env.get("PLMAIL_LOG_LEVEL", "INFO").upper(),
            shutdown_grace_seconds=_int(env, "PLMAIL_SHUTDOWN_GRACE", 25, 0, 3600),
            db_pool_max=_int(env, "PLMAIL_DB_POOL_MAX", 20, 4, 500),
            google_client_id=env.get("PLMAIL_GOOGLE_CLIENT_ID") or None,
            google_client_secret=env.get("PLMAIL_GOOGLE_CLIENT_SECRET") or None,
            microsoft_client_id=env.get("PLMAIL_MICROSOFT_CLIENT_ID") or None,
            microsoft_client_secret=env.get("PLMAIL_MICROSOFT_CLIENT_SECRET") or None,
            google_base_url=env.get("PLMAIL_GOOGLE_BASE_URL") or None,
            microsoft_base_url=env.get("PLMAIL_MICROSOFT_BASE_URL") or None,
            pg_system_dirs=_path_list(env.get("PLMAIL_PG_SYSTEM_DIRS")),
            metrics_token=env.get("PLMAIL_METRICS_TOKEN") or None,
            log_format=_choice(env, "PLMAIL_LOG_FORMAT", "text", ("text", "json")),
            trusted_proxies=_networks("PLMAIL_TRUSTED_PROXIES", env.get("PLMAIL_TRUSTED_PROXIES")),
            sends_per_hour=_int(env, "PLMAIL_SENDS_PER_HOUR", 200, 1, 100_000),
            vacation_reply_days=_int(env, "PLMAIL_VACATION_REPLY_DAYS", 7, 1, 365),
            kitinerary=env.get("PLMAIL_KITINERARY") or None,
            autoconfig_urls=tuple(env["PLMAIL_AUTOCONFIG_URLS"].split()) if env.get("PLMAIL_AUTOCONFIG_URLS")
            else None,
            dns_servers=_servers("PLMAIL_DNS_SERVERS", env.get("PLMAIL_DNS_SERVERS")),
            test_fetch_allow=_networks("PLMAIL_TEST_FETCH_ALLOW", env.get("PLMAIL_TEST_FETCH_ALLOW")),
            push_allow_loopback=_flag(env, "PLMAIL_PUSH_ALLOW_LOOPBACK", False),
            parse_process=_flag_or_auto(env, "PLMAIL_PARSE_PROCESS"),
            public_url=_public_url(env.get("PLMAIL_PUBLIC_URL")),
            gmail_pubsub_topic=_topic(env.get("PLMAIL_GMAIL_PUBSUB_TOPIC")),
            gmail_push_service_account=env.get("PLMAIL_GMAIL_PUSH_SERVICE_ACCOUNT") or None,
            gmail_push_audience=env.get("PLMAIL_GMAIL_PUSH_AUDIENCE") or None,
            google_jwks_url=env.get("PLMAIL_GOOGLE_JWKS_URL") or None,
        )
