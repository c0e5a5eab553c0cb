"""Parsing and sanitising a page of fetched mail in a process of its own, while this one stores the page before.

The first import keeps two pages in flight: one is written by PostgreSQL while the next is parsed. Parsing in
the gaps of the event loop (as before) made each of the page's database calls wait for the message being parsed
to finish, and the parser and sanitiser are most of the Python time per message; so the parse moves to a child
process, `python -m plmail.mail.parse_worker`, which imports only the parser (about 35 MiB), not the server.

The two talk over the child's stdin and stdout in frames: an 8-byte length, then a pickle. Pickle is safe here:
both ends are this program, and the child reads only what its parent wrote. A message the parser raises on is
answered with the reason, as parsing in-process did; a message that kills the process (a crash in a C extension,
memory exhausted) costs the page its parse, and `parse_each` then sends the page one message at a time, so only
that message is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from plmail.domain.ingest import IngestedMessage
from plmail.domain.messages import ParsedMessage
from plmail.mail.mime import parse_mime
from plmail.mail.rows import RowFields, row_fields

log = logging.getLogger(__name__)

IDLE_SECONDS = 30.0  # a child not asked for this long exits; the next page starts another (~0.5 s)
BUSY_LOAD_PER_CPU = 3.5  # above this one-minute load per CPU a child parsing beside the import no longer pays
_HEADER = struct.Struct("!Q")
_READY = b"plmail parse worker ready\n"
_WORKER_MODULE = "plmail.mail.parse_worker"
_SOURCE_ROOT = str(Path(__file__).resolve().parents[2])  # where `plmail` is imported from, for the child

Parser = Callable[[bytes], ParsedMessage]


@dataclass(frozen=True, slots=True)
class ParseJob:
    """One fetched message: its bytes, the id its row will have (sanitised HTML links its parts under it), and
    what its provider knows of it (`IngestedMessage`'s other fields)."""

    raw: bytes
    message_id: int
    facts: dict[str, Any] = field(default_factory=dict)

    def ingested(self, parsed: ParsedMessage) -> IngestedMessage:
        return IngestedMessage(parsed=parsed, raw=self.raw, **self.facts)


@dataclass(frozen=True, slots=True)
class ParseResult:
    """The parse, or why there is none (`error`); `fields` is None when only the row fields failed (the
    pipeline then works them out in its transaction, as for a message not read ahead)."""

    parsed: ParsedMessage | None
    fields: RowFields | None
    error: str | None = None


class ParserProcessDied(Exception):
    """The child stopped answering (it died, or its answer was cut off)."""


class ParserUnavailable(Exception):
    """No child could be started at all; the caller parses in its own process."""


def parse_jobs(jobs: Sequence[ParseJob], parser: Parser = parse_mime) -> list[ParseResult]:
    """What the child does with a request; each message on its own, so one that raises costs only itself."""
    results: list[ParseResult] = []
    for job in jobs:
        try:
            ingested = job.ingested(parser(job.raw))
        except Exception as exc:  # the parser promises not to raise; if it does, only this message pays
            log.exception("could not parse message %s", job.facts.get("source_ref"))
            results.append(ParseResult(None, None, f"parse: {type(exc).__name__}: {exc}"))
            continue
        try:
            fields: RowFields | None = row_fields(ingested, job.message_id)
        except Exception:
            log.info("preparing %s ahead failed; it is prepared with its batch", ingested.source_ref, exc_info=True)
            fields = None
        results.append(ParseResult(ingested.parsed, fields))
    return results


def spare_cpu(load: float | None = None, cpus: int | None = None) -> bool:
    """Whether the machine has a CPU to spare for a child that parses beside the import (`load`: the one-minute load
    average, `cpus`: the CPUs this process may run on; both read from the system when not given).

    The child costs about a fifth more CPU in all (pickling both ways) to take the parse off the importing process,
    so it pays only while a second CPU has room. Measured on 2 cores: 10-25 % faster at load 1, 4-14 % faster at
    load 6, about 20 % slower at load 8-9; one CPU has no second to give."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average on this system: nothing says the CPUs are busy
            load = 0.0
    return cpus >= 2 and load < BUSY_LOAD_PER_CPU * cpus


class ParserProcess:
    """The parent's end: one child, one request at a time, started when first asked and ended when idle.

    `parser` names the function the child parses with, as "module:function" (the stdlib parser by default);
    tests name one of their own to make a child die on a given message. `when` is asked before each page (None:
    always); the page is parsed in the importing process when it says no (`spare_cpu`)."""

    def __init__(self, parser: str | None = None, *, idle_seconds: float = IDLE_SECONDS,
                 when: Callable[[], bool] | None = None) -> None:
        self.parser = parser
        self.idle_seconds = idle_seconds
        self.when = when
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._idle: asyncio.TimerHandle | None = None
        self.started = 0  # children started so far (for tests and logs)

    def wanted(self) -> bool:
        """Whether the next page goes to the child (asked per page, so a machine that gets busy mid-import parses
        in the importing process until it has room again)."""
        return self.when is None or self.when()

    async def parse(self, jobs: Sequence[ParseJob]) -> list[ParseResult]:
        """The results of `jobs`, in order. Raises ParserProcessDied when the child died on them (it is
        restarted on the next call) and ParserUnavailable when none could be started."""
        async with self._lock:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            process = await self._running()
            assert process.stdin is not None
            assert process.stdout is not None
            payload = pickle.dumps(list(jobs), protocol=pickle.HIGHEST_PROTOCOL)
            try:
                process.stdin.write(_HEADER.pack(len(payload)) + payload)
                await process.stdin.drain()
                size = _HEADER.unpack(await process.stdout.readexactly(_HEADER.size))[0]
                results: list[ParseResult] = pickle.loads(  # noqa: S301 - our own child's answer
                    await process.stdout.readexactly(size))
            except (ConnectionError, asyncio.IncompleteReadError, EOFError, pickle.UnpicklingError) as exc:
                await self._discard()
                raise ParserProcessDied(f"the parsing process stopped: {type(exc).__name__}") from exc
            except BaseException:
                await self._discard()  # cancelled mid-frame: the stream is out of step, start afresh next time
                raise
            if len(results) != len(jobs):
                await self._discard()
                raise ParserProcessDied(f"the parsing process answered {len(results)} of {len(jobs)} messages")
            self._idle = asyncio.get_running_loop().call_later(self.idle_seconds, self._end_idle)
            return results

    async def parse_each(self, jobs: Sequence[ParseJob]) -> list[ParseResult]:
        """Like `parse`, but a message that kills the child is answered as refused and the others are parsed:
        the page is sent whole, and after a death one message at a time."""
        try:
            return await self.parse(jobs)
        except ParserProcessDied as exc:
            log.warning("the parsing process died on a page of %s messages; parsing them one by one: %s",
                        len(jobs), exc)
        results: list[ParseResult] = []
        for job in jobs:
            try:
                results.extend(await self.parse([job]))
            except ParserProcessDied as exc:
                log.error("the parsing process died on message %s", job.facts.get("source_ref"))
                results.append(ParseResult(None, None, f"parse: {exc}"))
        return results

    async def _running(self) -> asyncio.subprocess.Process:
        if self._process is not None and self._process.returncode is None:
            return self._process
        await self._discard()
        # -P: the working directory is not put on the path, so the child imports the same plmail as this process.
        argv = [sys.executable, "-P", "-m", _WORKER_MODULE, *([self.parser] if self.parser else [])]
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**20,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(
                    filter(None, (_SOURCE_ROOT, os.environ.get("PYTHONPATH"))))})
        except OSError as exc:
            raise ParserUnavailable(f"could not start the parsing process: {exc}") from exc
        # The child says it is ready once its imports are done: one that cannot start is told apart from one
        # that died on a message, so a broken installation parses here instead of refusing every message.
        assert process.stdout is not None
        try:
            ready = await process.stdout.readexactly(len(_READY))
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            ready = b""
            log.warning("the parsing process did not start: %s", exc)
        if ready != _READY:
            self._process = process
            await self._discard()
            raise ParserUnavailable("the parsing process did not start")
        self.started += 1
        self._process = process
        return process

    @property
    def pid(self) -> int | None:
        """The running child's process id; None when none runs."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    def peak_rss_mib(self) -> float | None:
        """The running child's peak resident memory (Linux), for the benchmark; None when none runs."""
        process = self._process
        if process is None or process.returncode is not None:
            return None
        try:
            with open(f"/proc/{process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def _end_idle(self) -> None:
        self._idle = None
        process = self._process
        if process is not None and process.stdin is not None and not self._lock.locked():
            self._process = None
            process.stdin.close()  # the child reads end-of-file and exits
            asyncio.get_running_loop().create_task(_reap(process))

    async def _discard(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await _reap(process)

    async def close(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        async with self._lock:
            await self._discard()


async def _reap(process: asyncio.subprocess.Process) -> None:
    try:
        async with asyncio.timeout(5):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def _read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    return data if len(data) == size else None


def _parser_named(name: str | None) -> Parser:
    if not name:
        return parse_mime
    module, _, attribute = name.partition(":")
    found: Parser = getattr(__import__(module, fromlist=[attribute]), attribute)
    return found


def main(argv: Sequence[str]) -> None:
    """The child: answer frames until the parent closes stdin."""
    # Our own handle on the pipe, and fd 1 pointed at stderr, so a stray print cannot corrupt a frame.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    logging.basicConfig(level=logging.WARNING, format="plmail parse worker: %(levelname)s %(message)s")
    parser = _parser_named(argv[0] if argv else None)
    out.write(_READY)
    out.flush()
    source = sys.stdin.buffer
    while (frame := _read_frame(source)) is not None:
        jobs = pickle.loads(frame)  # noqa: S301 - written by our parent
        answer = pickle.dumps(parse_jobs(jobs, parser), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(answer)) + answer)
        out.flush()


if __name__ == "__main__":
    # Run as the module's real name, so the results pickle as plmail.mail.parse_worker's, not __main__'s.
    from plmail.mail import parse_worker

    parse_worker.main(sys.argv[1:])
