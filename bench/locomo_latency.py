"""Recall latency of every named configuration on one real conversation, and at 100k records.

    .venv/bin/python bench/locomo_latency.py                 # LoCoMo + 100,000 synthetic
    .venv/bin/python bench/locomo_latency.py --skip-100k     # LoCoMo only (a minute)

``bench/run_bench.py`` runs the LoCoMo part too (``conversation``), with SQLite FTS5 on the
same store, and builds its ``locomo`` shape with ``locomo_copies`` below.

* **LoCoMo**: the longest conversation of ``data/locomo-dev`` as one store (one record per
  turn, as ``memorylib.benchmarks`` builds it), every one of its questions asked with
  ``limit=10`` at the benchmark's clock, for every entry of ``evaluation.CONFIGURATIONS``:
  the taught path (``RecallEngine(strategy="teaching")``: ``read_all`` and the stage
  functions, per query) and the indexed path (the default). The first indexed query
  builds the index (reported as ``build``: the chapter's terms, plus the analyzer's index
  for another analysis, and jieba's dictionary the first time it is needed), the others
  are timed. Every indexed result is compared with the taught one (``identical``).
* **100k**: ``memorylib.synthetic``'s short shape, 100,000 records written with
  ``append_many``; 60 of its queries per configuration on the indexed path, and the taught
  path on the first of them (about 30 s a query at this size), compared the same way.

Times are wall-clock per query (``time.perf_counter``), p50 and p95 over the queries.
The machine is shared: run it twice before believing a number. Prints a markdown table
and writes ``bench/results/locomo_latency.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and "--tree" in sys.argv:  # measure another checkout's memorylib
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))
else:
    sys.path.insert(0, str(ROOT))

from memorylib import RecallEngine, RemoteMemoryStore  # noqa: E402
from memorylib.benchmarks import load_benchmark  # noqa: E402
from memorylib.evaluation import CONFIGURATIONS  # noqa: E402
from memorylib.synthetic import SYNTHETIC_END, synthetic_queries, write_synthetic_store  # noqa: E402
from memorylib.timestamps import format_timestamp, parse_timestamp  # noqa: E402

LOCOMO_DEV = ROOT / "data" / "locomo-dev"
COPY_SHIFT = timedelta(days=3 * 366)  # the dev conversations span less than three years


def locomo_copies(n: int) -> tuple[list[dict], str]:
    """``n`` LoCoMo turns built from the dev conversations, deterministically: copy c of
    every conversation (in the order of its folder) under new memory ids (``c012-26:D1:3``)
    and source ids (``c012-26:session_1``), its dates shifted by ``c`` times three years,
    so copies never interleave; the last copy is cut at ``n``. Also the clock to ask at:
    one day after the newest turn, as the benchmark's own protocol asks."""
    benchmark = load_benchmark("locomo", LOCOMO_DEV)
    entries: list[dict] = []
    copy = 0
    while len(entries) < n:
        shift = copy * COPY_SHIFT
        for key, turns in benchmark.stores.items():
            for turn in turns:
                if len(entries) == n:
                    break
                moment = format_timestamp(
                    parse_timestamp(turn["source"].captured_at, "captured_at") + shift
                )
                source = dataclasses.replace(
                    turn["source"],
                    source_id=f"c{copy:03d}-{turn['source'].source_id}",
                    captured_at=moment,
                )
                entries.append(
                    {
                        **turn,
                        "memory_id": f"c{copy:03d}-{key}:{turn['memory_id']}",
                        "source": source,
                        "stored_at": moment,
                    }
                )
        copy += 1
    newest = max(parse_timestamp(e["source"].captured_at, "captured_at") for e in entries)
    return entries, format_timestamp(newest + timedelta(days=1))


