"""Recall and append benchmark: teaching path, indexed path, SQLite FTS5; before and after.

    .venv/bin/python bench/run_bench.py                      # both shapes, 1k/10k/100k
    .venv/bin/python bench/run_bench.py --compare 7d4e6b7    # and the code at that commit,
                                                             # measured in the same run
    .venv/bin/python bench/run_bench.py --quick              # a smoke run (seconds)

For every corpus shape (``memorylib.synthetic``: ``short`` records of 1-4 sentences of
one language, ``long`` records of 50-150 English and Chinese words where the commonest
terms are in most records; ``locomo``: N turns of the LoCoMo dev conversations, copied
under new memory ids, source ids and dates by ``locomo_latency.locomo_copies``, asked the
dev set's own questions, ``limit=10``) and store size N:

* the teaching path's recall latency (a sample of the queries at large N: one query
  re-reads the whole file);
* the indexed path in fresh processes: the cold first recall when the index is built
  from the file, the cold first recall when a saved index (``<store>.index``) is
  there, warm p50/p95 over the query set, and each process's peak RSS;
* SQLite FTS5 over the same terms (ranked by bm25, not our ranking: a reference);
* N appends one by one through ``store.append`` (lock, duplicate check, one
  ``O_APPEND`` write, fsync), and ``append_many`` for the same N (one lock, one fsync);
* identical: the indexed RecallResult equals the teaching one for every query the
  teaching path ran, and (with ``--compare``) both trees return the same results;
* **conversation** (this tree only): the longest LoCoMo dev conversation, every named
  configuration of ``evaluation.CONFIGURATIONS`` on its questions, indexed and taught
  (``locomo_latency.measure``), with SQLite FTS5 on the same store (``--quick``: its
  first 24 questions; ``--skip-conversation`` leaves it out).

Every measurement of a tree runs in a subprocess with that tree on ``PYTHONPATH``, on
the same fixture files, interleaved, so "before" and "after" share the machine's state.
Writes ``bench/results/latest.{json,md}`` (``quick.*`` for ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import locomo_latency  # noqa: E402 (bench/: the LoCoMo shapes)

from memorylib import (  # noqa: E402 (the repository root is put on sys.path first)
    MemoryKind,
    RemoteMemoryStore,
    extract_terms,
    normalize_recall_query,
    normalize_text,
)
from memorylib.synthetic import (  # noqa: E402
    SHAPES,
    SYNTHETIC_END,
    synthetic_queries,
    write_synthetic_store,
)

AS_OF = SYNTHETIC_END.strftime("%Y-%m-%dT%H:%M:%SZ")
USER = "bench-user"
LIMIT = 5
LOCOMO_LIMIT = 10  # the benchmark's protocol: each question recalled with limit 10
ALL_SHAPES = (*SHAPES, "locomo")
ENTRY_KEYS = ("kind", "memory_id", "content", "summary", "source", "stored_at")
SCORERS = ("coverage", "bm25", "bm25_recency")  # ScoringPolicy factories; "before" trees: coverage
TARGETS = {  # issue 22's, at the largest size of every shape
    "indexed_p50_ms": 1.5,
    "indexed_p95_ms": 4.0,
    "cold_build_s": 5.0,
    "cold_saved_s": 0.5,
    "peak_rss_mib": 400.0,
    "append_100k_s": 60.0,
}
CONVERSATION_TARGETS = {"indexed_p50_ms": 1.0, "indexed_p95_ms": 3.0, "taught_p50_ms": 30.0}

# One measurement, run in a fresh interpreter with the tree under test on PYTHONPATH.
WORKER = textwrap.dedent(
    """
    import json, sys, time
    task = json.loads(sys.stdin.read())
    t0 = time.perf_counter()
    from memorylib import MemorySource, RecallEngine, RemoteMemoryStore
    imported = time.perf_counter() - t0

    def peak_mib():
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024

    out = {"import_s": imported}
    if task["mode"] in ("indexed", "teaching"):
        store = RemoteMemoryStore(task["path"], user_id=task["user"])
        engine = RecallEngine(store, strategy=task["mode"])
        queries, as_of, limit = task["queries"], task["as_of"], task["limit"]
        latencies = []
        if task["mode"] == "indexed":
            t0 = time.perf_counter()
            engine.recall(queries[0], limit=limit, as_of=as_of, query_id="cold")
            out["cold_s"] = time.perf_counter() - t0
            by_scorer = {}
            for scorer in task["scorers"]:
                if scorer == "coverage":
                    policy = None
                else:
                    from memorylib import ScoringPolicy
                    policy = getattr(ScoringPolicy, scorer)()
                times = []
                for _ in range(task["repeats"]):
                    for i, text in enumerate(queries):
                        t0 = time.perf_counter()
                        engine.recall(text, limit=limit, as_of=as_of, query_id=f"q-{i}",
                                      policy=policy)
                        times.append((time.perf_counter() - t0) * 1e3)
                by_scorer[scorer] = times
            latencies = by_scorer["coverage"]
            out["by_scorer"] = by_scorer
        checked = []
        for i, text in task["check"]:
            t0 = time.perf_counter()
            result = engine.recall(text, limit=limit, as_of=as_of, query_id=f"q-{i}")
            if task["mode"] == "teaching":
                latencies.append((time.perf_counter() - t0) * 1e3)
            checked.append(result.to_dict())
        out.update(latencies_ms=latencies, checked=checked, peak_rss_mib=peak_mib())
    elif task["mode"] == "appends":
        store = RemoteMemoryStore(task["path"], user_id=task["user"])
        entries = [
            {**e, "source": MemorySource(**e["source"])} for e in json.load(open(task["entries"]))
        ]
        if task.get("many"):
            t0 = time.perf_counter()
            store.append_many(entries)
            out["total_s"] = time.perf_counter() - t0
        else:
            each = []
            t_start = time.perf_counter()
            for entry in entries:
                t0 = time.perf_counter()
                store.append(**entry)
                each.append(time.perf_counter() - t0)
            out.update(total_s=time.perf_counter() - t_start, each_s=each)
    print(json.dumps(out))
    """
)


class Tree:
    """A checkout of memorylib to measure: this one, or another commit's worktree."""

    def __init__(self, name: str, root: Path, scorers: tuple[str, ...] = ("coverage",)) -> None:
        self.name, self.root, self.scorers = name, root, scorers

    def run(self, task: dict) -> dict:
        env = {**os.environ, "PYTHONPATH": str(self.root)}
        done = subprocess.run(
            [sys.executable, "-c", WORKER],
            input=json.dumps(task),
            capture_output=True,
            text=True,
            env=env,
            cwd=self.root,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: {task['mode']} failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout)


def percentiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def snapshot_of(path: Path) -> Path:
    return path.with_name(path.name + ".index")


# -- one tree, one fixture -------------------------------------------------------------------


def bench_indexed(
    tree: Tree,
    path: Path,
    queries: list[str],
    check: list,
    runs: int,
    repeats: int,
    ask: tuple[str, int] = (AS_OF, LIMIT),
) -> dict:
    """``runs`` fresh processes building the index from the file, then ``runs`` that
    find a saved index (when the tree writes one); ``ask``: (as_of, limit)."""
    task = {
        "mode": "indexed",
        "path": str(path),
        "user": USER,
        "queries": queries,
        "check": check,
        "as_of": ask[0],
        "limit": ask[1],
        "repeats": repeats,
        "scorers": tree.scorers,
    }
    built, saved = [], []
    for _ in range(runs):
        snapshot_of(path).unlink(missing_ok=True)
        built.append(tree.run(task))
    if snapshot_of(path).exists():
        saved = [tree.run(task) for _ in range(runs)]
    snapshot_of(path).unlink(missing_ok=True)
    outs = built + saved
    p50, p95 = percentiles([x for out in outs for x in out["latencies_ms"]])
    scorers = {
        name: dict(
            zip(
                ("p50_ms", "p95_ms"),
                percentiles([x for out in outs for x in out["by_scorer"][name]]),
                strict=True,
            )
        )
        for name in tree.scorers
    }
    return {
        "scorers": scorers,
        "p50_ms": p50,
        "p95_ms": p95,
        "cold_build_s": float(np.median([out["cold_s"] for out in built])),
        "cold_saved_s": float(np.median([out["cold_s"] for out in saved])) if saved else None,
        "cold_runs_s": [round(out["cold_s"], 3) for out in outs],
        "peak_rss_mib": max(out["peak_rss_mib"] for out in outs),
        "peak_rss_saved_mib": max(out["peak_rss_mib"] for out in saved) if saved else None,
        "results": built[0]["checked"],
    }


