"""Quoting keeps the shape of what it quotes (issue 29): a reply to a real client's HTML carries the original
inside <blockquote type="cite"> after the attribution line, and the text part sent beside it quotes the original
line by line: every block (div, p, li, tr, headings) and every br is a line, "> " before each.

The table: real messages from ../shared/corpus (Gmail, Outlook, Apple Mail inside Outlook, Thunderbird/Mozilla),
and the lines a reader of the text part sees, in order. A line ending in "…" is matched on what precedes it.
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass
from functools import cache

import pytest

from plmail.domain.enums import Locale
from plmail.mail.composer import cited, mail_text
from plmail.mail.html_text import editor_markup, html_to_text
from plmail.mail.mime import parse_mime
from plmail.mail.replies import forward_original, quote_original
from plmail.mail.sanitizer import sanitize_outgoing
from tests.support.mail import CORPUS

ATTRIBUTION = "On Wed, 9 Feb 2011 at 11:55, Bob Simple <hello@example.com> wrote:"


@cache
def _spamassassin(name: str) -> bytes:
    archive, member = name.split("/")
    with tarfile.open(CORPUS / "spamassassin-public-corpus" / f"{archive}.tar.gz") as tar:
        for info in tar.getmembers():
            if info.isfile() and info.name.endswith("/" + member):
                handle = tar.extractfile(info)
                assert handle is not None
                return handle.read()
    raise AssertionError(f"{name} is not in the SpamAssassin corpus")


@dataclass(frozen=True)
class QuoteCase:
    client: str
    source: str  # "corpus": a file under ../shared/corpus; "sa": archive/member of the SpamAssassin corpus
    path: str
    expected: list[str]  # the text quote's first lines, after the attribution line

    def raw(self) -> bytes:
        return _spamassassin(self.path) if self.source == "sa" else (CORPUS / self.path).read_bytes()


TABLE = [
    QuoteCase(
        'Gmail: a forward of a forward in gmail_quote divs',
        'corpus', 'flanker-fixtures/messages/multi-received-headers.eml',
        [
            '> ---------- Forwarded message ----------',
            '> From: Bob Simple <hello@example.com>',
            '> Date: Wed, Feb 9, 2011 at 11:55 AM',
            '> Subject: Fwd: Please forward this email to me',
            '> To: Hello <hello@example.com>',
            '>',
            '> ---------- Forwarded message ----------',
            '> From: Hello <example@example.com>',
            '> Date: Wed, Feb 9, 2011 at 11:54 AM',
            '> Subject: Please forward this email to me',
            '> To: Bob Simple <hello@example.com>',
            '>',
            '> Forward please',
            '>',
            '> -- ',
            '> Regards,',
            '> Hello',
        ],
    ),
    QuoteCase(
        'Gmail (Google Calendar): table rows and divs',
        'corpus', 'thunderbird-calendar-invitations/browser/invitations/data/meet-meeting-invite.eml',
        [
            '> Du har blivit inbjuden till följande händelse.',
            '> Meeeeet me HTML',
            '> När',
            '> mån den 22 mars 2021 11:30am – 12:30pm Östeuropeisk tid - Helsingfors',
            '> Anslutningsinfo',
            '> Anslut till Google Meet',
            '> meet.google.com/pyb-ndcu-hhc <https://meet.google.com/pyb-ndcu-hhc?hs=224>',
            '> Kalender',
            '> homer@example.com',
            '> Vem',
            '> •',
            '> example@gmail.com  – organisatör',
        ],
    ),
    QuoteCase(
        'Outlook p.MsoNormal quoting an Apple Mail forward (div, br, Apple-converted-space)',
        'corpus', 'spamscope-mail-parser-mails/mail_test_7',
        [
            '> Ciao sere mi puoi dire se il mio cliente deve fare questa dichiarazione?',
            '>',
            '> GERONAZZO Dott.ssa  MARIACHIARA',
            '> Commercialista - Revisore Contabile',
            '>',
            '> Centr●Studi Commercialisti Srl',
            '> Via Mazzini, 53 – Valdobbiadene – TV',
            '> Cap. Soc. € 10.000,00 i.v. –  REA TV 0341585',
            '> C.F. – P.IVA – Reg. Imp. TV  n. 04336160264',
            '> Tel. 0423/972429 – Fax 0423/971212',
            '> E-mail: info@voidstudicom.it',
            '> _____________',
            '> Nota di riservatezza - Le informazioni contenute in questa comunicazione e gli…',
            '>',
            '> Da: export@agade.info [mailto:chiarodiluce@gmail.com]',
            '> Inviato: venerdì 9 giugno 2017 15:50',
            '> A: geronazzo <geronazzo@voidstudicom.it>',
            '> Oggetto: Ordine',
            '>',
            '> Buongiorno Mariachiara',
            '> scusa l’ulteriore disturbo…',
            '> Mi dai un occhio alla presente e mi confermi che va bene fare la dichiarazione…',
            '> Grazie',
            '> A disposizione',
            '> Alessandra',
            '>',
            '> Inizio messaggio inoltrato:',
            '>',
            '> Da: "export@agade.info" <export@agade.info>',
            '> Oggetto: Ordine',
            '> Data: 9 giugno 2017 09:44:46 CEST',
            '> A: geronazzo <geronazzo@voidstudicom.it>',
            '>',
            '> Buongiorno Mariachiara',
            '> scusa l’ulteriore disturbo…',
            '> Ecco cosa mi risponde stamattina MM LAMPADARI: é corretto che io rediga la lettera che mi chiedono?',
            '> Grazie',
            '> A disposizione',
            '>',
        ],
    ),
    QuoteCase(
        'Outlook: p.MsoNormal lines with &nbsp; paragraphs between',
        'sa', 'easy_ham/01491.870d988a32a3c80dd577625de0f2b708',
        [
            '> Hi -',
            '>',
            '> I upgraded to 2.40 (now 2.41) last week and the messages which are definitely …',
            '>',
            '> Regards',
            '>',
            '> Ray Gardener',
            '> Sheffield Hallam University',
            '> UK',
        ],
    ),
    QuoteCase(
        'Outlook newsletter: table cells and p.MsoNormal',
        'sa', 'hard_ham/00010.e82bd1f5f7eae426682a7f8e4cbf1ae6',
        [
            '> If this message is not displaying properly, click here <http://lindows.com/mm>…',
            '> <http://lindows.com/>',
            '> Michael’s Minute:',
            '> Do the Math...Dispel the Myths',
            '>',
            '> A reporter came by the Lindows.com <http://www.lindows.com/> offices last Frid…',
        ],
    ),
    QuoteCase(
        'Mozilla: br lines, then blockquote type=cite holding pre',
        'sa', 'easy_ham/00883.c44a035e7589e83076b7f1fed8fa97d5',
        [
            '> I actually thought of this kind of active chat at AOL (in 1996 I think), bring…',
            '>',
            '> sdw',
            '>',
            '> Lorin Rivers wrote:',
            '> > On 10/2/02 12:00 PM, "Mr. FoRK" <fork_list@hotmail.com> wrote:',
            "> > > What about a situation where you don't directly ask/talk to the bot, but",
            '> > > they listen in and advise/correct/interject/etc?',
            '> > > example: two people discussing trips, etc. may trigger a weather bot to',
            '> > > mention what the forecast says - without directly being asked.',
            "> > My guess is it's more insidious than that, it's going to be ActiveSpam.",
            '>>',
            '> > "Oh, you\'re going to Seattle? I can get you airline tickets for less"',
            '>>',
            '> > Yuck',
        ],
    ),
    QuoteCase(
        'Thunderbird: div and p lines around images',
        'corpus', 'thunderbird-mailnews-testdata/mail/test/browser/message-reader/data/image_sizing_test.eml',
        [
            '> Vertical padding to make sure the images are below the fold.',
            '> An inline image:',
            '> A stretched image:',
            '> Image inside a link:',
            '> <https://example.com>',
        ],
    ),
    QuoteCase(
        'Mozilla: blockquote type=cite of a pasted article',
        'sa', 'easy_ham_2/01029.09304353cc025c0198421b5016a0b81c',
        [
            '> Well, all the transhumanists should be very interested in this one:',
            '> <http://www.newscientist.com/news/news.jsp?id=ns99992677>',
            '>',
            '> > Cross-species testes transplant successful',
            '>',
            '> > 19:00 14 August 02 NewScientist.com news service',
        ],
    ),
    QuoteCase(
        'Thunderbird: moz-txt-link anchors with wrapped hrefs',
        'corpus', 'flanker-fixtures/messages/long-links.eml',
        [
            '> http://www.longurlmaker.com/view/?id=UAOJNVKBMQUGPYZKCQZRZKJEXRCRXMRSMFBZBMBOD…',
            '>',
            '> Very long link <http://www.longurlmaker.com/view/?id=UAOJNVKBMQUGPYZKCQZRZKJEX…',
            '>',
            '> THis is very long url',
        ],
    ),
]


def _same_lines(got: list[str], expected: list[str]) -> None:
    assert len(got) >= len(expected), got
    for number, (line, want) in enumerate(zip(got, expected, strict=False), start=1):
        if want.endswith("…"):
            assert line.startswith(want[:-1]), f"line {number}: {line!r}"
        else:
            assert line == want, f"line {number}: {line!r} != {want!r}"


@pytest.mark.parametrize("case", TABLE, ids=[c.client for c in TABLE])
def test_reply_to_real_html_quotes_it_line_by_line(case: QuoteCase) -> None:
    parsed = parse_mime(case.raw())
    assert parsed.body_html is not None
    _, markup = quote_original(parsed, ATTRIBUTION)
    assert markup is not None
    sent_html = sanitize_outgoing(markup)  # what the composer stores and sends (ComposerService._cleaned)
    assert re.search(r"<div>On Wed, 9 Feb 2011 at 11:55, Bob Simple &lt;hello@example.com&gt; wrote:</div>"
                     r'<blockquote type="cite"[^>]*>', sent_html)
    assert sent_html.rstrip().endswith("</blockquote>")
    text = mail_text(sent_html).splitlines()
    assert text[0] == ATTRIBUTION
    _same_lines(text[1:], case.expected)
    assert all(line.startswith(">") for line in text[1:])  # every line of the original is quoted


def test_table_has_every_client_the_issue_names() -> None:
    raws = [c.raw() for c in TABLE]
    assert len(TABLE) >= 8
    for marker in (b"gmail_quote", b"MsoNormal", b"Apple-converted-space", b"moz-"):
        assert any(marker in raw for raw in raws), marker


def test_html_only_message_is_quoted_in_plain_text_line_by_line() -> None:
    """A plain-text reply to a message that has only HTML (Gmail's divs) quotes its lines, never "Line oneLine two"."""
    gmail = parse_mime((CORPUS / TABLE[0].path).read_bytes())
    assert gmail.body_html is not None
    html_only = parse_mime(b"From: hello@example.com\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                           + gmail.body_html.encode())
    text, _ = quote_original(html_only, ATTRIBUTION)
    lines = text.strip("\n").splitlines()
    assert lines[0] == ATTRIBUTION
    _same_lines(lines[1:], TABLE[0].expected)


def test_forward_of_outlook_html_keeps_its_lines() -> None:
    outlook = next(c for c in TABLE if c.path.startswith("easy_ham/01491"))
    _, markup = forward_original(parse_mime(outlook.raw()), Locale.EN, "UTC")
    assert markup is not None
    lines = mail_text(sanitize_outgoing(markup)).splitlines()
    assert lines[0] == "---------- Forwarded message ---------"
    start = lines.index("Hi -")
    assert lines[start:start + 3] == ["Hi -", "", lines[start + 2]]
    assert lines[-3:] == ["Ray Gardener", "Sheffield Hallam University", "UK"]


@pytest.mark.parametrize(("markup", "expected"), [
    ("<div>Line one</div><div>Line two</div>", "Line one\nLine two"),
    ("<div dir=ltr>One<div><br></div><div>Two</div></div>", "One\n\nTwo"),
    ("<p class=MsoNormal>One<o:p></o:p></p><p class=MsoNormal><o:p>&nbsp;</o:p></p><p class=MsoNormal>Two</p>",
     "One\n\nTwo"),
    ("One<br>Two<br><br>Three", "One\nTwo\n\nThree"),
    ("<ul><li>a</li><li>b</li></ul><ol><li>c</li></ol>", "- a\n- b\n1. c"),
    ("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"),
    ("<h1>Title</h1>Text", "Title\nText"),
    ("<div class=moz-cite-prefix>On x wrote:<br></div><blockquote type=cite>a<blockquote>b</blockquote></blockquote>",
     "On x wrote:\n> a\n> > b"),
    ("<head><style>p{margin:0}</style><title>t</title></head><body>x<script>y()</script></body>", "x"),
    ("<div>-- <br>Sig</div>", "-- \nSig"),
    ("", ""),
    ("<<<>>>", "<<<>>>"),
])
def test_html_to_text_rules(markup: str, expected: str) -> None:
    assert html_to_text(markup) == expected


@pytest.mark.parametrize("case", [c for c in TABLE if "table" not in c.client and "wrapped" not in c.client],
                         ids=lambda c: c.client)
def test_the_rich_editors_copy_of_the_quote_keeps_the_same_lines(case: QuoteCase) -> None:
    """The rich editor (Trix) keeps only br, blockquote, h1, pre and lists as line structure: what the composer
    hands it (editor_markup) must quote the same lines once sent (the browser test sends it through Trix)."""
    _, markup = quote_original(parse_mime(case.raw()), ATTRIBUTION)
    assert markup is not None
    editor = editor_markup(sanitize_outgoing(markup))
    assert not re.search(r"<(p|div|tr|td|th|table)\b", editor, re.IGNORECASE)
    sent = cited(sanitize_outgoing(editor))  # what ComposerService._cleaned stores
    assert '<blockquote type="cite"' in sent
    lines = mail_text(sent).splitlines()
    assert lines[0] == ATTRIBUTION
    _same_lines(lines[1:], case.expected)
