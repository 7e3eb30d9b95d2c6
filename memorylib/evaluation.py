"""Measure rankers on the graded evaluation set: ``python -m memorylib eval``.

``data/eval_queries.json`` (123 hand-judged queries, grades 0-3, split into ``dev`` and
``heldout``; see data/README.md) is run against the course corpus, one store per user,
with the real engine (``RecallEngine.recall(text, limit=10, as_of=..., query_id=...)``),
once per scorer. A query asked at ``as_of`` sees only what was stored by then: its
store holds the user's entries whose ``stored_at`` is at or before its ``as_of`` (two
queries are asked before the corpus ends; without the cut they would be ranked against
records written months later, and recall counts a record from after ``as_of`` as age 0,
the freshest possible). Each query gets the metrics of ``memorylib.metrics``; the table shows
their means per split and scorer:

* ``recall@5``, ``recall@10``, ``MRR``, ``nDCG@10`` over the **answerable** queries (a
  record of grade >= 2 exists); a query with no hit scores 0 on each;
* ``abstain``: of the ``no_relevant`` queries (every record graded 0), how many got no
  hit at all. They are never averaged into the four ranking metrics;
* ``empty``: of the answerable queries, how many got no hit (what abstaining costs).

Scorers: every named configuration of ``CONFIGURATIONS`` (name -> ``ScoringPolicy``), in
its order, is a row (``standard_scorers``); an outside harness needs nothing but
``RecallEngine(store, policy=CONFIGURATIONS[name])``. Today: ``coverage`` (the chapter's,
the default), ``bm25``, ``bm25+recency``, and ``bm25+evidence`` / ``bm25+recency+evidence``:
the same with ``min_evidence=STRICT_MIN_EVIDENCE``. That number was chosen on the **dev**
split alone by ``tune_min_evidence`` (its rule is in its docstring; a test re-runs it);
the held-out split is reported, never tuned on. bm25+recency's weights are the chapter's
0.85 / 0.15 and BM25's k1 = 1.2, b = 0.75 are the textbook values: not tuned.

Then BM25 with analyzers beyond the chapter's term rule (``memorylib.analysis``), one
idea per row and all of them together: ``bm25-stem-stop`` (Snowball English stems, the
Snowball stopword list), ``bm25-zh-seg`` (jieba's words and single characters beside the
bigrams, the Chinese stopword list), ``bm25-dialogue`` (a dialogue's older turns weigh
0.9 per turn less), ``bm25-context`` (a turn counted with its neighbours of the same
source at 0.4 / 0.25 / 0.1 by distance) and ``bm25-full``. Their numbers are
the field's usual ones, measured on the public benchmarks' development halves only
(bench/README.md), never on the held-out split.

Last, ``hybrid``: bm25-full's ranking and a vector ranking (multilingual-e5-small, the
``dense`` extra) fused by reciprocal rank (``memorylib.vectors``). A run with no
``--config`` leaves it out (``DEFAULT_RUN``): it needs the model and embeds every record
once; name it to run it.

A scoring function of your own (``score_recall_candidate``'s signature) becomes another
row: ``--scorer module:function`` or ``--scorer path/to/file.py:function``
(``load_score_function``); ``--config NAME`` (repeatable) keeps only the named
configurations. ``--benchmark locomo PATH`` / ``--benchmark madial PATH`` runs the same
configurations on a public benchmark folder instead (``memorylib.benchmarks``, whose
docstring states the protocol). Everything is deterministic: fixed clocks and query ids.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import tempfile
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from .analysis import CHINESE_ANALYZER, DIALOGUE_TURNS, ENGLISH_ANALYZER, FULL_ANALYZER
from .benchmarks import BENCHMARKS, load_benchmark, run_benchmark
from .benchmarks import format_report as format_benchmark_report
from .benchmarks import report_json as benchmark_json
from .datasets import COURSE_USERS, CourseEntry, build_store, data_dir, load_course_entries
from .engine import RecallEngine
from .errors import RemoteMemoryError, RemoteMemoryValidationError
from .metrics import (
    RELEVANT_GRADE,
    abstained,
    is_answerable,
    mean,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from .ranking import ScoreFunction
from .scoring import DEFAULT_POLICY, ScoringPolicy
from .store import RemoteMemoryStore
from .timestamps import parse_timestamp

__all__ = [
    "CONFIGURATIONS",
    "CONFIGURATION_NOTES",
    "DEFAULT_RUN",
    "DEPTH",
    "EVAL_FILE",
    "METRICS",
    "SPLITS",
    "STRICT_MIN_EVIDENCE",
    "CourseStores",
    "EvalQuery",
    "EvalReport",
    "QueryOutcome",
    "Scorer",
    "ScoringFunctionError",
    "SummaryRow",
    "chosen_configurations",
    "evaluate",
    "format_table",
    "load_eval_queries",
    "load_score_function",
    "main",
    "run_scorer",
    "standard_scorers",
    "summarize",
    "tune_min_evidence",
]

EVAL_FILE = "eval_queries.json"
SPLITS = ("dev", "heldout")
DEPTH = 10  # recall's largest limit: every ranking is cut here
METRICS = ("recall@5", "recall@10", "MRR", "nDCG@10")
# Chosen on dev by tune_min_evidence() (tests/test_evaluation.py re-runs the rule).
STRICT_MIN_EVIDENCE = 0.4
TUNING_GRID = tuple(round(0.05 * step, 2) for step in range(1, 20))  # 0.05 .. 0.95

# Every configuration the command reports, by name, in the order of its rows: the one
# place a row's name and its policy (the analyzer included) are set.
CONTEXT_WEIGHTS = (0.4, 0.25, 0.1)  # a neighbour's term counts at distance 1, 2, 3
CONFIGURATIONS: dict[str, ScoringPolicy] = {
    "coverage": DEFAULT_POLICY,
    "bm25": ScoringPolicy.bm25(),
    "bm25+recency": ScoringPolicy.bm25_recency(),
    "bm25+evidence": ScoringPolicy.bm25(min_evidence=STRICT_MIN_EVIDENCE),
    "bm25+recency+evidence": ScoringPolicy.bm25_recency(min_evidence=STRICT_MIN_EVIDENCE),
    "bm25-stem-stop": ScoringPolicy.bm25(analyzer=ENGLISH_ANALYZER),
    "bm25-zh-seg": ScoringPolicy.bm25(analyzer=CHINESE_ANALYZER),
    "bm25-dialogue": ScoringPolicy.bm25(query_weighting=DIALOGUE_TURNS),
    "bm25-context": ScoringPolicy.bm25(context=CONTEXT_WEIGHTS),
    "bm25-full": ScoringPolicy.bm25(
        analyzer=FULL_ANALYZER, query_weighting=DIALOGUE_TURNS, context=CONTEXT_WEIGHTS
    ),
    "hybrid": replace(
        ScoringPolicy.bm25(
            analyzer=FULL_ANALYZER, query_weighting=DIALOGUE_TURNS, context=CONTEXT_WEIGHTS
        ),
        vector="e5-small",
    ),
}
# What a run with no --config reports: every configuration but those that need a vector
# model (an optional install, and seconds of embedding per store): ask for "hybrid" by name.
DEFAULT_RUN = tuple(name for name, policy in CONFIGURATIONS.items() if policy.vector is None)
# What the legend says of a configuration (one without a note is listed without one).
CONFIGURATION_NOTES: dict[str, str] = {
    "coverage": "the chapter's: matched / query terms",
    "bm25": "k1 1.2, b 0.75",
    "bm25+recency": "0.85 BM25/best + 0.15 recency",
    "bm25+evidence": f"min_evidence {STRICT_MIN_EVIDENCE:g}",
    "bm25+recency+evidence": f"min_evidence {STRICT_MIN_EVIDENCE:g}",
    "bm25-stem-stop": "Snowball English stems and stopwords",
    "bm25-zh-seg": "jieba words and CJK characters beside the bigrams, Chinese stopwords",
    "bm25-dialogue": "a dialogue's turns weigh 0.9 per later turn less",
    "bm25-context": "neighbours in the same source at 0.4/0.25/0.1",
    "bm25-full": "all four",
    "hybrid": "bm25-full and multilingual-e5-small vectors, reciprocal rank fusion (k 60)",
}


# -- the evaluation set -----------------------------------------------------------------------


@dataclass(frozen=True)
class EvalQuery:
    """One query of ``eval_queries.json`` (fields as documented in data/README.md)."""

    query_id: str
    user_id: str
    text: str
    as_of: str
    language: str
    category: str
    teaches: str | None
    split: str
    judgments: Mapping[str, int]
    rationale: str

    @property
    def answerable(self) -> bool:
        return is_answerable(self.judgments)


_QUERY_FIELDS = tuple(f for f in EvalQuery.__dataclass_fields__)


def load_eval_queries(path: str | Path | None = None) -> tuple[EvalQuery, ...]:
    """The evaluation set, in file order. Checks the shape the evaluation relies on
    (fields, grades 0..3, splits, unique ids); tests/test_eval_set.py checks the rest."""
    target = Path(path) if path is not None else data_dir() / EVAL_FILE
    try:
        payload = json.loads(target.read_text(encoding="utf-8"))
        items = payload["queries"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RemoteMemoryValidationError(f"{target.name}: not an evaluation set ({exc})") from None
    queries: list[EvalQuery] = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        where = f"{target.name}: query {position}"
        if not isinstance(item, dict) or tuple(item) != _QUERY_FIELDS:
            raise RemoteMemoryValidationError(f"{where}: fields must be {', '.join(_QUERY_FIELDS)}")
        grades = item["judgments"]
        if not isinstance(grades, dict) or not all(
            type(g) is int and 0 <= g <= 3 for g in grades.values()
        ):
            raise RemoteMemoryValidationError(f"{where}: judgments must map ids to grades 0..3")
        if item["split"] not in SPLITS:
            raise RemoteMemoryValidationError(f"{where}: split must be dev or heldout")
        if item["query_id"] in seen:
            raise RemoteMemoryValidationError(f"{where}: duplicate query_id {item['query_id']!r}")
        seen.add(item["query_id"])
        queries.append(EvalQuery(**{**item, "judgments": dict(grades)}))
    return tuple(queries)


class ScoringFunctionError(RemoteMemoryError):
    """A scoring function of your own raised, or returned something else than a breakdown."""


# -- scorers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scorer:
    """A row of the table: a policy, and optionally a scoring function of your own."""

    name: str
    policy: ScoringPolicy = DEFAULT_POLICY
    score: ScoreFunction | None = field(default=None, compare=False)
    note: str = ""


def standard_scorers() -> tuple[Scorer, ...]:
    """A row per entry of ``CONFIGURATIONS`` without a vector model (``DEFAULT_RUN``), in
    its order, with its note."""
    return tuple(
        Scorer(name, CONFIGURATIONS[name], note=CONFIGURATION_NOTES.get(name, ""))
        for name in DEFAULT_RUN
    )


def chosen_configurations(names: Sequence[str]) -> dict[str, ScoringPolicy]:
    """The named entries of ``CONFIGURATIONS`` (all of them for no name), in its order."""
    unknown = [name for name in names if name not in CONFIGURATIONS]
    if unknown:
        raise RemoteMemoryValidationError(
            f"--config {unknown[0]!r} is not a configuration; choose from "
            f"{', '.join(CONFIGURATIONS)}"
        )
    return {
        n: p for n, p in CONFIGURATIONS.items() if n in names or (not names and n in DEFAULT_RUN)
    }


def load_score_function(spec: str) -> ScoreFunction:
    """``module:function`` (importable) or ``path/to/file.py:function`` -> the function."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise RemoteMemoryValidationError(
            f"--scorer {spec!r}: write module:function or path/to/file.py:function"
        )
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise RemoteMemoryValidationError(f"--scorer {spec!r}: no file {where!r}")
            loader = importlib.util.spec_from_file_location(f"memorylib_eval_{path.stem}", path)
            assert loader is not None and loader.loader is not None
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except RemoteMemoryError:
        raise
    except Exception as exc:  # a syntax error in a student's file: say so, no traceback
        raise RemoteMemoryValidationError(
            f"--scorer {spec!r}: cannot load {where!r}: {type(exc).__name__}: {exc}"
        ) from exc
    function = getattr(module, name, None)
    if not callable(function):
        raise RemoteMemoryValidationError(f"--scorer {spec!r}: {name!r} is not a function there")
    return function


