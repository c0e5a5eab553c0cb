"""vCard ⇄ JSContact (RFC 9555) for the cases phones write: vCard 4.0 with PREF and KIND, a birthday without a year
(vCard 4.0's --MMDD, RFC 6350 §4.3.1, and Apple's 1604 year with X-APPLE-OMIT-YEAR), folded lines, and what a
rewrite must keep or refuse."""

from __future__ import annotations

import pytest

from plmail.contacts.jscontact import CardError, card_from_vcard, unfold, vcard_from_card

GROUP_4 = ("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:team\r\nKIND:group\r\nFN:The Team\r\n"
           "EMAIL;PREF=1;TYPE=work:team@example.net\r\nEMAIL:other@example.net\r\nBDAY:--0412\r\n"
           "MEMBER:urn:uuid:ada\r\nEND:VCARD\r\n")


def test_a_vcard_4_group_keeps_its_kind_pref_and_yearless_date_and_unmapped_member() -> None:
    card = card_from_vcard(GROUP_4)
    assert card["kind"] == "group"
    emails = list(card["emails"].values())
    assert emails[0] == {"@type": "EmailAddress", "address": "team@example.net", "contexts": {"work": True},
                         "pref": 1}
    assert "pref" not in emails[1]
    [birthday] = card["anniversaries"].values()
    assert birthday["date"] == {"@type": "PartialDate", "month": 4, "day": 12}  # no year: RFC 9553 PartialDate
    written = vcard_from_card(card, GROUP_4)
    assert "VERSION:4.0" in written and "KIND:group" in written and "EMAIL;PREF=1;TYPE=work:team@example.net" in written
    assert "BDAY:--0412" in written
    assert "MEMBER:urn:uuid:ada" in written  # RFC 9555 maps MEMBER to members; this server keeps it as it was
    assert card_from_vcard(written) == card


def test_apples_omitted_year_reads_as_no_year_and_a_new_card_is_vcard_3() -> None:
    apple = ("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:A\r\nBDAY;X-APPLE-OMIT-YEAR=1604:1604-04-12\r\n"
             "END:VCARD\r\n")
    [birthday] = card_from_vcard(apple)["anniversaries"].values()
    assert "year" not in birthday["date"]
    written = vcard_from_card({"uid": "b", "name": {"full": "B"}, "anniversaries": {"d": birthday}})
    assert written.startswith("BEGIN:VCARD\r\nVERSION:3.0\r\n")
    assert "BDAY;X-APPLE-OMIT-YEAR=1604:1604-04-12" in written


def test_long_values_are_folded_at_75_octets_and_read_back_whole() -> None:
    note = "Zürich " * 40
    written = vcard_from_card({"uid": "c", "name": {"full": "C"}, "notes": {"n": {"note": note}}})
    assert all(len(line.encode()) <= 75 for line in written.split("\r\n"))  # RFC 6350 §3.2
    assert [n["note"] for n in card_from_vcard(written)["notes"].values()] == [note]
    assert any(line.startswith("NOTE:") and len(line) > 75 for line in unfold(written))


@pytest.mark.parametrize(("card", "prop"), [
    ({"uid": "x"}, "name"),
    ({"uid": "x", "name": {"full": "X"}, "emails": {"e": {"address": "nope"}}}, "emails/e/address"),
    ({"uid": "x", "name": {"full": "X"}, "phones": {"p": {"number": "1\r\nFN:evil"}}}, "phones/p/number"),
    ({"uid": "x", "name": {"full": "X"}, "kind": "robot"}, "kind"),
    ({"uid": "x", "name": {"full": "X"}, "media": {}}, "media"),
    ({"uid": "x", "name": {"components": [{"kind": "nickname", "value": "Y"}]}}, "name/components/0/kind"),
    ({"uid": "x", "name": {"full": "X"}, "anniversaries": {"d": {"kind": "birth", "date": {"month": 13,
                                                                                            "day": 1}}}},
     "anniversaries/d/date"),
])
def test_a_card_vcard_cannot_hold_is_refused_naming_the_property(card: dict[str, object], prop: str) -> None:
    with pytest.raises(CardError) as refused:
        vcard_from_card(card)
    assert refused.value.prop == prop


def test_apples_grouped_label_still_names_the_same_address_after_a_rewrite() -> None:
    phone = ("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:g\r\nFN:G\r\nEMAIL;TYPE=INTERNET:first@example.net\r\n"
             "item1.EMAIL;TYPE=INTERNET:labelled@example.net\r\nitem1.X-ABLabel:Choir\r\nEND:VCARD\r\n")
    card = card_from_vcard(phone)
    card["emails"]["e2"]["address"] = "renamed@example.net"
    written = vcard_from_card(card, phone)
    assert "item1.EMAIL;TYPE=INTERNET:renamed@example.net" in written and "item1.X-ABLabel:Choir" in written
    assert "\r\nEMAIL;TYPE=INTERNET:first@example.net" in written
