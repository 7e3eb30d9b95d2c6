"""Stage 3, score: one candidate -> a RecallScoreBreakdown that explains its total.

Contract: ``coverage = matched / query_terms``; ``age_days = max(0, as_of - captured_at)``;
``recency = 1 / (1 + age_days / window)``; ``total = w_lex * coverage + w_rec * recency``.
Chapter defaults: w_lex 0.85, w_rec 0.15, window 30 days (a ``ScoringPolicy``,
beyond the chapter, lets a reader change them; the breakdown reports what was used).
Rejects a candidate built for another query_id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .checks import require, require_number
from .errors import RemoteMemoryValidationError
from .records import (
    DEFAULT_LEXICAL_WEIGHT,
    DEFAULT_RECENCY_WEIGHT,
    DEFAULT_RECENCY_WINDOW_DAYS,
    RecallCandidate,
    RecallQuery,
    RecallScoreBreakdown,
)
from .timestamps import age_in_days, parse_timestamp

__all__ = ["DEFAULT_POLICY", "ScoringPolicy", "recency_score", "score_recall_candidate"]


@dataclass(frozen=True, slots=True)
class ScoringPolicy:
    """Weights of the two score parts and the recency window (in days)."""

    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    recency_window_days: float = DEFAULT_RECENCY_WINDOW_DAYS

    def __post_init__(self) -> None:
        for name in ("lexical_weight", "recency_weight", "recency_window_days"):
            require_number(getattr(self, name), name)
        if self.recency_window_days <= 0:
            raise RemoteMemoryValidationError("recency_window_days must be > 0")
        if self.lexical_weight == 0 and self.recency_weight == 0:
            raise RemoteMemoryValidationError("lexical_weight and recency_weight cannot both be 0")


DEFAULT_POLICY = ScoringPolicy()


def recency_score(age_days: float, window_days: float = DEFAULT_RECENCY_WINDOW_DAYS) -> float:
    """1 at age 0, 1/2 at one window, 1/3 at two windows: ``1 / (1 + age/window)``."""
    return 1.0 / (1.0 + age_days / window_days)


def score_recall_candidate(
    query: RecallQuery,
    candidate: RecallCandidate,
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> RecallScoreBreakdown:
    """Score one candidate. Pure; floats rounded to 6 places."""
    query = require(query, RecallQuery, "query")
    candidate = require(candidate, RecallCandidate, "candidate")
    if candidate.query_id != query.query_id:
        raise RemoteMemoryValidationError(
            f"candidate.query_id {candidate.query_id!r} does not match query_id {query.query_id!r}"
        )
    policy = require(policy, ScoringPolicy, "policy")
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
