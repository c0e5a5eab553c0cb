"""Hostile messages (the shapes that used to abort an import or eat memory), and an mbox that mixes them with
good mail."""

from __future__ import annotations

import random
from pathlib import Path

ENVELOPE = b"From sender@example.org Mon Jan  1 00:00:00 2024\n"


def good(n: int) -> bytes:
    return (f"From: friend{n}@example.org\nTo: me@example.org\nSubject: Good {n}\nMessage-ID: <good{n}@x>\n"
            f"Date: Mon, 1 Jan 2024 10:{n % 60:02d}:00 +0000\n\nHello number {n}.\n").encode()


def deep_multipart(levels: int = 5_000, message_id: str = "deep@x") -> bytes:
    head = f"From: a@example.org\nSubject: Deep\nMessage-ID: <{message_id}>\nMIME-Version: 1.0\n".encode()
    nest = b"".join(f"Content-Type: multipart/mixed; boundary=b{i}\n\n--b{i}\n".encode() for i in range(levels))
    return head + nest + b"Content-Type: text/plain\n\nthe bottom\n"


def long_header_line(size: int, message_id: str = "long@x") -> bytes:
    return (f"From: a@example.org\nMessage-ID: <{message_id}>\nSubject: ".encode() + b"A" * size
            + b"\nTo: me@example.org\n\nbody after a long header\n")


def many_attachments(count: int = 20_000, message_id: str = "parts@x") -> bytes:
    head = (f"From: a@example.org\nSubject: Attachments\nMessage-ID: <{message_id}>\nMIME-Version: 1.0\n"
            f"Content-Type: multipart/mixed; boundary=z\n\n--z\nContent-Type: text/plain\n\nsee attached\n").encode()
    parts = b"".join(b"--z\nContent-Type: application/octet-stream\nContent-Disposition: attachment; "
                     b"filename=f%d.bin\nContent-Transfer-Encoding: base64\n\nQUJD\n" % i for i in range(count))
    return head + parts + b"--z--\n"


def garbage(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    data = bytes(rng.getrandbits(8) for _ in range(size))
    return data.replace(b"\nFrom ", b"\n>From ")


def write_mbox(path: Path, entries: list[bytes], *, between: dict[int, bytes] | None = None) -> None:
    """Each entry behind its own envelope line; `between[i]` is written raw after entry i (no envelope)."""
    with open(path, "wb") as out:
        for index, raw in enumerate(entries):
            out.write(ENVELOPE + raw.rstrip(b"\n") + b"\n\n")
            if between and index in between:
                out.write(between[index] + b"\n\n")
