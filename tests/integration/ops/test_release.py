"""The release: a wheel and an sdist built from the checkout carry everything plmail reads at run time, and the wheel,
installed into a fresh virtualenv outside the checkout, runs `plmail serve` on the embedded database and signs in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.support.serve import ServeProcess

ROOT = Path(__file__).resolve().parents[3]
EMAIL, PASSWORD = "owner@release.example", "a release test passphrase"

# What plmail reads from its own package at run time, besides code: pages, their scripts, the catalogs, the schema.
RUNTIME_FILES = (
    "plmail/templates/base.html",
    "plmail/static/htmx.min.js",
    "plmail/locale/de/LC_MESSAGES/messages.mo",
    "plmail/locale/en/LC_MESSAGES/messages.mo",
    "plmail/db/migrations/plmail_2026_12_02t09_00_00_000000.py",
)


def _project_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def _clean_env() -> dict[str, str]:
    """No trace of the checkout: the fresh install must find everything in itself."""
    return {k: v for k, v in os.environ.items()
            if k not in {"PYTHONPATH", "VIRTUAL_ENV"} and not k.startswith("PLMAIL_")}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def test_the_wheel_and_the_sdist_carry_templates_static_files_catalogs_and_migrations(dist: Path) -> None:
    version = _project_version()
    (wheel,) = dist.glob(f"plmail-{version}-*.whl")
    (sdist,) = dist.glob(f"plmail-{version}.tar.gz")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for needed in RUNTIME_FILES:
        assert needed in in_wheel, f"{needed} missing from {wheel.name}"
        assert needed in in_sdist, f"{needed} missing from {sdist.name}"
    # Every migration of the checkout ships, or an installed plmail could not bring an older database up to date.
    migrations = {f"plmail/db/migrations/{p.name}" for p in (ROOT / "plmail/db/migrations").glob("plmail_*.py")}
    assert migrations <= in_wheel


def test_the_wheel_installs_into_a_fresh_venv_and_serves_and_signs_in(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("plmail-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_clean_env(), cwd=tmp_path)
    installed = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q", str(wheel)],
                               capture_output=True, text=True, env=_clean_env(), cwd=tmp_path, timeout=900)
    assert installed.returncode == 0, installed.stderr[-3000:]
    plmail = str(venv / "bin/plmail")

    # One place says the version: the package metadata, from pyproject.toml.
    shown = subprocess.run([plmail, "--version"], capture_output=True, text=True, env=_clean_env(), cwd=tmp_path)
    assert shown.stdout.strip() == f"plmail {_project_version()}"
    where = subprocess.run([str(venv / "bin/python"), "-c", "import plmail; print(plmail.__file__)"],
                           capture_output=True, text=True, env=_clean_env(), cwd=tmp_path).stdout
    assert where.startswith(str(venv)), where

    # Not pytest's tmp_path for the data: that is 0700, and the database runs as an unprivileged user when we are root.
    home = Path(tempfile.mkdtemp(prefix="plmail-wheel-"))
    os.chmod(home, 0o755)
    data_dir = home / "data"
    env = {**_clean_env(), "PLMAIL_DATA_DIR": str(data_dir)}
    added = subprocess.run([plmail, "user", "add", EMAIL, "--password-stdin", "--admin"], input=PASSWORD + "\n",
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert added.returncode == 0, added.stderr[-3000:]
    server = ServeProcess(data_dir, program=[plmail], cwd=tmp_path)
    server.env = {**_clean_env(), **{k: v for k, v in server.env.items() if k.startswith("PLMAIL_")}}
    server.start()
    try:
        server.wait_healthy(timeout=120)
        with httpx.Client(base_url=server.url, follow_redirects=True, timeout=20) as http:
            german = http.get("/login", headers={"Accept-Language": "de"})
            assert "Anmelden" in german.text  # the compiled German catalog came with the wheel
            response = http.post("/login", data={"email": EMAIL, "password": PASSWORD,
                                                 "_csrf_token": http.cookies["plmail_csrf"]})
            assert response.status_code == 200 and "/login" not in str(response.url)
            assert http.get("/static/htmx.min.js").status_code == 200
    finally:
        try:
            assert server.terminate() == 0
        finally:
            shutil.rmtree(home, ignore_errors=True)
