"""Stage 4, stable rank: scored candidates -> the top ``limit`` RecallHits.

Contract: sort by total DESC, lexical_coverage DESC, captured_at DESC, memory_id ASC;
keep the first ``limit``; ranks start at 1; snippet = the record's summary. The last
key is unique, so the order never depends on how the records were stored.
Beyond the chapter: for the bm25+recency scorer the query's best BM25 is found first
(it normalizes every candidate's), a policy's ``min_evidence`` drops candidates below
it before they are ranked, and another analysis than the chapter's is explained
(``scoring.explained``) for the hits kept, the only breakdowns anyone sees.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from datetime import datetime

from .candidates import CandidateSet, CorpusStats
from .checks import require, require_items
from .records import RecallCandidate, RecallHit, RecallQuery, RecallScope, RecallScoreBreakdown
from .scoring import (
    DEFAULT_POLICY,
    ScoringPolicy,
    bm25_score,
    explained,
    query_weights,
    score_recall_candidate,
)
from .timestamps import epoch_micros, parse_timestamp

__all__ = ["ScoreFunction", "hit_from", "rank_key", "stable_rank_recall_candidates"]

# score_recall_candidate's signature: a student's own scorer plugs in here
ScoreFunction = Callable[..., RecallScoreBreakdown]


def rank_key(
    breakdown: RecallScoreBreakdown, candidate: RecallCandidate
) -> tuple[float, float, int, str]:
    """The explicit sort key: total DESC, coverage DESC, captured_at DESC, memory_id ASC."""
    return (
        -breakdown.total,
        -breakdown.lexical_coverage,
        -epoch_micros(candidate.captured_at),  # an exact int: floats would blur close times
        candidate.record.memory_id,
    )


def hit_from(candidate: RecallCandidate, breakdown: RecallScoreBreakdown, rank: int) -> RecallHit:
    record = candidate.record
    return RecallHit(
        query_id=candidate.query_id,
        memory_id=record.memory_id,
        rank=rank,
        snippet=record.summary,
        scope=RecallScope(user_scope=record.user_scope, memory_kind=record.kind),
        provenance=record.source,
        score_breakdown=breakdown,
    )


def stable_rank_recall_candidates(
    query: RecallQuery,
    candidates: CandidateSet | Iterable[RecallCandidate],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
    corpus: CorpusStats | None = None,
    score: ScoreFunction = score_recall_candidate,
) -> tuple[RecallHit, ...]:
    """Score every candidate, order by the explicit keys, keep ``query.limit``. Pure.

    ``corpus`` defaults to the CandidateSet's (the BM25 scorers need it); for bm25+recency its
    ``best_bm25`` is found here unless it is already set. ``score`` is the scoring
    function (called like ``score_recall_candidate``): yours, to compare with ours.
    """
    query = require(query, RecallQuery, "query")
    moment = parse_timestamp(as_of, "as_of")
    policy = require(policy, ScoringPolicy, "policy")
    if isinstance(candidates, CandidateSet):
        corpus = corpus or candidates.corpus
        candidates = candidates.candidates
    items = require_items(candidates, RecallCandidate, "candidates")
    if policy.scorer == "bm25+recency" and corpus is not None and corpus.best_bm25 is None:
        weights = query_weights(query)
        best = max((bm25_score(c, corpus, policy, weights) for c in items), default=0.0)
        corpus = dataclasses.replace(corpus, best_bm25=best)
    late = score is score_recall_candidate and not policy.chapter_terms  # explain the hits only
    scored = []
    for candidate in items:
        if late:
            breakdown = score(
                query, candidate, as_of=moment, policy=policy, corpus=corpus, explain=False
            )
        else:
            breakdown = score(query, candidate, as_of=moment, policy=policy, corpus=corpus)
        if not isinstance(breakdown, RecallScoreBreakdown):
            raise TypeError(
                f"the scoring function returned {type(breakdown).__name__}, "
                "not a RecallScoreBreakdown"
            )
        if policy.min_evidence and (breakdown.evidence or 0.0) < policy.min_evidence:
            continue  # not enough of the query's rare terms: not a hit
        scored.append((rank_key(breakdown, candidate), candidate, breakdown))
    scored.sort(key=lambda item: item[0])
    return tuple(
        hit_from(
            candidate, explained(breakdown, query, candidate, policy) if late else breakdown, rank
        )
        for rank, (_, candidate, breakdown) in enumerate(scored[: query.limit], start=1)
    )
