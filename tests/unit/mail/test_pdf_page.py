"""The PDF renderer's bounds (mail/pdf_page.py, run as its own process by mail/previews.py): whatever size a page
claims, the preview is at most 240 px wide and 480 px tall; a file that is no drawable PDF gives no image."""

from __future__ import annotations

import os
import time
from pathlib import Path

from plmail.mail.previews import draw_first_page
from tests.support.images import png_pixels


def _pdf(width: float, height: float, content: bytes = b"", *, pages: int = 1) -> bytes:
    """A minimal PDF 1.4 written by hand (ISO 32000-1 §7.5: header, objects, cross-reference table, trailer)."""
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode()]
    for i in range(pages):
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Contents {4 + 2 * i} 0 R >>"
                       .encode())
        objects.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream")
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


async def test_an_a4_page_is_drawn_240_px_wide_with_its_black_box_where_the_pdf_puts_it() -> None:
    # A4 is 595 × 842 pt; a black box over the page's top half (PDF's y axis points up).
    image = await draw_first_page(_pdf(595, 842, b"0 0 0 rg 0 421 595 421 re f"))
    assert image is not None
    width, height, rows = png_pixels(image)
    assert width == 240
    assert abs(height - 240 * 842 / 595) <= 1
    assert rows[height // 4][3 * (width // 2)] < 40, "the top half is black"
    assert rows[3 * height // 4][3 * (width // 2)] > 215, "the bottom half is white paper"


async def test_a_page_claiming_a_huge_size_is_drawn_no_larger_than_the_card_needs() -> None:
    # 200 inches square (PDF's largest page size, ISO 32000-1 Annex C), and a strip a hundred times taller than wide.
    square = await draw_first_page(_pdf(14400, 14400))
    strip = await draw_first_page(_pdf(144, 14400))
    assert square is not None and strip is not None
    assert png_pixels(square)[:2] == (240, 240)
    strip_width, strip_height, _ = png_pixels(strip)
    assert strip_height == 480
    assert strip_width <= 6


async def test_files_that_are_no_drawable_pdf_give_no_image() -> None:
    good = _pdf(595, 842)
    assert await draw_first_page(good) is not None
    assert await draw_first_page(good[: len(good) // 2]) is None  # truncated: no cross-reference table
    assert await draw_first_page(b"") is None
    assert await draw_first_page(b"<html><script>alert(1)</script></html>") is None
    assert await draw_first_page(_pdf(595, 842, pages=0)) is None  # a document without pages


async def test_a_drawing_that_overruns_its_time_is_killed_and_gives_no_image() -> None:
    # A time too short for any drawing stands in for a file that makes PDFium loop: the child is killed, reaped,
    # and the caller has its answer at once.
    started = time.monotonic()
    assert await draw_first_page(_pdf(595, 842), seconds=0.01) is None
    assert time.monotonic() - started < 5
    assert not _renderers_running(), "no renderer is left running"


def _renderers_running() -> list[str]:
    """Command lines of this process's children that run the renderer (read from /proc, Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and "pdf_page.py" in command:
            found.append(command)
    return found
