"""CardDAV (RFC 6352): discovery from /.well-known/carddav to the address book home, the "From your mail" book
holding the people the user wrote to (with the name they used) and never a sender the user only received from, a
removed gathered card staying removed, addressbook-query and -multiget, and vdirsyncer syncing the personal book
both ways with nothing left to do on its second run."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import httpx
from lxml import etree

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.integration.dav.conftest import DavUser
from tests.integration.dav.test_vdirsyncer import VDIRSYNCER
from tests.support.repos import account_rows

D = "{DAV:}"
CARD = "{urn:ietf:params:xml:ns:carddav}"
SENT = (b"From: Dee Av <owner@example.org>\r\nTo: Ada Lovelace <ada@example.net>\r\n"
        b"Subject: Notes\r\nMessage-ID: <s1@example.org>\r\nDate: Tue, 01 Dec 2026 09:00:00 +0000\r\n\r\nHello\r\n")
NEWSLETTER = (b"From: Weekly News <news@list.example>\r\nTo: owner@example.org\r\nList-Id: <news.list.example>\r\n"
              b"Subject: Issue 12\r\nMessage-ID: <n1@list.example>\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\n"
              b"\r\nNews\r\n")
LAPTOP_CARD = ("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:grace-1\r\nFN:Grace Hopper\r\nN:Hopper;Grace;;;\r\n"
               "EMAIL;TYPE=INTERNET:grace@example.net\r\nEND:VCARD\r\n")


async def _mail(services: Services, owner: DavUser) -> None:
    account_id = await account_rows(services).create(user_id=owner.user.id, provider_kind=ProviderKind.LOCAL,
                                                     name="Archive", email=owner.email)
    roles = await services.labels.role_ids(owner.user.id)
    await services.pipeline.ingest([
        parse_message(SENT, account_id=account_id, received_at=datetime(2026, 12, 1, 9, tzinfo=UTC),
                      label_ids=(roles[LabelRole.SENT],)),
        parse_message(NEWSLETTER, account_id=account_id, received_at=datetime(2026, 12, 1, 10, tzinfo=UTC),
                      label_ids=(roles[LabelRole.INBOX],)),
    ])


def _hrefs(response: httpx.Response, prop: str = f"{D}getetag") -> dict[str, str]:
    root = etree.fromstring(response.content)
    return {str(n.findtext(f"{D}href")): str(n.findtext(f".//{prop}") or "") for n in root.iter(f"{D}response")
            if n.find(f".//{prop}") is not None}


async def _home(http: httpx.AsyncClient, who: DavUser) -> str:
    """The address book home as a client finds it: the well-known URI, the principal, its home set."""
    start = await http.request("PROPFIND", "/.well-known/carddav", auth=who.auth, follow_redirects=True,
                               content=b'<d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/></d:prop>'
                                       b'</d:propfind>', headers={"Depth": "0"})
    principal = etree.fromstring(start.content).findtext(f".//{D}current-user-principal/{D}href")
    found = await http.request("PROPFIND", str(principal), auth=who.auth, headers={"Depth": "0"},
                               content=b'<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
                                       b'<d:prop><c:addressbook-home-set/></d:prop></d:propfind>')
    return str(etree.fromstring(found.content).findtext(f".//{CARD}addressbook-home-set/{D}href"))


async def test_the_gathered_book_holds_people_written_to_and_a_removal_sticks(
        http: httpx.AsyncClient, owner: DavUser, services: Services) -> None:
    await _mail(services, owner)
    home = await _home(http, owner)
    books = await http.request("PROPFIND", home, auth=owner.auth, headers={"Depth": "1"},
                               content=b'<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:resourcetype/>'
                                       b'</d:prop></d:propfind>')
    names = _hrefs(books, f"{D}displayname")
    assert names == {home: "addressbooks", f"{home}personal/": "Contacts", f"{home}from-mail/": "From your mail"}

    gathered = f"{home}from-mail/"
    query = (b'<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/>'
             b'<c:address-data/></d:prop></c:addressbook-query>')
    cards = _hrefs(await http.request("REPORT", gathered, auth=owner.auth, content=query, headers={"Depth": "1"}),
                   f"{CARD}address-data")
    assert len(cards) == 1  # Ada, whom the user wrote to; never the newsletter the user only received
    [(href, text)] = cards.items()
    assert "FN:Ada Lovelace" in text and "EMAIL;TYPE=INTERNET:ada@example.net" in text

    assert (await http.delete(href, auth=owner.auth)).status_code == 204
    await _mail_again(services, owner)
    again = _hrefs(await http.request("REPORT", gathered, auth=owner.auth, content=query, headers={"Depth": "1"}))
    assert again == {}  # the user removed her: writing to her again does not bring the card back


async def _mail_again(services: Services, owner: DavUser) -> None:
    [account] = [a for a in await account_rows(services).for_user(owner.user.id)]
    roles = await services.labels.role_ids(owner.user.id)
    await services.pipeline.ingest([parse_message(SENT.replace(b"<s1@", b"<s2@"), account_id=account.id,
                                                  received_at=datetime(2026, 12, 2, 9, tzinfo=UTC),
                                                  label_ids=(roles[LabelRole.SENT],))])


async def test_addressbook_query_matches_by_text_and_multiget_reads_by_href(
        http: httpx.AsyncClient, owner: DavUser, stranger: DavUser) -> None:
    book = f"/dav/{owner.user.id}/addressbooks/personal/"
    for name, uid, email in (("Grace Hopper", "g1", "grace@example.net"), ("Alan Turing", "a1", "alan@example.net")):
        card = f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:{name}\r\nEMAIL:{email}\r\nEND:VCARD\r\n"
        put = await http.put(f"{book}{uid}.vcf", content=card, auth=owner.auth, headers={"If-None-Match": "*"})
        assert put.status_code == 201 and put.headers["etag"]
    query = (b'<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/>'
             b'</d:prop><c:filter><c:prop-filter name="EMAIL"><c:text-match match-type="starts-with">GRACE'
             b'</c:text-match></c:prop-filter></c:filter></c:addressbook-query>')
    found = _hrefs(await http.request("REPORT", book, auth=owner.auth, content=query))
    assert list(found) == [f"{book}g1.vcf"]  # RFC 6352 §10.5.4: i;unicode-casemap by default, so case-blind
    multiget = (f'<c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop>'
                f'<c:address-data/></d:prop><d:href>{book}a1.vcf</d:href><d:href>{book}gone.vcf</d:href>'
                f'</c:addressbook-multiget>').encode()
    response = await http.request("REPORT", book, auth=owner.auth, content=multiget)
    root = etree.fromstring(response.content)
    statuses = {str(n.findtext(f"{D}href")): (n.findtext(f"{D}status") or n.findtext(f".//{D}status"))
                for n in root.iter(f"{D}response")}
    assert statuses == {f"{book}a1.vcf": "HTTP/1.1 200 OK", f"{book}gone.vcf": "HTTP/1.1 404 Not Found"}
    assert "FN:Alan Turing" in str(root.findtext(f".//{CARD}address-data"))
    # The stranger cannot read the owner's book, nor write a card into it.
    assert (await http.request("PROPFIND", book, auth=stranger.auth)).status_code == 403
    card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x\r\nFN:X\r\nEND:VCARD\r\n"
    assert (await http.put(f"{book}x.vcf", content=card, auth=stranger.auth)).status_code == 403
    not_a_card = await http.put(f"{book}y.vcf", content="BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", auth=owner.auth)
    assert not_a_card.status_code == 403 and b"valid-address-data" in not_a_card.content


async def _vdirsyncer(config: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        VDIRSYNCER, "-c", str(config), *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(process.communicate(b"y\n" * 8), timeout=120)
    text = output.decode("utf-8", "replace")
    assert process.returncode == 0, text
    return text


async def test_vdirsyncer_syncs_the_address_books_both_ways(tmp_path: Path, base_url: str, owner: DavUser,
                                                            services: Services) -> None:
    await _mail(services, owner)
    config = tmp_path / "vdirsyncer.conf"
    config.write_text(f"""[general]
