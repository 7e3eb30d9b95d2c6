"""The playground's model: one frozen ``PlaygroundState`` in, one ``PlaygroundView`` out.

``playground_view(state, catalog)`` recalls ``state.query`` for ``state.user`` in
``state.dataset`` with the real engine and describes every step: the normalized query,
the funnel searched -> candidates -> hits, the hits with their full score breakdown and
provenance, and the rendered XML context. ``state.scorer`` picks coverage, bm25, bm25+recency
or "yours" (a scoring function registered with ``catalog.use_scorer``); the hits show
each scorer's own lexical number. A rejected input becomes ``view.error``, a
one-line message naming the typed error. Pure: the same state and stores give the same
view, and nothing is written. ``render.py`` turns a view into text, HTML and SVG;
``app.py`` wires widgets to both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime

import pandas as pd

from memorylib.datasets import COURSE_AS_OF, COURSE_USERS
from memorylib.engine import RecallEngine
from memorylib.errors import RemoteMemoryError, RemoteMemoryValidationError
from memorylib.interface import user_scope_for
from memorylib.notebook.exercises import CheckResult, checker, expect_type, right, wrong
from memorylib.notebook.playground.catalog import DATASETS, PlaygroundCatalog
from memorylib.records import RecallQuery, RecallResult
from memorylib.render import render_recall_context
from memorylib.scoring import SCORERS, ScoringPolicy
from memorylib.timestamps import age_in_days, parse_timestamp

__all__ = [
    "DEFAULT_STATE",
    "HIT_COLUMNS",
    "SCORER_PRESETS",
    "YOURS",
    "PlaygroundState",
    "PlaygroundView",
    "as_of_on",
    "check_isolation_query",
    "compare_rankings",
    "compare_users",
    "playground_view",
    "scorer_options",
]


@dataclass(frozen=True)
class PlaygroundState:
    """Everything the student can change. Frozen: a new state per change."""

    query: str = "recall cache"
    limit: int = 5
    as_of: str = COURSE_AS_OF
    lexical_weight: float = 0.85
    recency_weight: float = 0.15
    recency_window_days: float = 30.0
    user: str = COURSE_USERS[0]
    dataset: str = "course"
    query_id: str = "q-08-playground"
    scorer: str = "coverage"  # coverage, bm25, bm25+recency, or "yours" (catalog.use_scorer)


DEFAULT_STATE = PlaygroundState()

YOURS = "yours"  # a scoring function of your own, registered with catalog.use_scorer(...)
# The weights a scorer starts with when it is picked (the sliders stay free afterwards):
# BM25 alone is lexical only, as in ScoringPolicy.bm25(); the others keep the chapter's.
SCORER_PRESETS: dict[str, tuple[float, float]] = {
    "coverage": (0.85, 0.15),
    "bm25": (1.0, 0.0),
    "bm25+recency": (0.85, 0.15),
    YOURS: (0.85, 0.15),
}
_SCORER_LABELS = {
    "coverage": "coverage (the chapter's)",
    "bm25": "bm25",
    "bm25+recency": "bm25+recency",
    YOURS: "yours",
}


def scorer_options(catalog: PlaygroundCatalog) -> list[tuple[str, str]]:
    """(label, key) for the scorer dropdown; "yours" only once a function is registered."""
    keys = [*SCORERS, YOURS] if catalog.own_scorer is not None else list(SCORERS)
    return [(_SCORER_LABELS[key], key) for key in keys]


HIT_COLUMNS = (
    "rank",
    "memory_id",
    "total",
    "lexical_contribution",
    "recency_contribution",
    "lexical_score",
    "lexical_coverage",
    "matched_terms",
    "recency",
    "age_days",
    "captured_at",
    "source_id",
    "source_type",
    "title",
    "user_scope",
    "snippet",
)


@dataclass(frozen=True)
class PlaygroundView:
    """Everything one state produced. ``error`` is set (and the rest empty) on rejection."""

    state: PlaygroundState
    user_scope: str
    query: RecallQuery | None
    result: RecallResult | None
    hits: pd.DataFrame  # one row per hit, HIT_COLUMNS
    funnel: pd.DataFrame  # stage (searched, candidates, hits), records
    context: str
    error: str | None = None
    policy: ScoringPolicy | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def hit_ids(self) -> list[str]:
        return [] if self.result is None else [hit.memory_id for hit in self.result.hits]


def _empty_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    return (
        pd.DataFrame(columns=list(HIT_COLUMNS)),
        pd.DataFrame({"stage": ["searched", "candidates", "hits"], "records": [0, 0, 0]}),
    )


def _age_days(captured_at: str, as_of: datetime) -> float:
    return round(age_in_days(parse_timestamp(captured_at, "captured_at"), as_of), 2)


def _rejected(state: PlaygroundState, scope: str, message: str) -> PlaygroundView:
    hits, funnel = _empty_frames()
    return PlaygroundView(state, scope, None, None, hits, funnel, "", error=message)


def playground_view(state: PlaygroundState, catalog: PlaygroundCatalog) -> PlaygroundView:
    """Recall ``state.query`` for ``state.user`` in ``state.dataset`` and describe every step.

    Typed rejections (``RemoteMemoryError``: empty or punctuation-only query, limit out
    of range, a bad as_of, both weights 0, ...) become ``view.error``; other exceptions
    are bugs and propagate.
    """
    scope = user_scope_for(state.user)
    try:
        policy = ScoringPolicy(
            lexical_weight=state.lexical_weight,
            recency_weight=state.recency_weight,
            recency_window_days=state.recency_window_days,
            scorer="coverage" if state.scorer == YOURS else state.scorer,
        )
        engine = catalog.engine(state.dataset, state.user)
        if state.scorer == YOURS:  # the taught path, with the registered function
            if catalog.own_scorer is None:
                raise RemoteMemoryValidationError(
                    "no scoring function of yours is registered: call "
                    "app.use_scorer(my_score) (or catalog.use_scorer(my_score)) first"
                )
            engine = RecallEngine(engine.store, score=catalog.own_scorer)
        result = engine.recall(
            state.query,
            limit=state.limit,
            as_of=state.as_of,
            query_id=state.query_id,
            policy=policy,
        )
    except RemoteMemoryError as exc:
        return _rejected(state, scope, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # only a student's function gets here; ours would be a bug
        if state.scorer != YOURS:
            raise
        return _rejected(state, scope, f"your scoring function failed: {type(exc).__name__}: {exc}")
    moment = parse_timestamp(state.as_of, "as_of")
    rows = []
    for hit in result.hits:
        b = hit.score_breakdown
        rows.append(
            {
                "rank": hit.rank,
                "memory_id": hit.memory_id,
                "total": b.total,
                "lexical_contribution": b.lexical_contribution,
                "recency_contribution": b.recency_contribution,
                # the scorer's own lexical number: coverage, BM25, or BM25 / the best BM25
                "lexical_score": b.lexical_coverage if b.lexical_score is None else b.lexical_score,
                "lexical_coverage": b.lexical_coverage,
                "matched_terms": f"{len(b.matched_terms)}/{b.query_term_count}: "
                + ", ".join(b.matched_terms),
                "recency": b.recency,
                "age_days": _age_days(hit.provenance.captured_at, moment),
                "captured_at": hit.provenance.captured_at,
                "source_id": hit.provenance.source_id,
                "source_type": hit.provenance.source_type,
                "title": hit.provenance.title,
                "user_scope": hit.scope.user_scope,
                "snippet": hit.snippet,
            }
        )
    hits = pd.DataFrame(rows, columns=list(HIT_COLUMNS))
    funnel = pd.DataFrame(
        {
            "stage": ["searched", "candidates", "hits"],
            "records": [result.searched_records, result.candidate_records, len(result.hits)],
        }
    )
    return PlaygroundView(
        state=state,
        user_scope=scope,
        query=result.query,
        result=result,
        hits=hits,
        funnel=funnel,
        context=render_recall_context(result),
        policy=policy,
    )


def as_of_on(day: date, dataset: str) -> str:
    """``day`` at the time of day of the dataset's clock (the picker chooses only a date)."""
    clock = parse_timestamp(DATASETS[dataset].as_of, "as_of")
    return f"{day.isoformat()}T{clock.strftime('%H:%M:%S')}Z"