def bench_teaching(
    tree: Tree, path: Path, sample: list, ask: tuple[str, int] = (AS_OF, LIMIT)
) -> dict:
    task = {
        "mode": "teaching",
        "path": str(path),
        "user": USER,
        "queries": [],
        "check": sample,
        "as_of": ask[0],
        "limit": ask[1],
    }
    out = tree.run(task)
    p50, p95 = percentiles(out["latencies_ms"])
    return {"p50_ms": p50, "p95_ms": p95, "queries": len(sample), "results": out["checked"]}


def bench_appends(tree: Tree, directory: Path, entries_file: Path, n: int, many: bool) -> dict:
    path = directory / f"appends-{tree.name}-{n}-{'many' if many else 'one'}.jsonl"
    out = tree.run(
        {
            "mode": "appends",
            "path": str(path),
            "user": USER,
            "entries": str(entries_file),
            "many": many,
        }
    )
    size = path.stat().st_size
    for leftover in directory.glob(path.name + "*"):
        leftover.unlink()
    if many:
        return {"total_s": out["total_s"], "bytes": size}
    each = np.asarray(out["each_s"])
    tenth = max(1, n // 10)
    return {
        "total_s": out["total_s"],
        "p50_ms": float(np.percentile(each, 50) * 1e3),
        "p99_ms": float(np.percentile(each, 99) * 1e3),
        "first_tenth_mean_ms": float(each[:tenth].mean() * 1e3),
        "last_tenth_mean_ms": float(each[-tenth:].mean() * 1e3),
        "bytes": size,
    }


def bench_fts5(
    store: RemoteMemoryStore, queries: list[str], repeats: int, limit: int = LIMIT
) -> dict:
    """SQLite FTS5 over our own terms (one space-separated column), ranked by bm25."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(memory_id UNINDEXED, terms, "
        "tokenize = \"unicode61 remove_diacritics 0 tokenchars '_'\")"
    )
    t0 = time.perf_counter()
    rows = (
        (r.memory_id, " ".join(extract_terms(normalize_text(r.summary + " " + r.content))))
        for r in store.read_all()
        if r.kind is MemoryKind.CONVERSATION
    )
    conn.executemany("INSERT INTO docs VALUES (?, ?)", rows)
    conn.commit()
    build = time.perf_counter() - t0
    sql = "SELECT memory_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?"
    latencies = []
    for _ in range(repeats):
        for text in queries:
            t0 = time.perf_counter()
            query = normalize_recall_query(text, user_scope=store.user_scope, limit=limit)
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in query.terms)
            conn.execute(sql, (match, limit)).fetchall()
            latencies.append((time.perf_counter() - t0) * 1e3)
    conn.close()
    p50, p95 = percentiles(latencies)
    return {"p50_ms": p50, "p95_ms": p95, "build_s": build}


def document_frequencies(store: RemoteMemoryStore, top: int = 5) -> list[tuple[str, float]]:
    """The commonest terms and the share of conversation records holding each."""
    counts: Counter[str] = Counter()
    records = [r for r in store.read_all() if r.kind is MemoryKind.CONVERSATION]
    for r in records:
        counts.update(extract_terms(normalize_text(r.summary + " " + r.content)))
    return [(term, round(n / len(records), 3)) for term, n in counts.most_common(top)]


# -- one size --------------------------------------------------------------------------------


def teaching_sample_size(n: int, shape: str, quick: bool) -> int:
    if quick or n <= 2_000:
        return 1_000
    if n <= 20_000:
        return 12
    return 4 if shape == "short" else 2


def write_fixture(shape: str, n: int, path: Path, count: int) -> tuple:
    """The store of ``shape`` and size ``n``, its ``count`` queries and (as_of, limit)."""
    if shape == "locomo":
        entries, as_of = locomo_latency.locomo_copies(n)
        store = RemoteMemoryStore(path, user_id=USER)
        store.append_many(entries)
        return store, locomo_latency.locomo_questions(count), (as_of, LOCOMO_LIMIT)
    store = write_synthetic_store(path, n, seed=0, user_id=USER, bulk=True, shape=shape)
    return store, synthetic_queries(count, seed=0), (AS_OF, LIMIT)


def run_size(shape: str, n: int, trees: list[Tree], args: argparse.Namespace, work: Path) -> dict:
    print(f"\n== {shape} records, N = {n:,} ==", flush=True)
    t0 = time.perf_counter()
    path = work / f"store-{shape}-{n}.jsonl"
    store, queries, ask = write_fixture(shape, n, path, args.queries)
    mib = path.stat().st_size / 2**20
    print(f"  fixture: {mib:.1f} MiB in {time.perf_counter() - t0:.1f} s", flush=True)
    take = teaching_sample_size(n, shape, args.quick)
    step = max(1, len(queries) // take)
    sample = [(i, queries[i]) for i in range(0, len(queries), step)][:take]
    row: dict = {
        "shape": shape,
        "records": n,
        "queries": len(queries),
        "as_of": ask[0],
        "limit": ask[1],
        "mib": mib,
        "trees": {},
    }
    row["top_terms"] = document_frequencies(store) if n <= 20_000 else None
    for tree in trees:
        teaching = bench_teaching(tree, path, sample, ask)
        indexed = bench_indexed(tree, path, queries, sample, args.serve_runs, args.repeats, ask)
        same = sum(a == b for a, b in zip(teaching["results"], indexed["results"], strict=True))
        row["trees"][tree.name] = {"teaching": teaching, "indexed": indexed, "identical": same}
        cold_saved = indexed["cold_saved_s"]
        print(
            f"  {tree.name:>8}: teaching p50 {teaching['p50_ms']:.1f} ms; indexed p50 "
            f"{indexed['p50_ms']:.3f} p95 {indexed['p95_ms']:.3f} ms, cold build "
            f"{indexed['cold_build_s']:.2f} s"
            + (f", cold saved {cold_saved:.2f} s" if cold_saved is not None else "")
            + f", peak {indexed['peak_rss_mib']:.0f} MiB, identical {same}/{len(sample)}",
            flush=True,
        )
    first = row["trees"][trees[0].name]["indexed"]["results"]
    row["trees_agree"] = all(
        row["trees"][tree.name]["indexed"]["results"] == first for tree in trees
    )
    row["fts5"] = bench_fts5(store, queries, args.repeats, ask[1])
    print(f"  fts5    : p50 {row['fts5']['p50_ms']:.3f} ms p95 {row['fts5']['p95_ms']:.3f} ms")
    if not args.skip_appends and shape == SHAPES[0]:
        entries_file = work / f"entries-{n}.json"
        entries = [  # the append() arguments that wrote these records
            {key: r.to_dict()[key] for key in ENTRY_KEYS} for r in store.read_all()
        ]
        entries_file.write_text(json.dumps(entries), encoding="utf-8")
        directory = args.append_dir or work
        directory.mkdir(parents=True, exist_ok=True)
        for tree in trees:
            appends = bench_appends(tree, directory, entries_file, n, many=False)
            row["trees"][tree.name]["appends"] = appends
            print(
                f"  {tree.name:>8}: {n:,} appends {appends['total_s']:.1f} s "
                f"(p50 {appends['p50_ms']:.3f} ms)",
                flush=True,
            )
        try:
            many = bench_appends(trees[0], directory, entries_file, n, many=True)
        except RuntimeError:  # a tree without append_many
            many = None
        row["append_many"] = many
        if many:
            print(f"  append_many: {many['total_s']:.2f} s for {n:,} records", flush=True)
        entries_file.unlink()
    for tree in row["trees"].values():
        del tree["teaching"]["results"], tree["indexed"]["results"]
    path.unlink()
    return row


def run_conversation(args: argparse.Namespace, work: Path) -> dict:
    """Every named configuration on the longest LoCoMo dev conversation, indexed and
    taught (``locomo_latency.measure``, in this process), and SQLite FTS5 on its store."""
    print("\n== one LoCoMo conversation, every configuration ==", flush=True)
    folder = work / "conversation"
    folder.mkdir()
    store, key, asks = locomo_latency.conversation_store(folder)
    asks = asks[:24] if args.quick else asks
    rows = locomo_latency.measure(store, asks, asks)
    fts5 = bench_fts5(store, [text for text, _, _ in asks], args.repeats, LOCOMO_LIMIT)
    print(f"  fts5    : p50 {fts5['p50_ms']:.3f} ms p95 {fts5['p95_ms']:.3f} ms")
    verdicts = [
        {
            "shape": f"conversation {key}",
            "records": len(store.read_all()),
            "target": f"{target}[{name}]",
            "measured": row[target],
            "limit": limit,
            "met": row[target] <= limit,
        }
        for name, row in rows.items()
        for target, limit in CONVERSATION_TARGETS.items()
    ]
    return {
        "store": key,
        "records": len(store.read_all()),
        "questions": len(asks),
        "limit": LOCOMO_LIMIT,
        "rows": rows,
        "fts5": fts5,
        "verdicts": verdicts,
    }


def conversation_markdown(found: dict) -> list[str]:
    lines = [
        f"## One LoCoMo conversation (`{found['store']}`: {found['records']} turns, "
        f"{found['questions']} questions, limit {found['limit']}; `after` only)",
        "",
        "| configuration | build ms | indexed p50 / p95 ms | taught p50 / p95 ms | identical |",
        "|---|---:|---:|---:|:---:|",
    ]
    for name, r in found["rows"].items():
        lines.append(
            f"| {name} | {r['build_ms']} | {r['indexed_p50_ms']:.3f} / {r['indexed_p95_ms']:.3f} "
            f"| {r['taught_p50_ms']:.2f} / {r['taught_p95_ms']:.2f} "
            f"| {({True: 'yes', False: 'NO', None: '-'})[r['identical']]} |"
        )
    f = found["fts5"]
    lines += [
        "",
        f"SQLite FTS5 on the same store and questions (`ORDER BY bm25`, a reference): p50 "
        f"{f['p50_ms']:.3f} ms, p95 {f['p95_ms']:.3f} ms, built in {f['build_s']:.3f} s.",
        "",
    ]
    return lines


# -- report --------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(rows: list[dict], trees: list[str]) -> str:
    head = (
        "| shape | records | code | teaching p50 ms | indexed p50 / p95 ms | FTS5 p50 / p95 ms "
        "| cold s: build / saved index | appends s (p50 ms) | peak RSS MiB | identical |\n"
        "|---|---:|---|---:|---:|---:|---:|---:|---:|:---:|\n"
    )
    lines = []
    for row in rows:
        for name in trees:
            t = row["trees"][name]
            i, a = t["indexed"], t.get("appends")
            appends = "-" if a is None else f"{a['total_s']:.1f} ({a['p50_ms']:.2f})"
            lines.append(
                f"| {row['shape']} | {row['records']:,} | {name} | {t['teaching']['p50_ms']:.1f} "
                f"| {i['p50_ms']:.3f} / {i['p95_ms']:.3f} "
                f"| {row['fts5']['p50_ms']:.3f} / {row['fts5']['p95_ms']:.3f} "
                f"| {i['cold_build_s']:.2f} / {_fmt(i['cold_saved_s'], '.2f')} | {appends} "
                f"| {i['peak_rss_mib']:.0f} | {t['identical']}/{t['teaching']['queries']} |"
            )
    return head + "\n".join(lines) + "\n"


def verdicts(rows: list[dict], tree: str) -> list[dict]:
    out = []
    for shape in {row["shape"] for row in rows}:
        big = max((row for row in rows if row["shape"] == shape), key=lambda row: row["records"])
        t = big["trees"][tree]
        i = t["indexed"]
        measured = {
            **{f"indexed_p50_ms[{n}]": v["p50_ms"] for n, v in i["scorers"].items()},
            **{f"indexed_p95_ms[{n}]": v["p95_ms"] for n, v in i["scorers"].items()},
            "cold_build_s": i["cold_build_s"],
            "cold_saved_s": i["cold_saved_s"],
            "peak_rss_mib": i["peak_rss_mib"],
        }
        if t.get("appends"):
            measured["append_100k_s"] = t["appends"]["total_s"] * 100_000 / big["records"]
        for key, value in measured.items():
            if value is not None:
                out.append(
                    {
                        "shape": shape,
                        "records": big["records"],
                        "target": key,
                        "measured": value,
                        "limit": TARGETS[key.split("[")[0]],
                        "met": value <= TARGETS[key.split("[")[0]],
                    }
                )
    return sorted(out, key=lambda v: (ALL_SHAPES.index(v["shape"]), v["target"]))


def markdown(report: dict) -> str:
    m = report["machine"]
    trees = report["trees"]
    lines = [
        "# memorylib recall benchmark (latest run)",
        "",
        f"Command: `{report['command']}`  ",
        f"Machine: {m['cpus']} CPUs, {m['platform']}, Python {m['python']}, numpy {m['numpy']}, "
        f"SQLite {m['sqlite']}  ",
        f"Load average (1, 5, 15 min): before {report['load_before']}, after "
        f"{report['load_after']}  ",
        f"Started {report['started']}, took {report['duration_s']:.0f} s. Queries: "
        f"short and long: {report['rows'][0]['queries'] if report['rows'] else 0} synthetic "
        f"(common, rare, Chinese, mixed), limit {LIMIT}, as_of {AS_OF}; locomo: as many dev "
        f"questions, limit {LOCOMO_LIMIT}, one day after the newest turn. Code: "
        + ", ".join(f"`{name}` = {desc}" for name, desc in report["tree_descriptions"].items())
        + ".",
        "",
        table(report["rows"], trees),
        "Latencies are medians (p50) and 95th percentiles over fresh processes (their first, "
        "cold recall excluded). `identical` counts queries whose full indexed RecallResult "
        "equals the teaching one. Appends run on the `short` shape.",
        "",
    ]
    agree = [row for row in report["rows"] if len(trees) > 1]
    if agree:
        lines += [
            "Before and after return the same results: "
            + ", ".join(
                f"{row['shape']} {row['records']:,}: {'yes' if row['trees_agree'] else 'NO'}"
                for row in agree
            ),
            "",
        ]
    for row in report["rows"]:
        if row.get("top_terms"):
            terms = ", ".join(f"{t} {share:.0%}" for t, share in row["top_terms"])
            lines.append(f"Commonest terms, {row['shape']} {row['records']:,}: {terms}  ")
    many = [row for row in report["rows"] if row.get("append_many")]
    if many:
        lines.append("")
        for row in many:
            lines.append(
                f"`append_many` of {row['records']:,} records (one lock, one write, one fsync): "
                f"{row['append_many']['total_s']:.2f} s  "
            )
    lines += [
        "",
        f"## Indexed latency per scorer (`{trees[0]}`, p50 / p95 ms)",
        "",
        "| shape | records | " + " | ".join(SCORERS) + " |",
        "|---|---:|" + "---:|" * len(SCORERS),
    ]
    for row in report["rows"]:
        per = row["trees"][trees[0]]["indexed"]["scorers"]
        lines.append(
            f"| {row['shape']} | {row['records']:,} | "
            + " | ".join(f"{per[n]['p50_ms']:.3f} / {per[n]['p95_ms']:.3f}" for n in SCORERS)
            + " |"
        )
    lines += [
        "",
        *(conversation_markdown(report["conversation"]) if report["conversation"] else []),
    ]
    lines += [
        f"## Targets (`{trees[0]}`, largest size of each shape, and the conversation)",
        "",
        "| shape | target | measured | limit | met |",
        "|---|---|---:|---:|:---:|",
    ]
    conversation = report["conversation"]["verdicts"] if report["conversation"] else []
    for v in [*report["verdicts"], *conversation]:
        lines.append(
            f"| {v['shape']} {v['records']:,} | {v['target']} | {v['measured']:.3f} | "
            f"{v['limit']} | {'yes' if v['met'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def worktree(ref: str, work: Path) -> Tree:
    target = work / f"tree-{ref}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(target), ref],
        check=True,
        capture_output=True,
    )
    return Tree(ref, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--shapes", default=",".join(ALL_SHAPES))
    parser.add_argument("--skip-conversation", action="store_true")
    parser.add_argument("--compare", default=None, help="a git ref measured beside this tree")
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--queries", type=int, default=36, help="queries in the fixed set")
    parser.add_argument("--repeats", type=int, default=10, help="passes over the query set")
    parser.add_argument("--serve-runs", type=int, default=3, help="fresh processes per kind")
    parser.add_argument("--append-dir", type=Path, default=None, help="where appends go")
    parser.add_argument("--skip-appends", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.queries, args.repeats, args.serve_runs = "300,2000", 12, 3, 1
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    shapes = [s for s in args.shapes.split(",") if s.strip()]
    started, t0, before = time.strftime("%Y-%m-%d %H:%M:%S"), time.perf_counter(), load()
    work = Path(tempfile.mkdtemp(prefix="memorylib-bench-"))
    trees = [Tree("after", ROOT, SCORERS)]
    descriptions = {"after": "this checkout"}
    try:
        if args.compare:
            trees.append(worktree(args.compare, work))
            trees[-1].name = "before"
            descriptions["before"] = f"commit {args.compare}"
        conversation = None if args.skip_conversation else run_conversation(args, work)
        rows = [run_size(shape, n, trees, args, work) for shape in shapes for n in sizes]
    finally:
        for tree in trees[1:]:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree.root)],
                check=False,
                capture_output=True,
            )
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "command": " ".join([".venv/bin/python", "bench/run_bench.py", *sys.argv[1:]]),
        "started": started,
        "duration_s": time.perf_counter() - t0,
        "load_before": before,
        "load_after": load(),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "sqlite": sqlite3.sqlite_version,
        },
        "targets": TARGETS,
        "trees": [tree.name for tree in trees],
        "tree_descriptions": descriptions,
        "rows": rows,
        "conversation": conversation,
    }
    report["verdicts"] = verdicts(rows, "after")
    args.out.mkdir(parents=True, exist_ok=True)
    name = "quick" if args.quick else "latest"  # a smoke run never replaces the real results
    (args.out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.out / f"{name}.md").write_text(markdown(report), encoding="utf-8")
    print("\n" + markdown(report))
    ok = all(
        tree["identical"] == tree["teaching"]["queries"]
        for row in rows
        for tree in row["trees"].values()
    ) and all(row["trees_agree"] for row in rows)
    if conversation:
        ok = ok and all(r["identical"] for r in conversation["rows"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
