"""Candidates from the database, ranking from the taught stages: indexed recall equals
teaching recall, field for field, on every backend.

* Hypothesis builds random stores (a tiny vocabulary so records tie on terms, equal
  and future capture times, ids that tie-break, profiles, retractions) and random
  queries, limits, clocks and scoring policies; each example is a new user on the
  same backend (a new scope: the SQLite file and the PostgreSQL database hold them
  all, which also checks that scopes never mix).
* A synthetic corpus of 2,000 records and 12 queries, where the shortlist must prune
  levels and ties at the cut, compared at limits 1, 5 and 10.
* ``fast.shortlist.coverage_shortlist`` (the databases' and the JSONL index's) on
  hand-made answers: the pruning rules on their own.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorylib import DEFAULT_POLICY, MemorySource, RecallEngine, ScoringPolicy
from memorylib.analysis import FULL_ANALYZER
from memorylib.evaluation import CONFIGURATIONS
from memorylib.fast.shortlist import coverage_shortlist
from memorylib.synthetic import SYNTHETIC_END, synthetic_entries, synthetic_queries

from .backends_support import Backend

_users = itertools.count()
WORDS = ["alpha", "beta", "gamma", "delta", "记忆", "分层", "café", "wal"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
moments = st.sampled_from(
    [
        "2026-07-20T00:00:00Z",
        "2026-07-25T12:00:00Z",
        "2026-08-01T00:00:00Z",
        "2026-08-01T00:00:00.000001Z",
        "2026-09-01T00:00:00Z",
        "2025-01-01T00:00:00Z",
    ]
)
rows = st.lists(
    st.tuples(
        st.sampled_from(["conversation"] * 5 + ["profile"]),
        words,
        words,
        moments,
        st.sampled_from(["a", "b", "z", "m", "é"]),
    ),
    min_size=0,
    max_size=25,
)
coverage_policies = st.builds(
    ScoringPolicy,
    lexical_weight=st.sampled_from([0.85, 0.5, 0.1, 1.0, 0.0]),
    recency_weight=st.sampled_from([0.15, 0.5, 0.9, 1.0]),
    recency_window_days=st.sampled_from([30.0, 1.0, 365.0]),
)
# BM25, bm25+recency, min_evidence and every analysis beyond the chapter's terms (the
# analyzer rows, and coverage on stems) take the taught path on a database store: still equal.
other_policies = st.sampled_from(
    [
        ScoringPolicy.bm25(),
        ScoringPolicy.bm25_recency(),
        ScoringPolicy(min_evidence=0.5),
        ScoringPolicy.bm25_recency(min_evidence=0.3),
        ScoringPolicy(analyzer=FULL_ANALYZER, context=(0.5,)),
        *(CONFIGURATIONS[name] for name in CONFIGURATIONS if name.startswith("bm25-")),
    ]
)
policies = st.one_of(coverage_policies, coverage_policies, other_policies)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=rows,
    retract=st.lists(st.integers(0, 24), max_size=5),
    query=words,
    limit=st.integers(1, 10),
    as_of=moments,
    policy=policies,
)
def test_indexed_recall_equals_teaching_on_random_stores(
    backend: Backend, rows, retract, query, limit, as_of, policy
) -> None:
    store = backend.open(f"property-user-{next(_users)}")
    entries = [
        {
            "kind": kind,
            "content": content,
            "summary": summary,
            "stored_at": "2026-08-02T00:00:00Z",
            "memory_id": f"{prefix}-{i:02d}",
            "source": MemorySource(f"s-{i % 3}", "conversation_transcript", "t", captured),
        }
        for i, (kind, content, summary, captured, prefix) in enumerate(rows)
    ]
    stored = store.append_many(entries)
    for i in sorted(set(retract)):
        if i < len(stored):
            review = MemorySource("r", "review", "t", "2026-08-01T00:00:00Z")
            store.retract(stored[i].memory_id, reason="no", retraction_id=f"r-{i}", source=review)
    args = dict(limit=limit, query_id="q", as_of=as_of, policy=policy)
    teaching = RecallEngine(store, strategy="teaching").recall(query, **args)
    assert RecallEngine(store).recall(query, **args) == teaching


@pytest.mark.slow
def test_indexed_recall_equals_teaching_on_a_synthetic_corpus(backend: Backend) -> None:
    store = backend.open("synthetic-user")
    entries = synthetic_entries(2_000, seed=7)
    for start in range(0, len(entries), 500):
        store.append_many(entries[start : start + 500])
    for i in range(0, 2_000, 97):  # some retractions, the profile (record 0) included
        store.retract(
            entries[i]["memory_id"],
            reason="wrong",
            retraction_id=f"r-{i}",
            source=MemorySource("r", "review", "t", "2026-08-01T00:00:00Z"),
        )
    as_of = SYNTHETIC_END.strftime("%Y-%m-%dT%H:%M:%SZ")
    teaching_engine = RecallEngine(store, strategy="teaching")
    indexed_engine = RecallEngine(store)
    records = store.read_all()  # one read for the taught side: the engine would re-read
    from memorylib import normalize_recall_query, recall_pipeline

    compared = 0
    for q, text in enumerate(synthetic_queries(36, seed=7)[::3]):
        for limit in (1, 5, 10):
            query = normalize_recall_query(
                text, user_scope=store.user_scope, limit=limit, query_id=f"q-{q}", issued_at=as_of
            )
            expected = recall_pipeline(query, records, as_of=as_of)
            got = indexed_engine.recall(text, limit=limit, query_id=f"q-{q}", as_of=as_of)
            assert got == expected, (text, limit)
            compared += 1
    assert compared == 36
    result = teaching_engine.recall("memory", as_of=as_of)
    assert (result.searched_records, result.retracted_records) == (2_000 - 1 - 20, 20)


# -- the shortlist on its own ------------------------------------------------------------------

NOW = datetime(2026, 8, 1, tzinfo=UTC)
DAY = 86_400 * 1_000_000
NOW_US = int(NOW.timestamp()) * 1_000_000


def shortlist(
    levels: dict[int, list[int]], *, term_count: int, limit: int, policy=DEFAULT_POLICY
) -> list[int]:
    """levels: level -> capture ages in days of its records, newest first; keys count
    from 0 in that order."""
    keys = itertools.count()
    newest = {lv: [(next(keys), NOW_US - age * DAY) for age in ages] for lv, ages in levels.items()}
    sizes = {lv: len(ages) for lv, ages in levels.items()}
    return coverage_shortlist(
        sizes,
        newest.__getitem__,
        term_count=term_count,
        limit=limit,
        now_micros=NOW_US,
        policy=policy,
    )


def test_shortlist_keeps_everything_when_there_are_few() -> None:
    assert sorted(shortlist({2: [0], 1: [5, 9]}, term_count=2, limit=5)) == [0, 1, 2]


def test_shortlist_skips_a_level_that_recency_cannot_lift() -> None:
    # 3 query terms: one more matched term is worth 0.85/3 = 0.283 > 0.15 of recency.
    found = {3: [100, 200, 300], 2: [0, 0, 0], 1: [0]}
    assert shortlist(found, term_count=3, limit=3) == [0, 1, 2]


def test_shortlist_keeps_a_lower_level_that_recency_can_lift() -> None:
    # 10 query terms: one term is worth 0.085 < 0.15, so a fresh level-1 record can win.
    found = {2: [3000], 1: [0]}  # 0.17 + 0.0015 < 0.085 + 0.15: the level-1 one wins
    assert shortlist(found, term_count=10, limit=1) == [1]


def test_shortlist_takes_each_levels_newest_only() -> None:
    found = {1: [0, 0, 0, 50, 400]}  # newest first, ties already ordered by memory_id
    assert shortlist(found, term_count=1, limit=2) == [0, 1]


def test_shortlist_prunes_by_pre_score_but_keeps_equal_scores() -> None:
    recency_only = ScoringPolicy(lexical_weight=0.0, recency_weight=1.0)
    found = {2: [0, 1], 1: [0, 2]}  # keys 0, 1 (level 2); 2, 3 (level 1)
    kept = shortlist(found, term_count=2, limit=1, policy=recency_only)
    assert kept == [0, 2]  # equal totals at the cut: both kept, the rank stage decides
