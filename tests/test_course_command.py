"""``make course``, the README's command, really serves the course: as root and as not-root.

JupyterLab refuses to start as root unless given ``--allow-root``, and containers and cloud
VMs run as root. ``make course`` runs ``scripts/course.py course`` (the entry point Windows
runs without make), which adds the flag only when the effective uid is 0. These tests
run the real ``make course`` (extra ``jupyter lab`` options through ``ARGS``: a free port,
a known token, 127.0.0.1), and once the script alone, in a process group of its own, wait
(bounded) until JupyterLab answers, check that it serves this repository's course and still
demands the token, then stop it the way a user does (Ctrl-C: SIGINT to the group; SIGTERM,
then SIGKILL, only as fallbacks) and check that nothing of it is left.

The other side of the uid check (not-root when the tests run as root, root otherwise) runs
in a user namespace (``unshare --map-user``), where ``id -u`` and ``os.geteuid()`` really
return the mapped uid. ``runuser -u nobody`` is not used: the venv's base interpreter may
live where that user cannot read it (here ``/root/.pyenv``, under a 0700 ``/root``).

Every Jupyter/home/XDG directory points into ``tmp_path`` and the tests check that no file
in the repository is created or modified (no ``.ipynb_checkpoints``, no workspaces).
The venv is the one running pytest, and ``--no-install`` keeps the script from ever
(re)installing it; ``--dry-run`` prints the commands instead of running them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "00_index.ipynb"
VENV = Path(sys.executable).parent.parent  # the venv running the tests: .venv on a clone
MAKE = shutil.which("make")
UNSHARE = shutil.which("unshare")
START_TIMEOUT = 120.0  # a cold JupyterLab start on 2 busy cores
STOP_TIMEOUT = 30.0  # per signal
NOT_ROOT_UID = 65534  # nobody

pytestmark = pytest.mark.skipif(MAKE is None, reason="`make` is not installed")


def _other_uid() -> int:
    """The uid the 'other side' runs as: not-root when we are root, root otherwise."""
    return NOT_ROOT_UID if os.geteuid() == 0 else 0


def _unshare_prefix(uid: int) -> list[str]:
    return [str(UNSHARE), "--user", f"--map-user={uid}", f"--map-group={uid}"]


def _user_namespace_problem(uid: int) -> str | None:
    """Why ``unshare --map-user=uid`` cannot be used here, or None when it works."""
    if UNSHARE is None or not sys.platform.startswith("linux"):
        return "needs Linux and util-linux `unshare`"
    try:
        probe = subprocess.run(
            [*_unshare_prefix(uid), sys.executable, "-c", "import os; print(os.geteuid())"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unshare failed: {error}"
    if probe.returncode != 0 or probe.stdout.strip() != str(uid):
        return f"user namespaces unavailable: {probe.stderr.strip() or probe.stdout.strip()}"
    return None


def make_course(args: Sequence[str] = (), dry_run: bool = False, direct: bool = False) -> list[str]:
    """The README's ``make course``, with ``ARGS`` for jupyter lab; ``direct``: the same
    through ``scripts/course.py`` alone, as on Windows.

    The venv is the one running the tests (``VENV=`` only when it is not the repository's
    own ``.venv``: a git worktree, a conda env); ``--no-install`` makes sure the script
    never (re)installs a venv in the middle of a test.
    """
    flags = ["--no-install", *(["--dry-run"] if dry_run else [])]
    if direct:
        return [sys.executable, "scripts/course.py", "--venv", str(VENV), *flags, "course", *args]
    command = [str(MAKE), f"COURSE_FLAGS={shlex.join(flags)}"]
    if VENV.resolve() != (ROOT / ".venv").resolve():
        command.append(f"VENV={VENV}")
    command.append("course")
    if args:
        command.append(f"ARGS={shlex.join(args)}")
    return command


def _environment(home: Path, *, headless: bool) -> dict[str, str]:
    """Everything Jupyter, node or the shell might write to points into ``home``."""
    drop = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARGS", "ALLOW_ROOT"}
    if headless:  # no display, no console (TERM), no $BROWSER: Python finds no browser
        drop |= {"DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "TERM"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("XDG_")}
    for name in (
        "config",
        "data",
        "runtime",
        "settings",
        "workspaces",
        "xdg-config",
        "xdg-cache",
        "xdg-data",
    ):
        (home / name).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        XDG_CONFIG_HOME=str(home / "xdg-config"),
        XDG_CACHE_HOME=str(home / "xdg-cache"),
        XDG_DATA_HOME=str(home / "xdg-data"),
        PYTHONUNBUFFERED="1",
        MPLBACKEND="Agg",  # `make course` must drop it (env -u MPLBACKEND)
    )
    return env


# --- the repository must not be written to -------------------------------------------------


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (but .git and the venv) with its mtime and size."""
    skip = {root / ".git", VENV.resolve(), (root / ".venv").resolve()}
    files: dict[str, tuple[int, int]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if (Path(folder) / d).resolve() not in skip]
        for name in names:
            path = Path(folder) / name
            with suppress(OSError):
                stat = path.lstat()
                files[str(path.relative_to(root))] = (stat.st_mtime_ns, stat.st_size)
    return files


