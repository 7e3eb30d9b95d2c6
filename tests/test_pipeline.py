"""Stages 2-4 and the engine: candidates, score breakdown, stable rank, read-only recall."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorylib import (
    DEFAULT_POLICY,
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallEngine,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
    StoredMemory,
    build_recall_candidates,
    normalize_recall_query,
    recall_pipeline,
    recency_score,
    score_recall_candidate,
    stable_rank_recall_candidates,
)

from .conftest import add

SCOPE = "0123456789abcdef"


def record(
    memory_id,
    text,
    captured="2026-08-01T12:00:00Z",
    kind=MemoryKind.CONVERSATION,
    scope=SCOPE,
    summary=None,
    retracts=None,
) -> StoredMemory:
    return StoredMemory(
        memory_id,
        scope,
        kind,
        text,
        summary or text,
        MemorySource(f"src-{memory_id}", "conversation_transcript", "t", captured),
        "2026-08-02T00:00:00Z",
        retracts=retracts,
    )


def query(text, limit=5, query_id="q-1", scope=SCOPE):
    return normalize_recall_query(
        text, user_scope=scope, limit=limit, query_id=query_id, issued_at=TEACHING_AS_OF
    )


# -- the chapter's example ---------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["teaching", "indexed"])
def test_chapter_example_on_the_teaching_store(teaching_store, strategy) -> None:
    result = RecallEngine(teaching_store, strategy=strategy).recall(
        "  LAYERED   Memory  ", limit=5, query_id="query-1", as_of=TEACHING_AS_OF
    )
    assert result.searched_records == 6
    assert result.candidate_records == 1
    assert result.empty_reason is None
    (hit,) = result.hits
    assert hit.memory_id == "conversation-003" and hit.rank == 1
    assert hit.query_id == "query-1"
    assert hit.provenance.title == "layered memory design"
    assert hit.snippet == "Separated workspace, user and remote memory boundaries."
    assert hit.scope.memory_kind is MemoryKind.CONVERSATION
    assert hit.scope.user_scope == teaching_store.user_scope
    b = hit.score_breakdown
    assert (
        b.lexical_coverage,
        b.recency,
        b.lexical_contribution,
        b.recency_contribution,
        b.total,
    ) == (1.0, 0.967742, 0.85, 0.145161, 0.995161)
    assert b.matched_terms == ("layered", "memory") and b.query_term_count == 2
    assert (b.lexical_weight, b.recency_weight, b.recency_window_days) == (0.85, 0.15, 30.0)


def test_worked_example_numbers_directly() -> None:
    rec = record("m-1", "layered memory", captured="2026-08-01T12:00:00Z")
    qry = query("layered memory")
    (candidate,) = build_recall_candidates(qry, [rec]).candidates
    b = score_recall_candidate(qry, candidate, as_of=TEACHING_AS_OF)
    assert (b.recency, b.recency_contribution, b.total) == (0.967742, 0.145161, 0.995161)


# -- candidates --------------------------------------------------------------------------


def test_candidates_search_only_conversations_and_count_both_numbers() -> None:
    records = [
        record("p-1", "layered memory profile", kind=MemoryKind.PROFILE),
        record("c-1", "layered memory design"),
        record("c-2", "unrelated persistence talk"),
        record("c-3", "memory only", summary="short"),
    ]
    cands = build_recall_candidates(query("layered memory"), records)
    assert cands.searched_records == 3
    assert cands.candidate_records == 2
    assert [c.record.memory_id for c in cands.candidates] == ["c-1", "c-3"]
    c1 = cands.candidates[0]
    assert c1.record is records[1]  # the record itself, not a copy
    assert c1.matched_terms == ("layered", "memory")
    assert c1.searchable_terms == ("design", "layered", "memory")
    assert c1.captured_at == datetime(2026, 8, 1, 12, tzinfo=UTC)
    assert not hasattr(c1, "score") and not hasattr(c1, "rank")


def test_searchable_terms_come_from_summary_and_content() -> None:
    rec = record("c-1", "content words", summary="summary words")
    (cand,) = build_recall_candidates(query("summary"), [rec]).candidates
    assert cand.searchable_terms == ("content", "summary", "words")


def test_scope_mismatch_in_candidates_is_rejected() -> None:
    with pytest.raises(RemoteMemoryScopeError, match="user_scope"):
        build_recall_candidates(query("memory"), [record("c-1", "memory", scope="f" * 16)])


def test_profiles_never_appear_as_hits(teaching_store) -> None:
    # "runnable" and "python" only occur in the profile snapshot.
    result = RecallEngine(teaching_store).recall("runnable python examples", as_of=TEACHING_AS_OF)
    assert result.hits == ()
    assert result.searched_records == 6 and result.candidate_records == 0
    result = RecallEngine(teaching_store).recall("engineer memory", as_of=TEACHING_AS_OF)
    assert all(h.scope.memory_kind is MemoryKind.CONVERSATION for h in result.hits)
    assert "profile-001" not in [h.memory_id for h in result.hits]


def test_no_match_keeps_counts_and_reason(teaching_store) -> None:
    result = RecallEngine(teaching_store).recall("kubernetes autoscaling", as_of=TEACHING_AS_OF)
    assert result.hits == ()
    assert result.searched_records == 6
    assert result.candidate_records == 0
    assert result.empty_reason == "no_matching_terms"


# -- scoring -------------------------------------------------------------------------------


def test_recency_curve() -> None:
    assert recency_score(0) == 1.0
    assert recency_score(30) == 0.5
    assert recency_score(60) == pytest.approx(1 / 3)
    assert recency_score(7, window_days=7) == 0.5


def test_future_capture_counts_as_age_zero() -> None:
    rec = record("c-1", "memory", captured="2027-01-01T00:00:00Z")
    qry = query("memory")
    (cand,) = build_recall_candidates(qry, [rec]).candidates
    assert score_recall_candidate(qry, cand, as_of=TEACHING_AS_OF).recency == 1.0


def test_partial_coverage_breakdown() -> None:
    rec = record("c-1", "memory", captured="2026-07-03T12:00:00Z")  # 30 days before TEACHING_AS_OF
    qry = query("layered memory design")
    (cand,) = build_recall_candidates(qry, [rec]).candidates
    b = score_recall_candidate(qry, cand, as_of=TEACHING_AS_OF)
    assert b.query_term_count == 3 and b.matched_terms == ("memory",)
    assert b.lexical_coverage == 0.333333
    assert b.recency == 0.5
    assert b.lexical_contribution == 0.283333
    assert b.recency_contribution == 0.075
    assert b.total == 0.358333


def test_scoring_policy_is_used_and_reported() -> None:
    rec = record("c-1", "memory", captured="2026-07-26T12:00:00Z")  # 7 days old
    qry = query("memory")
    (cand,) = build_recall_candidates(qry, [rec]).candidates
    policy = ScoringPolicy(lexical_weight=0.5, recency_weight=0.5, recency_window_days=7)
    b = score_recall_candidate(qry, cand, as_of=TEACHING_AS_OF, policy=policy)
    assert (b.recency, b.lexical_contribution, b.recency_contribution, b.total) == (
        0.5,
        0.5,
        0.25,
        0.75,
    )
    assert b.to_dict()["weights"] == {"lexical": 0.5, "recency": 0.5}
    assert b.to_dict()["recency_window_days"] == 7.0
    assert ScoringPolicy(0.85, 0.15, 30.0) == DEFAULT_POLICY


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lexical_weight": -0.1},
        {"recency_weight": float("nan")},
        {"recency_window_days": 0},
        {"lexical_weight": 0, "recency_weight": 0},
        {"lexical_weight": "0.8"},
        {"recency_weight": True},
    ],
)
def test_bad_policy_is_rejected(kwargs) -> None:
    with pytest.raises(RemoteMemoryValidationError):
        ScoringPolicy(**kwargs)


def test_candidate_from_another_query_is_rejected() -> None:
    qry = query("memory", query_id="q-1")
    (cand,) = build_recall_candidates(qry, [record("c-1", "memory")]).candidates
    other = dataclasses.replace(cand, query_id="q-2")
    with pytest.raises(RemoteMemoryValidationError, match="query_id"):
        score_recall_candidate(qry, other, as_of=TEACHING_AS_OF)
    with pytest.raises(RemoteMemoryValidationError, match="query_id"):
        stable_rank_recall_candidates(qry, [other], as_of=TEACHING_AS_OF)


# -- stable rank ----------------------------------------------------------------------------


def test_explicit_tie_breakers() -> None:
    t0 = "2026-08-01T12:00:00Z"
    records = [
        record("c-b", "alpha beta", captured=t0),  # tie on everything with c-a: id decides
        record("c-a", "alpha beta", captured=t0),
        record("c-new", "alpha beta", captured=TEACHING_AS_OF),  # fresher: higher total
        record("c-half", "alpha", captured=TEACHING_AS_OF),
    ]
    qry = query("alpha beta", limit=10)
    hits = stable_rank_recall_candidates(
        qry, build_recall_candidates(qry, records), as_of=TEACHING_AS_OF
    )
    assert [h.memory_id for h in hits] == ["c-new", "c-a", "c-b", "c-half"]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert hits[1].score == hits[2].score


def test_equal_total_falls_back_to_coverage_then_time() -> None:
    # Weights 0.5/0.5: (coverage 1, recency 0.5) and (coverage 0.5, recency 1) both total 0.75.
    policy = ScoringPolicy(0.5, 0.5, 30)
    records = [
        record("c-fresh-half", "alpha", captured=TEACHING_AS_OF),
        record("c-old-full", "alpha beta", captured="2026-07-03T12:00:00Z"),
    ]
    qry = query("alpha beta")
    hits = stable_rank_recall_candidates(
        qry, build_recall_candidates(qry, records), as_of=TEACHING_AS_OF, policy=policy
    )
    assert [h.score for h in hits] == [0.75, 0.75]
    assert [h.memory_id for h in hits] == ["c-old-full", "c-fresh-half"]


def test_limit_keeps_the_first_hits_and_snippet_is_the_summary() -> None:
    records = [
        record(
            f"c-{i}", "memory", summary=f"summary {i}", captured=f"2026-07-{10 + i:02d}T00:00:00Z"
        )
        for i in range(6)
    ]
    qry = query("memory", limit=2)
    hits = stable_rank_recall_candidates(
        qry, build_recall_candidates(qry, records), as_of=TEACHING_AS_OF
    )
    assert [(h.memory_id, h.snippet) for h in hits] == [("c-5", "summary 5"), ("c-4", "summary 4")]


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "记忆", "分层"])
texts = st.lists(words, min_size=1, max_size=4).map(" ".join)
day = st.integers(min_value=0, max_value=5)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(texts, day), min_size=1, max_size=12),
    texts,
    st.randoms(),
    st.integers(1, 10),
)
def test_any_storage_order_gives_the_same_hits(rows, qtext, rnd, limit) -> None:
    records = [
        record(f"c-{i:02d}", text, captured=f"2026-07-{20 + d:02d}T00:00:00Z")
        for i, (text, d) in enumerate(rows)
    ]
    qry = query(qtext, limit=limit)
    shuffled = list(records)
    rnd.shuffle(shuffled)
    first = recall_pipeline(qry, records, as_of=TEACHING_AS_OF)
    second = recall_pipeline(qry, shuffled, as_of=TEACHING_AS_OF)
    assert first.hits == second.hits
    assert (first.searched_records, first.candidate_records) == (
        second.searched_records,
        second.candidate_records,
    )


# -- the engine is read-only ------------------------------------------------------------------


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("strategy", ["teaching", "indexed"])
def test_recall_leaves_the_store_byte_identical(teaching_store, strategy) -> None:
    before = digest(teaching_store.path)
    files_before = sorted(p.name for p in teaching_store.path.parent.iterdir())
    engine = RecallEngine(teaching_store, strategy=strategy)
    for text in ["layered memory", "SQLite WAL", "上下文预算", "nothing matches zzz"] * 5:
        engine.recall(text, as_of=TEACHING_AS_OF)
    assert digest(teaching_store.path) == before
    assert sorted(p.name for p in teaching_store.path.parent.iterdir()) == files_before


def test_recall_defaults_as_of_to_now_and_issued_at_follows(teaching_store) -> None:
    result = RecallEngine(teaching_store).recall("layered memory")
    issued = datetime.fromisoformat(result.query.issued_at)
    assert abs(datetime.now(UTC) - issued) < timedelta(minutes=1)
    assert "as_of" not in result.to_dict()  # the query's issued_at is the moment recall used


def test_retracted_conversation_leaves_recall(store) -> None:
    add(store, "c-1", "layered memory design")
    add(store, "c-2", "layered cake")
    store.retract("c-1", reason="wrong", source=MemorySource("s", "t", "t", TEACHING_AS_OF))
    for strategy in ("teaching", "indexed"):
        result = RecallEngine(store, strategy=strategy).recall(
            "layered memory", as_of=TEACHING_AS_OF
        )
        assert [h.memory_id for h in result.hits] == ["c-2"]
        assert result.retracted_records == 1
        assert result.searched_records == 1


def test_engine_rejects_bad_arguments(teaching_store, tmp_path) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="store"):
        RecallEngine("path.jsonl")  # type: ignore[arg-type]
    with pytest.raises(RemoteMemoryValidationError, match="strategy"):
        RecallEngine(teaching_store, strategy="magic")  # type: ignore[arg-type]
    engine = RecallEngine(teaching_store)
    with pytest.raises(RemoteMemoryValidationError, match="as_of"):
        engine.recall("memory", as_of="soon")
    with pytest.raises(RemoteMemoryValidationError, match="policy"):
        engine.recall("memory", policy={"lexical_weight": 1})  # type: ignore[arg-type]
    with pytest.raises(RemoteMemoryValidationError, match="limit"):
        engine.recall("memory", limit=2.0)  # type: ignore[arg-type]


def test_candidate_records_must_be_stored_memories() -> None:
    with pytest.raises(RemoteMemoryValidationError, match=r"records\[0\]"):
        build_recall_candidates(query("memory"), [{"memory_id": "x"}])  # type: ignore[list-item]
    with pytest.raises(RemoteMemoryValidationError, match="RecallCandidate"):
        stable_rank_recall_candidates(query("memory"), ["x"], as_of=TEACHING_AS_OF)  # type: ignore[list-item]
    assert isinstance(RecallCandidate, type)


def test_store_scope_is_the_query_scope(tmp_path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="carol")
    add(store, "c-1", "memory")
    assert (
        RecallEngine(store).recall("memory", as_of=TEACHING_AS_OF).query.user_scope
        == store.user_scope
    )
