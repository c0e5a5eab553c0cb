"""Build the container image and use it as a person would: start, sign in, JMAP, stop, start again, data kept.

Run by `tools/container-smoke` (which installs podman, runc and mmdebstrap first). It needs no registry: the base
image is a Debian of this machine's own release, made by mmdebstrap from the mirror apt already uses, with a venv
first on PATH (Debian's own python3 refuses pip installs), and cached in `.cache/container/`.
Prints each step's time and the image size; exits non-zero on the first thing that does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "container"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
ADMIN = "admin@smoke.example"
ADMIN_PASSWORD = "a long smoke-test passphrase"  # noqa: S105 (a throwaway container's test user)
GRACE = 30  # the run line's --stop-timeout; plmail's own shutdown grace is 25 s


class SmokeFailed(Exception):
    pass


def step(name: str, started: list[float]) -> None:
    now = time.monotonic()
    print(f"  {name}: {now - started[0]:.1f} s", flush=True)
    started[0] = now


def run(*argv: str, check: bool = True, input: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, text=True, capture_output=True, input=input, env=env, timeout=timeout)
    if check and done.returncode != 0:
        what = " ".join(argv[:4])
        raise SmokeFailed(f"{what}… exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def os_release() -> str:
    fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
    return fields.get("VERSION_CODENAME", "").strip('"') or "bookworm"


def apt_mirror(release: str) -> str:
    """The Debian mirror this machine's apt already uses (deb822 .sources first, then sources.list)."""
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.+)$", stanza, re.M))
            if "deb" in fields.get("Types", "").split() and release in fields.get("Suites", "").split():
                return fields["URIs"].split()[0]
    lists = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*.list")]
    for path in lists:
        if path.exists():
            for line in path.read_text().splitlines():
                parts = re.sub(r"\[[^]]*\]", "", line).split()
                if len(parts) >= 3 and parts[0] == "deb" and parts[2] == release:
                    return parts[1]
    return "http://deb.debian.org/debian"


