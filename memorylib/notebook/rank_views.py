"""Views for notebook 05 (stable rank): sort-key frames, shuffles, ties and bump charts.

Stage 4 orders scored candidates by four explicit keys (total DESC, lexical_coverage
DESC, captured_at DESC, memory_id ASC) and keeps the first ``limit``. Every function
here is pure and uses the library's own ``rank_key`` and ``recall_pipeline``, so the
order a notebook shows is the order the library produces. ``as_of_explorer`` only
wires an ipywidgets slider to ``rank_view``.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from memorylib import (
    DEFAULT_POLICY,
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallQuery,
    RecallScoreBreakdown,
    ScoringPolicy,
    StoredMemory,
    build_recall_candidates,
    normalize_recall_query,
    recall_pipeline,
    score_recall_candidate,
    user_scope_for,
)
from memorylib.candidates import CandidateSet
from memorylib.datasets import COURSE_AS_OF
from memorylib.notebook import charts
from memorylib.notebook.common import candidate_pool, figure_png
from memorylib.notebook.exercises import CheckResult, check_value, expect_sequence, right, wrong
from memorylib.ranking import rank_key
from memorylib.timestamps import age_in_days, format_timestamp, parse_timestamp

__all__ = [
    "EXERCISE_AS_OF",
    "EXERCISE_QUERY",
    "SORT_KEYS",
    "Scored",
    "as_of_explorer",
    "bump_chart",
    "check_order_answer",
    "deciding_key",
    "exercise_candidates",
    "exercise_frame",
    "exercise_order",
    "in_memory_records",
    "monthly_steps",
    "naive_order",
    "query_for",
    "rank_all",
    "rank_trajectory_frame",
    "rank_view",
    "sort_key_frame",
    "storage_order_frame",
    "top_ids_frame",
    "weight_trajectory_frame",
]

SORT_KEYS = ("total", "lexical_coverage", "captured_at", "memory_id")
_KEY_COLUMNS = ("1 total ↓", "2 lexical_coverage ↓", "3 captured_at ↓", "4 memory_id ↑")


@dataclass(frozen=True, slots=True)
class Scored:
    """One candidate with its breakdown and the library's sort key (smaller = earlier)."""

    candidate: RecallCandidate
    breakdown: RecallScoreBreakdown
    key: tuple[float, float, int, str]

    @property
    def memory_id(self) -> str:
        return self.candidate.record.memory_id


