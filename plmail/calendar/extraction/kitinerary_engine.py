"""KDE's KItinerary engine (`kitinerary-extractor`) as a sandboxed child process.

One run per message: the raw bytes on stdin, JSON-LD on stdout. The child gets a time limit, a memory
limit, no network (a network namespace of its own, where the machine allows one) and nothing of the
server's environment, because it parses PDFs, barcodes and archives an attacker wrote. One attempt: a
message that did not read within the limit will not read on the second try either.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import glob
import json
import logging
import os
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from plmail.domain.errors import PlmailError

log = logging.getLogger(__name__)

KITINERARY = "kitinerary-extractor"
# Debian and Ubuntu install it outside PATH (libkpimitinerary-bin: …/libexec/kf5 or kf6).
KITINERARY_PLACES = ("/usr/lib/*/libexec/kf*/kitinerary-extractor", "/usr/libexec/kf*/kitinerary-extractor")
DISABLED = "off"
TIMEOUT_SECONDS = 10.0
MEMORY_LIMIT = 1 << 30  # address space: Qt and poppler reserve generously, a hostile PDF gets no further
MAX_INPUT_BYTES = 16 * 1024 * 1024
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
_ISOLATION_PROBES = (("unshare", "--net", "--map-root-user"), ("unshare", "--net"))


class KItineraryError(PlmailError):
    """One run failed (timeout, crash, output that is not JSON); it costs that message's KItinerary claims."""


@dataclass(frozen=True, slots=True)
class EngineStatus:
    available: bool
    binary: Path | None
    isolated: bool  # runs without network
    detail: str


def find_kitinerary(configured: str | None = None, path_env: str | None = None) -> Path | None:
    """The binary: the configured path (``off`` disables it), else on PATH, else where Debian puts it."""
    if configured is not None and configured.strip():
        if configured.strip().lower() == DISABLED:
            return None
        chosen = Path(configured.strip()).expanduser()
        return chosen if chosen.is_file() and os.access(chosen, os.X_OK) else None
    found = shutil.which(KITINERARY, path=path_env)
    if found:
        return Path(found)
    for pattern in KITINERARY_PLACES:
        for match in sorted(glob.glob(pattern)):
            if os.access(match, os.X_OK):
                return Path(match)
    return None


@functools.cache
def network_isolation() -> tuple[str, ...] | None:
    """The command prefix that runs a child in an empty network namespace, or None where none is allowed
    (no user namespaces and not root). Probed once per process."""
    for prefix in _ISOLATION_PROBES:
        if shutil.which(prefix[0]) is None:
            continue
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return prefix
    log.warning("KItinerary runs with the network: this machine allows no network namespace (unshare)")
    return None


def _limits(memory: int, seconds: float) -> Callable[[], None]:
    cpu = int(seconds) + 1

    def apply() -> None:  # runs in the child between fork and exec: system calls only
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


class KItineraryEngine:
    """The binary found once; ``extract`` runs it on one message's bytes."""

    def __init__(self, binary: Path | None, *, timeout: float = TIMEOUT_SECONDS, memory: int = MEMORY_LIMIT) -> None:
        self.binary = binary
        self.timeout = timeout
        self.memory = memory

    @classmethod
    def discover(cls, configured: str | None = None) -> KItineraryEngine:
        binary = find_kitinerary(configured)
        if binary is None:
            # Said once here (and on the admin page), never once per message.
            log.info("KItinerary not found (optional: Debian package libkpimitinerary-bin reads more booking mail)")
        return cls(binary)

    @property
    def available(self) -> bool:
        return self.binary is not None

    def status(self) -> EngineStatus:
        if self.binary is None:
            return EngineStatus(False, None, False, "not installed")
        isolated = network_isolation() is not None
        return EngineStatus(True, self.binary, isolated, str(self.binary))

    async def extract(self, data: bytes, *, context_date: datetime | None = None) -> list[object]:
        """The JSON-LD items KItinerary reads in ``data`` (a message, a PDF, a pass); [] when it reads none."""
        if self.binary is None:
            return []
        if len(data) > MAX_INPUT_BYTES:
            raise KItineraryError(f"{len(data)} bytes is more than KItinerary is given")
        command = [*(await asyncio.to_thread(network_isolation) or ()), str(self.binary)]
        if context_date is not None:
            # Plain-text tickets often print "10 Sep" without a year: the mail's own date decides which one.
            command += ["--context-date", context_date.isoformat()]
        with tempfile.TemporaryDirectory(prefix="plmail-kitinerary-") as home:
            environment = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "TZ": "UTC",
                           "QT_QPA_PLATFORM": "offscreen", "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home}
            output = await self._run(command, data, environment)
        try:
            parsed = json.loads(output.decode("utf-8", "replace")) if output.strip() else []
        except ValueError as error:
            raise KItineraryError(f"KItinerary printed no JSON: {error}") from None
        return parsed if isinstance(parsed, list) else [parsed]

    async def _run(self, command: list[str], data: bytes, environment: dict[str, str]) -> bytes:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=environment, start_new_session=True,
            preexec_fn=_limits(self.memory, self.timeout),  # setrlimit only: nothing that takes a Python lock
        )
        try:
            output = await asyncio.wait_for(self._exchange(process, data), self.timeout)
        except TimeoutError:
            raise KItineraryError(f"KItinerary took longer than {self.timeout:g} s") from None
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if process.returncode != 0:
            raise KItineraryError(f"KItinerary exited with status {process.returncode}")
        return output

    @staticmethod
    async def _exchange(process: asyncio.subprocess.Process, data: bytes) -> bytes:
        assert process.stdin is not None
        assert process.stdout is not None

        async def feed() -> None:
            assert process.stdin is not None
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(data)
                await process.stdin.drain()
            process.stdin.close()

        writer = asyncio.create_task(feed())
        chunks: list[bytes] = []
        size = 0
        while chunk := await process.stdout.read(65536):
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                writer.cancel()
                raise KItineraryError(f"KItinerary printed more than {MAX_OUTPUT_BYTES} bytes")
            chunks.append(chunk)
        await writer
        await process.wait()
        return b"".join(chunks)