# -- running ----------------------------------------------------------------------------------


class CourseStores:
    """The course users' stores, built on first use in a temporary folder (removed when
    this object is closed or collected). Stores are read, never written, by recall.

    ``store(user_id)`` holds every entry of the user; ``store(user_id, as_of)`` only those
    stored at or before ``as_of`` (the same store when that is all of them), so a query
    asked at ``as_of`` cannot see a record written after it was asked."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="memorylib-eval-")
        self._finalizer = weakref.finalize(self, self._tmp.cleanup)
        self._stores: dict[tuple[str, tuple[str, ...]], RemoteMemoryStore] = {}
        self._entries: tuple[CourseEntry, ...] | None = None  # the corpus, read on first use

    def store(self, user_id: str, as_of: str | None = None) -> RemoteMemoryStore:
        if user_id not in COURSE_USERS:
            raise RemoteMemoryValidationError(f"{user_id!r} is not a course user")
        if self._entries is None:
            self._entries = load_course_entries()
        entries = [e for e in self._entries if e.user_id == user_id]
        if as_of is not None:
            moment = parse_timestamp(as_of, "as_of")
            entries = [e for e in entries if parse_timestamp(e.stored_at, "stored_at") <= moment]
        key = (user_id, tuple(e.memory_id for e in entries))
        if key not in self._stores:
            name = f"{len(self._stores)}.jsonl"
            self._stores[key] = build_store(entries, Path(self._tmp.name), user_id, name=name)
        return self._stores[key]

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> CourseStores:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class QueryOutcome:
    """One query under one scorer: what came back and what it is worth."""

    scorer: str
    query_id: str
    split: str
    category: str
    language: str
    user_id: str
    text: str
    answerable: bool
    hits: tuple[str, ...]
    grades: tuple[int, ...]  # the grade of each hit, in rank order
    empty_reason: str | None
    recall_at_5: float | None  # None for a query with nothing relevant
    recall_at_10: float | None
    reciprocal_rank: float | None
    ndcg_at_10: float | None

    @property
    def abstained(self) -> bool:
        return abstained(self.hits)


def run_scorer(
    scorer: Scorer, queries: Iterable[EvalQuery], stores: CourseStores
) -> tuple[QueryOutcome, ...]:
    """Recall every query (limit 10, its as_of and query_id) with ``scorer``, in the store
    of what its user had stored by its as_of; score it."""
    engines: dict[RemoteMemoryStore, RecallEngine] = {}  # one per store (by identity)
    outcomes = []
    for query in queries:
        store = stores.store(query.user_id, query.as_of)  # only what was stored by as_of
        if store not in engines:
            engines[store] = RecallEngine(store, policy=scorer.policy, score=scorer.score)
        try:
            result = engines[store].recall(
                query.text, limit=DEPTH, as_of=query.as_of, query_id=query.query_id
            )
        except Exception as exc:
            if scorer.score is None or isinstance(exc, RemoteMemoryError):
                raise
            raise ScoringFunctionError(
                f"{scorer.name} failed on {query.query_id} ({query.text!r}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        ranking = tuple(hit.memory_id for hit in result.hits)
        answerable = query.answerable
        judged = query.judgments
        outcomes.append(
            QueryOutcome(
                scorer=scorer.name,
                query_id=query.query_id,
                split=query.split,
                category=query.category,
                language=query.language,
                user_id=query.user_id,
                text=query.text,
                answerable=answerable,
                hits=ranking,
                grades=tuple(judged.get(memory_id, 0) for memory_id in ranking),
                empty_reason=result.empty_reason,
                recall_at_5=recall_at_k(ranking, judged, 5) if answerable else None,
                recall_at_10=recall_at_k(ranking, judged, 10) if answerable else None,
                reciprocal_rank=reciprocal_rank(ranking, judged) if answerable else None,
                ndcg_at_10=ndcg_at_k(ranking, judged, 10) if answerable else None,
            )
        )
    return tuple(outcomes)


@dataclass(frozen=True)
class SummaryRow:
    """Means over one split for one scorer (rounded to 3 places), and the abstention counts."""

    split: str
    scorer: str
    answerable: int
    recall_at_5: float
    recall_at_10: float
    mrr: float
    ndcg_at_10: float
    no_relevant: int
    abstained: int  # of the no_relevant queries
    empty_answerable: int  # answerable queries that got no hit

    @property
    def abstention(self) -> float | None:
        return self.abstained / self.no_relevant if self.no_relevant else None

    def metric(self, name: str) -> float:
        return {
            "recall@5": self.recall_at_5,
            "recall@10": self.recall_at_10,
            "MRR": self.mrr,
            "nDCG@10": self.ndcg_at_10,
        }[name]


def summarize(outcomes: Sequence[QueryOutcome], *, split: str, scorer: str) -> SummaryRow:
    """The table row of ``outcomes`` (one split, one scorer)."""
    mine = [o for o in outcomes if o.split == split and o.scorer == scorer]
    scored = [o for o in mine if o.answerable]
    unanswerable = [o for o in mine if not o.answerable]

    def average(name: str) -> float:
        return round(mean(getattr(o, name) for o in scored), 3)

    return SummaryRow(
        split=split,
        scorer=scorer,
        answerable=len(scored),
        recall_at_5=average("recall_at_5"),
        recall_at_10=average("recall_at_10"),
        mrr=average("reciprocal_rank"),
        ndcg_at_10=average("ndcg_at_10"),
        no_relevant=len(unanswerable),
        abstained=sum(o.abstained for o in unanswerable),
        empty_answerable=sum(o.abstained for o in scored),
    )


@dataclass(frozen=True)
class EvalReport:
    rows: tuple[SummaryRow, ...]
    outcomes: tuple[QueryOutcome, ...]
    scorers: tuple[Scorer, ...]
    splits: tuple[str, ...]

    def row(self, split: str, scorer: str) -> SummaryRow:
        return next(r for r in self.rows if r.split == split and r.scorer == scorer)


def evaluate(
    scorers: Sequence[Scorer] | None = None,
    *,
    splits: Sequence[str] = SPLITS,
    queries: Sequence[EvalQuery] | None = None,
    stores: CourseStores | None = None,
) -> EvalReport:
    """Every scorer on every split: the table's rows and every query's outcome."""
    scorers = tuple(standard_scorers() if scorers is None else scorers)
    names = [s.name for s in scorers]
    if len(set(names)) != len(names):
        raise RemoteMemoryValidationError(f"scorer names must be unique, got {names}")
    if not set(splits) <= set(SPLITS) or not splits:
        raise RemoteMemoryValidationError(f"splits must be among {SPLITS}, got {splits!r}")
    chosen = [q for q in (load_eval_queries() if queries is None else queries) if q.split in splits]
    own = stores is None
    stores = CourseStores() if stores is None else stores
    try:
        outcomes = tuple(o for s in scorers for o in run_scorer(s, chosen, stores))
    finally:
        if own:
            stores.close()
    rows = tuple(
        summarize(outcomes, split=split, scorer=s.name) for split in splits for s in scorers
    )
    return EvalReport(rows, outcomes, scorers, tuple(splits))


def tune_min_evidence(
    queries: Sequence[EvalQuery],
    stores: CourseStores | None = None,
    *,
    grid: Sequence[float] = TUNING_GRID,
) -> tuple[float, list[dict[str, Any]]]:
    """Choose the ``+evidence`` rows' ``min_evidence`` on DEV queries only.

    A threshold trades two kinds of question against each other: it empties the results
    of questions the history cannot answer (good) and of answerable ones whose answer is
    worded differently (bad). The rule weighs the two kinds equally, however many of each
    the split holds: for each threshold of ``grid`` (0 = none), the objective is the mean
    of dev nDCG@10 over the answerable queries and the abstention rate over the
    ``no_relevant`` queries, averaged over bm25 and bm25+recency; the highest objective wins,
    the smallest threshold on a tie. Returns it and the whole curve (one dict per
    threshold). Held-out queries are refused: they are never tuned on.
    """
    if any(q.split != "dev" for q in queries):
        raise RemoteMemoryValidationError("tune_min_evidence takes dev queries only")
    kinds = {"bm25": ScoringPolicy.bm25, "bm25+recency": ScoringPolicy.bm25_recency}
    thresholds = sorted({0.0, *grid})
    candidates = [
        Scorer(f"{kind}@{t:g}", factory(min_evidence=t))
        for t in thresholds
        for kind, factory in kinds.items()
    ]
    report = evaluate(candidates, splits=("dev",), queries=queries, stores=stores)
    curve: list[dict[str, Any]] = []
    for t in thresholds:
        rows = [report.row("dev", f"{kind}@{t:g}") for kind in kinds]
        parts = [(r.ndcg_at_10 + (r.abstention or 0.0)) / 2 for r in rows]
        curve.append(
            {
                "min_evidence": t,
                "bm25 nDCG@10": rows[0].ndcg_at_10,
                "bm25+recency nDCG@10": rows[1].ndcg_at_10,
                "abstained": rows[0].abstained,
                "no_relevant": rows[0].no_relevant,
                "answerable": rows[0].answerable,
                "empty answerable": rows[0].empty_answerable,
                "objective": round(sum(parts) / len(parts), 4),
            }
        )
    best = max(curve, key=lambda point: (point["objective"], -point["min_evidence"]))
    return best["min_evidence"], curve


# -- output -----------------------------------------------------------------------------------


def _fraction(count: int, total: int) -> str:
    return f"{count}/{total}" if total else "-"


def format_table(report: EvalReport) -> str:
    """The table as fixed-width text (what the CLI prints)."""
    width = max(len("scorer"), *(len(s.name) for s in report.scorers))
    head = (
        f"{'split':<8} {'scorer':<{width}} {'queries':>7} {'recall@5':>8} {'recall@10':>9} "
        f"{'MRR':>6} {'nDCG@10':>7}   {'abstain':>7} {'empty':>6}"
    )
    lines = [head, "-" * len(head)]
    for split in report.splits:
        for scorer in report.scorers:
            r = report.row(split, scorer.name)
            lines.append(
                f"{split:<8} {scorer.name:<{width}} {r.answerable:>7} {r.recall_at_5:>8.3f} "
                f"{r.recall_at_10:>9.3f} {r.mrr:>6.3f} {r.ndcg_at_10:>7.3f}   "
                f"{_fraction(r.abstained, r.no_relevant):>7} "
                f"{_fraction(r.empty_answerable, r.answerable):>6}"
            )
    return "\n".join(lines)


def legend(report: EvalReport) -> str:
    notes = "; ".join(f"{s.name}: {s.note}" for s in report.scorers if s.note)
    return (
        f"queries: answerable queries (a record of grade >= {RELEVANT_GRADE}); metrics are "
        "their means, a query with no hit counting 0.\n"
        "relevant = grade >= 2 (recall, MRR); nDCG@10 gain = grade (0-3), ideal = every "
        "judged record.\n"
        "abstain: no_relevant queries (nothing relevant) that got no hit; empty: answerable "
        "queries that got no hit.\n"
        f"limit {DEPTH}, each query's own as_of and query_id. {notes}.\n"
        f"min_evidence {STRICT_MIN_EVIDENCE:g} was chosen on dev only (tune_min_evidence); "
        "heldout is reported, never tuned on."
    )


def report_json(report: EvalReport, *, per_query: bool = False) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "settings": {
            "limit": DEPTH,
            "relevant_grade": RELEVANT_GRADE,
            "ndcg_gain": "grade",
            "strict_min_evidence": STRICT_MIN_EVIDENCE,
            "scorers": {s.name: s.note for s in report.scorers},
        },
        "rows": [{**asdict(r), "abstention": r.abstention} for r in report.rows],
    }
    if per_query:
        payload["queries"] = [
            {**asdict(o), "hits": list(o.hits), "grades": list(o.grades)} for o in report.outcomes
        ]
    return payload


# -- the command ------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--split",
        choices=(*SPLITS, "both"),
        default=None,
        help="which split of the evaluation set to report (default: both)",
    )
    parser.add_argument(
        "--benchmark",
        nargs=2,
        metavar=("{" + ",".join(BENCHMARKS) + "}", "PATH"),
        help="measure the configurations on a public benchmark folder instead: "
        "per category and overall recall@5, recall@10, hit@10, MRR, nDCG@10 "
        "(protocol: memorylib.benchmarks)",
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME",
        help=f"report only this configuration ({', '.join(CONFIGURATIONS)}); repeatable; "
        "default: all",
    )
    parser.add_argument(
        "--scorer",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="add your own scoring function as a row (module:function or file.py:function); "
        "repeatable",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument(
        "--per-query",
        action="store_true",
        help="with --json: every query's hits and metrics too",
    )


def run_benchmark_command(args: argparse.Namespace, out: TextIO) -> int:
    name, path = args.benchmark
    if name not in BENCHMARKS:
        raise RemoteMemoryValidationError(
            f"--benchmark {name!r}: choose one of {', '.join(BENCHMARKS)}"
        )
    if args.split is not None or args.scorer:
        raise RemoteMemoryValidationError(
            "--split and --scorer belong to the evaluation set; a benchmark runs the named "
            "configurations (--config)"
        )
    configurations = chosen_configurations(args.config)
    report = run_benchmark(load_benchmark(name, path), configurations)
    if args.json:
        payload = benchmark_json(report, per_query=args.per_query)
        print(json.dumps(payload, indent=2, ensure_ascii=False), file=out)
    else:
        print(format_benchmark_report(report), file=out)
    return 0


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    if args.benchmark is not None:
        return run_benchmark_command(args, out)
    splits = SPLITS if args.split in (None, "both") else (args.split,)
    chosen = chosen_configurations(args.config)
    scorers = [Scorer(n, p, note=CONFIGURATION_NOTES.get(n, "")) for n, p in chosen.items()]
    for spec in args.scorer:
        function = load_score_function(spec)
        name = f"yours:{spec.rpartition(':')[2]}"
        if any(s.name == name for s in scorers):
            name = f"{name}#{len(scorers) + 1}"
        scorers.append(Scorer(name, DEFAULT_POLICY, function, note=spec))
    report = evaluate(scorers, splits=splits)
    if args.json:
        print(
            json.dumps(report_json(report, per_query=args.per_query), indent=2, ensure_ascii=False),
            file=out,
        )
    else:
        print(format_table(report), file=out)
        print(file=out)
        print(legend(report), file=out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memorylib.evaluation`` (the same as ``python -m memorylib eval``)."""
    parser = argparse.ArgumentParser(
        prog="python -m memorylib eval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except RemoteMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
