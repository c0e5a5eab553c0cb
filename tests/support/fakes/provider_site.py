"""A mail provider's web and DNS presence on loopback: `ProviderSite` (ASGI, served by `FakeServer`) publishes
Thunderbird autoconfig files and takes RFC 8058 one-click unsubscribe POSTs, recording each; `DnsServer` answers
SRV queries (RFC 6186/8314) over UDP, built from dnspython's own message classes (the library plmail resolves
with), so no second DNS package is needed.

Point plmail at them with `PLMAIL_AUTOCONFIG_URLS` (`site.autoconfig_urls()`), `PLMAIL_DNS_SERVERS`
(`dns.address`) and `PLMAIL_TEST_FETCH_ALLOW=127.0.0.1/32` (loopback is refused otherwise).
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from types import TracebackType

import dns.flags
import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from tests.support.fakes._asgi import AsgiApp, Request, Response


@dataclass
class Posted:
    path: str
    content_type: str
    body: bytes


class ProviderSite(AsgiApp):
    """`/autoconfig.<domain>/mail/config-v1.1.xml` and `/<domain>/.well-known/autoconfig/mail/config-v1.1.xml`
    stand for the two autoconfig locations; `/unsubscribe/{token}` is a list's one-click endpoint."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, bytes] = {}  # path → config-v1.1.xml
        self.requested: list[str] = []
        self.posts: list[Posted] = []
        self.router.add("GET", "/{path:path}", self._get)
        self.router.add("POST", "/unsubscribe/{token}", self._unsubscribe)

    @staticmethod
    def autoconfig_urls(base: str) -> str:
        return (f"{base}/autoconfig.{{domain}}/mail/config-v1.1.xml "
                f"{base}/{{domain}}/.well-known/autoconfig/mail/config-v1.1.xml")

    def publish(self, domain: str, xml: str, *, well_known: bool = False) -> None:
        path = (f"/{domain}/.well-known/autoconfig/mail/config-v1.1.xml" if well_known
                else f"/autoconfig.{domain}/mail/config-v1.1.xml")
        self.files[path] = xml.encode()

    async def _get(self, request: Request) -> Response:
        self.requested.append(request.path)
        body = self.files.get(request.path)
        if body is None:
            return Response(404, b"not found", [("content-type", "text/plain")])
        return Response(200, body, [("content-type", "text/xml")])

    async def _unsubscribe(self, request: Request) -> Response:
        self.posts.append(Posted(request.path, request.header("content-type") or "", request.body))
        return Response(200, b"You are unsubscribed.", [("content-type", "text/plain")])


@dataclass
class DnsServer:
    """A UDP DNS server on 127.0.0.1 answering from `records`: name → [(priority, weight, port, target)]."""

    records: dict[str, list[tuple[int, int, int, str]]] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._sock.getsockname()
        return f"{host}:{port}"

    def __enter__(self) -> DnsServer:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                wire, peer = self._sock.recvfrom(4096)
            except TimeoutError:
                continue
            query = dns.message.from_wire(wire)
            response = dns.message.make_response(query)
            response.flags |= dns.flags.AA
            question = query.question[0]
            name = question.name.to_text(omit_final_dot=True).lower()
            self.queries.append(name)
            found = self.records.get(name)
            if found is None:
                response.set_rcode(dns.rcode.NXDOMAIN)
            elif question.rdtype == dns.rdatatype.SRV:
                rrset = dns.rrset.from_text(question.name, 300, dns.rdataclass.IN, dns.rdatatype.SRV,
                                            *(f"{p} {w} {port} {target}." if target != "." else f"{p} {w} {port} ."
                                              for p, w, port, target in found))
                response.answer.append(rrset)
            self._sock.sendto(response.to_wire(), peer)
