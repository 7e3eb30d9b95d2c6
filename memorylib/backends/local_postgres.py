"""A throwaway PostgreSQL cluster on a Unix socket: for the tests, the benchmark and
notebook 11. Not for production (trust authentication on a private socket).

``TemporaryPostgres().start()`` runs the distribution's ``initdb`` and ``pg_ctl`` in a
new temporary folder: no TCP port (``listen_addresses=''``), the socket in a folder of
its own, ``trust`` authentication for local connections only. PostgreSQL refuses to
run as root: as root, the cluster runs as the ``postgres`` OS user (created by the
distribution's package), its folders handed to that user. ``stop(mode="immediate")``
is a crash for the server (no shutdown checkpoint), used by the reliability tests.

A watchdog process stops the server and removes its folder when the process that
started it ends without calling ``cleanup()`` (a notebook kernel shut down, a killed
test run): no server outlives its owner.

``find_bindir()`` looks in ``$MEMORYLIB_PG_BINDIR``, on ``PATH`` and in
``/usr/lib/postgresql/<newest>/bin``; ``unavailable_reason()`` says in one sentence
why no cluster can be started here (``MEMORYLIB_NO_POSTGRES=1`` pretends there is
none: how the course's offline path is tested), or returns None.

``local_service()`` is notebook 11's server: ``$MEMORYLIB_PG_DSN`` (an administrator
DSN), else a throwaway cluster stopped when the kernel exits, else the reason there is
none; ``Service.new_database`` provisions a fresh database for some users.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Service", "TemporaryPostgres", "find_bindir", "local_service", "unavailable_reason"]

SERVER_USER = "postgres"  # the unprivileged OS user Debian's package creates


def find_bindir() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, or None."""
    explicit = os.environ.get("MEMORYLIB_PG_BINDIR")
    candidates = [Path(explicit)] if explicit else []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates += versions
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def _run_as() -> str | None:
    """The OS user the server must run as: None (ourselves) unless we are root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:  # Windows has no uids and no pwd
        return None
    import pwd

    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        return ""  # root without a postgres user: cannot run a server
    return SERVER_USER


def unavailable_reason() -> str | None:
    """Why a temporary cluster cannot start here, or None when it can."""
    if os.environ.get("MEMORYLIB_NO_POSTGRES") == "1":
        return "MEMORYLIB_NO_POSTGRES=1 is set"
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg / psycopg_pool are not installed (pip install -e '.[postgres]')"
    if find_bindir() is None:
        return (
            "PostgreSQL's server binaries (initdb, pg_ctl, postgres) are not installed "
            "(Debian: apt-get install postgresql; or set MEMORYLIB_PG_BINDIR)"
        )
    if _run_as() == "":
        return "running as root and there is no 'postgres' OS user to run the server as"
    return None


class TemporaryPostgres:
    """initdb + pg_ctl in a temporary folder; ``admin_dsn`` connects as the superuser."""

    def __init__(self, *, bindir: Path | None = None, superuser: str = "memorylib_admin") -> None:
        self.bindir = bindir or find_bindir()
        if self.bindir is None:
            raise RuntimeError(unavailable_reason() or "PostgreSQL binaries not found")
        self.superuser = superuser
        self.run_as = _run_as()
        self.root: Path | None = None
        self.data: Path | None = None
        self.socket_dir: Path | None = None
        self.version = ""
        self.started = False

    # -- addresses --------------------------------------------------------------------

    def dsn(self, dbname: str = "postgres", **extra: str) -> str:
        """A libpq connection string for ``dbname`` over the cluster's socket."""
        assert self.socket_dir is not None, "start() first"
        parts = {"host": str(self.socket_dir), "dbname": dbname, **extra}
        return " ".join(f"{key}={_quote(value)}" for key, value in parts.items())

    @property
    def admin_dsn(self) -> str:
        return self.dsn("postgres", user=self.superuser)

    # -- life cycle --------------------------------------------------------------------

    def start(self, *, timeout: float = 60.0) -> TemporaryPostgres:
        """Create the cluster on first call; (re)start the server; wait until it accepts."""
        if self.root is None:
            self._initdb(timeout)
            self._start_watchdog()
        self._pg_ctl("start", "-w", "-t", str(int(timeout)), "-l", str(self.root / "server.log"))
        self.started = True
        return self

    def stop(self, mode: str = "fast", *, timeout: float = 60.0) -> None:
        """``pg_ctl stop -m fast|immediate`` (immediate: a crash, recovered at next start)."""
        if self.started:
            self._pg_ctl("stop", "-w", "-m", mode, "-t", str(int(timeout)))
            self.started = False

    def cleanup(self) -> None:
        """Stop the server (fast) and remove every file of the cluster."""
        with contextlib.suppress(Exception):
            self.stop("fast")
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        pipe = getattr(self, "_watchdog_pipe", None)
        if pipe is not None:  # the watchdog wakes up, finds nothing left and exits
            os.close(pipe)
            self._watchdog_pipe = None

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return (self.root / "server.log").read_text(errors="replace")[-chars:]  # type: ignore[operator]
        except (OSError, TypeError):
            return ""

    # -- internals ---------------------------------------------------------------------

    def _initdb(self, timeout: float) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="memorylib-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self.socket_dir.mkdir()
        if self.run_as:  # the server's user must reach its folders; nobody else may list them
            import pwd

            account = pwd.getpwnam(self.run_as)
            os.chmod(self.root, 0o711)
            self.data.mkdir(mode=0o700)
            for path in (self.data, self.socket_dir):
                os.chown(path, account.pw_uid, account.pw_gid)
            log = self.root / "server.log"
            log.touch(mode=0o600)
            os.chown(log, account.pw_uid, account.pw_gid)
        self._tool(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            self.superuser,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-instructions",
            timeout=timeout,
        )
        settings = {
            "listen_addresses": "''",
            "unix_socket_directories": f"'{self.socket_dir}'",
            "unix_socket_permissions": "0777",
            "max_connections": "100",
            "shared_buffers": "128MB",
            "fsync": "on",
            "synchronous_commit": "on",
            "log_min_messages": "warning",
            "log_min_error_statement": "panic",
        }
        conf = "".join(f"{key} = {value}\n" for key, value in settings.items())
        self._append_conf(conf)
        out = self._tool("postgres", "--version", timeout=timeout)
        found = re.search(r"\d+(\.\d+)+", out)
        self.version = found.group() if found else out.strip()

    def _start_watchdog(self) -> None:
        """A process that stops the server and removes the cluster when we are gone.

        ``cleanup()`` is the normal way out, but a process may end without running it (a
        notebook kernel is shut down without ``atexit``; a test run is killed). The watchdog
        holds the read end of a pipe whose write end only this process holds: when this
        process ends, however it ends, the read returns and the watchdog cleans up.
        """
        assert self.root is not None and self.bindir is not None and self.data is not None
        read_end, self._watchdog_pipe = os.pipe()
        try:
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _WATCHDOG,
                    str(self.bindir / "pg_ctl"),
                    str(self.data),
                    str(self.root),
                    self.run_as or "",
                ],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a signal to our process group does not reach it
            )
        finally:
            os.close(read_end)

    def _append_conf(self, text: str) -> None:
        assert self.data is not None
        path = self.data / "postgresql.auto.conf"
        if self.run_as:
            self._tool("sh", "-c", f"cat >> '{path}'", input_text=text, timeout=30)
        else:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)

    def _pg_ctl(self, *args: str) -> None:
        assert self.data is not None
        self._tool("pg_ctl", "-D", str(self.data), *args, timeout=120)

    def _tool(self, name: str, *args: str, timeout: float, input_text: str | None = None) -> str:
        assert self.bindir is not None
        program = name if name == "sh" else str(self.bindir / name)
        deadline = time.monotonic() + timeout
        done = subprocess.run(
            [program, *args],
            input=input_text,
            capture_output=True,
            text=True,
            timeout=max(1.0, deadline - time.monotonic()),
            user=self.run_as or None,
            cwd=self.root or None,
            env={**os.environ, "LC_ALL": "C.UTF-8"},
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{name} {' '.join(args[:3])} failed ({done.returncode}): "
                f"{(done.stderr or done.stdout)[-2000:]}\n{self.log_tail()}"
            )
        return done.stdout


