"""Draw the first page of a PDF as a small PNG, in a child process of its own (issue 32's attachment cards).

A PDF in mail is untrusted, and PDFium is C++: this file runs as `python -I pdf_page.py`, reads the PDF on stdin
and writes the PNG on stdout, importing nothing of plmail. The parent (`mail/previews.py`) bounds its time and kills
it when it overruns; here the process bounds its own memory and CPU, so a hostile file that loops, eats memory or
crashes PDFium ends this process, never the server. Exit status 0: a PNG on stdout; `UNREADABLE`: the file is no
PDF we can draw (broken, encrypted, no pages); anything else (a signal, a limit) is a failure as well.
"""

from __future__ import annotations

import resource
import struct
import sys
import zlib

WIDTH = 240  # the card's preview is shown at up to 240 CSS px wide
MAX_HEIGHT = 480  # a strip-shaped page is drawn narrower instead of taller than this
UNREADABLE = 3
_MEMORY = 1024 * 1024 * 1024  # address space PDFium may use for one page
_CPU_SECONDS = 10


def png(width: int, height: int, rgb_rows: list[bytes]) -> bytes:
    """An 8-bit RGB PNG (RFC 2083) of the rows, each prefixed with filter type 0 (none)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + row for row in rgb_rows), 6)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def first_page_png(data: bytes) -> bytes:
    """The first page drawn at most WIDTH wide and MAX_HEIGHT tall, on white, without form fields."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        if len(document) < 1:
            raise ValueError("the PDF has no pages")
        page = document[0]
        width, height = page.get_size()
        if page.get_rotation() % 180:
            width, height = height, width
        if width <= 0 or height <= 0:
            raise ValueError("the first page has no size")
        scale = min(WIDTH / width, MAX_HEIGHT / height)
        bitmap = page.render(scale=scale, may_draw_forms=False, rev_byteorder=True)
        raw = bytes(bitmap.buffer)
        channels = bitmap.n_channels
        if channels != 3:
            raise ValueError(f"unexpected bitmap of {channels} channels")
        row_bytes = bitmap.width * 3
        rows = [raw[y * bitmap.stride: y * bitmap.stride + row_bytes] for y in range(bitmap.height)]
        return png(bitmap.width, bitmap.height, rows)
    finally:
        document.close()


def main() -> int:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (_CPU_SECONDS, _CPU_SECONDS))
    data = sys.stdin.buffer.read()
    try:
        image = first_page_png(data)
    except Exception as error:
        sys.stderr.write(f"{type(error).__name__}: {error}\n")
        return UNREADABLE
    sys.stdout.buffer.write(image)
    return 0


if __name__ == "__main__":
    sys.exit(main())
