"""Views for the scaling lesson: recall latency of the teaching and indexed paths vs store size.

The teaching path re-reads, re-parses and re-tokenizes every record on every query,
so its latency grows with the store. The indexed path (``memorylib.index``) pays that
once and then touches only the records that share a query term; it returns the same
``RecallResult``. ``scaling_frame`` measures both on small synthetic stores (built in
a temporary directory, gone afterwards) and ``scaling_chart`` draws them.

The full benchmark (100,000 records, SQLite FTS5, cold start, appends) is
``bench/run_bench.py``; this module is the few-seconds version a notebook can run.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from memorylib import RecallEngine
from memorylib.synthetic import SYNTHETIC_END, synthetic_queries, write_synthetic_store

__all__ = ["PATHS", "scaling_chart", "scaling_frame"]

PATHS = ("teaching", "indexed")
_AS_OF = SYNTHETIC_END
_INDEXED_REPEATS = 5  # indexed queries take microseconds: repeat them for a stable median


def scaling_frame(
    sizes: Iterable[int] = (200, 1000, 3000), *, queries: int = 8, seed: int = 0
) -> pd.DataFrame:
    """One row per (store size, path): ``records, path, p50_ms, p95_ms``.

    Each store is a synthetic bilingual corpus of that many records. Every query runs
    once on the teaching path and ``5`` times on the indexed path; the first indexed
    recall (which builds the index) is done before timing starts.
    """
    texts = synthetic_queries(queries, seed=seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memorylib-scaling-") as tmp:
        for n in sizes:
            store = write_synthetic_store(Path(tmp) / f"store-{n}.jsonl", n, seed=seed, bulk=True)
            for path in PATHS:
                engine = RecallEngine(store, strategy=path)
                repeats = 1
                if path == "indexed":
                    engine.recall(texts[0], as_of=_AS_OF, query_id="warm-up")
                    repeats = _INDEXED_REPEATS
                latencies = []
                for _ in range(repeats):
                    for i, text in enumerate(texts):
                        start = time.perf_counter()
                        engine.recall(text, as_of=_AS_OF, query_id=f"q-{i}")
                        latencies.append((time.perf_counter() - start) * 1e3)
                rows.append(
                    {
                        "records": n,
                        "path": path,
                        "p50_ms": float(np.percentile(latencies, 50)),
                        "p95_ms": float(np.percentile(latencies, 95)),
                    }
                )
    return pd.DataFrame(rows, columns=["records", "path", "p50_ms", "p95_ms"])


def scaling_chart(frame: pd.DataFrame) -> Figure:
    """Median recall latency (log scale) against store size, one line per path.

    The shaded band of each line reaches up to its p95.
    """
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    for path, colour in zip(PATHS, ("#d62728", "#1f77b4"), strict=True):
        rows = frame[frame["path"] == path].sort_values("records")
        if rows.empty:
            continue
        ax.plot(rows["records"], rows["p50_ms"], marker="o", color=colour, label=f"{path} (p50)")
        ax.fill_between(rows["records"], rows["p50_ms"], rows["p95_ms"], color=colour, alpha=0.15)
    ax.set_xscale("log")
    ax.set_yscale("log")
    sizes = sorted(set(frame["records"]))
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlabel("records in the store")
    ax.set_ylabel("recall latency (ms, log scale)")
    ax.set_title("Recall latency vs store size: same results, different cost")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    plt.close(fig)  # returned, not shown twice by the inline backend
    return fig