def compare_users(
    state: PlaygroundState, users: Iterable[str], catalog: PlaygroundCatalog
) -> pd.DataFrame:
    """One row per user for the same state: their scope, funnel, hits and the hits' scopes."""
    rows = []
    for user in users:
        view = playground_view(replace(state, user=user), catalog)
        result = view.result
        rows.append(
            {
                "user": user,
                "user_scope": view.user_scope,
                "searched": result.searched_records if result else 0,
                "candidates": result.candidate_records if result else 0,
                "hits": ", ".join(view.hit_ids) or "-",
                "scopes of the hits": ", ".join(sorted(set(view.hits["user_scope"]))) or "-",
            }
        )
    return pd.DataFrame(rows)


def compare_rankings(
    states: dict[str, PlaygroundState], catalog: PlaygroundCatalog
) -> pd.DataFrame:
    """Side-by-side rankings: one column per labelled state, one row per rank.

    Each cell reads ``memory_id (matched/terms, age in days)``.
    """
    columns = {}
    for label, state in states.items():
        hits = playground_view(state, catalog).hits
        columns[label] = [
            f"{row['memory_id']} ({row['matched_terms'].split(':')[0]}, {row['age_days']:g} d)"
            for row in hits.to_dict("records")
        ]
    depth = max((len(c) for c in columns.values()), default=0)
    padded = {k: v + [""] * (depth - len(v)) for k, v in columns.items()}
    return pd.DataFrame(padded, index=pd.RangeIndex(1, depth + 1, name="rank"))


