"""`plmail extract` prints proposals: --me is the recipient, --lang and --tz the reader's settings."""

from __future__ import annotations

from pathlib import Path

from tests.integration.calendar.conftest import utc
from tests.integration.calendar.test_extract_cli import extract
from tests.support.mail import make_message

CALL = "Let's talk on 4/8/2026 at 2pm."


def write(tmp_path: Path, name: str, body: str, **headers: str) -> str:
    path = tmp_path / name
    path.write_bytes(make_message(subject="Re: Call", sender="Anna <anna@example.org>", to=["eva@example.org"],
                                  date=utc(2026, 3, 1, 9), body=f"Hi Eva,\n\n{body}\n\nAnna\n", headers=headers))
    return str(path)


def test_proposals_follow_me_lang_and_tz(tmp_path: Path) -> None:
    call = write(tmp_path, "call.eml", CALL)
    party = write(tmp_path, "party.eml", "Die Party ist am 12.9.2026.")
    news = write(tmp_path, "news.eml", CALL, **{"List-Id": "<list.example.org>"})
    code, shown, _ = extract(tmp_path, "--json", "--me", "Eva@Example.org", "--lang", "de", "--tz", "Europe/Berlin",
                             call, party, news)
    assert code == 0
    assert [item["events"] for item in shown] == [[], [], []]
    assert shown[0]["proposals"] == [{"title": "Call", "start": "2026-08-04T12:00:00Z", "end": "2026-08-04T13:00:00Z",
                                      "sentence": CALL, "confidence": 90, "detector": "deterministic"}]
    assert shown[1]["proposals"] == [{"title": "Call", "start": "2026-09-12", "end": "2026-09-13",
                                      "sentence": "Die Party ist am 12.9.2026.", "confidence": 60,
                                      "detector": "deterministic"}]
    assert shown[2]["proposals"] == []  # a list's mail is an announcement

    _, english, _ = extract(tmp_path, "--json", "--me", "eva@example.org", "--lang", "en", "--tz", "UTC", call)
    assert [(p["start"], p["end"]) for p in english[0]["proposals"]] == [("2026-04-08T14:00:00Z",
                                                                          "2026-04-08T15:00:00Z")]
    _, nobody, _ = extract(tmp_path, "--json", "--lang", "de", call)
    assert nobody[0]["proposals"] == []  # without --me nobody is the recipient
    _, other, _ = extract(tmp_path, "--json", "--me", "someone@example.net", call)
    assert other[0]["proposals"] == []


def test_people_see_the_proposal_and_its_sentence(tmp_path: Path) -> None:
    code, shown, stdout = extract(tmp_path, "--me", "eva@example.org", "--lang", "de", write(tmp_path, "c.eml", CALL))
    assert code == 0 and shown == []
    assert "0 event(s)" in stdout
    assert f"proposal 2026-08-04T14:00:00Z – 2026-08-04T15:00:00Z  Call  [deterministic 90] “{CALL}”" in stdout
