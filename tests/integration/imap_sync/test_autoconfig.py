"""Adding an IMAP account fills in the servers the provider publishes, in Thunderbird's order: the autoconfig file at
autoconfig.<domain>, then at <domain>/.well-known, then the RFC 6186/8314 SRV records, then the known presets, then
the guess. A loopback HTTP server and a loopback DNS server stand in for the provider; plmail is pointed at them by
its settings, and reaches the loopback HTTP server only because the tests-only allow list says so."""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Iterator

import httpx
import pytest

from plmail.config import Settings
from plmail.domain.account_services import TlsMode
from plmail.providers.imap.autoconfig import MailDiscovery
from tests.support.fakes.provider_site import DnsServer, ProviderSite
from tests.support.fakes.server import FakeServer
from tests.support.web import sign_up_admin

# Thunderbird's documented format (wiki.mozilla.org/Thunderbird:Autoconfiguration:ConfigFileFormat)
CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<clientConfig version="1.1">
  <emailProvider id="{domain}">
    <domain>{domain}</domain>
    <incomingServer type="pop3">
      <hostname>pop.{domain}</hostname><port>995</port><socketType>SSL</socketType>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>{imap}</hostname><port>{imap_port}</port><socketType>{imap_socket}</socketType>
      <username>%EMAILLOCALPART%</username><authentication>password-cleartext</authentication>
    </incomingServer>
    <outgoingServer type="smtp">
      <hostname>{smtp}</hostname><port>{smtp_port}</port><socketType>{smtp_socket}</socketType>
      <username>%EMAILADDRESS%</username><authentication>password-cleartext</authentication>
    </outgoingServer>
  </emailProvider>
