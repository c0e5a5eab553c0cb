"""Draws the web app's PNG icons (plmail/static/icons) from the same shapes as plmail.svg, without an image library:
the envelope on the blue tile, the full-bleed maskable variant (its picture inside the central 80 % safe zone the
maskable icon spec asks for), and the shortcut icons for Compose and Calendar. Run it again after changing a shape:
`.venv/bin/python tools/make_icons.py`."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "plmail" / "static" / "icons"
BLUE = (0x24, 0x57, 0xC5)
WHITE = (0xFF, 0xFF, 0xFF)
SAMPLES = 3  # per axis: anti-aliased edges

# A shape answers, for a point in the 512-unit design square, which colour it is (None: transparent).
Shape = Callable[[float, float], tuple[int, int, int] | None]


def _rounded(x: float, y: float, size: float, radius: float) -> bool:
    cx = min(max(x, radius), size - radius)
    cy = min(max(y, radius), size - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2 and 0 <= x <= size and 0 <= y <= size


def _near_segment(x: float, y: float, a: tuple[float, float], b: tuple[float, float], half_width: float) -> bool:
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
    px, py = ax + t * dx, ay + t * dy
    return (x - px) ** 2 + (y - py) ** 2 <= half_width ** 2


def envelope(scale: float, offset: float) -> Callable[[float, float], tuple[int, int, int] | None]:
    """The envelope of plmail.svg (x 96..416, y 160..368, the flap a 28-unit line), scaled about the centre."""
    def at(x: float, y: float) -> tuple[int, int, int] | None:
        u, v = (x - offset) / scale, (y - offset) / scale
        if not (96 <= u <= 416 and 160 <= v <= 368):
            return None
        if _near_segment(u, v, (96, 160), (256, 280), 14) or _near_segment(u, v, (256, 280), (416, 160), 14):
            return BLUE
        return WHITE
    return at


def app_icon(x: float, y: float) -> tuple[int, int, int] | None:
    if not _rounded(x, y, 512, 96):
        return None
    return envelope(1.0, 0.0)(x, y) or BLUE


def maskable_icon(x: float, y: float) -> tuple[int, int, int] | None:
    """Full bleed; the envelope shrunk to 80 % so a circle mask of the safe zone never cuts it."""
    return envelope(0.8, 256 * 0.2)(x, y) or BLUE


def compose_icon(x: float, y: float) -> tuple[int, int, int] | None:
    """A pencil on the tile."""
    if not _rounded(x, y, 512, 96):
        return None
    if _near_segment(x, y, (150, 362), (350, 162), 34):
        return WHITE
    if _near_segment(x, y, (128, 384), (150, 362), 14):
        return WHITE
    return BLUE


def calendar_icon(x: float, y: float) -> tuple[int, int, int] | None:
    """A calendar sheet: a white page with a header bar and a grid of days."""
    if not _rounded(x, y, 512, 96):
        return None
    if (176 <= x <= 200 or 312 <= x <= 336) and 96 <= y <= 150:
        return WHITE
    if 104 <= x <= 408 and 124 <= y <= 408:
        if 124 <= y <= 192:
            return WHITE
        inner_x, inner_y = (x - 124) % 72, (y - 212) % 64
        if 124 <= x <= 388 and 212 <= y <= 388 and inner_x < 48 and inner_y < 44:
            return BLUE
        return WHITE
    return BLUE


def render(shape: Shape, size: int) -> bytes:
    """RGBA rows of the shape at `size` pixels, each pixel the mean of SAMPLES² points."""
    step = 512 / size
    rows = bytearray()
    for row in range(size):
        rows.append(0)  # PNG filter type: none
        for col in range(size):
            r = g = b = a = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    colour = shape((col + (sx + 0.5) / SAMPLES) * step, (row + (sy + 0.5) / SAMPLES) * step)
                    if colour is not None:
                        r, g, b, a = r + colour[0], g + colour[1], b + colour[2], a + 1
            n = SAMPLES * SAMPLES
            rows += bytes((r // a, g // a, b // a, 255 * a // n) if a else (0, 0, 0, 0))
    return bytes(rows)


def png(size: int, rgba_rows: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rgba_rows, 9))
            + chunk(b"IEND", b""))


OUTPUTS: dict[str, tuple[Shape, int]] = {
    "plmail-180.png": (app_icon, 180),
    "plmail-192.png": (app_icon, 192),
    "plmail-512.png": (app_icon, 512),
    "plmail-maskable-192.png": (maskable_icon, 192),
    "plmail-maskable-512.png": (maskable_icon, 512),
    "compose-96.png": (compose_icon, 96),
    "calendar-96.png": (calendar_icon, 96),
}


def main() -> None:
    for name, (shape, size) in OUTPUTS.items():
        (ICONS / name).write_bytes(png(size, render(shape, size)))
        print(name)


if __name__ == "__main__":
    main()
