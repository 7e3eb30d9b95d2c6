"""Reference solution for notebook 04's build-it exercise (for instructors).

The chapter's formula, written out: coverage, a clamped fractional age, the hyperbolic
recency, the 0.85 / 0.15 weights, every float rounded to 6 places.
"""

# build-it: score (notebook 06c runs this cell, as saved, in your pipeline)
from datetime import datetime

from memorylib import (
    RecallCandidate,
    RecallQuery,
    RecallScoreBreakdown,
    RemoteMemoryValidationError,
)
from memorylib.timestamps import parse_timestamp


def my_score_recall_candidate(
    query: RecallQuery, candidate: RecallCandidate, *, as_of: datetime | str
) -> RecallScoreBreakdown:
    if candidate.query_id != query.query_id:
        raise RemoteMemoryValidationError(
            f"candidate.query_id {candidate.query_id!r} is not the query's {query.query_id!r}"
        )
    now = parse_timestamp(as_of, "as_of")
    age_days = max(0.0, (now - candidate.captured_at).total_seconds() / 86_400)
    coverage = len(candidate.matched_terms) / len(query.terms)
    recency = 1 / (1 + age_days / 30)
    lexical, recent = 0.85 * coverage, 0.15 * recency
    return RecallScoreBreakdown(
        matched_terms=candidate.matched_terms,
        query_term_count=len(query.terms),
        lexical_coverage=round(coverage, 6),
        recency=round(recency, 6),
        lexical_contribution=round(lexical, 6),
        recency_contribution=round(recent, 6),
        total=round(lexical + recent, 6),
    )
