"""Reference solution for notebook 05's build-it exercise (for instructors).

One sort with one key tuple: numbers negated for the DESC keys (captured_at as epoch
seconds, a float: for dates like the course's its step is about 0.24 microseconds, so
captures a microsecond apart still sort apart; the library's key uses the exact integer
``epoch_micros``), memory_id as it is for the ASC key. Then the first ``limit``, ranks
from 1.
"""

# build-it: stable rank (notebook 06c runs this cell, as saved, in your pipeline)
# 06c runs it alone: define or import here everything your function uses
from datetime import datetime

from memorylib import (
    RecallCandidate,
    RecallHit,
    RecallQuery,
    RecallScope,
    score_recall_candidate,
)


def my_stable_rank_recall_candidates(
    query: RecallQuery,
    candidates: tuple[RecallCandidate, ...],
    *,
    as_of: datetime | str,
    score=score_recall_candidate,
) -> tuple[RecallHit, ...]:
    scored = [(score(query, c, as_of=as_of), c) for c in candidates]
    scored.sort(
        key=lambda pair: (
            -pair[0].total,
            -pair[0].lexical_coverage,
            -pair[1].captured_at.timestamp(),
            pair[1].record.memory_id,
        )
    )
    return tuple(
        RecallHit(
            query_id=candidate.query_id,
            memory_id=candidate.record.memory_id,
            rank=rank,
            snippet=candidate.record.summary,
            scope=RecallScope(candidate.record.user_scope, candidate.record.kind),
            provenance=candidate.record.source,
            score_breakdown=breakdown,
        )
        for rank, (breakdown, candidate) in enumerate(scored[: query.limit], start=1)
    )
