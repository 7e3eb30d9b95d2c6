"""Stage 3, score: one candidate -> a RecallScoreBreakdown that explains its total.

Contract: ``coverage = matched / query_terms``; ``age_days = max(0, as_of - captured_at)``;
``recency = 1 / (1 + age_days / window)``; ``total = w_lex * coverage + w_rec * recency``.
Chapter defaults: w_lex 0.85, w_rec 0.15, window 30 days (a ``ScoringPolicy``,
beyond the chapter, lets a reader change them; the breakdown reports what was used).
Rejects a candidate built for another query_id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from ._checks import parse_timestamp, type_name
from .errors import RemoteMemoryValidationError
from .records import RecallCandidate, RecallQuery, RecallScoreBreakdown

__all__ = [
    "DEFAULT_POLICY",
    "ScoringPolicy",
    "age_in_days",
    "recency_score",
    "score_recall_candidate",
]

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class ScoringPolicy:
    """Weights of the two score parts and the recency half-life window (in days)."""

    lexical_weight: float = 0.85
    recency_weight: float = 0.15
    recency_window_days: float = 30.0

    def __post_init__(self) -> None:
        for name in ("lexical_weight", "recency_weight", "recency_window_days"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise RemoteMemoryValidationError(
                    f"{name} must be a number, got {type_name(value)}"
                )
            try:
                finite = math.isfinite(value)
            except OverflowError:  # an int too large for a float
                finite = False
            if not finite or value < 0:
                raise RemoteMemoryValidationError(f"{name} must be finite and >= 0, got {value}")
        if self.recency_window_days <= 0:
            raise RemoteMemoryValidationError("recency_window_days must be > 0")
        if self.lexical_weight == 0 and self.recency_weight == 0:
            raise RemoteMemoryValidationError("lexical_weight and recency_weight cannot both be 0")


DEFAULT_POLICY = ScoringPolicy()


def age_in_days(captured_at: datetime, as_of: datetime) -> float:
    """Days from capture to ``as_of``; a capture after ``as_of`` counts as age 0."""
    return max(0.0, (as_of - captured_at).total_seconds() / SECONDS_PER_DAY)


def recency_score(age_days: float, window_days: float = 30.0) -> float:
    """1 at age 0, 1/2 at one window, 1/3 at two windows: ``1 / (1 + age/window)``."""
    return 1.0 / (1.0 + age_days / window_days)


def require_policy(policy: object) -> ScoringPolicy:
    if not isinstance(policy, ScoringPolicy):
        raise RemoteMemoryValidationError(
            f"policy must be a ScoringPolicy, got {type_name(policy)}"
        )
    return policy


def score_recall_candidate(
    query: RecallQuery,
    candidate: RecallCandidate,
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> RecallScoreBreakdown:
    """Score one candidate. Pure; floats rounded to 6 places."""
    if not isinstance(query, RecallQuery):
        raise RemoteMemoryValidationError(f"query must be a RecallQuery, got {type_name(query)}")
    if not isinstance(candidate, RecallCandidate):
        raise RemoteMemoryValidationError(
            f"candidate must be a RecallCandidate, got {type_name(candidate)}"
        )
    if candidate.query_id != query.query_id:
        raise RemoteMemoryValidationError(
            f"candidate.query_id {candidate.query_id!r} does not match query_id {query.query_id!r}"
        )
    policy = require_policy(policy)
    moment = parse_timestamp(as_of, "as_of")
    coverage = len(candidate.matched_terms) / len(query.terms)
    recency = recency_score(age_in_days(candidate.captured_at, moment), policy.recency_window_days)
    lexical_part = policy.lexical_weight * coverage
    recency_part = policy.recency_weight * recency
    return RecallScoreBreakdown(
        matched_terms=candidate.matched_terms,
        query_term_count=len(query.terms),
        lexical_coverage=round(coverage, 6),
        recency=round(recency, 6),
        lexical_contribution=round(lexical_part, 6),
        recency_contribution=round(recency_part, 6),
        total=round(lexical_part + recency_part, 6),
        lexical_weight=float(policy.lexical_weight),
        recency_weight=float(policy.recency_weight),
        recency_window_days=float(policy.recency_window_days),
    )
