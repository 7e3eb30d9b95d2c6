"""Views for notebook 11: from the teaching file to a real service (SQLite, PostgreSQL).

* ``local_service()``: the PostgreSQL the notebook can use: ``$MEMORYLIB_PG_DSN`` (an
  administrator DSN), else a throwaway cluster on a Unix socket when the server's
  binaries are installed (stopped when the kernel exits), else an explanation.
* ``open_backends`` / ``recall_frame``: the chapter's teaching store on every backend
  there is, and the chapter's query over each of them;
* ``check_then_insert_replay``: two connections interleaving "is the id free? insert",
  first on a table without a unique index (two rows), then through the store (one);
* ``race_on_store``: real processes appending one memory_id to any store URL;
* ``schema_frame``, ``hostile_sql_frame``, ``migration_frame``: what the database holds,
  what a scope-bound session cannot do, a verified copy between backends;
* ``benchmark_frame`` / ``benchmark_chart``: the committed ``bench/results/backends.json``;
* the exercise: ``SERVICE_CALLS`` and ``check_service_predictions``.

Everything prints counts and ids, never paths, DSNs, timings or process ids.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import os
import sqlite3
import tempfile
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from memorylib.backends import SQLiteMemoryStore, open_store
from memorylib.backends.local_postgres import TemporaryPostgres, unavailable_reason
from memorylib.backends.migrate import migrate
from memorylib.engine import RecallEngine
from memorylib.errors import RemoteMemoryError
from memorylib.interface import MemoryStore, user_scope_for
from memorylib.notebook.common import error_name
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.records import MemoryKind, MemorySource, RecallResult
from memorylib.seed import seed_teaching_store
from memorylib.store import RemoteMemoryStore
from memorylib.timestamps import TEACHING_AS_OF

__all__ = [
    "BACKEND_LABELS",
    "SERVICE_CALLS",
    "Service",
    "benchmark_chart",
    "benchmark_frame",
    "check_service_predictions",
    "check_then_insert_replay",
    "hostile_sql_frame",
    "local_service",
    "migration_frame",
    "open_backends",
    "race_on_store",
    "recall_frame",
    "results_agree",
    "schema_frame",
    "service_exercise_truth",
]

BACKEND_LABELS = {"jsonl": "JSONL file", "sqlite": "SQLite", "postgresql": "PostgreSQL"}
NAN = float("nan")
BENCHMARK = Path(__file__).resolve().parents[2] / "bench" / "results" / "backends.json"
_CAPTURED = "2026-08-02T11:00:00Z"


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
        where = "a throwaway local server" if self._cluster else "the server in $MEMORYLIB_PG_DSN"
        return f"PostgreSQL {self.version}: {where}, reached over a Unix socket or your DSN."

    def admin_dsn(self, dbname: str) -> str:
        return f"{self._admin_base} dbname={dbname}"

    def new_database(self, user_ids: tuple[str, ...] = ("local-user",)) -> str:
        """A new database, provisioned for ``user_ids``; returns its store URL."""
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


# -- the same recall over every backend ---------------------------------------------------------


def open_backends(root: Path, service: Service, user_id: str = "local-user") -> dict[str, Any]:
    """The chapter's teaching store on each backend there is (seeded once)."""
    root.mkdir(parents=True, exist_ok=True)
    urls = {"jsonl": f"jsonl:{root / 'memories.jsonl'}", "sqlite": f"sqlite:{root / 'memories.db'}"}
    if service.available:
        urls["postgresql"] = service.new_database((user_id, "bob"))
    stores = {name: open_store(url, user_id=user_id) for name, url in urls.items()}
    for store in stores.values():
        seed_teaching_store(store)
    return {"stores": stores, "urls": urls}


def recall_frame(
    stores: Mapping[str, MemoryStore], text: str, *, as_of: str, query_id: str
) -> tuple[pd.DataFrame, dict[str, RecallResult]]:
    """One row per (backend, hit) of ``text``, and the results themselves."""
    results = {
        name: RecallEngine(store).recall(text, limit=5, as_of=as_of, query_id=query_id)
        for name, store in stores.items()
    }
    rows = []
    for name, result in results.items():
        for hit in result.hits:
            rows.append(
                {
                    "backend": BACKEND_LABELS[name],
                    "rank": hit.rank,
                    "memory_id": hit.memory_id,
                    "total": hit.score_breakdown.total,
                    "searched": result.searched_records,
                    "candidates": result.candidate_records,
                    "snippet": hit.snippet,
                }
            )
    return pd.DataFrame(rows), results


def results_agree(results: Mapping[str, RecallResult]) -> bool:
    """True when every backend's RecallResult equals the first one, field for field."""
    values = list(results.values())
    return all(value == values[0] for value in values[1:])