_WATCHDOG = """
import os, shutil, subprocess, sys
pg_ctl, data, root, run_as = sys.argv[1:5]
sys.stdin.buffer.read()  # returns when every write end is closed: the owner has ended
if os.path.isdir(data):
    subprocess.run([pg_ctl, "-D", data, "stop", "-m", "immediate", "-w", "-t", "30"],
                   user=run_as or None, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60, check=False)
shutil.rmtree(root, ignore_errors=True)
"""


def _quote(value: str) -> str:
    if value and all(c.isalnum() or c in "/._-" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class Service:
    """A PostgreSQL for the notebook, or the reason there is none."""

    available: bool
    reason: str
    version: str = ""
    _admin_base: str = ""
    _cluster: TemporaryPostgres | None = None
    _databases: int = 0

    def describe(self) -> str:
        if not self.available:
            return f"PostgreSQL: not available here ({self.reason}); its cells explain instead."
        if self._cluster is not None:
            return (
                f"PostgreSQL {self.version}: a throwaway local server this notebook started, "
                "on a Unix socket in a temporary folder."
            )
        return f"PostgreSQL {self.version}: the server in $MEMORYLIB_PG_DSN."

    def admin_dsn(self, dbname: str) -> str:
        return f"{self._admin_base} dbname={dbname}"

    def new_database(self, user_ids: tuple[str, ...] = ("local-user",)) -> str:
        """A new, empty database, provisioned for ``user_ids``; returns its store URL."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        from memorylib.backends.postgres import provision

        self._databases += 1
        name = f"course_{os.getpid()}_{self._databases}"
        with psycopg.connect(self.admin_dsn("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        provision(self.admin_dsn(name), user_ids=user_ids)
        params = conninfo_to_dict(self.admin_dsn(name))
        query = "&".join(f"{k}={v}" for k, v in params.items() if k not in ("dbname", "user"))
        return f"postgresql:///{name}?{query}"

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.cleanup()
            self._cluster = None


def local_service(admin_dsn: str | None = None) -> Service:
    """``admin_dsn`` or ``$MEMORYLIB_PG_DSN``, else a throwaway local cluster, else why not."""
    admin_dsn = admin_dsn or os.environ.get("MEMORYLIB_PG_DSN")
    reason = unavailable_reason()
    if admin_dsn is None and reason is not None:
        return Service(False, reason)
    try:
        import psycopg

        cluster = None
        if admin_dsn is None:
            cluster = TemporaryPostgres().start()
            atexit.register(cluster.cleanup)  # the kernel's exit stops the server
            admin_dsn = f"host={cluster.socket_dir} user={cluster.superuser}"
        with psycopg.connect(f"{admin_dsn} dbname=postgres", connect_timeout=5) as conn:
            version = str(conn.execute("SHOW server_version").fetchone()[0]).split()[0]
    except Exception as exc:  # a failed start is a reason, not a crash of the lesson
        return Service(False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
    return Service(True, "", version, admin_dsn, cluster)
