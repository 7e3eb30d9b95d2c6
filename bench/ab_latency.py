"""Before/after recall latency of two checkouts in one process, their queries alternated.

    .venv/bin/python bench/ab_latency.py /work/main . --config bm25-context --config bm25-full
    .venv/bin/python bench/ab_latency.py /work/main . --config bm25-context --taught --cpu

On a shared machine two runs of ``locomo_latency.py`` (one per checkout, one after the
other) see different loads, and a 15% change drowns in them. Here each checkout's
``memorylib`` is imported under its own modules (the first one's are dropped from
``sys.modules`` before the second is imported; its engines keep working from their own
module globals), every engine is built on the longest LoCoMo dev conversation
(``locomo_latency.conversation_store``) and warmed by one question, and then every
question is asked of every engine in turn, the order reversed on every other question.
Each question's time is its least over ``--passes`` passes (wall clock, or the process's
CPU time with ``--cpu``); p50 and p95 over the questions. ``same`` says whether every
checkout gave the first one's results (compared as JSON).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _engines(
    trees: list[Path], names: list[str], taught: bool, folder: Path
) -> tuple[dict[tuple[str, str], object], list[tuple[str, str, str]]]:
    engines: dict[tuple[str, str], object] = {}
    asks: list[tuple[str, str, str]] = []
    for n, tree in enumerate(trees):
        for module in [
            m for m in sys.modules if m.split(".")[0] in ("memorylib", "locomo_latency")
        ]:
            del sys.modules[module]
        sys.path[:0] = [str(tree), str(tree / "bench")]
        import locomo_latency

        from memorylib import RecallEngine
        from memorylib.evaluation import CONFIGURATIONS

        assert locomo_latency.__file__.startswith(str(tree)), locomo_latency.__file__
        place = folder / str(n)
        place.mkdir()
        store, _, asks = locomo_latency.conversation_store(place)
        for name in names:
            engine = RecallEngine(
                store, policy=CONFIGURATIONS[name], strategy="teaching" if taught else "indexed"
            )
            engine.recall(asks[0][0], limit=10, as_of=asks[0][1], query_id="warm-up")
            engines[(str(tree), name)] = engine
        del sys.path[:2]
    return engines, asks


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path, help="checkouts (the first: the baseline)")
    parser.add_argument("--config", action="append", required=True, help="a configuration")
    parser.add_argument("--taught", action="store_true", help="the taught path, not the index")
    parser.add_argument("--passes", type=int, default=5, help="each question's least of N")
    parser.add_argument("--cpu", action="store_true", help="process CPU time, not wall clock")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    trees = [tree.resolve() for tree in args.trees]
    with tempfile.TemporaryDirectory(prefix="memorylib-ab-") as tmp:
        engines, asks = _engines(trees, args.config, args.taught, Path(tmp))
        best = {key: [float("inf")] * len(asks) for key in engines}
        answers: dict[tuple[str, str], list[str]] = {key: [] for key in engines}
        for round_ in range(args.passes):
            for i, (text, as_of, query_id) in enumerate(asks):
                order = list(engines.items())
                for key, engine in order if (i + round_) % 2 == 0 else order[::-1]:
                    start = clock()
                    result = engine.recall(text, limit=10, as_of=as_of, query_id=query_id)
                    best[key][i] = min(best[key][i], (clock() - start) * 1000)
                    if round_ == 0:
                        answers[key].append(json.dumps(result.to_dict()))
    print("| configuration | checkout | p50 ms | p95 ms | mean ms | same |")
    print("|---|---|---:|---:|---:|:---:|")
    for name in args.config:
        keys = [key for key in engines if key[1] == name]
        for key in keys:
            same = answers[key] == answers[keys[0]]
            times = best[key]
            print(
                f"| {name} | {key[0]} | {statistics.median(times):.3f} "
                f"| {_percentile(times, 0.95):.3f} | {statistics.mean(times):.3f} "
                f"| {'yes' if same else 'NO'} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
