"""The three backends as test fixtures, and the real PostgreSQL server behind them.

* ``postgres_server`` (session): a throwaway cluster (``memorylib.backends.local_postgres``:
  initdb + pg_ctl on a Unix socket in a temporary folder, run as the ``postgres`` OS
  user when we are root), stopped and removed at the end of the session. With
  ``MEMORYLIB_TEST_PG_DSN`` (an administrator DSN) an existing server is used instead
  and tests that restart the server are skipped. Without binaries or psycopg every
  PostgreSQL test is skipped with the reason, unless ``MEMORYLIB_REQUIRE_POSTGRES=1``
  (CI sets it), which turns the skip into a failure.
* ``Backend``: one backend for one test: ``open(user_id)`` a store (every user of a
  JSONL backend gets a file of its own, as the runtime does), its ``url``, and
  ``snapshot()``, the raw stored state (file bytes or table rows) to prove that a
  rejected write or a recall changed nothing. Each PostgreSQL test gets a database of
  its own (cloned from a provisioned template).
* The summary hook prints one line: ``PostgreSQL suite: N passed ... against
  PostgreSQL X`` or ``PostgreSQL suite: SKIPPED (reason)``.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memorylib import MemoryStore, RemoteMemoryError, RemoteMemoryStore, user_scope_for
from memorylib.backends import SQLiteMemoryStore
from memorylib.backends.local_postgres import TemporaryPostgres, unavailable_reason

BACKENDS = ("jsonl", "sqlite", "postgresql")
TEMPLATE_DB = "memorylib_template"
_state: dict[str, Any] = {"reason": None, "version": None, "counts": Counter()}
_database_numbers = itertools.count(1)


@dataclass
class PostgresServer:
    """A server the tests may use: ``admin_dsn(db)``, ``dsn(db)``, a fresh database."""

    admin_base: str  # an administrator DSN without dbname
    version: str
    cluster: TemporaryPostgres | None  # None for an external server (no restarts then)
    databases: list[str] = field(default_factory=list)

    def admin_dsn(self, dbname: str = "postgres") -> str:
        return f"{self.admin_base} dbname={dbname}"

    def dsn(self, dbname: str) -> str:
        """The DSN a store gets: server and database; the store logs in as its scope role."""
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(self.admin_dsn(dbname))
        params.pop("user", None)
        params.pop("password", None)
        return make_conninfo(**params)

    def url(self, dbname: str) -> str:
        """``dsn(dbname)`` as a ``postgresql://`` URL (what ``open_store`` and the CLI take)."""
        from urllib.parse import quote, urlencode

        from psycopg.conninfo import conninfo_to_dict

        params = {k: v for k, v in conninfo_to_dict(self.dsn(dbname)).items() if k != "dbname"}
        return f"postgresql:///{quote(dbname)}?{urlencode(params)}"

    def new_database(self) -> str:
        """A database of its own, cloned from the provisioned template (~0.15 s)."""
        import psycopg

        name = f"memorylib_test_{os.getpid()}_{next(_database_numbers)}"
        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE_DB}')
        self.databases.append(name)
        return name


