"""A PDF attachment's card shows its first page (issue 32: "attachments as cards with type icon, size and preview
for images and PDFs"), drawn on the server from the untrusted file, and opens the PDF in the browser."""

from __future__ import annotations

import email
import re

import httpx
import pytest

from plmail.domain.errors import NotFoundError
from plmail.mail.previews import AttachmentPreviews
from tests.integration.mail.conftest import Mailbox
from tests.support.images import png_pixels
from tests.support.mail import CORPUS
from tests.support.web import sign_in

# A real message from a mail client's test set: a US Letter page (612 × 792 pt) with the word "Test." at its top left.
PDF_MAIL = CORPUS / "flanker-fixtures" / "messages" / "attached-pdf.eml"


def _corpus_pdf() -> bytes:
    message = email.message_from_bytes(PDF_MAIL.read_bytes())
    for part in message.walk():
        if part.get_content_type() == "application/pdf":
            data = part.get_payload(decode=True)
            assert isinstance(data, bytes)
            return data
    raise AssertionError("the corpus message carries no PDF")


def _mail_with_pdf(message_id: str, subject: str, pdf: bytes, filename: str = "report.pdf") -> bytes:
    encoded = email.base64mime.body_encode(pdf).encode()
    return (f"From: sender@example.org\r\nTo: reader@example.org\r\nSubject: {subject}\r\n"
            f"Message-ID: <{message_id}>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
            "--b\r\nContent-Type: text/plain\r\n\r\nThe report is attached.\r\n"
            f"--b\r\nContent-Type: application/pdf; name=\"{filename}\"\r\n"
            f"Content-Disposition: attachment; filename=\"{filename}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            ).encode() + encoded + b"\r\n--b--\r\n"


async def _thread_page(client: httpx.AsyncClient, mailbox: Mailbox, message_id: str) -> str:
    thread_id = await mailbox.services.db.fetchval("SELECT thread_id FROM message WHERE rfc_message_id = $1",
                                                   message_id)
    page = await client.get(f"/thread/{thread_id}")
    assert page.status_code == 200
    return page.text


async def _pdf_part(mailbox: Mailbox, message_id: str) -> int:
    part_id: int = await mailbox.services.db.fetchval(
        "SELECT p.id FROM message_part p JOIN message m ON m.id = p.message_id "
        "WHERE m.rfc_message_id = $1 AND p.content_type = 'application/pdf'", message_id)
    return part_id


async def test_a_pdf_card_shows_its_first_page_and_opens_the_pdf_only_for_its_owner(
    client: httpx.AsyncClient, mailbox: Mailbox
) -> None:
    pdf = _corpus_pdf()
    await mailbox.services.pipeline.ingest([mailbox.message(_mail_with_pdf("pdf@x", "Quarterly report", pdf))])
    part_id = await _pdf_part(mailbox, "pdf@x")
    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200

    page = await _thread_page(client, mailbox, "pdf@x")
    card = re.search(r'<li class="attachment-card has-preview">(.*?)</li>', page, re.S)
    assert card, page
    assert f'href="/part/{part_id}/view" target="_blank" rel="noopener"' in card[1]
    assert f'<img class="pdf-page" src="/part/{part_id}/preview" alt="First page of the PDF"' in card[1]
    assert "report.pdf" in card[1]
    assert f'href="/part/{part_id}" download="report.pdf"' in card[1]  # the download stays

    preview = await client.get(f"/part/{part_id}/preview")
    assert preview.status_code == 200
    assert preview.headers["content-type"] == "image/png"
    assert preview.headers["x-content-type-options"] == "nosniff"
    assert preview.headers["cache-control"] == "private, max-age=86400"
    width, height, rows = png_pixels(preview.content)
    # About 240 px wide, as the card asks; the page's own proportions (US Letter) give the height.
    assert width == 240
    assert abs(height - 240 * 792 / 612) <= 1
    dark = [(x // 3, y) for y, row in enumerate(rows) for x in range(0, len(row), 3) if sum(row[x:x + 3]) < 3 * 200]
    assert dark, "the page's text is drawn"
    assert all(y < height // 4 and x < width // 2 for x, y in dark), "only where the word stands: top left"
    assert len(dark) < width * height // 50, "a white page with a word on it, not a dark square"
    # Drawn once: the PNG is kept beside the PDF's blob, and served from there again.
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM attachment_preview WHERE image IS NOT NULL") == 1
    assert (await client.get(f"/part/{part_id}/preview")).content == preview.content

    opened = await client.get(f"/part/{part_id}/view")
    assert opened.status_code == 200
    assert opened.headers["content-type"] == "application/pdf"
    assert opened.headers["content-disposition"] == "inline; filename*=UTF-8''report.pdf"
    assert opened.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" not in opened.headers["content-security-policy"]  # browsers refuse their PDF viewer there
    assert "frame-ancestors 'none'" in opened.headers["content-security-policy"]
    assert opened.content == pdf

    other = await mailbox.services.users.create_user("other@example.org", "correct horse")
    client.cookies.clear()
    await sign_in(client, other.email, "correct horse")
    assert (await client.get(f"/part/{part_id}/preview")).status_code == 404
    assert (await client.get(f"/part/{part_id}/view")).status_code == 404


async def test_a_broken_pdf_keeps_its_icon_card_and_is_tried_only_once(
    client: httpx.AsyncClient, mailbox: Mailbox
) -> None:
    pdf = _corpus_pdf()
    truncated = pdf[: len(pdf) // 2]
    await mailbox.services.pipeline.ingest([mailbox.message(_mail_with_pdf("cut@x", "Cut short", truncated,
                                                                           filename="cut.pdf"))])
    part_id = await _pdf_part(mailbox, "cut@x")
    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200

    page = await _thread_page(client, mailbox, "cut@x")
    card = re.search(r'<li class="attachment-card">(.*?)</li>', page, re.S)
    assert card, page
    assert "/preview" not in card[1]
    assert "type-icon" in card[1]
    assert '<span class="type-badge">PDF</span>' in card[1]
    assert f'href="/part/{part_id}"' in card[1]  # the card still downloads the file, nothing lost

    answer = await client.get(f"/part/{part_id}/preview")
    assert answer.status_code == 404
    assert (await client.get(f"/part/{part_id}")).content == truncated
    # The failure is remembered, so a hostile file costs one drawing, not one per page view.
    kept = await mailbox.services.db.fetch("SELECT image FROM attachment_preview")
    assert [r["image"] for r in kept] == [None]


async def test_only_pdfs_have_a_preview_or_open_in_the_browser(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    raw = (b"From: a@example.org\r\nMessage-ID: <zip@x>\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
           b"--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n"
           b"--b\r\nContent-Type: text/html; name=\"evil.html\"\r\nContent-Disposition: attachment; "
           b"filename=\"evil.html\"\r\n\r\n%PDF-1.4 <script>steal()</script>\r\n--b--\r\n")
    await mailbox.services.pipeline.ingest([mailbox.message(raw)])
    part_id = await mailbox.services.db.fetchval("SELECT id FROM message_part WHERE filename = 'evil.html'")
    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200
    assert (await client.get(f"/part/{part_id}/preview")).status_code == 404
    assert (await client.get(f"/part/{part_id}/view")).status_code == 404
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM attachment_preview") == 0


async def test_a_pdf_over_the_size_limit_is_never_drawn(mailbox: Mailbox) -> None:
    pdf = _corpus_pdf()
    await mailbox.services.pipeline.ingest([mailbox.message(_mail_with_pdf("big@x", "Large scan", pdf))])
    part_id = await _pdf_part(mailbox, "big@x")
    previews = AttachmentPreviews(mailbox.services.db, mailbox.services.blobs, max_pdf_bytes=len(pdf) - 1)
    parts = await mailbox.services.reader.views.part(mailbox.user.id, part_id)
    assert parts is not None
    assert await previews.available([parts]) == set()
    with pytest.raises(NotFoundError):
        await previews.image(mailbox.user.id, part_id)
    kept = await mailbox.services.db.fetch("SELECT image FROM attachment_preview")
    assert [r["image"] for r in kept] == [None]
