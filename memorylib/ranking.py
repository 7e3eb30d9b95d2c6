"""Stage 4, stable rank: scored candidates -> the top ``limit`` RecallHits.

Contract: sort by total DESC, lexical_coverage DESC, captured_at DESC, memory_id ASC;
keep the first ``limit``; ranks start at 1; snippet = the record's summary. The last
key is unique, so the order never depends on how the records were stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .candidates import CandidateSet
from .checks import require, require_items
from .records import RecallCandidate, RecallHit, RecallQuery, RecallScope, RecallScoreBreakdown
from .scoring import DEFAULT_POLICY, ScoringPolicy, score_recall_candidate
from .timestamps import epoch_micros, parse_timestamp

__all__ = ["hit_from", "rank_key", "stable_rank_recall_candidates"]


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
) -> tuple[RecallHit, ...]:
    """Score every candidate, order by the explicit keys, keep ``query.limit``. Pure."""
    query = require(query, RecallQuery, "query")
    moment = parse_timestamp(as_of, "as_of")
    policy = require(policy, ScoringPolicy, "policy")
    if isinstance(candidates, CandidateSet):
        candidates = candidates.candidates
    scored = []
    for candidate in require_items(candidates, RecallCandidate, "candidates"):
        breakdown = score_recall_candidate(query, candidate, as_of=moment, policy=policy)
        scored.append((rank_key(breakdown, candidate), candidate, breakdown))
    scored.sort(key=lambda item: item[0])
    return tuple(
        hit_from(candidate, breakdown, rank)
        for rank, (_, candidate, breakdown) in enumerate(scored[: query.limit], start=1)
    )