# -- why the unique index replaces the lock -----------------------------------------------------


def check_then_insert_replay(root: Path) -> pd.DataFrame:
    """Two writers, A and B, both "check, then insert" one memory_id, step by step.

    First on a bare table (no unique index): both checks see the id free, both
    inserts land. Then through ``SQLiteMemoryStore``: the INSERT itself is the check
    (``ON CONFLICT DO NOTHING RETURNING``), so B's insert returns no row and B gets
    ``RemoteMemoryDuplicateError``.
    """
    root.mkdir(parents=True, exist_ok=True)
    bare = root / "no-unique-index.db"
    rows: list[tuple[str, str, str]] = []
    a, b = sqlite3.connect(bare, isolation_level=None), sqlite3.connect(bare, isolation_level=None)
    a.execute("CREATE TABLE IF NOT EXISTS memories (memory_id TEXT, content TEXT)")

    def taken(conn: sqlite3.Connection) -> bool:
        return (
            conn.execute("SELECT count(*) FROM memories WHERE memory_id = 'm-race'").fetchone()[0]
            > 0
        )

    rows.append(("no unique index", "A: is m-race taken?", str(taken(a))))
    rows.append(("no unique index", "B: is m-race taken?", str(taken(b))))
    a.execute("INSERT INTO memories VALUES ('m-race', 'from A')")
    rows.append(("no unique index", "A: INSERT", "1 row"))
    b.execute("INSERT INTO memories VALUES ('m-race', 'from B')")
    rows.append(("no unique index", "B: INSERT", "1 row"))
    count = a.execute("SELECT count(*) FROM memories WHERE memory_id = 'm-race'").fetchone()[0]
    rows.append(("no unique index", "rows with m-race", str(count)))
    a.close()
    b.close()
    writer_a = SQLiteMemoryStore(root / "store.db", user_id="local-user")
    writer_b = SQLiteMemoryStore(root / "store.db", user_id="local-user")
    for label, store in (("A", writer_a), ("B", writer_b)):
        try:
            store.append(
                kind="conversation",
                memory_id="m-race",
                content=f"from {label}",
                summary=f"from {label}",
                source=_source(label),
            )
            outcome = "stored (a row came back)"
        except RemoteMemoryError as exc:
            outcome = f"{type(exc).__name__} (no row came back)"
        rows.append(("unique (user_scope, memory_id)", f"{label}: INSERT ... ON CONFLICT", outcome))
    held = sum(r.memory_id == "m-race" for r in writer_a.read_all())
    rows.append(("unique (user_scope, memory_id)", "rows with m-race", str(held)))
    writer_a.close()
    writer_b.close()
    return pd.DataFrame(rows, columns=["table", "step", "result"])


def _source(label: str) -> MemorySource:
    return MemorySource(f"transcript-{label}", "conversation_transcript", "race", _CAPTURED)


def _contender(url: str, user_id: str, index: int, barrier: Any, results: Any) -> None:
    store = open_store(url, user_id=user_id)
    try:
        barrier.wait(timeout=60)
    except threading.BrokenBarrierError:
        results.put("barrier broken")
        return
    try:
        store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id="conversation-race",
            content=f"Contender {index} wrote this.",
            summary=f"Contender {index}.",
            source=_source(str(index)),
            stored_at=_CAPTURED,
        )
        results.put("stored (won)")
    except RemoteMemoryError as exc:
        results.put(type(exc).__name__)
    finally:
        getattr(store, "close", lambda: None)()


def race_on_store(url: str, *, contenders: int = 5, user_id: str = "local-user") -> pd.DataFrame:
    """``contenders`` spawn processes append the same memory_id to the store at ``url``."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(contenders), ctx.Queue()
    procs = [
        ctx.Process(target=_contender, args=(url, user_id, i, barrier, results))
        for i in range(contenders)
    ]
    for proc in procs:
        proc.start()
    try:
        outcomes = Counter(results.get(timeout=120) for _ in procs)
    finally:
        for proc in procs:
            proc.join(timeout=60)
            if proc.is_alive():
                proc.terminate()
    store = open_store(url, user_id=user_id)
    held = sum(r.memory_id == "conversation-race" for r in store.read_all())
    getattr(store, "close", lambda: None)()
    rows = [("contenders", contenders)]
    rows += [(f"outcome: {name}", count) for name, count in sorted(outcomes.items())]
    rows += [
        ("records with the raced memory_id", held),
        ("processes that exited cleanly", sum(p.exitcode == 0 for p in procs)),
    ]
    return pd.DataFrame(rows, columns=["measure", "value"]).astype({"value": "object"})


# -- what the database holds --------------------------------------------------------------------


def schema_frame(store: SQLiteMemoryStore) -> pd.DataFrame:
    """The SQLite store's tables, indexes and triggers, and its schema versions."""
    store.read_all()  # opens the file (and applies the migrations) if needed
    with sqlite3.connect(store.path) as conn:
        objects = conn.execute(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE name <> 'sqlite_sequence' "
            "ORDER BY type DESC, name"
        ).fetchall()
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    frame = pd.DataFrame(objects, columns=["kind", "name", "on table"])
    frame.attrs["schema_versions"] = versions
    return frame


