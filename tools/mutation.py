"""Mutation testing of the seed-heavy modules with mutmut; see tools/mutation.

Each module of [tool.plmail.mutation] in pyproject.toml runs in a work directory of its own
(.mutation/<module>/), whose pyproject.toml is the project's pytest settings plus a [tool.mutmut] that
mutates only that module and runs only the tests that exercise it. One PostgreSQL cluster and one
migrated template serve every mutant (PLMAIL_TEST_DATABASE_URL, PLMAIL_TEST_TEMPLATE_READY), so a
mutant costs its tests, not a cluster start and a migration.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
MUTMUT = ROOT / ".venv" / "bin" / "mutmut"
# A timeout is not a kill (issue 30): on a loaded machine a slow but correct run times out as well, so a timeout
# says nothing about whether the tests noticed the mutant. It is reported beside the rate and counted against it.
KILLED = {"killed", "caught by type check", "segfault"}


def _toml_value(value: Any) -> str:
    return json.dumps(value)  # strings, numbers, booleans and lists of them are the same in TOML


def _toml_table(name: str, table: dict[str, Any]) -> str:
    lines = [f"[{name}]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in table.items() if not isinstance(value, dict)]
    return "\n".join(lines) + "\n"


def _workdir(name: str, module: dict[str, Any], project: dict[str, Any]) -> Path:
    work = WORK / name
    work.mkdir(parents=True, exist_ok=True)
    for link, target in (("plmail", ROOT / "plmail"), ("tests", ROOT / "tests"), ("shared", ROOT.parent / "shared")):
        path = work / link
        if not path.is_symlink():
            path.symlink_to(target)
    mutmut = dict(project["tool"]["mutmut"])
    mutmut["only_mutate"] = list(module["mutate"])
    mutmut["pytest_add_cli_args_test_selection"] = list(module["tests"])
    text = _toml_table("tool.pytest.ini_options", project["tool"]["pytest"]["ini_options"])
    text += "\n" + _toml_table("tool.mutmut", mutmut)
    (work / "pyproject.toml").write_text(text)
    return work


@contextmanager
def _database() -> Iterator[dict[str, str]]:
    """One cluster and one migrated template for every mutant of this run."""
    if os.environ.get("PLMAIL_TEST_DATABASE_URL"):
        yield {}
        return
    sys.path.insert(0, str(ROOT))
    import asyncio

    from plmail.db.database import Database
    from plmail.db.engine import close_engine, open_engine
    from plmail.db.migrate import migrate
    from tests.support.pg import TEMPLATE_DB, PgTestCluster

    cluster = PgTestCluster()
    cluster.start()
    try:
        dsn = cluster.create_database(TEMPLATE_DB)

        async def prepare() -> None:
            engine = await open_engine(dsn, max_size=2)
            try:
                await migrate(Database(engine))
            finally:
                await close_engine()

        asyncio.run(prepare())
        yield {"PLMAIL_TEST_DATABASE_URL": cluster.dsn("postgres"), "PLMAIL_TEST_TEMPLATE_READY": "1"}
    finally:
        cluster.stop()


def _results(work: Path) -> tuple[dict[str, int], list[str]]:
    """Counts by status, and the surviving mutants' names, read from `mutmut results --all true`."""
    out = subprocess.run([str(MUTMUT), "results", "--all", "true"], cwd=work, capture_output=True, text=True,
                         check=True).stdout
    counts: dict[str, int] = {}
    survived: list[str] = []
    for line in out.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name:
            continue
        counts[status] = counts.get(status, 0) + 1
        if status == "survived":
            survived.append(name)
    return counts, survived


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    modules: dict[str, dict[str, Any]] = project["tool"]["plmail"]["mutation"]
    parser = argparse.ArgumentParser(description="Mutation testing of the seed-heavy modules (mutmut).")
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=f"one or more of: {', '.join(modules)}")
    parser.add_argument("--max-children", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--fresh", action="store_true", help="forget earlier results of these modules")
    parser.add_argument("--show", action="store_true", help="print the diff of every surviving mutant")
    args = parser.parse_args()
    chosen = args.modules or list(modules)
    unknown = [m for m in chosen if m not in modules]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; choose from {', '.join(modules)}")
    summary: list[tuple[str, int, int, int]] = []
    with _database() as env_extra:
        env = {**os.environ, **env_extra}
        for name in chosen:
            work = _workdir(name, modules[name], project)
            if args.fresh:
                shutil.rmtree(work / "mutants", ignore_errors=True)
            print(f"== {name}: {', '.join(modules[name]['mutate'])}", flush=True)
            run = subprocess.run([str(MUTMUT), "run", "--max-children", str(args.max_children)], cwd=work, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if run.returncode != 0:
                print(run.stdout[-6000:], file=sys.stderr)
                print(f"mutmut failed for {name} (exit {run.returncode})", file=sys.stderr)
                return run.returncode
            counts, survived = _results(work)
            killed = sum(n for status, n in counts.items() if status in KILLED)
            total = sum(counts.values())
            summary.append((name, killed, len(survived), total))
            rate = 100.0 * killed / total if total else 100.0
            timeouts = counts.get("timeout", 0)
            print(f"{name}: killed {killed}, survived {len(survived)}, timed out {timeouts}, of {total} "
                  f"({rate:.1f} % killed, timeouts not counted); "
                  + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())), flush=True)
            for mutant in survived:
                print(f"  survived: {mutant}")
                if args.show:
                    shown = subprocess.run([str(MUTMUT), "show", mutant], cwd=work, capture_output=True, text=True)
                    print("    " + shown.stdout.strip().replace("\n", "\n    "))
    print("\nmodule        killed  survived  total  kill rate")
    for name, killed, survived_count, total in summary:
        rate = 100.0 * killed / total if total else 100.0
        print(f"{name:<13} {killed:>6}  {survived_count:>8}  {total:>5}  {rate:8.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