status_path = "{tmp_path}/status/"

[pair contacts]
a = "laptop"
b = "plmail"
collections = ["from b"]

[storage laptop]
type = "filesystem"
path = "{tmp_path}/contacts/"
fileext = ".vcf"

[storage plmail]
type = "carddav"
url = "{base_url}/"
username = "{owner.email}"
password = "{owner.password}"
""", encoding="utf-8")
    await _vdirsyncer(config, "discover")
    await _vdirsyncer(config, "sync")
    gathered = list((tmp_path / "contacts" / "from-mail").glob("*.vcf"))
    assert len(gathered) == 1 and "Ada Lovelace" in gathered[0].read_text(encoding="utf-8")

    (tmp_path / "contacts" / "personal" / "grace-1.vcf").write_text(LAPTOP_CARD, encoding="utf-8")
    await _vdirsyncer(config, "sync")
    listed = await services.address_books.listing(owner.user.id, "personal")
    [obj] = await services.address_books.fetch(owner.user.id, "personal", [e.href for e in listed], base_url="")
    assert obj.data.decode() == LAPTOP_CARD  # the card as the laptop wrote it

    second = await _vdirsyncer(config, "sync")
    assert "Copying" not in second and "Deleting" not in second, second


async def test_the_composer_offers_the_cards_the_user_keeps(http: httpx.AsyncClient, owner: DavUser,
                                                            services: Services) -> None:
    """The issue: composer autocomplete reads both books (the gathered one is the harvested contacts)."""
    await _mail(services, owner)
    book = f"/dav/{owner.user.id}/addressbooks/personal/"
    card = ("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:g1\r\nFN:Grace Hopper\r\nEMAIL;TYPE=WORK:grace@navy.example\r\n"
            "EMAIL;TYPE=HOME:amazing.grace@example.net\r\nEND:VCARD\r\n")
    assert (await http.put(f"{book}g1.vcf", content=card, auth=owner.auth)).status_code == 201
    by_name = await services.contacts.suggest(owner.user.id, "hop")
    assert [(s.email, s.name) for s in by_name] == [("grace@navy.example", "Grace Hopper"),
                                                   ("amazing.grace@example.net", "Grace Hopper")]
    assert [s.email for s in await services.contacts.suggest(owner.user.id, "amaz")] == ["amazing.grace@example.net"]
    assert [s.email for s in await services.contacts.suggest(owner.user.id, "ada")] == ["ada@example.net"]
    assert await services.contacts.suggest(owner.user.id, "hop", exclude=["grace@navy.example"]) == [
        s for s in by_name if s.email != "grace@navy.example"]


async def test_merging_two_gathered_cards_sticks(http: httpx.AsyncClient, owner: DavUser, services: Services) -> None:
    """Issue 34: merging a gathered card is the user's decision and sticks. A phone merges by keeping one card with
    both addresses and deleting the other; writing to either address again brings neither card back."""
    await _mail(services, owner)
    [account] = [a for a in await account_rows(services).for_user(owner.user.id)]
    roles = await services.labels.role_ids(owner.user.id)
    at_work = SENT.replace(b"<s1@", b"<w1@").replace(b"Ada Lovelace <ada@example.net>", b"Ada L <ada@work.example>")
    await services.pipeline.ingest([parse_message(at_work, account_id=account.id, label_ids=(roles[LabelRole.SENT],),
                                                  received_at=datetime(2026, 12, 1, 11, tzinfo=UTC))])
    gathered = f"/dav/{owner.user.id}/addressbooks/from-mail/"
    query = (b'<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/>'
             b'<c:address-data/></d:prop></c:addressbook-query>')

    async def cards() -> dict[str, str]:
        return _hrefs(await http.request("REPORT", gathered, auth=owner.auth, content=query, headers={"Depth": "1"}),
                      f"{CARD}address-data")

    before = await cards()
    home_card = next(h for h, text in before.items() if "ada@example.net" in text)
    work_card = next(h for h, text in before.items() if "ada@work.example" in text)
    assert home_card != work_card
    merged = before[home_card].replace("END:VCARD", "EMAIL;TYPE=INTERNET:ada@work.example\r\nEND:VCARD")
    assert (await http.put(home_card, content=merged, auth=owner.auth)).status_code == 204
    assert (await http.delete(work_card, auth=owner.auth)).status_code == 204

    await _mail_again(services, owner)
    await services.pipeline.ingest([parse_message(at_work.replace(b"<w1@", b"<w2@"), account_id=account.id,
                                                  label_ids=(roles[LabelRole.SENT],),
                                                  received_at=datetime(2026, 12, 2, 11, tzinfo=UTC))])
    after = await cards()
    assert list(after) == [home_card]
    assert "ada@example.net" in after[home_card] and "ada@work.example" in after[home_card]
