"""Views for notebook 04 (score): breakdown frames, the recency curve, policy comparisons.

Stage 3 turns one candidate into a ``RecallScoreBreakdown``: coverage, recency, their
weighted contributions and the total. Every function here is pure (state in ->
DataFrame / Figure / text out) and calls the library's own scoring functions, so a
number in a notebook is the number the library computes. ``scoring_explorer`` only
wires ipywidgets sliders to ``scoring_view``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from memorylib import (
    DEFAULT_POLICY,
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallHit,
    RecallQuery,
    RecallScoreBreakdown,
    RemoteMemoryValidationError,
    ScoringPolicy,
    StoredMemory,
    build_recall_candidates,
    normalize_recall_query,
    recency_score,
    score_recall_candidate,
    user_scope_for,
)
from memorylib.candidates import CandidateSet
from memorylib.notebook.charts import contribution_bars as contribution_figure
from memorylib.notebook.charts import recency_curves as recency_decay_figure
from memorylib.notebook.common import candidate_pool, figure_png
from memorylib.notebook.exercises import CheckResult, check_value, expect_number, right, same, wrong
from memorylib.ranking import rank_key
from memorylib.timestamps import CHAPTER_CLOCK, age_in_days, format_timestamp, parse_timestamp

__all__ = [
    "BREAKDOWN_FIELDS",
    "EXERCISE_MEMORY_ID",
    "EXERCISE_QUERY_ID",
    "ScoringState",
    "breakdown_fields_frame",
    "check_total_answer",
    "compare_with_library",
    "contribution_figure",
    "exercise_breakdown",
    "exercise_facts",
    "hits_frame",
    "hypothetical_breakdown",
    "overtake_frame",
    "policy_comparison_frame",
    "recency_decay_figure",
    "recency_table",
    "records_stored_by",
    "score_frame",
    "scoring_explorer",
    "scoring_view",
]

BREAKDOWN_FIELDS = (
    "lexical_coverage",
    "recency",
    "lexical_contribution",
    "recency_contribution",
    "total",
)


# -- frames over real candidates ---------------------------------------------------------


def score_frame(
    query: RecallQuery,
    candidates: CandidateSet | Iterable[RecallCandidate],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
    sort_by_total: bool = False,
) -> pd.DataFrame:
    """One row per candidate: what it matched, how old it is, and its full breakdown.

    Rows keep the candidates' (storage) order unless ``sort_by_total``: scoring does not
    rank, and a sort on ``total`` alone is only for reading (notebook 05 ranks).
    """
    moment = parse_timestamp(as_of, "as_of")
    rows = []
    for candidate in candidate_pool(candidates):
        b = score_recall_candidate(query, candidate, as_of=moment, policy=policy)
        rows.append(
            {
                "memory_id": candidate.record.memory_id,
                "captured_at": candidate.record.source.captured_at,
                "age_days": round(age_in_days(candidate.captured_at, moment), 2),
                "matched": f"{len(b.matched_terms)}/{b.query_term_count}",
                "matched_terms": ", ".join(b.matched_terms),
                "lexical_coverage": b.lexical_coverage,
                "recency": b.recency,
                "lexical_contribution": b.lexical_contribution,
                "recency_contribution": b.recency_contribution,
                "total": b.total,
            }
        )
    columns = [
        "memory_id",
        "captured_at",
        "age_days",
        "matched",
        "matched_terms",
        *BREAKDOWN_FIELDS,
    ]
    frame = pd.DataFrame(rows, columns=columns)
    if sort_by_total:
        frame = frame.sort_values(["total", "memory_id"], ascending=[False, True])
    return frame.reset_index(drop=True)


def hits_frame(hits: Iterable[RecallHit]) -> pd.DataFrame:
    """Ranked hits (stage 4's output), one row each: rank, id, what it matched, its parts.

    Only the hits: a candidate that missed the cut has no row (the exercise's record must
    not appear here before the student computes it).
    """
    rows = [
        {
            "rank": hit.rank,
            "memory_id": hit.memory_id,
            "captured_at": hit.provenance.captured_at,
            "matched": f"{len(b.matched_terms)}/{b.query_term_count}",
            "matched_terms": ", ".join(b.matched_terms),
            "lexical_coverage": b.lexical_coverage,
            "recency": b.recency,
            "total": b.total,
        }
        for hit in hits
        for b in (hit.score_breakdown,)
    ]
    columns = [
        "rank",
        "memory_id",
        "captured_at",
        "matched",
        "matched_terms",
        "lexical_coverage",
        "recency",
        "total",
    ]
    return pd.DataFrame(rows, columns=columns)


def breakdown_fields_frame(breakdown: RecallScoreBreakdown) -> pd.DataFrame:
    """The breakdown as (field, value, how it is computed): one row per field."""
    b = breakdown
    formulas = {
        "matched_terms": "query terms found in summary + content",
        "query_term_count": "len(query.terms)",
        "lexical_coverage": f"matched / query terms = {len(b.matched_terms)}/{b.query_term_count}",
        "recency": f"1 / (1 + age_days / {b.recency_window_days:g})",
        "lexical_contribution": f"{b.lexical_weight:g} × lexical_coverage",
        "recency_contribution": f"{b.recency_weight:g} × recency",
        "total": "lexical_contribution + recency_contribution",
    }
    values: dict[str, Any] = {
        "matched_terms": ", ".join(b.matched_terms),
        "query_term_count": b.query_term_count,
        "lexical_coverage": b.lexical_coverage,
        "recency": b.recency,
        "lexical_contribution": b.lexical_contribution,
        "recency_contribution": b.recency_contribution,
        "total": b.total,
    }
    return pd.DataFrame(
        {
            "field": list(formulas),
            "value": [_show(values[name]) for name in formulas],
            "computed as": list(formulas.values()),
        }
    )


def _show(value: Any) -> str:
    """Floats printed with the contract's 6 decimals; a mixed column stays readable."""
    if isinstance(value, float):
        return f"{value:.6f}"
    return str(value)


def compare_with_library(
    by_hand: Mapping[str, float], breakdown: RecallScoreBreakdown
) -> pd.DataFrame:
    """by-hand values next to the library's, field by field, with a ``match`` column.

    ``by_hand`` is unrounded; it matches when it rounds to the library's 6-place value.
    Raises ``KeyError`` naming a breakdown field that ``by_hand`` lacks.
    """
    rows = []
    for name in BREAKDOWN_FIELDS:
        if name not in by_hand:
            raise KeyError(f"by_hand has no {name!r}")
        library = float(getattr(breakdown, name))
        mine = float(by_hand[name])
        rows.append(
            {
                "field": name,
                "by_hand": mine,
                "by_hand_rounded": round(mine, 6),
                "library": library,
                "match": same(library, mine),
            }
        )
    return pd.DataFrame(rows)


def policy_comparison_frame(
    query: RecallQuery,
    candidates: CandidateSet | Iterable[RecallCandidate],
    *,
    as_of: datetime | str,
    policies: Mapping[str, ScoringPolicy],
) -> pd.DataFrame:
    """Same candidates under several policies: ``total`` and full-order ``rank`` per policy.

    Ranks use the library's stable sort key (``ranking.rank_key``) over ALL candidates,
    not only the top ``limit``. Rows follow the first policy's order.
    """
    if not policies:
        raise ValueError("policies must name at least one ScoringPolicy")
    moment = parse_timestamp(as_of, "as_of")
    pool = candidate_pool(candidates)
    base = score_frame(query, pool, as_of=moment)[["memory_id", "age_days", "matched"]]
    for label, policy in policies.items():
        scored = [
            (candidate, score_recall_candidate(query, candidate, as_of=moment, policy=policy))
            for candidate in pool
        ]
        ordered = sorted(scored, key=lambda pair: rank_key(pair[1], pair[0]))
        rank = {c.record.memory_id: i for i, (c, _) in enumerate(ordered, start=1)}
        total = {c.record.memory_id: b.total for c, b in scored}
        base[f"total · {label}"] = base["memory_id"].map(total)
        base[f"rank · {label}"] = base["memory_id"].map(rank)
    first = f"rank · {next(iter(policies))}"
    return base.sort_values(first).reset_index(drop=True)


def records_stored_by(
    records: Iterable[StoredMemory], as_of: datetime | str
) -> tuple[StoredMemory, ...]:
    """The records a store held at ``as_of`` (``stored_at <= as_of``), in storage order.

    Scoring clamps a negative age to 0, so a record from the future would look brand
    new: to replay a past moment, recall over what was stored by then.
    """
    moment = parse_timestamp(as_of, "as_of")
    return tuple(r for r in records if parse_timestamp(r.stored_at, "stored_at") <= moment)


# -- the recency curve --------------------------------------------------------------------


def recency_table(
    ages: Sequence[float] = (0, 1, 7, 30, 90, 180, 365),
    windows: Sequence[float] = (7, 30, 90),
) -> pd.DataFrame:
    """``recency_score(age, window)`` for each age (rows) and window (columns), 6 places."""
    return pd.DataFrame(
        {f"window {w:g} d": [round(recency_score(a, w), 6) for a in ages] for w in windows},
        index=pd.Index([float(a) for a in ages], name="age_days"),
    )


# -- when a fresh partial match overtakes a stale full match ------------------------------


def overtake_frame(max_terms: int = 10, policy: ScoringPolicy = DEFAULT_POLICY) -> pd.DataFrame:
    """Per query length n: the lexical gap of one missing term against the recency weight.

    A fresh record (age 0) matching n-1 of n terms beats a stale one matching all n
    only if ``w_rec * (1 - recency_stale) > w_lex / n``; that needs ``w_lex / n < w_rec``
    and a stale record older than ``stale_age_needed`` days (NaN: it can never happen).
    """
    rows = []
    for n in range(1, max_terms + 1):
        gap = policy.lexical_weight / n
        possible = gap < policy.recency_weight
        needed = math.nan
        if possible:
            threshold = 1 - gap / policy.recency_weight  # stale recency must fall below it
            needed = round(policy.recency_window_days * (1 / threshold - 1), 1)
        rows.append(
            {
                "query_terms": n,
                "one_term_gap": round(gap, 6),
                "recency_weight": policy.recency_weight,
                "fresh_can_win": possible,
                "stale_age_needed": needed,
            }
        )
    return pd.DataFrame(rows)


# -- the widget's model: one hypothetical record under a chosen policy --------------------

_EXPLORER_AS_OF = CHAPTER_CLOCK  # the chapter's clock: any fixed moment would do


@dataclass(frozen=True, slots=True)
class ScoringState:
    """Everything the scoring explorer shows: a policy and one record's match and age."""

    lexical_weight: float = 0.85
    recency_weight: float = 0.15
    window_days: float = 30.0
    age_days: float = 1.0
    matched: int = 2
    query_terms: int = 2

    def policy(self) -> ScoringPolicy:
        """The ScoringPolicy; raises RemoteMemoryValidationError for an invalid one."""
        return ScoringPolicy(
            lexical_weight=self.lexical_weight,
            recency_weight=self.recency_weight,
            recency_window_days=self.window_days,
        )


def hypothetical_breakdown(state: ScoringState) -> RecallScoreBreakdown:
    """Score a made-up record through the library's ``score_recall_candidate``.

    The query has ``state.query_terms`` terms (t01, t02, ...), the record matches the
    first ``state.matched`` and was captured ``state.age_days`` before the as_of.
    Nothing is stored: records and candidates are plain frozen values.
    """
    if not 1 <= state.matched <= state.query_terms:
        raise ValueError("matched must be between 1 and query_terms")
    if state.age_days < 0:
        raise ValueError("age_days must be >= 0")
    scope = user_scope_for("explorer")
    terms = tuple(f"t{i:02d}" for i in range(1, state.query_terms + 1))
    as_of = parse_timestamp(_EXPLORER_AS_OF, "as_of")
    captured = as_of - timedelta(days=state.age_days)
    query = RecallQuery(
        query_id="q-explorer",
        text=" ".join(terms),
        normalized_text=" ".join(terms),
        terms=terms,
        user_scope=scope,
        limit=5,
        issued_at=_EXPLORER_AS_OF,
    )
    stamp = format_timestamp(captured)
    text = " ".join(terms[: state.matched])
    record = StoredMemory(
        memory_id="record-x",
        user_scope=scope,
        kind=MemoryKind.CONVERSATION,
        content=text,
        summary=text,
        source=MemorySource("transcript-x", "conversation_transcript", "explorer", stamp),
        stored_at=stamp,
    )
    candidate = RecallCandidate(
        query_id=query.query_id,
        record=record,
        searchable_terms=terms[: state.matched],
        matched_terms=terms[: state.matched],
        captured_at=captured,
    )
    return score_recall_candidate(query, candidate, as_of=as_of, policy=state.policy())


def scoring_view(state: ScoringState) -> tuple[pd.DataFrame, Figure]:
    """State -> (breakdown frame, decay chart with the record's age marked).

    The chart shows the chosen window (red) against the chapter's 30-day window and
    marks the record. Raises RemoteMemoryValidationError for a policy the library rejects.
    """
    breakdown = hypothetical_breakdown(state)
    frame = breakdown_fields_frame(breakdown)
    windows = sorted({float(state.window_days), 30.0})
    fig = recency_decay_figure(
        windows,
        max_age_days=max(180.0, state.age_days * 1.2, state.window_days * 1.5),
        highlight_window=state.window_days,
        mark_age=state.age_days,
        title=(
            f"total = {breakdown.lexical_weight:g}×{breakdown.lexical_coverage:.3f}"
            f" + {breakdown.recency_weight:g}×{breakdown.recency:.3f} = {breakdown.total:.6f}"
        ),
    )
    return frame, fig


def scoring_explorer(state: ScoringState = ScoringState()) -> Any:
    """Sliders for the weights, the window and the record's age, wired to ``scoring_view``.

    The frame goes to an HTML widget and the chart to an Image widget (PNG bytes): no
    Output widget, whose captured display messages can stall headless notebook runners.
    """
    import ipywidgets as widgets

    style = {"description_width": "150px"}
    layout = widgets.Layout(width="480px")
    sliders = {
        "lexical_weight": widgets.FloatSlider(
            value=state.lexical_weight,
            min=0,
            max=1,
            step=0.05,
            description="lexical weight",
            style=style,
            layout=layout,
        ),
        "recency_weight": widgets.FloatSlider(
            value=state.recency_weight,
            min=0,
            max=1,
            step=0.05,
            description="recency weight",
            style=style,
            layout=layout,
        ),
        "window_days": widgets.FloatSlider(
            value=state.window_days,
            min=1,
            max=180,
            step=1,
            description="recency window (d)",
            style=style,
            layout=layout,
        ),
        "age_days": widgets.FloatSlider(
            value=state.age_days,
            min=0,
            max=365,
            step=1,
            description="record age (d)",
            style=style,
            layout=layout,
        ),
    }
    table = widgets.HTML()
    chart = widgets.Image(format="png")

    def redraw(_change: object = None) -> None:
        current = replace(state, **{name: s.value for name, s in sliders.items()})
        try:
            frame, fig = scoring_view(current)
        except RemoteMemoryValidationError as exc:
            table.value = f"<p>The library rejects this policy: {html.escape(str(exc))}</p>"
            return
        table.value = frame.to_html(index=False)
        chart.value = figure_png(fig)

    for slider in sliders.values():
        slider.observe(redraw, names="value")
    redraw()
    return widgets.VBox([*sliders.values(), table, chart])


# -- the exercise ----------------------------------------------------------------------

EXERCISE_QUERY_ID = "q-11"  # labelled "stopword_noise": its relevant record misses the top 5
EXERCISE_MEMORY_ID = "mei-conv-056"


def _exercise_inputs() -> tuple[RecallQuery, RecallCandidate, str]:
    from memorylib.datasets import course_records, load_labelled_queries

    labelled = {q.query_id: q for q in load_labelled_queries()}[EXERCISE_QUERY_ID]
    records = course_records(labelled.user_id)
    query = normalize_recall_query(
        labelled.text,
        user_scope=records[0].user_scope,
        query_id=labelled.query_id,
        issued_at=labelled.as_of,
    )
    candidates = build_recall_candidates(query, records).candidates
    (candidate,) = [c for c in candidates if c.record.memory_id == EXERCISE_MEMORY_ID]
    return query, candidate, labelled.as_of


def exercise_facts() -> pd.DataFrame:
    """What the student needs (and no score): the query's terms, the record's matches, times."""
    query, candidate, as_of = _exercise_inputs()
    facts = {
        "query_id": query.query_id,
        "query text": query.text,
        "query terms": ", ".join(query.terms),
        "memory_id": candidate.record.memory_id,
        "summary": candidate.record.summary,
        "matched terms": ", ".join(candidate.matched_terms),
        "captured_at": candidate.record.source.captured_at,
        "as_of": as_of,
    }
    return pd.DataFrame({"fact": list(facts), "value": list(facts.values())})


def exercise_breakdown() -> RecallScoreBreakdown:
    """The library's breakdown of the exercise record (what the self-check compares to)."""
    query, candidate, as_of = _exercise_inputs()
    return score_recall_candidate(query, candidate, as_of=as_of)


# -- the exercise checker -----------------------------------------------------------------


def check_total_answer(answer: object, breakdown: RecallScoreBreakdown) -> CheckResult:
    """Self-check: is ``answer`` the total of ``breakdown`` (within the engine's tolerance)?

    Right, wrong with a hint (the part of the formula, or the likely mistake, the number
    matches), or not answered yet for the ``...`` placeholder.
    """

    def judge(answer: object) -> CheckResult:
        value = expect_number(answer)
        b = breakdown
        # the age behind the recency (1 / (1 + age / window)), to recognise whole days
        age = b.recency_window_days * (1 / b.recency - 1)
        whole_days = 1 / (1 + math.floor(age + 1e-9) / b.recency_window_days)
        mistakes = [
            (
                b.lexical_contribution,
                "that is only the lexical contribution: add the recency part.",
            ),
            (b.lexical_coverage, "that is the coverage: weight it and add the recency part."),
            (
                b.recency_contribution,
                "that is only the recency contribution: add the lexical part.",
            ),
            (
                b.recency_weight * b.lexical_coverage + b.lexical_weight * b.recency,
                "the weights are swapped: lexical takes 0.85, recency 0.15.",
            ),
            (
                b.lexical_contribution + b.recency_weight,
                "recency is not 1: it decays with age as 1 / (1 + age_days / 30).",
            ),
            (
                b.lexical_weight + b.recency_contribution,
                "coverage is not 1: count every query term, 'what', 'is', 'the' and 'of' too, "
                "and divide the matched ones by all of them.",
            ),
            (
                b.lexical_contribution + b.recency_weight * whole_days,
                "age_days has a fraction: (as_of - captured_at).total_seconds() / 86400, not "
                "whole days (.days drops the hours).",
            ),
        ]
        if same(b.total, value):
            return right(
                f"Right: {b.lexical_weight:g} × {b.lexical_coverage:.6f} + "
                f"{b.recency_weight:g} × {b.recency:.6f} = {b.total:.6f}."
            )
        for mistaken, hint in mistakes:
            if same(round(mistaken, 6), value):
                return wrong(f"Not quite: {hint}")
        return wrong(
            "Not quite. coverage = matched / query terms; recency = 1 / (1 + age_days / 30); "
            "total = 0.85 × coverage + 0.15 × recency."
        )

    return check_value(answer, judge, placeholder="your total (a float)")
