"""JMAP for Contacts (RFC 9610) over the ASGI app, beside CardDAV on the same cards: the session's capability, the
two address books, a card made over JMAP read back over CardDAV as vCard and a vCard PUT over CardDAV read as
JSContact (RFC 9553, converted per RFC 9555), /changes after each, /query by text and email, the gathered "From your
mail" book and a removal that sticks, and the SetErrors of RFC 8620 §5.3 for the bad cases."""

from __future__ import annotations

from typing import Any

import httpx
import vobject
from lxml import etree

from plmail.domain.enums import LabelRole
from tests.integration.jmap.conftest import CORE, JmapBox, make_box

CONTACTS = "urn:ietf:params:jmap:contacts"
USING = [CORE, CONTACTS]
D = "{DAV:}"


async def call(box: JmapBox, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return await box.call(name, {"accountId": box.primary, **arguments}, using=USING)


async def error(box: JmapBox, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return await box.error(name, {"accountId": box.primary, **arguments}, using=USING)


def book_path(box: JmapBox, book: str) -> str:
    return f"/dav/{box.user.id}/addressbooks/{book}/"


async def dav_cards(box: JmapBox, book: str) -> dict[str, str]:
    """href → vCard text of every card CardDAV lists in a book (PROPFIND, then a GET of each)."""
    listing = await box.http.request("PROPFIND", book_path(box, book), headers={**box.headers, "Depth": "1"},
                                     content=b'<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>')
    assert listing.status_code == 207, listing.text
    hrefs = [str(r.findtext(f"{D}href")) for r in etree.fromstring(listing.content).iter(f"{D}response")]
    found = {}
    for href in hrefs:
        if href.endswith(".vcf"):
            got = await box.http.get(href, headers=box.headers)
            assert got.status_code == 200 and got.headers["content-type"].startswith("text/vcard")
            found[href] = got.text
    return found


async def put_vcard(box: JmapBox, href: str, text: str, **headers: str) -> httpx.Response:
    return await box.http.put(href, content=text.encode(), headers={**box.headers, **headers,
                                                                    "Content-Type": "text/vcard; charset=utf-8"})


async def test_the_session_names_contacts_and_the_two_books_can_only_be_renamed(box: JmapBox) -> None:
    session = (await box.http.get("/.well-known/jmap", headers=box.headers, follow_redirects=True)).json()
    assert session["capabilities"][CONTACTS] == {}  # RFC 9610 §1.4.1: an empty object in the session
    assert session["primaryAccounts"][CONTACTS] == box.primary
    account = session["accounts"][box.primary]["accountCapabilities"][CONTACTS]
    assert set(account) == {"maxAddressBooksPerCard", "mayCreateAddressBook"}
    assert account["mayCreateAddressBook"] is False
    assert CONTACTS not in session["accounts"][box.account]["accountCapabilities"]

    books = await call(box, "AddressBook/get", {"ids": None})
    by_name = {b["name"]: b for b in books["list"]}
    assert set(by_name) == {"Contacts", "From your mail"}
    assert by_name["Contacts"]["isDefault"] is True and by_name["From your mail"]["isDefault"] is False
    assert by_name["From your mail"]["myRights"]["mayDelete"] is False
    assert by_name["Contacts"]["myRights"]["mayWrite"] is True

    personal = by_name["Contacts"]["id"]
    answer = await call(box, "AddressBook/set", {
        "ifInState": books["state"],
        "create": {"new": {"name": "Work"}},
        "update": {personal: {"name": "People"}, "from-mail": {"sortOrder": 7}, "nope": {"name": "x"}},
        "destroy": ["from-mail"]})
    assert answer["updated"] == {personal: None}
    assert answer["notCreated"]["new"]["type"] == "forbidden"
    assert answer["notDestroyed"]["from-mail"]["type"] == "forbidden"
    assert answer["notUpdated"]["from-mail"] == {"type": "invalidProperties", "properties": ["sortOrder"],
                                                 "description": answer["notUpdated"]["from-mail"]["description"]}
    assert answer["notUpdated"]["nope"]["type"] == "notFound"
    changes = await call(box, "AddressBook/changes", {"sinceState": books["state"]})
    assert personal in changes["updated"] and changes["newState"] == answer["newState"] != books["state"]
    # The phone sees the new name too (RFC 6352 displayname).
    found = await box.http.request("PROPFIND", book_path(box, "personal"), headers={**box.headers, "Depth": "0"},
                                   content=b'<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/></d:prop>'
                                           b'</d:propfind>')
    assert etree.fromstring(found.content).findtext(f".//{D}displayname") == "People"
    stale = await error(box, "AddressBook/set", {"ifInState": books["state"], "update": {personal: {"name": "x"}}})
    assert stale["type"] == "stateMismatch"
    assert (await error(box, "AddressBook/changes", {"sinceState": "junk"}))["type"] == "cannotCalculateChanges"
    # Without the capability in `using` the methods do not exist; mail accounts do not hold contacts.
    assert (await box.error("AddressBook/get", {"accountId": box.primary}))["type"] == "unknownMethod"
    wrong = await box.error("ContactCard/get", {"accountId": box.account}, using=USING)
    assert wrong["type"] == "accountNotSupportedByMethod"


async def test_a_card_made_over_jmap_reads_back_over_carddav_and_edits_keep_what_jmap_does_not_know(
        box: JmapBox) -> None:
    state = (await call(box, "ContactCard/get", {"ids": []}))["state"]
    made = await call(box, "ContactCard/set", {"create": {"c1": {
        "@type": "Card", "addressBookIds": {"personal": True}, "kind": "individual",
        "name": {"@type": "Name", "components": [{"kind": "given", "value": "Ada"},
                                                 {"kind": "surname", "value": "Lovelace"}]},
        "emails": {"w": {"@type": "EmailAddress", "address": "ada@example.net", "contexts": {"work": True}},
                   "h": {"address": "ada@home.example"}},
        "phones": {"m": {"number": "+44 20 7946 0000", "features": {"mobile": True}}},
        "organizations": {"o": {"name": "Analytical Engines Ltd"}},
        "anniversaries": {"b": {"kind": "birth", "date": {"year": 1815, "month": 12, "day": 10}}},
        "notes": {"n": {"note": "Met at the Babbages'; first programmer"}},
    }}})
    card_id = made["created"]["c1"]["id"]
    assert made["created"]["c1"]["uid"]  # the server gave it a UID

    [(href, text)] = (await dav_cards(box, "personal")).items()
    vcard = vobject.readOne(text)  # a real vCard parser reads what a phone would
    assert vcard.fn.value == "Ada Lovelace"
    assert (vcard.n.value.given, vcard.n.value.family) == ("Ada", "Lovelace")
    assert sorted(e.value for e in vcard.contents["email"]) == ["ada@example.net", "ada@home.example"]
    assert vcard.tel.value == "+44 20 7946 0000" and "CELL" in [t.upper() for t in vcard.tel.params["TYPE"]]
    assert vcard.org.value == ["Analytical Engines Ltd"] and vcard.bday.value == "1815-12-10"
    assert vcard.note.value == "Met at the Babbages'; first programmer"
    assert vcard.uid.value == made["created"]["c1"]["uid"]

    changes = await call(box, "ContactCard/changes", {"sinceState": state})
    assert (changes["created"], changes["updated"], changes["destroyed"]) == ([card_id], [], [])

    # A phone adds a photo and a field of its own; a JMAP edit afterwards keeps both.
    phone_text = text.replace("END:VCARD", "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQ\r\nX-PHONETIC-LAST-NAME:Lavlace\r\n"
                                           "END:VCARD")
    assert (await put_vcard(box, href, phone_text)).status_code == 204
    after_phone = await call(box, "ContactCard/changes", {"sinceState": changes["newState"]})
    assert (after_phone["created"], after_phone["updated"]) == ([], [card_id])
    got = (await call(box, "ContactCard/get", {"ids": [card_id]}))["list"][0]
    work = next(k for k, e in got["emails"].items() if e["address"] == "ada@example.net")
    edited = await call(box, "ContactCard/set", {"update": {card_id: {
        f"emails/{work}/address": "ada@engines.example", "name/full": "Ada King"}}})
    assert card_id in edited["updated"]
    again = (await dav_cards(box, "personal"))[href]
    parsed = vobject.readOne(again)
    assert parsed.fn.value == "Ada King"
    assert sorted(e.value for e in parsed.contents["email"]) == ["ada@engines.example", "ada@home.example"]
    assert "X-PHONETIC-LAST-NAME:Lavlace" in again and "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQ" in again
    after_edit = await call(box, "ContactCard/changes", {"sinceState": after_phone["newState"]})
    assert (after_edit["created"], after_edit["updated"], after_edit["destroyed"]) == ([], [card_id], [])

    # Destroyed over JMAP: CardDAV lists it no more, /changes says destroyed.
    gone = await call(box, "ContactCard/set", {"destroy": [card_id]})
    assert gone["destroyed"] == [card_id]
    assert await dav_cards(box, "personal") == {}
    final = await call(box, "ContactCard/changes", {"sinceState": after_edit["newState"]})
    assert final["destroyed"] == [card_id] and final["updated"] == []


GRACE = ("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:grace-1\r\nFN:Grace Hopper\r\nN:Hopper;Grace;Murray;Rear Adm.;\r\n"
         "NICKNAME:Amazing Grace\r\nEMAIL;TYPE=INTERNET,WORK:grace@navy.example\r\nTEL;TYPE=CELL:+1 555 0100\r\n"
         "ADR;TYPE=HOME:;;1 Main St;Arlington;VA;22201;USA\r\nORG:US Navy;Computing\r\nTITLE:Rear Admiral\r\n"
         "URL:https://example.net/grace\r\nIMPP:xmpp:grace@example.net\r\nNOTE:Line one\\nline two\\, too\r\n"
         "BDAY:1906-12-09\r\nX-CUSTOM:kept\r\nEND:VCARD\r\n")


async def test_a_vcard_put_over_carddav_reads_as_jscontact_and_queries_find_it(box: JmapBox) -> None:
    state = (await call(box, "ContactCard/get", {"ids": []}))["state"]
    href = book_path(box, "personal") + "grace.vcf"
    assert (await put_vcard(box, href, GRACE, **{"If-None-Match": "*"})).status_code == 201
    changes = await call(box, "ContactCard/changes", {"sinceState": state})
    [card_id] = changes["created"]
    card = (await call(box, "ContactCard/get", {"ids": [card_id, "404"]}))
    assert card["notFound"] == ["404"]
    [grace] = card["list"]
    # RFC 9555 §2: each vCard property as its JSContact counterpart.
    assert grace["@type"] == "Card" and grace["uid"] == "grace-1" and grace["kind"] == "individual"
    assert grace["addressBookIds"] == {"personal": True}
    assert grace["name"]["full"] == "Grace Hopper"
    assert {(c["kind"], c["value"]) for c in grace["name"]["components"]} == {
        ("surname", "Hopper"), ("given", "Grace"), ("given2", "Murray"), ("title", "Rear Adm.")}
    assert [n["name"] for n in grace["nicknames"].values()] == ["Amazing Grace"]
    [email] = grace["emails"].values()
    assert email["address"] == "grace@navy.example" and email["contexts"] == {"work": True}
    [phone] = grace["phones"].values()
    assert phone["number"] == "+1 555 0100" and phone["features"] == {"mobile": True}
    [address] = grace["addresses"].values()
    assert address["contexts"] == {"private": True}
    assert {(c["kind"], c["value"]) for c in address["components"]} == {
        ("name", "1 Main St"), ("locality", "Arlington"), ("region", "VA"), ("postcode", "22201"), ("country", "USA")}
    [org] = grace["organizations"].values()
    assert org["name"] == "US Navy" and [u["name"] for u in org["units"]] == ["Computing"]
    assert [t["name"] for t in grace["titles"].values()] == ["Rear Admiral"]
    assert [n["note"] for n in grace["notes"].values()] == ["Line one\nline two, too"]
    assert [link["uri"] for link in grace["links"].values()] == ["https://example.net/grace"]
    assert [s["uri"] for s in grace["onlineServices"].values()] == ["xmpp:grace@example.net"]
    [birthday] = grace["anniversaries"].values()
    assert birthday["kind"] == "birth" and birthday["date"] == {"@type": "PartialDate", "year": 1906, "month": 12,
                                                                "day": 9}
    assert grace["created"].endswith("Z") and grace["updated"].endswith("Z")
    # Read back and written as it was, JSContact gives CardDAV the same card (nothing lost on the way).
    rewritten = await call(box, "ContactCard/set", {"update": {card_id: {"name/full": "Grace Hopper"}}})
    assert card_id in rewritten["updated"]
    same = (await call(box, "ContactCard/get", {"ids": [card_id]}))["list"][0]
    assert {k: v for k, v in same.items() if k != "updated"} == {k: v for k, v in grace.items() if k != "updated"}
    assert "X-CUSTOM:kept" in (await box.http.get(href, headers=box.headers)).text

    turing = ("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:alan-1\r\nFN:Alan Turing\r\nN:Turing;Alan;;;\r\n"
              "EMAIL:alan@bletchley.example\r\nEND:VCARD\r\n")
    assert (await put_vcard(box, book_path(box, "personal") + "alan.vcf", turing)).status_code == 201
    async def query(filter_: dict[str, Any] | None, sort: list[dict[str, Any]] | None = None) -> list[str]:
        found = await call(box, "ContactCard/query", {"filter": filter_, "sort": sort, "calculateTotal": True})
        assert found["total"] == len(found["ids"]) and found["canCalculateChanges"] is False
        return list(found["ids"])

    everyone = await query(None)
    alan_id = next(i for i in everyone if i != card_id)
    assert await query({"text": "navy"}) == [card_id]
    assert await query({"text": "BLETCHLEY"}) == [alan_id]
    assert await query({"email": "grace@"}) == [card_id]
    assert await query({"name": "turing"}) == [alan_id]
    assert await query({"name/surname": "hopper"}) == [card_id]
    assert await query({"inAddressBook": "from-mail"}) == []
    assert await query({"operator": "OR", "conditions": [{"email": "alan"}, {"email": "grace"}]},
                       [{"property": "name/surname", "isAscending": False}]) == [alan_id, card_id]
    assert await query({"inAddressBook": "personal"}, [{"property": "name/given"}]) == [alan_id, card_id]
    assert await query(None, [{"property": "created"}]) == [card_id, alan_id]
    assert (await error(box, "ContactCard/query", {"filter": {"hasMember": "x"}}))["type"] == "unsupportedFilter"
    assert (await error(box, "ContactCard/query", {"sort": [{"property": "emails"}]}))["type"] == "unsupportedSort"
    changed = await error(box, "ContactCard/queryChanges", {"sinceQueryState": "1-1"})
    assert changed["type"] == "cannotCalculateChanges"
    assert (await error(box, "ContactCard/changes", {"sinceState": "999999999-1"}))["type"] == \
        "cannotCalculateChanges"

    # Removed over CardDAV: JMAP reports it destroyed.
    before = (await call(box, "ContactCard/get", {"ids": []}))["state"]
    assert (await box.http.delete(href, headers=box.headers)).status_code == 204
    gone = await call(box, "ContactCard/changes", {"sinceState": before})
    assert (gone["created"], gone["updated"], gone["destroyed"]) == ([], [], [card_id])


def sent(to: str, message_id: str) -> bytes:
    return (f"From: Rea Der <reader@example.org>\r\nTo: {to}\r\nSubject: Notes\r\nMessage-ID: <{message_id}>\r\n"
            "Date: Tue, 01 Dec 2026 09:00:00 +0000\r\n\r\nHello\r\n").encode()


async def test_the_gathered_book_lists_a_correspondent_and_destroying_the_card_sticks(box: JmapBox) -> None:
    await box.ingest(sent("Charles Babbage <charles@engine.example>", "s1@example.org"), role=LabelRole.SENT)
    found = await call(box, "ContactCard/query", {"filter": {"inAddressBook": "from-mail"}})
    [card_id] = found["ids"]
    [charles] = (await call(box, "ContactCard/get", {"ids": [card_id]}))["list"]
    assert charles["name"]["full"] == "Charles Babbage"
    assert [e["address"] for e in charles["emails"].values()] == ["charles@engine.example"]
    assert charles["addressBookIds"] == {"from-mail": True}

    gone = await call(box, "ContactCard/set", {"destroy": [card_id]})
    assert gone["destroyed"] == [card_id]
    await box.ingest(sent("Charles Babbage <charles@engine.example>", "s2@example.org"), role=LabelRole.SENT)
    again = await call(box, "ContactCard/query", {"filter": {"inAddressBook": "from-mail"}})
    assert again["ids"] == []  # the user removed him: writing to him again does not bring the card back
    assert await dav_cards(box, "from-mail") == {}


async def test_each_bad_card_gets_its_own_set_error_and_the_good_one_is_kept(box: JmapBox) -> None:
    state = (await call(box, "ContactCard/get", {"ids": []}))["state"]
    good = {"addressBookIds": {"personal": True}, "name": {"full": "Good Card"}, "uid": "same-uid"}
    answer = await call(box, "ContactCard/set", {"ifInState": state, "create": {
        "good": good,
        "twin": {**good, "name": {"full": "Twin"}},
        "bad-email": {"addressBookIds": {"personal": True}, "name": {"full": "X"},
                      "emails": {"e": {"address": "not an address"}}},
        "no-name": {"addressBookIds": {"personal": True}},
        "unknown": {"addressBookIds": {"personal": True}, "name": {"full": "X"}, "cryptoKeys": {}},
        "no-book": {"addressBookIds": {"elsewhere": True}, "name": {"full": "X"}},
        "two-books": {"addressBookIds": {"personal": True, "from-mail": True}, "name": {"full": "X"}},
        "server-set": {"addressBookIds": {"personal": True}, "name": {"full": "X"}, "id": "5"},
        "huge": {"addressBookIds": {"personal": True}, "name": {"full": "X"},
                 "notes": {"n": {"note": "x" * 300_000}}},
    }, "update": {"404": {"name/full": "Nobody"}}, "destroy": ["404"]})
    assert list(answer["created"]) == ["good"]
    refused = answer["notCreated"]
    assert refused["twin"]["type"] == "invalidProperties" and refused["twin"]["properties"] == ["uid"]
    assert refused["bad-email"]["properties"] == ["emails/e/address"]
    assert refused["no-name"]["properties"] == ["name"]
    assert refused["unknown"]["properties"] == ["cryptoKeys"]
    assert refused["no-book"]["properties"] == ["addressBookIds"]
    assert refused["two-books"]["properties"] == ["addressBookIds"]
    assert refused["server-set"]["properties"] == ["id"]
    assert refused["huge"]["type"] == "tooLarge"
    assert answer["notUpdated"]["404"]["type"] == "notFound" and answer["notDestroyed"]["404"]["type"] == "notFound"

    card_id = answer["created"]["good"]["id"]
    moved = await call(box, "ContactCard/set", {"update": {card_id: {"addressBookIds": {"from-mail": True}},
                                                           "x": {"uid": "y"}}})
    assert moved["notUpdated"][card_id]["properties"] == ["addressBookIds"]
    uid = await call(box, "ContactCard/set", {"update": {card_id: {"uid": "other"}}})
    assert uid["notUpdated"][card_id]["properties"] == ["uid"]
    stale = await error(box, "ContactCard/set", {"ifInState": state, "destroy": [card_id]})
    assert stale["type"] == "stateMismatch"
    assert [c["name"]["full"] for c in (await call(box, "ContactCard/get", {"ids": None}))["list"]] == ["Good Card"]

    # Another user cannot read, change or remove it by its id.
    other = await make_box(box.services, box.http, "other@example.org")
    theirs = await call(other, "ContactCard/get", {"ids": [card_id]})
    assert theirs["list"] == [] and theirs["notFound"] == [card_id]
    foreign = await call(other, "ContactCard/set", {"update": {card_id: {"name/full": "Mine"}}, "destroy": [card_id]})
    assert foreign["notUpdated"][card_id]["type"] == "notFound"
    assert foreign["notDestroyed"][card_id]["type"] == "notFound"
    assert (await call(other, "ContactCard/query", {}))["ids"] == []
    assert [c["name"]["full"] for c in (await call(box, "ContactCard/get", {"ids": None}))["list"]] == ["Good Card"]