HOSTILE: dict[str, str | tuple[str, ...]] = {
    "read every row": "SELECT count(*) FROM memorylib.memories",
    "read bob's rows by scope": "SELECT count(*) FROM memorylib.memories WHERE user_scope = {bob}",
    "become bob": "SET ROLE {bob_role}",
    "turn row security off, then read": (
        "SET row_security = off",
        "SELECT count(*) FROM memorylib.memories",
    ),
    "write a row as bob": "INSERT INTO memorylib.memories (user_scope, memory_id, kind, "
    "captured_us, record) VALUES ({bob}, 'forged', 'conversation', 0, '{{}}')",
    "rewrite history": "UPDATE memorylib.memories SET record = '{{}}'",
    "delete everything": "DELETE FROM memorylib.memories",
    "switch the policy off": "ALTER TABLE memorylib.memories DISABLE ROW LEVEL SECURITY",
}


def hostile_sql_frame(service: Service, url: str, user_id: str = "local-user") -> pd.DataFrame:
    """Hand-written SQL from a session logged in as ``user_id``'s scope role."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from memorylib.backends.postgres import scope_role

    params = conninfo_to_dict(url)
    params["user"] = scope_role(user_scope_for(user_id))
    bob = user_scope_for("bob")
    rows = []
    for label, statements in HOSTILE.items():
        with psycopg.connect(make_conninfo(**params), autocommit=True) as conn:
            texts = [statements] if isinstance(statements, str) else list(statements)
            names = {
                "bob": sql.Literal(bob).as_string(conn),
                "bob_role": sql.Identifier(scope_role(bob)).as_string(conn),
            }
            try:
                for text in texts:  # one session: a SET holds for the statements after it
                    cursor = conn.execute(text.format(**names))
                seen = cursor.fetchone()[0] if cursor.description else None
                outcome = "ran" if seen is None else f"ran: {seen} row(s) seen"
            except psycopg.Error as exc:
                outcome = f"refused: {type(exc).__name__}"
            rows.append({"attempt": label, "outcome": outcome})
    return pd.DataFrame(rows)


def migration_frame(source: MemoryStore, target: MemoryStore) -> pd.DataFrame:
    """Copy ``source`` into ``target`` (``backends.migrate``) and show the verified report."""
    report = migrate(source, target)
    shown = {
        "records in the source": report.source_records,
        "already in the target": report.already_there,
        "copied": report.copied,
        "records in the target": report.target_records,
        "content hash (sha256, first 16)": report.content_hash[:16],
        "target equals source": source.read_all() == target.read_all(),
    }
    return pd.DataFrame(list(shown.items()), columns=["measure", "value"]).astype(
        {"value": "object"}
    )


# -- the benchmark ------------------------------------------------------------------------------


def benchmark_frame(path: Path = BENCHMARK) -> pd.DataFrame:
    """The committed benchmark run: one row per (size, backend)."""
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = []
    for size in report["sizes"]:
        for name, row in size["backends"].items():
            rows.append(
                {
                    "records": size["n"],
                    "backend": BACKEND_LABELS[name],
                    "append p50 ms": row["append_p50_ms"],
                    "recall p50 ms": row["recall_p50_ms"],
                    "first recall, new process s": row["first_recall_s"],
                    # the JSONL index built from the whole file (no snapshot beside it)
                    "first recall, index built s": row.get("cold_without_snapshot_s", NAN),
                    "identical": f"{row['identical']}/{report['queries']}",
                }
            )
            if "fts" in row:
                rows.append(
                    {
                        "records": size["n"],
                        "backend": "PostgreSQL FTS (reference)",
                        "append p50 ms": NAN,
                        "recall p50 ms": row["fts"]["p50_ms"],
                        "first recall, new process s": NAN,
                        "first recall, index built s": NAN,
                        "identical": "-",
                    }
                )
    return pd.DataFrame(rows)


def benchmark_chart(frame: pd.DataFrame) -> Figure:
    """Recall p50 and first recall in a new process, per backend, against store size."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    for backend, part in frame.groupby("backend", sort=False):
        line = left.plot(part["records"], part["recall p50 ms"], marker="o", label=backend)
        if part["first recall, new process s"].notna().any():
            right.plot(
                part["records"],
                part["first recall, new process s"],
                marker="o",
                color=line[0].get_color(),
                label=backend,
            )
        if part["first recall, index built s"].notna().any():
            right.plot(
                part["records"],
                part["first recall, index built s"],
                marker="o",
                linestyle="--",
                color=line[0].get_color(),
                label=f"{backend}, no snapshot",
            )
    for axis, title in ((left, "recall p50 (ms)"), (right, "first recall in a new process (s)")):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("records in the store")
        axis.set_title(title)
    left.legend(fontsize=8)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


