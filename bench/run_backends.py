"""The same recall over three backends: JSONL (the chapter's file + the fast index),
SQLite and PostgreSQL, at 1k / 10k / 100k records, with PostgreSQL's own full-text
search as a reference point. Numbers and ratios only: nothing here asserts a time.

    .venv/bin/python bench/run_backends.py                 # sizes 1000,10000,100000
    .venv/bin/python bench/run_backends.py --quick         # 300 and 2,000 records
    make bench-backends                                    # the first line

For every size N (``memorylib.synthetic``: the bilingual corpus of ``bench/run_bench.py``)
and every backend, in one run on one machine:

* **bulk load**: N records through ``store.append_many`` in batches of 1,000 (the
  store's validation, terms and unique-index checks; PostgreSQL then gets ``VACUUM
  ANALYZE``, timed apart, as autovacuum would do after a load);
* **append**: ``--appends`` single ``store.append`` calls on top of the N records,
  each durable when it returns (JSONL: fsync; SQLite: WAL + synchronous=FULL;
  PostgreSQL: commit), p50 / p95;
* **recall**: ``RecallEngine(store)`` (the indexed path: the JSONL fast index, the
  databases' ``indexed_recall``), every query ``--repeats`` times after one warm-up
  round, p50 / p95, and the ratio to the JSONL index;
* **first recall in a new process**: open the store and recall once in a fresh
  interpreter (a database has nothing to build; the JSONL index is built from the file,
  or, for a store of 4 MiB and more, loaded from the snapshot an earlier process saved
  beside it, ``fast.persist``: both are measured, the snapshot removed for the first);
* **identical**: for every query, the SQLite and PostgreSQL ``RecallResult`` equals the
  JSONL one field for field (which the test suite holds equal to the taught path);
* **PostgreSQL FTS**: ``array_to_tsvector`` of the very same terms, a GIN index,
  ``doc @@ 't1' | 't2' ... ORDER BY ts_rank LIMIT 5``: not our ranking (no recency,
  no ties rule), a latency reference only.

Writes ``bench/results/backends.json`` and ``bench/results/backends.md`` (``--quick``:
``backends-quick.*``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memorylib import (  # noqa: E402 (the repository root is put on sys.path first)
    MemorySource,
    RecallEngine,
    RemoteMemoryStore,
    normalize_recall_query,
)
from memorylib.backends import SQLiteMemoryStore  # noqa: E402
from memorylib.backends.local_postgres import TemporaryPostgres, unavailable_reason  # noqa: E402
from memorylib.fast.persist import snapshot_path  # noqa: E402
from memorylib.synthetic import SYNTHETIC_END, synthetic_entries, synthetic_queries  # noqa: E402

AS_OF = SYNTHETIC_END.strftime("%Y-%m-%dT%H:%M:%SZ")
USER = "bench-user"
LIMIT = 5
BATCH = 1_000
BACKENDS = ("jsonl", "sqlite", "postgresql")
LABELS = {"jsonl": "JSONL + fast index", "sqlite": "SQLite", "postgresql": "PostgreSQL"}

FIRST_RECALL = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    from memorylib import RecallEngine
    from memorylib.backends import open_store
    url, user, text, as_of = sys.argv[1:5]
    t1 = time.perf_counter()
    store = open_store(url, user_id=user)
    RecallEngine(store).recall(text, limit=5, as_of=as_of, query_id="cold")
    t2 = time.perf_counter()
    getattr(store, "close", lambda: None)()
    print(json.dumps({"import_s": t1 - t0, "first_recall_s": t2 - t1}))
    """
)