def containers_conf() -> Path:
    """Podman's default ulimits are above what this sandbox lets runc set; stay under the host's hard limits."""
    import resource

    def below(limit: int) -> int:
        hard = resource.getrlimit(limit)[1]
        return 8192 if hard == resource.RLIM_INFINITY else max(1024, min(8192, hard // 2))

    CACHE.mkdir(parents=True, exist_ok=True)
    conf = CACHE / "containers.conf"
    nofile, nproc = below(resource.RLIMIT_NOFILE), below(resource.RLIMIT_NPROC)
    conf.write_text(f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n')
    return conf


def base_image(release: str, env: dict[str, str], started: list[float]) -> str:
    tag = f"localhost/plmail-base:{release}"
    if run("podman", "image", "exists", tag, check=False, env=env).returncode == 0:
        step(f"base {tag} already present", started)
        return tag
    tar = CACHE / f"base-{release}.tar"
    if not tar.exists():
        mirror = apt_mirror(release)
        partial = tar.with_name(f"base-{release}.partial.tar")  # mmdebstrap reads the format from the suffix
        run("mmdebstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates",
            "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
            "--dpkgopt=path-exclude=/usr/share/locale/*",
            "--customize-hook=chroot \"$1\" python3 -m venv /opt/venv",
            "--customize-hook=rm -rf \"$1\"/var/lib/apt/lists/* \"$1\"/var/cache/apt/*",
            release, str(partial), mirror)
        partial.rename(tar)
        step(f"base made by mmdebstrap from {mirror}", started)
    path = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    run("podman", "import", "--change", f"ENV PATH={path}", str(tar), tag, env=env)
    step("base imported", started)
    return tag


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SmokeFailed(f"{url}/healthz did not answer 200 within {timeout} s")


def sign_in(url: str) -> None:
    with httpx.Client(base_url=url, follow_redirects=True, timeout=20) as http:
        http.get("/login")
        response = http.post("/login", data={"email": ADMIN, "password": ADMIN_PASSWORD,
                                             "_csrf_token": http.cookies["plmail_csrf"]})
        if response.status_code != 200 or "/login" in str(response.url):
            raise SmokeFailed(f"signing in through /login failed: {response.status_code} at {response.url}")
        inbox = http.get("/")
        if inbox.status_code != 200 or "/login" in str(inbox.url):
            raise SmokeFailed("the inbox asked for a sign-in right after signing in")


def jmap_session(url: str, app_password: str) -> None:
    response = httpx.get(f"{url}/.well-known/jmap", auth=(ADMIN, app_password), follow_redirects=True, timeout=20)
    if response.status_code != 200:
        raise SmokeFailed(f"JMAP session with the app password: HTTP {response.status_code}")
    session = response.json()
    if "urn:ietf:params:jmap:mail" not in session.get("capabilities", {}) or not session.get("primaryAccounts"):
        raise SmokeFailed(f"JMAP session lacks the mail capability or a primary account: {json.dumps(session)[:500]}")


@contextmanager
def container(env: dict[str, str], image: str, volume: str, port: int) -> Iterator[str]:
    name = f"plmail-smoke-{os.getpid()}"
    try:
        run("podman", "run", "-d", "--name", name, "--stop-timeout", str(GRACE), "-p", f"127.0.0.1:{port}:8025",
            "-v", f"{volume}:/data", image, env=env)
        yield name
    finally:
        logs = run("podman", "logs", "--tail", "40", name, check=False, env=env)
        if sys.exc_info()[0] is not None:
            print(logs.stdout[-4000:], logs.stderr[-4000:], sep="\n")
        run("podman", "rm", "-f", "-t", "0", name, check=False, env=env)


def stop(env: dict[str, str], name: str) -> float:
    began = time.monotonic()
    run("podman", "stop", "-t", str(GRACE), name, env=env, timeout=GRACE + 30)
    took = time.monotonic() - began
    code = run("podman", "inspect", "--format", "{{.State.ExitCode}}", name, env=env).stdout.strip()
    if code != "0":
        raise SmokeFailed(f"SIGTERM did not end plmail cleanly: exit code {code}")
    if took >= GRACE:
        raise SmokeFailed(f"stopping took {took:.1f} s, not within the {GRACE} s grace (it was killed)")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-kitinerary", choices=["0", "1"], default="1")
    parser.add_argument("--keep-image", action="store_true", help="leave the built image (the base is always kept)")
    args = parser.parse_args()
    if shutil.which("podman") is None:
        raise SmokeFailed("podman is not installed (tools/container-smoke installs it)")
    env = {**os.environ, "CONTAINERS_CONF": str(containers_conf())}
    release = os_release()
    started, total = [time.monotonic()], time.monotonic()
    print(f"container smoke test on Debian {release}", flush=True)
    base = base_image(release, env, started)
    image, volume = f"localhost/plmail-smoke:{os.getpid()}", f"plmail-smoke-{os.getpid()}"
    build = ["podman", "build", "--format", "docker", "--build-arg", f"BASE={base}",
             "--build-arg", f"WITH_KITINERARY={args.with_kitinerary}", "-t", image, "-f", "Containerfile"]
    if HOST_CA.exists():
        # This network re-signs TLS: pip in the build trusts the host's bundle, mounted read-only for the build only.
        inside = "/etc/ssl/certs/host-ca.crt"
        build += ["-v", f"{HOST_CA}:{inside}:ro", "--build-arg", f"PIP_CERT={inside}"]
    run(*build, str(ROOT), env=env)
    step("image built", started)
    try:
        size = int(run("podman", "image", "inspect", "--format", "{{.Size}}", image, env=env).stdout.strip())
        layers = run("podman", "history", "--format", "{{.Size}}\t{{.CreatedBy}}", image, env=env).stdout
        print(f"  image size: {size / 1e6:.0f} MB; layers:")
        for line in layers.splitlines():
            if not line.startswith("0 B"):
                print(f"    {line[:110]}")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with container(env, image, volume, port) as name:
            wait_healthy(url)
            step("first start healthy", started)
            run("podman", "exec", "-i", name, "plmail", "user", "add", ADMIN, "--password-stdin", "--admin",
                input=ADMIN_PASSWORD + "\n", env=env)
            app_password = run("podman", "exec", name, "plmail", "app-password", "create", "--user", ADMIN,
                               "--name", "smoke", env=env).stdout.strip().splitlines()[-1]
            step("admin and app password made with podman exec", started)
            sign_in(url)
            jmap_session(url, app_password)
            step("signed in through /login; JMAP session with the app password", started)
            uid = run("podman", "exec", name, "id", "-u", env=env).stdout.strip()
            processes = run("podman", "top", name, "user", "comm", env=env).stdout
            if uid == "0" or any(line.split()[0] == "root" for line in processes.splitlines()[1:] if line.split()):
                raise SmokeFailed(f"something in the container runs as root:\n{processes}")
            users = sorted({line.split()[0] for line in processes.splitlines()[1:] if line.split()})
            print(f"  runs as uid {uid}: {len(processes.splitlines()) - 1} processes, users {', '.join(users)}")
            print(f"  stopped by SIGTERM in {stop(env, name):.1f} s, exit code 0")
            started[0] = time.monotonic()
            run("podman", "start", name, env=env)
            wait_healthy(url)
            step("second start healthy", started)
            sign_in(url)
            jmap_session(url, app_password)
            step("the same user and app password still sign in (the volume kept them)", started)
            stop(env, name)
    finally:
        run("podman", "volume", "rm", "-f", volume, check=False, env=env)
        if not args.keep_image:
            run("podman", "rmi", "-f", image, check=False, env=env)
    print(f"container smoke test passed in {time.monotonic() - total:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SmokeFailed as failure:
        print(f"container smoke test FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
