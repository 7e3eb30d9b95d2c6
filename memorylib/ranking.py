"""Stage 4, stable rank: scored candidates -> the top ``limit`` RecallHits.

Contract: sort by total DESC, lexical_coverage DESC, captured_at DESC, memory_id ASC;
keep the first ``limit``; ranks start at 1; snippet = the record's summary. The last
key is unique, so the order never depends on how the records were stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from ._checks import parse_timestamp, type_name
from .candidates import CandidateSet
from .errors import RemoteMemoryValidationError
from .records import RecallCandidate, RecallHit, RecallQuery, RecallScope, RecallScoreBreakdown
from .scoring import DEFAULT_POLICY, ScoringPolicy, require_policy, score_recall_candidate

__all__ = ["capture_micros", "hit_from", "rank_key", "stable_rank_recall_candidates"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def capture_micros(captured_at: datetime) -> int:
    """Exact integer microseconds since the epoch (floats would blur close times)."""
    return (captured_at - _EPOCH) // _MICROSECOND


def rank_key(
    breakdown: RecallScoreBreakdown, candidate: RecallCandidate
) -> tuple[float, float, int, str]:
    """The explicit sort key: total DESC, coverage DESC, captured_at DESC, memory_id ASC."""
    return (
        -breakdown.total,
        -breakdown.lexical_coverage,
        -capture_micros(candidate.captured_at),
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
    if not isinstance(query, RecallQuery):
        raise RemoteMemoryValidationError(f"query must be a RecallQuery, got {type_name(query)}")
    moment = parse_timestamp(as_of, "as_of")
    policy = require_policy(policy)
    if isinstance(candidates, CandidateSet):
        candidates = candidates.candidates
    if isinstance(candidates, str | bytes) or not isinstance(candidates, Iterable):
        raise RemoteMemoryValidationError(
            f"candidates must be an iterable of RecallCandidate, got {type_name(candidates)}"
        )
    scored = []
    for position, candidate in enumerate(candidates):
        if not isinstance(candidate, RecallCandidate):
            raise RemoteMemoryValidationError(
                f"candidates[{position}] must be a RecallCandidate, got {type_name(candidate)}"
            )
        breakdown = score_recall_candidate(query, candidate, as_of=moment, policy=policy)
        scored.append((rank_key(breakdown, candidate), candidate, breakdown))
    scored.sort(key=lambda item: item[0])
    return tuple(
        hit_from(candidate, breakdown, rank)
        for rank, (_, candidate, breakdown) in enumerate(scored[: query.limit], start=1)
    )