def pct(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


class Postgres:
    """The throwaway server, a database per size, a store's URL."""

    def __init__(self) -> None:
        import psycopg

        self.psycopg = psycopg
        self.cluster = TemporaryPostgres().start()

    def database(self, n: int) -> tuple[str, str]:
        from memorylib.backends.postgres import provision

        name = f"bench_{n}"
        with self.psycopg.connect(self.cluster.admin_dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        admin = self.cluster.dsn(name, user=self.cluster.superuser)
        provision(admin, user_ids=[USER])
        return admin, f"postgresql:///{name}?host={self.cluster.socket_dir}"


def open_backend(name: str, work: Path, n: int, pg: Postgres | None):
    if name == "jsonl":
        url = f"jsonl:{work / f'store-{n}.jsonl'}"
        return RemoteMemoryStore(work / f"store-{n}.jsonl", user_id=USER), url, None
    if name == "sqlite":
        url = f"sqlite:{work / f'store-{n}.db'}"
        return SQLiteMemoryStore(work / f"store-{n}.db", user_id=USER), url, None
    from memorylib.backends.postgres import PostgresMemoryStore

    assert pg is not None
    admin, url = pg.database(n)
    return PostgresMemoryStore(url, user_id=USER, statement_timeout=60.0), url, admin


def bulk_load(store, entries: list[dict]) -> float:
    t0 = time.perf_counter()
    for start in range(0, len(entries), BATCH):
        store.append_many(entries[start : start + BATCH])
    return time.perf_counter() - t0


def time_recalls(store, queries: list[str], repeats: int):
    engine = RecallEngine(store)
    t0 = time.perf_counter()
    engine.recall(queries[0], limit=LIMIT, as_of=AS_OF, query_id="warm-0")
    first = time.perf_counter() - t0
    results = {}
    for i, text in enumerate(queries):  # warm-up round, kept for the identity check
        results[i] = engine.recall(text, limit=LIMIT, as_of=AS_OF, query_id=f"q-{i}")
    latencies = []
    for _ in range(repeats):
        for i, text in enumerate(queries):
            t0 = time.perf_counter()
            engine.recall(text, limit=LIMIT, as_of=AS_OF, query_id=f"q-{i}")
            latencies.append((time.perf_counter() - t0) * 1e3)
    return latencies, results, first


def time_appends(store, count: int) -> list[float]:
    each = []
    for i in range(count):
        t0 = time.perf_counter()
        store.append(
            kind="conversation",
            memory_id=f"single-{i:05d}",
            content=f"one more layered memory note {i} 分层记忆",
            summary=f"single append {i}",
            source=MemorySource(f"s-{i}", "conversation_transcript", "t", AS_OF),
        )
        each.append((time.perf_counter() - t0) * 1e3)
    return each


def first_recall_in_new_process(url: str, text: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_RECALL, url, USER, text, AS_OF],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=600,
    )
    return json.loads(done.stdout)


def postgres_fts(pg: Postgres, admin: str, queries: list[str], repeats: int) -> dict:
    """tsvector (our terms, exactly) + GIN, ts_rank: PostgreSQL's own text search."""
    with pg.psycopg.connect(admin, autocommit=True) as conn:
        t0 = time.perf_counter()
        conn.execute("DROP SCHEMA IF EXISTS bench CASCADE")
        conn.execute("CREATE SCHEMA bench")
        conn.execute(
            "CREATE TABLE bench.fts AS SELECT seq, array_to_tsvector(array_agg(term)) AS doc "
            "FROM memorylib.memory_terms GROUP BY seq"
        )
        conn.execute("CREATE INDEX fts_doc ON bench.fts USING gin (doc)")
        conn.execute("VACUUM ANALYZE bench.fts")
        build = time.perf_counter() - t0
        sql = (
            "SELECT seq FROM bench.fts WHERE doc @@ %s::tsquery "
            "ORDER BY ts_rank(doc, %s::tsquery) DESC LIMIT 5"
        )
        latencies = []
        for r in range(repeats + 1):
            for text in queries:
                t0 = time.perf_counter()
                query = normalize_recall_query(text, user_scope="0" * 16, limit=LIMIT)
                tsq = " | ".join(f"'{t}'" for t in query.terms)
                conn.execute(sql, (tsq, tsq)).fetchall()
                if r:  # the first round warms the cache
                    latencies.append((time.perf_counter() - t0) * 1e3)
    p50, p95 = pct(latencies)
    return {"p50_ms": p50, "p95_ms": p95, "build_s": build}


def run_size(n: int, args, work: Path, pg: Postgres | None) -> dict:
    print(f"\n== N = {n:,} ==", flush=True)
    entries = synthetic_entries(n, seed=0)
    queries = synthetic_queries(args.queries, seed=0)
    out: dict = {"n": n, "backends": {}}
    reference = None
    for name in BACKENDS:
        if name == "postgresql" and pg is None:
            continue
        store, url, admin = open_backend(name, work, n, pg)
        row: dict = {"url_kind": name}
        row["bulk_s"] = bulk_load(store, entries)
        if admin is not None:
            t0 = time.perf_counter()
            with pg.psycopg.connect(admin, autocommit=True) as conn:  # type: ignore[union-attr]
                conn.execute("VACUUM ANALYZE")
            row["vacuum_analyze_s"] = time.perf_counter() - t0
        latencies, results, first = time_recalls(store, queries, args.repeats)
        row["recall_p50_ms"], row["recall_p95_ms"] = pct(latencies)
        row["first_recall_this_process_s"] = first
        if reference is None:
            reference = results
            row["identical"] = len(results)
        else:
            row["identical"] = sum(results[i] == reference[i] for i in reference)
        if name == "jsonl":  # the index snapshot saved beside a large store (fast.persist)
            snapshot = snapshot_path(work / f"store-{n}.jsonl")
            had_snapshot = snapshot.exists()
            snapshot.unlink(missing_ok=True)
            row["cold_without_snapshot_s"] = first_recall_in_new_process(url, queries[0])[
                "first_recall_s"
            ]
            row["snapshot"] = had_snapshot or snapshot.exists()
        row.update(first_recall_in_new_process(url, queries[0]))
        each = time_appends(store, args.appends)
        row["append_p50_ms"], row["append_p95_ms"] = pct(each)
        if admin is not None:
            row["fts"] = postgres_fts(pg, admin, queries, args.repeats)  # type: ignore[arg-type]
        getattr(store, "close", lambda: None)()
        out["backends"][name] = row
        print(
            f"  {name:10s} load {row['bulk_s']:7.1f} s  append p50 {row['append_p50_ms']:.2f} ms"
            f"  recall p50 {row['recall_p50_ms']:.3f} / p95 {row['recall_p95_ms']:.3f} ms"
            f"  new-process first recall {row['first_recall_s']:.3f} s"
            f"  identical {row['identical']}/{len(queries)}",
            flush=True,
        )
        if "fts" in row:
            fts = row["fts"]
            print(f"  {'pg fts':10s} recall p50 {fts['p50_ms']:.3f} / p95 {fts['p95_ms']:.3f} ms")
    return out


def markdown(report: dict) -> str:
    lines = [
        "| records | backend | bulk load s (ms / record) | append p50 / p95 ms | "
        "recall p50 / p95 ms | recall p50 vs JSONL index | first recall, new process s | "
        "identical to JSONL |",
        "|---:|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for size in report["sizes"]:
        n = size["n"]
        base = size["backends"]["jsonl"]["recall_p50_ms"]
        for name, row in size["backends"].items():
            label = {"jsonl": "JSONL + fast index", "sqlite": "SQLite", "postgresql": "PostgreSQL"}[
                name
            ]
            first = f"{row['first_recall_s']:.3f}"
            if row.get("snapshot"):  # the JSONL index: built from the file, or loaded
                first = f"{row['cold_without_snapshot_s']:.3f} (snapshot: {first})"
            lines.append(
                f"| {n:,} | {label} | {row['bulk_s']:.1f} ({row['bulk_s'] / n * 1e3:.2f}) | "
                f"{row['append_p50_ms']:.2f} / {row['append_p95_ms']:.2f} | "
                f"{row['recall_p50_ms']:.3f} / {row['recall_p95_ms']:.3f} | "
                f"{row['recall_p50_ms'] / base:,.1f}x | {first} | "
                f"{row['identical']}/{report['queries']} |"
            )
            if "fts" in row:
                fts = row["fts"]
                lines.append(
                    f"| {n:,} | PostgreSQL FTS (tsvector + GIN, ts_rank; reference) | "
                    f"index build {fts['build_s']:.1f} | - | "
                    f"{fts['p50_ms']:.3f} / {fts['p95_ms']:.3f} | "
                    f"{fts['p50_ms'] / base:,.1f}x | - | - |"
                )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=36)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="300 and 2,000 records")
    args = parser.parse_args()
    sizes = [300, 2_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    reason = unavailable_reason()
    if reason:
        print(f"PostgreSQL is not benchmarked: {reason}")
    pg = None if reason else Postgres()
    report: dict = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "postgresql": pg.cluster.version if pg else None,
            "load_before": [round(x, 2) for x in os.getloadavg()],
        },
        "queries": args.queries,
        "repeats": args.repeats,
        "appends": args.appends,
        "as_of": AS_OF,
        "sizes": [],
    }
    try:
        with tempfile.TemporaryDirectory(prefix="memorylib-bench-backends-") as tmp:
            for n in sizes:
                report["sizes"].append(run_size(n, args, Path(tmp), pg))
    finally:
        if pg is not None:
            pg.cluster.cleanup()
    report["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    stem = "backends-quick" if args.quick else "backends"
    results = ROOT / "bench" / "results"
    (results / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    table = markdown(report)
    (results / f"{stem}.md").write_text(table, encoding="utf-8")
    print("\n" + table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