def _changes(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list:
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


# --- the server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - the group is ours, but be safe
        return True
    return True


def _group_members(pgid: int) -> dict[int, list[str]]:
    """pid -> argv of every live process in the group (Linux /proc)."""
    members = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                members[int(entry.name)] = [a.decode(errors="replace") for a in argv if a]
    return members


@contextmanager
def _sigint_not_ignored() -> Iterator[None]:
    """Ctrl-C must reach the server: a pytest started in the background (``cmd &``) has
    SIGINT ignored, and an ignored signal stays ignored across fork and exec."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # SIG_DFL after exec
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class Course:
    process: subprocess.Popen
    port: int
    token: str
    log: Path
    runtime: Path
    stopped_by: str = ""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:]) or "(empty log)"

    def stop(self) -> None:
        """Ctrl-C (SIGINT to the group), then SIGTERM, then SIGKILL; reaps make."""
        pgid = self.process.pid
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            if self.process.poll() is not None and not _group_alive(pgid):
                return
            with suppress(ProcessLookupError):
                os.killpg(pgid, sig)
            self.stopped_by = sig.name
            deadline = time.monotonic() + STOP_TIMEOUT
            while time.monotonic() < deadline:
                with suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=0.5)
                if self.process.poll() is not None and not _group_alive(pgid):
                    return


def _get(url: str, timeout: float = 10) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _config_data(html: bytes) -> dict:
    match = re.search(
        rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S
    )
    assert match, "no jupyter-config-data in the page: not JupyterLab"
    return json.loads(match.group(1))


def _start(prefix: list[str], home: Path, *, headless: bool, direct: bool = False) -> Course:
    """``make course`` on a free port; retried on a new port if that one was taken."""
    for attempt in range(3):
        port = _free_port()
        args = [f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1"]
        if headless:  # JupyterLab's own token, read from the URL it prints, as a user does
            token = ""
        else:
            token = secrets.token_hex(16)
            args += [f"--IdentityProvider.token={token}", "--no-browser"]
        log = home / f"course-{attempt}.log"
        with open(log, "wb") as out, _sigint_not_ignored():
            process = subprocess.Popen(
                [*prefix, *make_course(args, direct=direct)],
                cwd=ROOT,
                env=_environment(home, headless=headless),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: make, jupyter, kernels
            )
        course = Course(process, port, token, log, home / "runtime")
        try:
            if _wait_ready(course):
                return course
        except BaseException:
            course.stop()
            raise
        course.stop()  # exited early because the port was taken: try another one
    raise AssertionError(f"`make course` never got a free port:\n{course.log_tail()}")


def _wait_ready(course: Course) -> bool:
    """True once /lab answers 200 with the token; False if the port was taken."""
    deadline = time.monotonic() + START_TIMEOUT
    printed = re.compile(rf"{re.escape(course.base)}/lab\?token=([0-9a-f]{{32,}})")
    while time.monotonic() < deadline:
        if course.process.poll() is not None:
            if "is already in use" in course.log_text():
                return False
            raise AssertionError(
                f"`make course` exited with {course.process.returncode}:\n{course.log_tail()}"
            )
        if not course.token and (match := printed.search(course.log_text())):
            course.token = match.group(1)
        if course.token:
            with suppress(OSError):
                status, _ = _get(f"{course.base}/lab?token={course.token}", timeout=5)
                if status == 200:
                    return True
        time.sleep(0.5)
    raise AssertionError(f"JupyterLab not ready after {START_TIMEOUT:.0f} s:\n{course.log_tail()}")


@contextmanager
def served_course(
    prefix: list[str], home: Path, *, headless: bool = False, direct: bool = False
) -> Iterator[Course]:
    """The running course; always stopped and reaped, and the repository left untouched."""
    before = _snapshot(ROOT)
    course = _start(prefix, home, headless=headless, direct=direct)
    try:
        yield course
    finally:
        course.stop()
    assert course.process.poll() is not None, "the course command is still running"
    assert not _group_alive(course.process.pid), _group_members(course.process.pid)
    assert course.stopped_by == "SIGINT", (
        f"Ctrl-C (SIGINT) did not stop the course command; needed {course.stopped_by}:\n"
        f"{course.log_tail()}"
    )
    assert _changes(before, _snapshot(ROOT)) == [], "the course server wrote into the repository"


def _check_serves_the_course(course: Course, *, expect_allow_root: bool) -> None:
    token = f"token={course.token}"

    status, html = _get(f"{course.base}/lab?{token}")
    assert status == 200
    assert b"<title>JupyterLab</title>" in html
    assert _config_data(html)["appName"] == "JupyterLab"

    # the URL the browser is sent to opens the course's index notebook ...
    opened = "".join(p.read_text() for p in course.runtime.glob("jpserver-*-open.html"))
    assert "/lab/tree/00_index.ipynb" in opened, opened or "no jpserver-*-open.html written"
    status, html = _get(f"{course.base}/lab/tree/00_index.ipynb?{token}")
    assert status == 200 and _config_data(html)["treePath"] == "00_index.ipynb"

    # ... served from this repository's notebooks/ folder, every chapter listed
    status, body = _get(f"{course.base}/api/contents?{token}")
    assert status == 200
    listed = {item["name"] for item in json.loads(body)["content"]}
    assert {p.name for p in NOTEBOOK.parent.glob("[0-9][0-9]*_*.ipynb")} <= listed  # 07b too
    status, body = _get(f"{course.base}/api/contents/00_index.ipynb?{token}")
    assert status == 200
    served = json.loads(body)
    assert served["type"] == "notebook"
    on_disk = json.loads(NOTEBOOK.read_text(encoding="utf-8"))

    def sources(cells: list[dict]) -> list[str]:
        return [
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
        ]

    assert sources(served["content"]["cells"]) == sources(on_disk["cells"])

    # auth is JupyterLab's default: no token, no content
    assert _get(f"{course.base}/api/contents")[0] == 403
    assert _get(f"{course.base}/api/contents?token=wrong{course.token}")[0] == 403

    # the exact command line: --allow-root only for uid 0, and MPLBACKEND dropped
    servers = {
        pid: argv
        for pid, argv in _group_members(course.process.pid).items()
        if any(a.endswith(("jupyter-lab", "jupyter")) for a in argv[:2])
        and "notebooks/00_index.ipynb" in argv
    }
    assert len(servers) == 1, _group_members(course.process.pid)
    [(pid, argv)] = servers.items()
    assert ("--allow-root" in argv) is expect_allow_root, argv
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert not any(v.startswith(b"MPLBACKEND=") for v in environ)


# --- tests --------------------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_make_course_serves_the_course_as_the_current_user(tmp_path: Path) -> None:
    with served_course([], tmp_path) as course:
        _check_serves_the_course(course, expect_allow_root=os.geteuid() == 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_the_entry_point_without_make_serves_the_course(tmp_path: Path) -> None:
    """``python scripts/course.py course``, what Windows runs, serves the same course."""
    with served_course([], tmp_path, direct=True) as course:
        _check_serves_the_course(course, expect_allow_root=os.geteuid() == 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's webbrowser rules")
@pytest.mark.slow
def test_make_course_without_a_browser_prints_the_url_and_keeps_serving(tmp_path: Path) -> None:
    """Headless server/container: no --no-browser, no display, JupyterLab's own token.
    JupyterLab finds no browser, prints the URL with the token it generated (the tests
    read it from there) and serves."""
    with served_course([], tmp_path, headless=True) as course:
        assert course.token, "no URL with a token printed"
        _check_serves_the_course(course, expect_allow_root=os.geteuid() == 0)
        assert "No web browser found" in course.log_text(), course.log_tail()


@pytest.mark.slow
def test_make_course_serves_the_course_as_the_other_uid(tmp_path: Path) -> None:
    """As root: a not-root uid gets no --allow-root; as not-root: uid 0 gets it."""
    uid = _other_uid()
    problem = _user_namespace_problem(uid)
    if problem:
        pytest.skip(f"cannot run as uid {uid} in a user namespace: {problem}")
    with served_course(_unshare_prefix(uid), tmp_path) as course:
        _check_serves_the_course(course, expect_allow_root=uid == 0)


def _dry_run(prefix: list[str], args: list[str], tmp_path: Path) -> str:
    result = subprocess.run(
        [*prefix, *make_course(args, dry_run=True)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_environment(tmp_path, headless=False),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "pip install" not in result.stdout  # --no-install: never a venv (re)install
    lines = [line for line in result.stdout.splitlines() if "jupyter lab" in line]
    assert len(lines) == 1, result.stdout
    return lines[0]


def test_make_course_adds_allow_root_only_for_uid_0(tmp_path: Path) -> None:
    line = _dry_run([], ["--port=8899", "--no-browser"], tmp_path)
    assert line.startswith("env -u MPLBACKEND ")
    assert line.endswith("--port=8899 --no-browser notebooks/00_index.ipynb")
    assert ("--allow-root" in line.split()) is (os.geteuid() == 0)
    assert "--no-browser" not in _dry_run([], [], tmp_path)  # only when asked for


def test_make_course_flag_follows_the_uid_in_a_user_namespace(tmp_path: Path) -> None:
    uid = _other_uid()
    problem = _user_namespace_problem(uid)
    if problem:
        pytest.skip(f"cannot run as uid {uid} in a user namespace: {problem}")
    line = _dry_run(_unshare_prefix(uid), [], tmp_path)
    assert ("--allow-root" in line.split()) is (uid == 0)
