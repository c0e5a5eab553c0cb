"""Previews of PDF attachments for the conversation's attachment cards (issue 32): the first page as a small PNG.

A PDF from mail is untrusted input, so it is drawn in a bounded way: only files up to `MAX_PDF_BYTES`, only the
first page at a bounded size, in a child process of its own (`mail/pdf_page.py`: PDFium behind its own memory and
CPU limits) that is killed after `RENDER_SECONDS`, at most `PARALLEL_RENDERS` at a time. Each PDF blob is drawn
once: the PNG, or the fact that it could not be drawn, is kept in `attachment_preview` beside the blob. Anything
that goes wrong leaves the card as it was without a preview (type icon, size, download), never an error page.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterable
from pathlib import Path

from plmail.db.database import Database
from plmail.domain.errors import NotFoundError, PlmailError
from plmail.mail.blobs import BlobStore
from plmail.mail.pdf_page import UNREADABLE
from plmail.mail.repos.previews import PreviewRepository
from plmail.mail.repos.views import AttachmentView, MailViewRepository

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
PREVIEW_MEDIA_TYPE = "image/png"
MAX_PDF_BYTES = 20 * 1024 * 1024  # larger PDFs keep their icon card: their first page is not worth the memory
RENDER_SECONDS = 10.0
PARALLEL_RENDERS = 2  # the machine's cores are for mail first
PAGE_RENDERS = 4  # PDFs drawn while a conversation page waits; any further ones are drawn on a later visit
_CHILD = Path(__file__).with_name("pdf_page.py")

log = logging.getLogger(__name__)


def has_pdf_type(part: AttachmentView) -> bool:
    return part.content_type.lower() in PDF_TYPES


class AttachmentPreviews:
    def __init__(self, db: Database, blobs: BlobStore, *, max_pdf_bytes: int = MAX_PDF_BYTES,
                 render_seconds: float = RENDER_SECONDS) -> None:
        self.views = MailViewRepository(db)
        self.max_pdf_bytes = max_pdf_bytes
        self.render_seconds = render_seconds
        self.repo = PreviewRepository(db)
        self.blobs = blobs
        self._slots = asyncio.Semaphore(PARALLEL_RENDERS)
        self._drawing: dict[str, asyncio.Task[bytes | None]] = {}

    async def image(self, user_id: int, part_id: int) -> bytes:
        """The PNG of the user's own PDF attachment, drawn now if it never was; NotFoundError when the part is not
        the user's, is no PDF, or could not be drawn."""
        part = await self.views.part(user_id, part_id)
        if part is None or part.sha256 is None or not has_pdf_type(part):
            raise NotFoundError("No such PDF attachment.")
        kept = await self.repo.drawn([part.sha256])
        image = kept[part.sha256] if part.sha256 in kept else await self._draw_once(part.sha256, part.size)
        if image is None:
            raise NotFoundError("This PDF has no preview: it could not be drawn.")
        return image

    async def available(self, parts: Iterable[AttachmentView]) -> set[int]:
        """Which of these parts (already the reader's own, as the conversation lists them) show a preview: PDFs drawn
        before, and up to PAGE_RENDERS not tried yet, drawn now."""
        pdfs = [p for p in parts if p.sha256 is not None and has_pdf_type(p) and not p.is_inline]
        if not pdfs:
            return set()
        kept = await self.repo.drawn(sorted({p.sha256 for p in pdfs if p.sha256}))
        untried = {p.sha256: p.size for p in pdfs if p.sha256 and p.sha256 not in kept}
        drawn = await asyncio.gather(*(self._draw_once(digest, size)
                                       for digest, size in list(untried.items())[:PAGE_RENDERS]))
        kept.update(zip(list(untried)[:PAGE_RENDERS], drawn, strict=True))
        return {p.id for p in pdfs if p.sha256 and kept.get(p.sha256) is not None}

    async def _draw_once(self, digest: str, size: int) -> bytes | None:
        """Draw the blob and keep the outcome; a request for a PDF already being drawn waits for that drawing."""
        task = self._drawing.get(digest)
        if task is None:
            task = asyncio.ensure_future(self._draw_and_keep(digest, size))
            self._drawing[digest] = task
            task.add_done_callback(lambda _: self._drawing.pop(digest, None))
        return await asyncio.shield(task)

    async def _draw_and_keep(self, digest: str, size: int) -> bytes | None:
        if size > self.max_pdf_bytes:
            await self.repo.keep(digest, None)
            return None
        try:
            data = await self.blobs.get(digest)
        except PlmailError as error:  # missing or damaged bytes: no preview now, perhaps after a resync
            log.warning("no preview for blob %s…: %s", digest[:12], error)
            return None
        if len(data) > self.max_pdf_bytes:
            await self.repo.keep(digest, None)
            return None
        try:
            async with self._slots:
                image = await draw_first_page(data, self.render_seconds)
        except OSError as error:  # the child could not be started (no memory, no process slots): try another time
            log.warning("could not start the PDF renderer: %s", error)
            return None
        await self.repo.keep(digest, image)
        return image


async def draw_first_page(data: bytes, seconds: float = RENDER_SECONDS) -> bytes | None:
    """The PNG the child process draws, or None when it says the file is unreadable, fails, or overruns `seconds`
    (then it is killed)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-I", str(_CHILD),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(data), seconds)
    except TimeoutError:
        log.warning("a PDF's first page took longer than %.1f s to draw; it keeps its icon", seconds)
        return None
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    if child.returncode != 0 or not out.startswith(b"\x89PNG"):
        reason = "unreadable" if child.returncode == UNREADABLE else f"exit status {child.returncode}"
        log.info("a PDF attachment has no preview (%s): %s", reason, err.decode(errors="replace").strip()[:200])
        return None
    return out
