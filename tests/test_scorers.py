"""The scorers behind ScoringPolicy: coverage (the chapter's, unchanged), BM25, bm25+recency.

BM25 is checked against values worked out by hand on a three-record corpus; every
scorer's breakdown adds up to its total; the bm25+recency scorer's best candidate scores a
lexical 1.0; a minimum evidence empties a stopword-only recall and says why; and the
chapter's breakdown, JSON and XML stay exactly as they were.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RecallScoreBreakdown,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
    recall_history,
    render_recall_context,
)
from memorylib.records import INSUFFICIENT_EVIDENCE


def tiny(tmp_path: Path) -> RemoteMemoryStore:
    """Three records: lengths 3, 2 and 4 terms (average 3)."""
    store = RemoteMemoryStore(tmp_path / "tiny.jsonl", user_id="bm25")
    texts = {"d1": "apple banana apple", "d2": "banana cherry", "d3": "cherry cherry cherry date"}
    for memory_id, text in texts.items():
        # summary + " " + content is what is searched: put everything in the content
        source = MemorySource(memory_id, "t", "t", "2026-08-01T12:00:00Z")
        store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content=text,
            summary=".",
            source=source,
        )
    return store


def test_bm25_matches_values_worked_out_by_hand(tmp_path: Path) -> None:
    # N = 3 records, lengths 3, 2, 4: average 3. df(apple) = 1, df(cherry) = 2.
    # idf(apple)  = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(2.666667) = 0.980829
    # idf(cherry) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)      = 0.470004
    # k1 = 1.2, b = 0.75; norm = k1 * (1 - b + b * length / 3)
    # d1: apple tf 2, length 3: norm 1.2;  0.980829 * 2 * 2.2 / (2 + 1.2) = 1.348640
    # d3: cherry tf 3, length 4: norm 1.5; 0.470004 * 3 * 2.2 / (3 + 1.5) = 0.689339
    # d2: cherry tf 1, length 2: norm 0.9; 0.470004 * 1 * 2.2 / (1 + 0.9) = 0.544215
    store = tiny(tmp_path)
    for strategy in ("teaching", "indexed"):
        result = RecallEngine(store, strategy=strategy).recall(
            "apple cherry", as_of=TEACHING_AS_OF, query_id="q", policy=ScoringPolicy.bm25()
        )
        got = [(h.memory_id, h.score_breakdown.bm25, h.score) for h in result.hits]
        assert got == [
            ("d1", 1.34864, 1.34864),
            ("d3", 0.689339, 0.689339),
            ("d2", 0.544215, 0.544215),
        ], strategy
        first = result.hits[0].score_breakdown
        assert dict(first.parameters) == {
            "k1": 1.2,
            "b": 0.75,
            "documents": 3.0,
            "average_length": 3.0,
        }
        # d1 matches apple: its share of the query's idf, idf(apple) / (idf(apple) + idf(cherry))
        apple, cherry = math.log(1 + 2.5 / 1.5), math.log(1 + 1.5 / 2.5)
        assert first.evidence == round(apple / (apple + cherry), 6) == 0.676046


@settings(max_examples=60, deadline=None)
@given(
    scorer=st.sampled_from(["coverage", "bm25", "bm25+recency"]),
    lexical=st.sampled_from([0.2, 0.85, 1.0]),
    recency=st.sampled_from([0.0, 0.15, 0.8]),
    text=st.sampled_from(["apple", "cherry date", "banana apple cherry", "apple grape"]),
)
def test_every_breakdown_adds_up(tmp_path_factory, scorer, lexical, recency, text) -> None:
    store = tiny(tmp_path_factory.mktemp("s"))
    policy = ScoringPolicy(lexical, recency, scorer=scorer)
    result = RecallEngine(store).recall(text, as_of=TEACHING_AS_OF, query_id="q", policy=policy)
    for hit in result.hits:
        b = hit.score_breakdown
        assert b.scorer == scorer
        # each part is rounded to 6 places on its own: they add up to the total within that
        assert abs(b.lexical_contribution + b.recency_contribution - b.total) <= 1.5e-6
        assert b.lexical_weight == lexical and b.recency_weight == recency
        if scorer != "coverage":
            assert b.lexical_contribution == pytest.approx(lexical * b.lexical_score, abs=1e-6)
    if scorer == "bm25+recency" and result.hits:
        best = max(h.score_breakdown.bm25 for h in result.hits)
        assert any(
            h.score_breakdown.lexical_score == 1.0
            for h in result.hits
            if h.score_breakdown.bm25 == best
        )


def test_a_minimum_evidence_empties_a_stopword_only_recall_and_says_why(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="u")
    for n, text in enumerate(
        ["the cache TTL is 300 seconds", "the deploy runs at noon", "the retrieval uses bigrams"]
    ):
        store.append(
            kind="conversation",
            memory_id=f"m-{n}",
            content=text,
            summary=text,
            source=MemorySource(f"s{n}", "t", "t", "2026-08-01T12:00:00Z"),
        )
    question = "the kubernetes pod budget"  # only "the" is in the history
    for strategy in ("teaching", "indexed"):
        engine = RecallEngine(store, strategy=strategy)
        plain = engine.recall(question, as_of=TEACHING_AS_OF, query_id="q")
        assert len(plain.hits) == 3 and plain.empty_reason is None  # "the" is enough today
        strict = engine.recall(
            question,
            as_of=TEACHING_AS_OF,
            query_id="q",
            policy=ScoringPolicy.bm25(min_evidence=0.3),
        )
        assert strict.hits == () and strict.empty_reason == INSUFFICIENT_EVIDENCE
        assert strict.candidate_records == 3  # the candidates were there, too weak
        kept = engine.recall(
            "the cache budget",
            as_of=TEACHING_AS_OF,
            query_id="q",
            policy=ScoringPolicy.bm25(min_evidence=0.3),
        )
        assert [h.memory_id for h in kept.hits] == ["m-0"]


def test_the_chapters_breakdown_serializes_as_before() -> None:
    breakdown = RecallScoreBreakdown(
        ("layered", "memory"), 2, 1.0, 0.967742, 0.85, 0.145161, 0.995161
    )
    assert list(breakdown.to_dict()) == [
        "matched_terms",
        "query_term_count",
        "lexical_coverage",
        "recency",
        "weights",
        "recency_window_days",
        "contributions",
        "total",
    ]
    assert RecallScoreBreakdown.from_dict(breakdown.to_dict()) == breakdown


def test_other_scorers_round_trip_and_name_themselves(tmp_path: Path) -> None:
    store = tiny(tmp_path)
    engine = RecallEngine(store, policy=ScoringPolicy.bm25_recency())
    result = engine.recall("apple cherry", as_of=TEACHING_AS_OF, query_id="q")
    for hit in result.hits:
        payload = hit.score_breakdown.to_dict()
        assert payload["scorer"] == "bm25+recency" and "bm25" in payload and "evidence" in payload
        assert RecallScoreBreakdown.from_dict(json.loads(json.dumps(payload))) == (
            hit.score_breakdown
        )
    xml = render_recall_context(result)
    assert 'scorer="bm25+recency"' in xml and "bm25=" in xml
    tool = json.loads(
        recall_history("apple cherry", engine=engine, as_of=TEACHING_AS_OF, query_id="q")
    )
    assert tool["hits"][0]["score_breakdown"]["scorer"] == "bm25+recency"
    chapter = render_recall_context(RecallEngine(store).recall("apple", as_of=TEACHING_AS_OF))
    assert "scorer=" not in chapter and "bm25=" not in chapter


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scorer": "vector"}, "scorer must be one of"),
        ({"bm25_b": 1.5}, "between 0 and 1"),
        ({"min_evidence": 2.0}, "between 0 and 1"),
        ({"bm25_k1": -1.0}, "bm25_k1"),
    ],
)
def test_bad_policies_are_rejected(kwargs, message) -> None:
    with pytest.raises(RemoteMemoryValidationError, match=message):
        ScoringPolicy(**kwargs)


def test_policy_repr_stays_the_chapters_for_the_default() -> None:
    assert repr(ScoringPolicy(0.7, 0.3)) == (
        "ScoringPolicy(lexical_weight=0.7, recency_weight=0.3, recency_window_days=30.0)"
    )
    assert "scorer='bm25'" in repr(ScoringPolicy.bm25())