def rank_all(
    query: RecallQuery,
    candidates: CandidateSet | Iterable[RecallCandidate],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> tuple[Scored, ...]:
    """EVERY candidate in stable-rank order (the library keeps only ``limit`` of them)."""
    moment = parse_timestamp(as_of, "as_of")
    scored = []
    for candidate in candidate_pool(candidates):
        breakdown = score_recall_candidate(query, candidate, as_of=moment, policy=policy)
        scored.append(Scored(candidate, breakdown, rank_key(breakdown, candidate)))
    return tuple(sorted(scored, key=lambda s: s.key))


def deciding_key(above: tuple[Any, ...] | None, below: tuple[Any, ...]) -> str:
    """Name of the first sort key on which ``below`` differs from the row ``above`` it."""
    if above is None:
        return "—"
    for name, a, b in zip(SORT_KEYS, above, below, strict=True):
        if a != b:
            return name
    return "identical"  # impossible in a store: memory_id is unique


def sort_key_frame(ranked: Sequence[Scored], *, limit: int | None = None) -> pd.DataFrame:
    """The four sort-key columns in key order, and which key put each row below the last."""
    rows = []
    previous = None
    for rank, item in enumerate(ranked[:limit] if limit else ranked, start=1):
        rows.append(
            {
                "rank": rank,
                _KEY_COLUMNS[0]: item.breakdown.total,
                _KEY_COLUMNS[1]: item.breakdown.lexical_coverage,
                _KEY_COLUMNS[2]: item.candidate.record.source.captured_at,
                _KEY_COLUMNS[3]: item.memory_id,
                "decided by": deciding_key(previous, item.key),
            }
        )
        previous = item.key
    return pd.DataFrame(rows, columns=["rank", *_KEY_COLUMNS, "decided by"])


def query_for(labelled: Any, user_scope: str, *, limit: int = 5) -> RecallQuery:
    """A labelled query (``memorylib.datasets.LabelledQuery``) normalized with its own
    query_id and as_of, so every run gives the same ids and numbers."""
    return normalize_recall_query(
        labelled.text,
        user_scope=user_scope,
        limit=limit,
        query_id=labelled.query_id,
        issued_at=labelled.as_of,
    )


# -- storage order does not matter ---------------------------------------------------------


def naive_order(
    query: RecallQuery,
    records: Iterable[StoredMemory],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> tuple[str, ...]:
    """What ``sorted(..., key=total, reverse=True)`` gives: ties keep the storage order."""
    candidates = build_recall_candidates(query, records).candidates
    scored = [
        (c.record.memory_id, score_recall_candidate(query, c, as_of=as_of, policy=policy).total)
        for c in candidates
    ]
    ordered = sorted(scored, key=lambda pair: pair[1], reverse=True)
    return tuple(memory_id for memory_id, _ in ordered[: query.limit])


def storage_order_frame(
    query: RecallQuery,
    records: Sequence[StoredMemory],
    *,
    as_of: datetime | str,
    shuffles: int = 12,
    seed: int = 5,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> pd.DataFrame:
    """Recall the same records in ``shuffles`` storage orders (row 0: the file's order).

    Columns: the stable ranking (``recall_pipeline``), the naive one, and whether each
    equals the file-order ranking. ``random.Random(seed)`` makes the shuffles repeatable.
    """
    rng = random.Random(seed)
    rows = []
    baseline_stable = baseline_naive = None
    for index in range(shuffles + 1):
        order = list(records)
        if index:
            rng.shuffle(order)
        result = recall_pipeline(query, order, as_of=as_of, policy=policy)
        stable = tuple(hit.memory_id for hit in result.hits)
        naive = naive_order(query, order, as_of=as_of, policy=policy)
        if index == 0:
            baseline_stable, baseline_naive = stable, naive
        rows.append(
            {
                "storage order": "file order" if index == 0 else f"shuffle {index}",
                "stable ranking": " > ".join(stable),
                "same as file order": stable == baseline_stable,
                "naive ranking": " > ".join(naive),
                "naive same": naive == baseline_naive,
            }
        )
    return pd.DataFrame(rows)


# -- rank over time and over weights -------------------------------------------------------


def monthly_steps(start: str, end: str) -> tuple[str, ...]:
    """Month by month from ``start`` up to ``end``, same time of day.

    The day of month is ``start``'s, clamped to the month's length (a 30th becomes
    28 February), so a year of steps never skips a month.
    """
    first = parse_timestamp(start, "start")
    last = parse_timestamp(end, "end")
    steps = []
    year, month = first.year, first.month
    while True:
        day = min(first.day, calendar.monthrange(year, month)[1])
        moment = first.replace(year=year, month=month, day=day)
        if moment > last:
            break
        steps.append(format_timestamp(moment))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return tuple(steps)


_COLUMNS = [
    "step",
    "label",
    "rank",
    "memory_id",
    "captured_at",
    "age_days",
    "matched",
    "lexical_coverage",
    "recency",
    "total",
]


def _steps(trajectory: pd.DataFrame) -> tuple[list[Any], list[str]]:
    """(steps, labels) in order, including steps where nothing was recalled."""
    pairs = trajectory.attrs.get("steps")
    if pairs is None:
        pairs = list(dict.fromkeys(zip(trajectory["step"], trajectory["label"], strict=True)))
    return [step for step, _ in pairs], [label for _, label in pairs]


def _trajectory(rows: list[dict[str, Any]], pairs: list[tuple[Any, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    frame.attrs["steps"] = pairs
    return frame


def _trajectory_rows(
    step: Any, label: str, ranked: Sequence[Scored], moment: datetime
) -> list[dict[str, Any]]:
    rows = []
    for rank, item in enumerate(ranked, start=1):
        b = item.breakdown
        rows.append(
            {
                "step": step,
                "label": label,
                "rank": rank,
                "memory_id": item.memory_id,
                "captured_at": item.candidate.record.source.captured_at,
                "age_days": round(age_in_days(item.candidate.captured_at, moment), 1),
                "matched": f"{len(b.matched_terms)}/{b.query_term_count}",
                "lexical_coverage": b.lexical_coverage,
                "recency": b.recency,
                "total": b.total,
            }
        )
    return rows


def rank_trajectory_frame(
    query: RecallQuery,
    records: Sequence[StoredMemory],
    as_ofs: Sequence[str],
    *,
    policy: ScoringPolicy = DEFAULT_POLICY,
    replay: bool = True,
) -> pd.DataFrame:
    """Long frame (one row per as_of and candidate, full order) as ``as_of`` moves on.

    With ``replay`` only records already stored at each as_of take part (``stored_at <=
    as_of``): the store as it was then. Without it, records from the future would count
    as age 0 (the library clamps negative ages), which no real recall could see.
    """
    rows: list[dict[str, Any]] = []
    for step in as_ofs:
        moment = parse_timestamp(step, "as_of")
        present = [
            r for r in records if not replay or parse_timestamp(r.stored_at, "stored_at") <= moment
        ]
        stepped = replace(query, issued_at=format_timestamp(moment))
        ranked = rank_all(
            stepped, build_recall_candidates(stepped, present), as_of=moment, policy=policy
        )
        rows += _trajectory_rows(step, step[:10], ranked, moment)
    return _trajectory(rows, [(step, step[:10]) for step in as_ofs])


def weight_trajectory_frame(
    query: RecallQuery,
    records: Sequence[StoredMemory],
    *,
    as_of: str,
    lexical_weights: Sequence[float] = (1.0, 0.85, 0.7, 0.55, 0.4, 0.25),
    window_days: float = 30.0,
) -> pd.DataFrame:
    """Long frame like ``rank_trajectory_frame``, stepping the lexical weight instead.

    Each step uses ``ScoringPolicy(w, 1 - w, window_days)``: the weights always sum to 1.
    """
    moment = parse_timestamp(as_of, "as_of")
    candidates = build_recall_candidates(query, records)
    rows: list[dict[str, Any]] = []
    for weight in lexical_weights:
        policy = ScoringPolicy(weight, round(1 - weight, 6), window_days)
        ranked = rank_all(query, candidates, as_of=moment, policy=policy)
        rows += _trajectory_rows(weight, _weight_label(weight), ranked, moment)
    return _trajectory(rows, [(w, _weight_label(w)) for w in lexical_weights])


def _weight_label(weight: float) -> str:
    return f"{weight:g}/{round(1 - weight, 6):g}"


def top_ids_frame(trajectory: pd.DataFrame, *, top: int = 3) -> pd.DataFrame:
    """One row per step: the memory_ids at ranks 1..``top`` (what a bump chart shows)."""
    rows = trajectory[trajectory["rank"] <= top]
    table = rows.pivot(index="step", columns="rank", values="memory_id")
    steps, labels = _steps(trajectory)
    table = table.reindex(index=steps, columns=range(1, top + 1))
    table.index = labels
    table.index.name = "step"
    table.columns = [f"rank {r}" for r in table.columns]
    return table.astype(object).fillna("")  # an empty step may make the column float


def bump_chart(
    trajectory: pd.DataFrame,
    *,
    top: int = 5,
    highlight: Any = None,
    title: str = "",
    xlabel: str = "as_of",
) -> Figure:
    """``charts.bump_chart`` of a trajectory frame, its steps in their order."""
    steps, labels = _steps(trajectory)
    pairs = list(zip(steps, labels, strict=True))
    return charts.bump_chart(
        trajectory, pairs, top=top, highlight=highlight, title=title, xlabel=xlabel
    )


def rank_view(
    trajectory: pd.DataFrame, step: Any, *, top: int = 5, title: str = ""
) -> tuple[pd.DataFrame, Figure]:
    """(hits at ``step``, bump chart with ``step`` highlighted): the as_of widget's model."""
    at = trajectory[(trajectory["step"] == step) & (trajectory["rank"] <= top)]
    columns = [
        "rank",
        "memory_id",
        "captured_at",
        "age_days",
        "matched",
        "lexical_coverage",
        "recency",
        "total",
    ]
    frame = at[columns].reset_index(drop=True)
    return frame, bump_chart(trajectory, top=top, highlight=step, title=title)


def as_of_explorer(trajectory: pd.DataFrame, *, top: int = 5, title: str = "") -> Any:
    """A date slider over the trajectory's steps, wired to ``rank_view``.

    The hits go to an HTML widget and the chart to an Image widget (PNG bytes): no
    Output widget, whose captured display messages can stall headless notebook runners.
    """
    import ipywidgets as widgets

    steps, labels = _steps(trajectory)
    slider = widgets.SelectionSlider(
        options=list(zip(labels, steps, strict=True)),
        value=steps[-1],
        description="as_of",
        continuous_update=False,
        layout=widgets.Layout(width="640px"),
    )
    table = widgets.HTML()
    chart = widgets.Image(format="png")

    def redraw(_change: object = None) -> None:
        frame, fig = rank_view(trajectory, slider.value, top=top, title=title)
        table.value = frame.to_html(index=False)
        chart.value = figure_png(fig)

    slider.observe(redraw, names="value")
    redraw()
    return widgets.VBox([slider, chart, table])


# -- building small record sets and the exercise ------------------------------------------


def in_memory_records(
    specs: Iterable[tuple[str, str, str]], *, user_id: str = "exercise-user"
) -> tuple[StoredMemory, ...]:
    """(memory_id, text, captured_at) -> conversation records, held in memory only.

    For a worked example that needs no file: the store's validation is not applied, so
    use plain ids and short single-line texts.
    """
    scope = user_scope_for(user_id)
    records = []
    for memory_id, text, captured_at in specs:
        stamp = format_timestamp(parse_timestamp(captured_at, "captured_at"))
        records.append(
            StoredMemory(
                memory_id=memory_id,
                user_scope=scope,
                kind=MemoryKind.CONVERSATION,
                content=text,
                summary=text,
                source=MemorySource(
                    f"transcript-{memory_id}", "conversation_transcript", memory_id, stamp
                ),
                stored_at=stamp,
            )
        )
    return tuple(records)


EXERCISE_AS_OF = COURSE_AS_OF
EXERCISE_QUERY = "harbor recall latency budget"
# Storage order on purpose: the answer must not depend on it.
EXERCISE_SPECS: tuple[tuple[str, str, str], ...] = (
    ("note-b", "harbor recall latency notes", "2026-11-20T10:00:00Z"),
    ("note-d", "harbor recall latency budget agreed", "2026-09-01T08:00:00Z"),
    ("note-a", "recall latency for harbor drafts", "2026-11-20T10:00:00Z"),
    ("note-c", "latency budget and recall review", "2026-11-20T10:00:05Z"),
    ("note-e", "harbor latency dashboard", "2026-11-29T09:00:00Z"),
)


def exercise_candidates() -> tuple[RecallQuery, tuple[StoredMemory, ...]]:
    """The exercise's query (fixed id and clock) and its five records, in storage order."""
    records = in_memory_records(EXERCISE_SPECS)
    query = normalize_recall_query(
        EXERCISE_QUERY,
        user_scope=records[0].user_scope,
        limit=5,
        query_id="q-05-exercise",
        issued_at=EXERCISE_AS_OF,
    )
    return query, records


def exercise_frame() -> pd.DataFrame:
    """The exercise rows in storage order with the four key values (no rank given)."""
    query, records = exercise_candidates()
    candidates = build_recall_candidates(query, records)
    rows = []
    for candidate in candidates.candidates:
        b = score_recall_candidate(query, candidate, as_of=EXERCISE_AS_OF)
        rows.append(
            {
                "memory_id": candidate.record.memory_id,
                "matched": f"{len(b.matched_terms)}/{b.query_term_count}",
                "captured_at": candidate.record.source.captured_at,
                "total": b.total,
                "lexical_coverage": b.lexical_coverage,
            }
        )
    return pd.DataFrame(rows)


def exercise_order() -> tuple[str, ...]:
    """The library's answer: memory_ids of ``recall_pipeline`` over the exercise records."""
    query, records = exercise_candidates()
    result = recall_pipeline(query, records, as_of=EXERCISE_AS_OF)
    return tuple(hit.memory_id for hit in result.hits)


def check_order_answer(answer: object, expected: Sequence[str] | None = None) -> CheckResult:
    """Self-check for the ranking exercise: right, wrong with a hint, or not answered yet."""

    def judge(answer: object) -> CheckResult:
        given = expect_sequence(answer, "a list of memory_ids", item=object)
        correct = tuple(expected) if expected is not None else exercise_order()
        if given == correct:
            order = " > ".join(correct)
            return right(f"Right: {order} (total, then captured_at, then memory_id).")
        if sorted(map(str, given)) != sorted(correct):
            return wrong(f"Use each of these ids exactly once: {', '.join(sorted(correct))}.")
        query, records = exercise_candidates()
        if given == naive_order(query, records, as_of=EXERCISE_AS_OF):
            return wrong(
                "That is sorted(..., key=total): tied rows kept the storage order. "
                "Break ties with captured_at DESC, then memory_id ASC."
            )
        hints = []
        if given[0] != correct[0]:
            hints.append("the first place goes to the highest total")
        tied = [m for m in correct if m in ("note-a", "note-b", "note-c")]
        if [m for m in given if m in tied] != tied:
            hints.append(
                "among the three equal totals, the later captured_at comes first and an "
                "exact tie falls to the smaller memory_id"
            )
        return wrong(
            "Not quite: " + ("; ".join(hints) or "compare total first, then each key") + "."
        )

    return check_value(answer, judge, placeholder="a list of the five memory_ids, best first")