def _start_server() -> Iterator[PostgresServer]:
    import psycopg

    from memorylib.backends.postgres import provision

    external = os.environ.get("MEMORYLIB_TEST_PG_DSN")
    cluster = None
    if external:
        admin_base = external
    else:
        cluster = TemporaryPostgres().start()
        admin_base = f"host={cluster.socket_dir} user={cluster.superuser}"
    server = PostgresServer(admin_base, "", cluster)
    try:
        with psycopg.connect(server.admin_dsn(), autocommit=True) as conn:
            server.version = conn.execute("SHOW server_version").fetchone()[0].split()[0]
            conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE_DB}")
            conn.execute(f"CREATE DATABASE {TEMPLATE_DB}")
        provision(server.admin_dsn(TEMPLATE_DB))
        _state["version"] = server.version
        yield server
    finally:
        if cluster is not None:
            cluster.cleanup()
        else:  # an external server: leave it as we found it
            with psycopg.connect(server.admin_dsn(), autocommit=True) as conn:
                for name in [*server.databases, TEMPLATE_DB]:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = None if os.environ.get("MEMORYLIB_TEST_PG_DSN") else unavailable_reason()
    if reason is not None:
        _state["reason"] = reason
        if os.environ.get("MEMORYLIB_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"MEMORYLIB_REQUIRE_POSTGRES=1 but PostgreSQL is unavailable: {reason}")
        pytest.skip(f"PostgreSQL suite skipped: {reason}")
    try:
        yield from _start_server()
    except RuntimeError as exc:  # initdb or pg_ctl failed
        if isinstance(exc, RemoteMemoryError):  # also a RuntimeError: a failure, not a skip
            raise
        _state["reason"] = str(exc).splitlines()[0]
        if os.environ.get("MEMORYLIB_REQUIRE_POSTGRES") == "1":
            raise
        pytest.skip(f"PostgreSQL suite skipped: {_state['reason']}")


# -- one backend for one test --------------------------------------------------------------


class Backend:
    """Stores of one backend kind for one test, closed at its end."""

    def __init__(self, name: str, root: Path, server: PostgresServer | None = None) -> None:
        self.name = name
        self.root = root
        self.server = server
        self.database = server.new_database() if server is not None else None
        self.provisioned: set[str] = set()
        self._stores: list[MemoryStore] = []

    def __repr__(self) -> str:
        return f"Backend({self.name})"

    def url(self, user_id: str = "alice") -> str:
        if self.name == "jsonl":
            return f"jsonl:{self.root / (user_scope_for(user_id) + '.jsonl')}"
        if self.name == "sqlite":
            return f"sqlite:{self.root / 'memories.db'}"
        assert self.server is not None and self.database is not None
        return self.server.url(self.database)

    def provision(self, user_id: str) -> None:
        if self.name == "postgresql" and user_id not in self.provisioned:
            from memorylib.backends.postgres import provision

            assert self.server is not None and self.database is not None
            provision(self.server.admin_dsn(self.database), user_ids=[user_id])
            self.provisioned.add(user_id)

    def open(self, user_id: str = "alice", **options: Any) -> MemoryStore:
        if self.name == "jsonl":
            store: MemoryStore = RemoteMemoryStore(
                self.root / (user_scope_for(user_id) + ".jsonl"), user_id=user_id
            )
        elif self.name == "sqlite":
            store = SQLiteMemoryStore(self.root / "memories.db", user_id=user_id, **options)
        else:
            from memorylib.backends.postgres import PostgresMemoryStore

            assert self.server is not None and self.database is not None
            self.provision(user_id)
            options.setdefault("connect_timeout", 5.0)
            store = PostgresMemoryStore(self.server.dsn(self.database), user_id=user_id, **options)
        self._stores.append(store)
        return store

    def snapshot(self) -> Any:
        """The raw stored state: every file's bytes, or every row of every table."""
        if self.name != "postgresql":
            return sorted(
                (p.name, p.read_bytes())
                for p in self.root.iterdir()
                if p.is_file() and not p.name.endswith(("-wal", "-shm"))
            )
        import psycopg

        assert self.server is not None and self.database is not None
        with psycopg.connect(self.server.admin_dsn(self.database)) as conn:
            rows = conn.execute("SELECT * FROM memorylib.memories ORDER BY seq").fetchall()
            terms = conn.execute(
                "SELECT * FROM memorylib.memory_terms ORDER BY seq, term"
            ).fetchall()
        return rows, terms

    def sqlite_rows(self) -> list[tuple[Any, ...]]:
        """For SQLite: every row, read through a separate connection (the WAL included)."""
        import sqlite3

        with sqlite3.connect(self.root / "memories.db") as conn:
            return conn.execute("SELECT * FROM memories ORDER BY seq").fetchall()

    def close(self) -> None:
        for store in self._stores:
            close = getattr(store, "close", None)
            if close is not None:
                close()


def make_backend(name: str, root: Path, request: pytest.FixtureRequest) -> Backend:
    """A backend of kind ``name`` in ``root`` (the server fixture only when it is needed)."""
    root.mkdir(parents=True, exist_ok=True)
    server = request.getfixturevalue("postgres_server") if name == "postgresql" else None
    chosen = Backend(name, root, server)
    request.addfinalizer(chosen.close)
    return chosen


@pytest.fixture(params=["jsonl", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, tmp_path, request)


# -- the PostgreSQL line in pytest's summary --------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "postgres_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "postgres" not in report.keywords:
        return
    counts = _state["counts"]
    if report.when == "call":
        counts[report.outcome] += 1
    elif report.outcome == "skipped":
        counts["skipped"] += 1
    elif report.outcome == "failed":
        counts["error"] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    counts = _state["counts"]
    if not counts:
        return
    ran = counts["passed"] + counts["failed"]
    if ran:
        parts = [f"{counts[k]} {k}" for k in ("passed", "failed", "skipped", "error") if counts[k]]
        line = f"PostgreSQL suite: {', '.join(parts)} against PostgreSQL {_state['version']}"
    else:
        reason = _state["reason"] or "every PostgreSQL test was deselected or skipped"
        line = f"PostgreSQL suite: SKIPPED ({reason}; {counts['skipped']} tests)"
    terminalreporter.write_sep("-", line, bold=True, yellow=not ran or bool(counts["failed"]))