# -- the exercise -------------------------------------------------------------------------------

SERVICE_CALLS = {
    "A": "alice appends memory_id 'm-1' again (alice already stored 'm-1')",
    "B": "bob appends memory_id 'm-1' into the same SQLite file",
    "C": "alice retracts 'm-1' a second time",
    "D": "migrate alice's JSONL store into a SQLite store that holds another 'x-1' of hers",
    "E": "alice recalls 'layered memory' on SQLite: does the result equal the JSONL one? "
    "(answer True or False)",
}


def service_exercise_truth() -> dict[str, object]:
    """Run the five calls on fresh stores in a temporary folder; what each one did."""
    truth: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-nb11-") as tmp:
        root = Path(tmp)
        alice = SQLiteMemoryStore(root / "m.db", user_id="alice")
        bob = SQLiteMemoryStore(root / "m.db", user_id="bob")
        reference = RemoteMemoryStore(root / "alice.jsonl", user_id="alice")
        for store in (alice, reference):
            seed_teaching_store(store)
            store.append(
                kind="conversation",
                memory_id="m-1",
                content="layered memory note",
                summary="note",
                source=_source("x"),
                stored_at=_CAPTURED,
            )
        alice.retract("m-1", reason="wrong", source=_source("r"), retraction_id="r-1")

        def outcome(call: Any) -> str | None:
            try:
                call()
            except RemoteMemoryError as exc:
                return type(exc).__name__
            return None

        truth["A"] = outcome(
            lambda: alice.append(
                kind="conversation",
                memory_id="m-1",
                content="again",
                summary="again",
                source=_source("a"),
            )
        )
        truth["B"] = outcome(
            lambda: bob.append(
                kind="conversation",
                memory_id="m-1",
                content="bob's",
                summary="bob's",
                source=_source("b"),
            )
        )
        truth["C"] = outcome(lambda: alice.retract("m-1", reason="again", source=_source("c")))
        other = SQLiteMemoryStore(root / "other.db", user_id="alice")
        other.append(
            kind="conversation", memory_id="x-1", content="x", summary="x", source=_source("o")
        )
        truth["D"] = outcome(lambda: migrate(reference, other))
        args = dict(as_of=TEACHING_AS_OF, query_id="q-11")
        seed = RemoteMemoryStore(root / "plain.jsonl", user_id="alice")
        plain = SQLiteMemoryStore(root / "plain.db", user_id="alice")
        seed_teaching_store(seed)
        seed_teaching_store(plain)
        truth["E"] = RecallEngine(plain).recall("layered memory", **args) == RecallEngine(
            seed
        ).recall("layered memory", **args)
        for store in (alice, bob, other, plain):
            store.close()
    return truth


_HINTS = {
    "A": "the unique index is on (user_scope, memory_id): alice's second 'm-1' conflicts.",
    "B": "bob is another user_scope: his 'm-1' is a different key, and it is stored.",
    "C": "retracting twice is idempotent on every backend: it returns the first retraction.",
    "D": "migrate copies into an empty target or one holding a prefix of the source, and "
    "refuses anything else before writing.",
    "E": "every backend returns the same RecallResult: same records, same stages.",
}


def _same_outcome(given: object, expected: object) -> bool:
    if isinstance(expected, bool):  # E: True/False
        return given is expected
    return error_name(given) == expected


def _outcome(given: object) -> str:
    name = error_name(given)
    return "no error" if name is None else str(name)


def check_service_predictions(answer: object) -> CheckResult:
    """Self-check: ``answer`` maps "A".."D" to an error class (or its name) or None, and
    "E" to True/False. Right when all five are right; wrong with one hint per wrong label;
    not answered while the placeholder ``...`` (or a ``...`` value) is there."""

    def judge(answer: object) -> CheckResult:
        truth = service_exercise_truth()
        given = expect_labels(answer, truth, "a dict from 'A'..'E'")
        mistakes = grade_labels(truth, given, _HINTS, same=_same_outcome, shown=_outcome)
        if mistakes is not None:
            return mistakes
        named = {k: ("no error" if v is None else v) for k, v in truth.items()}
        return right(f"All {len(truth)} right: {named}.")

    return check_value(answer, judge, placeholder="a dict like {'A': SomeErrorClass, ...}")