# -- your turn ----------------------------------------------------------------------------------


@checker(placeholder="a query string")
def check_isolation_query(
    answer: object,
    catalog: PlaygroundCatalog,
    *,
    users: Sequence[str] = (COURSE_USERS[0], COURSE_USERS[1]),
    dataset: str = "course",
) -> CheckResult:
    """Self-check: a query that gives user A hits in ``dataset`` and user B none at all.

    Right, wrong with a hint, or not answered yet for the ``...`` placeholder.
    """
    query = expect_type(answer, str, "a str (a query)")
    first, second = users
    clock = DATASETS[dataset].as_of
    a, b = (
        playground_view(
            PlaygroundState(query=query, user=user, dataset=dataset, as_of=clock), catalog
        )
        for user in users
    )
    if a.error or a.result is None or a.query is None:
        return wrong(f"The query was rejected: {a.error}")
    if not a.hit_ids:
        return wrong(
            f"{first} gets no hits either (searched {a.result.searched_records}): pick words "
            f"from one of {first}'s records (try the playground with that user first)."
        )
    if b.hit_ids:
        return wrong(
            f"{second} also gets hits: {b.hit_ids} — records of {second}'s own that share a "
            f"term with {a.query.terms}. Pick words only {first} used."
        )
    assert b.result is not None  # the same query and clock as a's: accepted too
    scopes = {hit.scope.user_scope for hit in a.result.hits}
    assert scopes == {a.user_scope}, scopes  # isolation, checked rather than assumed
    return right(
        f"{first} gets {len(a.hit_ids)} hit(s) {a.hit_ids}, all in user_scope {a.user_scope}; "
        f"{second} searched {b.result.searched_records} of their own records and found none. "
        "Same query, same pipeline: the store a query may read is fixed by its user_scope."
    )
