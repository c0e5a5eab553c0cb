"""Finding an address's IMAP and SMTP servers, as Thunderbird does: the provider's autoconfig file
(`autoconfig.<domain>/mail/config-v1.1.xml`, then `<domain>/.well-known/autoconfig/mail/config-v1.1.xml`), then the
SRV records of RFC 6186 and RFC 8314 (`_imaps._tcp`, `_imap._tcp`, `_submissions._tcp`, `_submission._tcp`), then
the known presets (presets.py), then the usual guess.

Where to look is configurable (`MailDiscovery`'s URL templates and DNS servers) so that tests point it at loopback
servers; the autoconfig fetch passes the outbound-request guard (providers/network.py) like every fetch of an
address a user typed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass

import dns.asyncresolver
import dns.exception
import dns.nameserver
import dns.rdtypes.IN.SRV
import dns.resolver
import httpx

from plmail.domain.account_services import TlsMode
from plmail.domain.errors import PlmailError
from plmail.providers.imap.presets import PRESETS, ImapPreset, SmtpPreset, domain_of, preset_for
from plmail.providers.network import FETCH_TIMEOUT, Network, guarded_request

log = logging.getLogger(__name__)

AUTOCONFIG_URLS = ("https://autoconfig.{domain}/mail/config-v1.1.xml",
                   "https://{domain}/.well-known/autoconfig/mail/config-v1.1.xml")
DNS_TIMEOUT = 3.0

# Thunderbird's socketType values
_SOCKET_TYPES = {"ssl": TlsMode.IMPLICIT, "tls": TlsMode.IMPLICIT, "starttls": TlsMode.STARTTLS,
                 "plain": TlsMode.NONE}
# RFC 6186 §3.2 and RFC 8314 §5.1: (service label, encryption), the implicit-TLS one preferred (RFC 8314 §3)
_IMAP_SRV = (("_imaps._tcp", TlsMode.IMPLICIT), ("_imap._tcp", TlsMode.STARTTLS))
_SMTP_SRV = (("_submissions._tcp", TlsMode.IMPLICIT), ("_submission._tcp", TlsMode.STARTTLS))


@dataclass(frozen=True, slots=True)
class Discovered:
    """The servers found for an address, the user name to sign in with, and where they came from."""

    server: ImapPreset
    username: str
    source: str  # "autoconfig", "srv", "preset" or "guess"


@dataclass(frozen=True, slots=True)
class MailDiscovery:
    autoconfig_urls: Sequence[str] = AUTOCONFIG_URLS  # templates with {domain}
    dns_servers: Sequence[tuple[str, int]] = ()  # empty: the system's resolver
    allow: Sequence[Network] = ()  # networks a fetch may reach though not public (tests only)
    timeout: float = FETCH_TIMEOUT

    async def discover(self, email: str) -> Discovered | None:
        domain = domain_of(email)
        if not domain or "." not in domain:
            return None
        found = await self.autoconfig(email, domain)
        if found is None:
            found = await self.srv(email, domain)
        if found is not None:
            known = PRESETS.get(domain)  # the preset's advice (an app password …) still applies
            if known is not None and known.note and not found.server.note:
                found = Discovered(ImapPreset(found.server.host, found.server.port, found.server.tls, known.note,
                                              found.server.smtp), found.username, found.source)
            return found
        preset = preset_for(email)
        if preset is None:
            return None
        return Discovered(preset, email.strip(), "preset" if domain in PRESETS else "guess")

    async def autoconfig(self, email: str, domain: str) -> Discovered | None:
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            for template in self.autoconfig_urls:
                url = template.format(domain=domain)
                try:
                    response = await guarded_request(client, "GET", url, allow=self.allow)
                except (httpx.HTTPError, PlmailError) as exc:
                    log.debug("autoconfig %s: %s", url, exc)
                    continue
                if response.status_code != 200:
                    continue
                found = parse_autoconfig(response.content, email)
                if found is not None:
                    return found
        return None

    async def srv(self, email: str, domain: str) -> Discovered | None:
        resolver = dns.asyncresolver.Resolver(configure=not self.dns_servers)
        if self.dns_servers:
            resolver.nameservers = [dns.nameserver.Do53Nameserver(host, port) for host, port in self.dns_servers]
        resolver.lifetime = DNS_TIMEOUT
        imap, smtp = await asyncio.gather(_first_srv(resolver, domain, _IMAP_SRV),
                                          _first_srv(resolver, domain, _SMTP_SRV))
        if imap is None:
            return None
        smtp_preset = SmtpPreset(smtp[0], smtp[1], smtp[2]) if smtp is not None else None
        return Discovered(ImapPreset(imap[0], imap[1], imap[2], smtp=smtp_preset), email.strip(), "srv")


async def _first_srv(resolver: dns.asyncresolver.Resolver, domain: str,
                     services: Sequence[tuple[str, TlsMode]]) -> tuple[str, int, TlsMode] | None:
    """The best target of the first service that has one: lowest priority, then highest weight (RFC 2782); a
    target of "." says the service is not offered (RFC 2782, RFC 6186 §3.4)."""
    for label, tls in services:
        try:
            answer = await resolver.resolve(f"{label}.{domain}", "SRV")
        except (dns.exception.DNSException, OSError):
            continue
        records = [r for r in answer if isinstance(r, dns.rdtypes.IN.SRV.SRV)]
        records.sort(key=lambda r: (r.priority, -r.weight))
        for record in records:
            target = record.target.to_text(omit_final_dot=True)
            if target and target != "." and record.port:
                return target, int(record.port), tls
    return None


def parse_autoconfig(document: bytes, email: str) -> Discovered | None:
    """The first IMAP incoming server and the first SMTP outgoing server of a Thunderbird config-v1.1.xml."""
    if b"<!DOCTYPE" in document.upper() or b"<!ENTITY" in document.upper():
        return None  # config-v1.1.xml has no DTD; refusing one rules out entity expansion (billion laughs, XXE)
    try:
        root = ElementTree.fromstring(document)  # noqa: S314 - no DTD can reach the parser (checked above)
    except ElementTree.ParseError:
        return None
    provider = root.find("emailProvider")
    if provider is None:
        return None
    imap = next((s for s in provider.findall("incomingServer") if s.get("type") == "imap"), None)
    if imap is None:
        return None
    parsed = _server(imap)
    if parsed is None:
        return None
    host, port, tls, username = parsed
    smtp = None
    out = next((s for s in provider.findall("outgoingServer") if s.get("type") == "smtp"), None)
    if out is not None and (smtp_parsed := _server(out)) is not None:
        smtp = SmtpPreset(smtp_parsed[0], smtp_parsed[1], smtp_parsed[2])
    return Discovered(ImapPreset(host, port, tls, smtp=smtp), _username(username, email), "autoconfig")


def _server(element: ElementTree.Element) -> tuple[str, int, TlsMode, str] | None:
    host = (element.findtext("hostname") or "").strip()
    port = (element.findtext("port") or "").strip()
    tls = _SOCKET_TYPES.get((element.findtext("socketType") or "").strip().lower())
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or tls is None or not _plausible_host(host):
        return None
    return host, int(port), tls, (element.findtext("username") or "%EMAILADDRESS%").strip()


def _plausible_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return all(part and len(part) < 64 for part in host.split(".")) and " " not in host


def _username(template: str, email: str) -> str:
    """Thunderbird's placeholders: %EMAILADDRESS%, %EMAILLOCALPART%, %EMAILDOMAIN%."""
    address = email.strip()
    local, _at, domain = address.rpartition("@")
    return (template.replace("%EMAILADDRESS%", address).replace("%EMAILLOCALPART%", local)
            .replace("%EMAILDOMAIN%", domain)) or address