def locomo_questions(count: int) -> list[str]:
    """``count`` questions of the dev set, spread evenly over it (every k-th), asked as
    they are: over the copies a question matches each copy of its conversation."""
    questions = [q.text for q in load_benchmark("locomo", LOCOMO_DEV).queries]
    step = max(1, len(questions) // count)
    return questions[::step][:count]


def conversation_store(folder: Path) -> tuple[RemoteMemoryStore, str, list[tuple[str, str, str]]]:
    """The longest dev conversation as one store, and its questions (text, as_of, id)."""
    benchmark = load_benchmark("locomo", LOCOMO_DEV)
    key, entries = max(benchmark.stores.items(), key=lambda item: len(item[1]))
    store = RemoteMemoryStore(folder / "locomo.jsonl", user_id="locomo")
    store.append_many(entries)
    asks = [(q.text, q.as_of, q.query_id) for q in benchmark.queries if q.store == key]
    return store, key, asks


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _time(
    engine: RecallEngine, asks: list[tuple[str, str, str]], best_of: int = 1
) -> tuple[list[float], list]:
    """Each ask's time (ms; with ``best_of`` > 1 the least of that many passes, which a
    shared machine disturbs less), and its results."""
    times, results = [float("inf")] * len(asks), []
    for round_ in range(best_of):
        for i, (text, as_of, query_id) in enumerate(asks):
            start = time.perf_counter()
            result = engine.recall(text, limit=10, as_of=as_of, query_id=query_id)
            times[i] = min(times[i], (time.perf_counter() - start) * 1000)
            if round_ == 0:
                results.append(result)
    return times, results


CHOSEN: list[str] = []  # --config: only these configurations (none: all of them)


def measure(
    store: RemoteMemoryStore,
    asks: list,
    taught_asks: list,
    *,
    warm: bool = True,
    best_of: int = 1,
    vectors: bool = True,
) -> dict[str, dict]:
    rows = {}
    for name, policy in CONFIGURATIONS.items():
        if (CHOSEN and name not in CHOSEN) or (policy.vector is not None and not vectors):
            continue
        indexed = RecallEngine(store, policy=policy)
        start = time.perf_counter()
        first = indexed.recall(asks[0][0], limit=10, as_of=asks[0][1], query_id=asks[0][2])
        build = (time.perf_counter() - start) * 1000
        fast_times, fast = _time(indexed, asks, best_of)
        taught = RecallEngine(store, policy=policy, strategy="teaching")
        if (
            warm and taught_asks
        ):  # the caches the taught path may keep (decoded lines, analyzed texts)
            taught.recall(asks[0][0], limit=10, as_of=asks[0][1], query_id="warm-up")
        slow_times, slow = _time(taught, taught_asks)
        same = None  # not compared
        if taught_asks:
            same = first == slow[0] and all(a == b for a, b in zip(fast, slow, strict=False))
        rows[name] = {
            "build_ms": round(build, 1),
            "indexed_p50_ms": round(statistics.median(fast_times), 3),
            "indexed_p95_ms": round(_percentile(fast_times, 0.95), 3),
            "taught_p50_ms": round(statistics.median(slow_times), 2) if slow_times else None,
            "taught_p95_ms": round(_percentile(slow_times, 0.95), 2) if slow_times else None,
            "taught_mean_ms": round(statistics.mean(slow_times), 2) if slow_times else None,
            "identical": same,
            "queries": len(asks),
            "taught_queries": len(taught_asks),
        }
        print(name, rows[name], flush=True)
    return rows


def locomo(
    folder: Path, limit: int | None = None, *, best_of: int = 1, taught: bool = True
) -> dict:
    """Every configuration on the longest conversation (``limit``: its first questions)."""
    store, key, asks = conversation_store(folder)
    asks = asks[:limit] if limit else asks
    rows = measure(store, asks, asks if taught else [], best_of=best_of)
    return {"store": key, "records": len(store.read_all()), "rows": rows}


def synthetic(folder: Path, n: int, taught: bool) -> dict:
    store = write_synthetic_store(folder / "synthetic.jsonl", n, bulk=True)
    asks = [(text, SYNTHETIC_END, f"s-{i}") for i, text in enumerate(synthetic_queries(60))]
    # no hybrid at this size: embedding 100,000 records takes about an hour on this machine
    rows = measure(store, asks, asks[:1] if taught else [], warm=False, vectors=False)
    return {"records": n, "rows": rows}


def table(title: str, rows: dict[str, dict]) -> str:
    lines = [
        f"### {title}",
        "",
        "| configuration | build ms | indexed p50 | indexed p95 | taught p50 | taught p95 "
        "| identical |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['build_ms']} | {r['indexed_p50_ms']} | {r['indexed_p95_ms']} "
            f"| {r['taught_p50_ms']} | {r['taught_p95_ms']} "
            f"| {({True: 'yes', False: 'NO', None: '-'})[r['identical']]} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-100k", action="store_true")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument(
        "--no-taught-100k", action="store_true", help="at 100k, time the indexed path only"
    )
    parser.add_argument(
        "--best-of", type=int, default=1, help="indexed: each question's least of N passes"
    )
    parser.add_argument("--no-taught", action="store_true", help="LoCoMo: indexed path only")
    parser.add_argument("--tree", type=Path, help="the checkout whose memorylib is measured")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--config", action="append", default=[], help="only this one (repeat)")
    args = parser.parse_args()
    CHOSEN.extend(args.config)
    with tempfile.TemporaryDirectory(prefix="memorylib-latency-") as tmp:
        results = {
            "locomo": locomo(Path(tmp), best_of=args.best_of, taught=not args.no_taught),
            "best_of": args.best_of,
            "tree": str(args.tree or ROOT),
        }
        if not args.skip_100k:
            results["synthetic"] = synthetic(Path(tmp), args.records, not args.no_taught_100k)
    out = args.out / "locomo_latency.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    loc = results["locomo"]
    print(table(f"LoCoMo {loc['store']}: {loc['records']} turns", loc["rows"]))
    if "synthetic" in results:
        print()
        print(table(f"synthetic short, {args.records:,} records", results["synthetic"]["rows"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
