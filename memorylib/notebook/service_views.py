"""Notebook 11's set-up and self-check: a PostgreSQL to use, and the "Your turn" checker.

Everything notebook 11 teaches is written in its cells (the recall over three stores,
the candidate query, the check-then-insert replay, the race, the hostile SQL, the
migration, both benchmarks). Two things stay here:

* ``local_service()``: the PostgreSQL the notebook can use: ``$MEMORYLIB_PG_DSN`` (an
  administrator DSN), else a throwaway cluster on a Unix socket when the server's
  binaries are installed (stopped when the kernel exits), else the reason there is none;
  ``Service.new_database`` provisions a fresh database for some users. Set-up that
  teaches nothing about memory.
* ``check_service_predictions``: it runs the exercise's five calls for real, on fresh
  stores in a temporary folder (a checker on screen would show the answer).
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorylib.backends import SQLiteMemoryStore
from memorylib.backends.local_postgres import TemporaryPostgres, unavailable_reason
from memorylib.backends.migrate import migrate
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.records import MemorySource
from memorylib.seed import seed_teaching_store
from memorylib.store import RemoteMemoryStore

__all__ = [
    "LABELS",
    "Service",
    "check_service_predictions",
    "local_service",
    "service_exercise_truth",
]


# -- the server ---------------------------------------------------------------------------------


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


# -- the exercise -------------------------------------------------------------------------------

# The notebook's "Your turn" table describes the five calls; service_exercise_truth runs them.
LABELS = ("A", "B", "C", "D", "E")
_CAPTURED = "2026-08-02T11:00:00Z"


def _note(memory_id: str, text: str) -> dict[str, Any]:
    source = MemorySource(f"transcript-{memory_id}", "conversation_transcript", text, _CAPTURED)
    return dict(
        kind="conversation",
        memory_id=memory_id,
        content=text,
        summary=text,
        source=source,
        stored_at=_CAPTURED,
    )


def service_exercise_truth() -> dict[str, object]:
    """Run the five calls on fresh stores in a temporary folder: for A-D the name of the
    typed error each raises (None: none), for E a pair of counts.

    alice's SQLite file and her JSONL file both hold the teaching store and her 'm-1'.
    A: alice's SQLite store appends a batch, a new 'm-2' then 'm-1' again; B: bob appends
    'm-1' to alice's SQLite file; C: bob appends 'bob-1', an id no one holds, to alice's
    JSONL file; D: migrate alice's JSONL store into a SQLite store holding another record
    of hers ('x-1'); E: after A to D, (the rows of alice.db's memories table, every user
    scope counted; the records alice's read_all() returns from alice.db).
    """

    def outcome(action: Any) -> str | None:
        name, _ = typed_attempt(action)
        return None if name == NO_ERROR else name

    with tempfile.TemporaryDirectory(prefix="memorylib-nb11-") as tmp:
        root = Path(tmp)
        alice = SQLiteMemoryStore(root / "alice.db", user_id="alice")
        alice_file = RemoteMemoryStore(root / "alice.jsonl", user_id="alice")
        for store in (alice, alice_file):
            seed_teaching_store(store)
            store.append(**_note("m-1", "alice's note"))
        bob = SQLiteMemoryStore(root / "alice.db", user_id="bob")
        bob_on_the_file = RemoteMemoryStore(root / "alice.jsonl", user_id="bob")
        other = SQLiteMemoryStore(root / "other.db", user_id="alice")
        other.append(**_note("x-1", "another note of alice's"))
        batch = [_note("m-2", "alice's second note"), _note("m-1", "alice's note, again")]
        truth: dict[str, object] = {
            "A": outcome(lambda: alice.append_many(batch)),
            "B": outcome(lambda: bob.append(**_note("m-1", "bob's note"))),
            "C": outcome(lambda: bob_on_the_file.append(**_note("bob-1", "bob's note"))),
            "D": outcome(lambda: migrate(alice_file, other)),
        }
        with closing(sqlite3.connect(alice.path)) as database:
            (rows,) = database.execute("SELECT count(*) FROM memories").fetchone()
        truth["E"] = (rows, len(alice.read_all()))
        for store in (alice, bob, other):
            store.close()
    return truth


_HINTS = {
    "A": "append_many is one transaction: one refused record refuses the whole batch. "
    "The unique key is (user_scope, memory_id): is alice's (scope, 'm-1') already there?",
    "B": "bob's store writes rows carrying bob's user_scope: is (bob's scope, 'm-1') taken?",
    "C": "a JSONL file holds one user's records: before it writes, an append reads the file, "
    "and every record it reads is checked against the reader's user_scope.",
    "D": "migrate copies into an empty target, or one holding a prefix of the source (a copy "
    "cut short); anything else it refuses before writing, as a call whose arguments are wrong.",
    "E": "alice.db's memories table holds every user scope's rows; alice's read_all() returns "
    "only the rows carrying her user_scope. Count what A and what B stored in it.",
}


def _counts(value: object) -> tuple[int, int] | None:
    """A pair of ints (a tuple or a list; a bool is not a count), else None."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        return None
    if any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        return None
    return (value[0], value[1])


def _same_outcome(given: object, expected: object) -> bool:
    if isinstance(expected, tuple):  # E: (rows in the file, alice's records)
        return _counts(given) == expected
    return error_name(given) == expected


def _shown(given: object) -> str:
    if isinstance(given, tuple | list):
        return repr(given)
    name = error_name(given)
    return NO_ERROR if name is None else str(name)


def check_service_predictions(answer: object) -> CheckResult:
    """Self-check: ``answer`` maps "A".."D" to an error class (or its name) or None, and
    "E" to a pair of counts, ``(rows, records)``. Right when all five are right; wrong with
    one hint per wrong label; not answered while the placeholder ``...`` (or a ``...``
    value) is there."""

    def judge(answer: object) -> CheckResult:
        given = expect_labels(answer, LABELS, "a dict from 'A'..'E'")
        truth = service_exercise_truth()
        mistakes = grade_labels(truth, given, _HINTS, same=_same_outcome, shown=_shown)
        if mistakes is not None:
            return mistakes
        named = {k: (NO_ERROR if v is None else v) for k, v in truth.items()}
        return right(f"All {len(truth)} right: {named}.")

    return check_value(
        answer,
        judge,
        placeholder='a dict with a value for each of "A", "B", "C", "D" and "E"',
    )
