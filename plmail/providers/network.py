"""What the mail protocols (IMAP, SMTP) share about reaching a server: when a connection may go unencrypted."""

from __future__ import annotations

import ipaddress


def is_local_host(host: str) -> bool:
    """Whether a connection to `host` stays on this machine, decided from the name alone (before any lookup),
    so that a password never leaves the host in clear text."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