</clientConfig>"""

LOOPBACK = (ipaddress.ip_network("127.0.0.1/32"),)


@pytest.fixture(scope="module")
def site() -> Iterator[FakeServer[ProviderSite]]:
    with FakeServer(ProviderSite()) as server:
        yield server


@pytest.fixture(scope="module")
def dns_server() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def settings(settings: Settings, site: FakeServer[ProviderSite], dns_server: DnsServer) -> Settings:
    env = {"PLMAIL_DATA_DIR": str(settings.data_dir), "PLMAIL_DATABASE_URL": settings.database_url or "",
           "PLMAIL_AUTOCONFIG_URLS": ProviderSite.autoconfig_urls(site.url),
           "PLMAIL_DNS_SERVERS": dns_server.address, "PLMAIL_TEST_FETCH_ALLOW": "127.0.0.1/32"}
    return dataclasses.replace(Settings.from_env(env), shutdown_grace_seconds=2)


def _fields(page: str) -> dict[str, str]:
    inputs = dict(re.findall(r'<input name="(\w+)" value="([^"]*)"', page))
    for name, value in re.findall(r'<select name="(\w+)">.*?<option value="(\w+)" selected', page, re.S):
        inputs[name] = value
    return inputs


async def test_the_autoconfig_file_fills_in_imap_and_smtp(
    client: httpx.AsyncClient, site: FakeServer[ProviderSite],
) -> None:
    site.app.publish("mail-one.test", CONFIG.format(domain="mail-one.test", imap="imap.mail-one.test", imap_port=993,
                                                    imap_socket="SSL", smtp="smtp.mail-one.test", smtp_port=587,
                                                    smtp_socket="STARTTLS"))
    await sign_up_admin(client)
    page = await client.get("/accounts/preset", params={"email": "carol@mail-one.test"})
    fields = _fields(page.text)
    assert (fields["host"], fields["port"], fields["tls"]) == ("imap.mail-one.test", "993", "implicit")
    assert fields["username"] == "carol"  # %EMAILLOCALPART%
    assert (fields["smtp_host"], fields["smtp_port"], fields["smtp_tls"]) == ("smtp.mail-one.test", "587", "starttls")
    assert "settings your provider publishes" in page.text


async def test_the_well_known_location_is_asked_when_autoconfig_host_has_none(
    client: httpx.AsyncClient, site: FakeServer[ProviderSite],
) -> None:
    site.app.publish("mail-two.test", CONFIG.format(domain="mail-two.test", imap="box.mail-two.test", imap_port=143,
                                                    imap_socket="STARTTLS", smtp="out.mail-two.test", smtp_port=465,
                                                    smtp_socket="SSL"), well_known=True)
    await sign_up_admin(client)
    page = await client.get("/accounts/new", params={"email": "dave@mail-two.test"})
    fields = _fields(page.text)
    assert (fields["host"], fields["port"], fields["tls"]) == ("box.mail-two.test", "143", "starttls")
    assert (fields["smtp_host"], fields["smtp_port"], fields["smtp_tls"]) == ("out.mail-two.test", "465", "implicit")
    assert "/autoconfig.mail-two.test/mail/config-v1.1.xml" in site.app.requested  # asked first, in order
    assert site.app.requested.index("/autoconfig.mail-two.test/mail/config-v1.1.xml") < \
        site.app.requested.index("/mail-two.test/.well-known/autoconfig/mail/config-v1.1.xml")


async def test_srv_records_are_next_and_the_best_target_wins(client: httpx.AsyncClient, dns_server: DnsServer) -> None:
    # RFC 2782: the lowest priority first; RFC 8314 §5.1: _submissions (implicit TLS) before _submission
    dns_server.records["_imaps._tcp.mail-three.test"] = [(20, 0, 993, "backup.mail-three.test"),
                                                         (10, 0, 9993, "imap.mail-three.test")]
    dns_server.records["_submissions._tcp.mail-three.test"] = [(0, 1, 465, "submit.mail-three.test")]
    dns_server.records["_submission._tcp.mail-three.test"] = [(0, 1, 587, "starttls.mail-three.test")]
    await sign_up_admin(client)
    fields = _fields((await client.get("/accounts/preset", params={"email": "erin@mail-three.test"})).text)
    assert (fields["host"], fields["port"], fields["tls"]) == ("imap.mail-three.test", "9993", "implicit")
    assert (fields["smtp_host"], fields["smtp_port"], fields["smtp_tls"]) == ("submit.mail-three.test", "465",
                                                                             "implicit")
    assert fields["username"] == "erin@mail-three.test"  # RFC 6186 §5: the whole address


async def test_a_dot_target_means_not_offered_and_starttls_srv_is_used(dns_server: DnsServer) -> None:
    """RFC 6186 §3.4: a target of "." says the service is not provided at all."""
    dns_server.records["_imaps._tcp.mail-four.test"] = [(0, 0, 0, ".")]
    dns_server.records["_imap._tcp.mail-four.test"] = [(0, 0, 143, "imap.mail-four.test")]
    discovery = MailDiscovery(autoconfig_urls=(), dns_servers=(_host_port(dns_server.address),))
    found = await discovery.discover("frank@mail-four.test")
    assert found is not None and found.source == "srv"
    assert (found.server.host, found.server.port, found.server.tls) == ("imap.mail-four.test", 143, TlsMode.STARTTLS)
    assert found.server.smtp is None


async def test_without_published_settings_the_preset_then_the_guess(dns_server: DnsServer) -> None:
    discovery = MailDiscovery(autoconfig_urls=(), dns_servers=(_host_port(dns_server.address),))
    known = await discovery.discover("grace@posteo.de")
    assert known is not None and known.source == "preset" and known.server.host == "posteo.de"
    guess = await discovery.discover("heidi@nothing-published.test")
    assert guess is not None and guess.source == "guess" and guess.server.host == "imap.nothing-published.test"


async def test_a_loopback_autoconfig_address_is_refused_without_the_test_allowance(
    site: FakeServer[ProviderSite], dns_server: DnsServer,
) -> None:
    """The autoconfig host comes from what the user typed: it must not make plmail fetch from this machine."""
    site.app.publish("mail-five.test", CONFIG.format(domain="mail-five.test", imap="imap.mail-five.test",
                                                     imap_port=993, imap_socket="SSL", smtp="smtp.mail-five.test",
                                                     smtp_port=465, smtp_socket="SSL"))
    urls = tuple(ProviderSite.autoconfig_urls(site.url).split())
    before = len(site.app.requested)
    guarded = MailDiscovery(autoconfig_urls=urls, dns_servers=(_host_port(dns_server.address),))
    found = await guarded.discover("ivan@mail-five.test")
    assert found is not None and found.source == "guess" and len(site.app.requested) == before
    allowed = MailDiscovery(autoconfig_urls=urls, dns_servers=(_host_port(dns_server.address),), allow=LOOPBACK)
    found = await allowed.discover("ivan@mail-five.test")
    assert found is not None and found.source == "autoconfig" and found.server.host == "imap.mail-five.test"


async def test_a_malformed_or_entity_laden_file_is_ignored(site: FakeServer[ProviderSite],
                                                           dns_server: DnsServer) -> None:
    site.app.publish("mail-six.test", '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>'
                                      "<clientConfig><emailProvider><incomingServer type='imap'><hostname>&a;"
                                      "</hostname><port>993</port><socketType>SSL</socketType></incomingServer>"
                                      "</emailProvider></clientConfig>")
    site.app.publish("mail-six.test", "<clientConfig><emailProvider>", well_known=True)
    discovery = MailDiscovery(autoconfig_urls=tuple(ProviderSite.autoconfig_urls(site.url).split()),
                              dns_servers=(_host_port(dns_server.address),), allow=LOOPBACK)
    found = await discovery.discover("judy@mail-six.test")
    assert found is not None and found.source == "guess"


def _host_port(address: str) -> tuple[str, int]:
    host, port = address.split(":")
    return host, int(port)
