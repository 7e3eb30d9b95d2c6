"""The taught path: candidate -> score -> stable rank over records already in memory.

``recall_pipeline`` is what ``RecallEngine(strategy="teaching")`` runs after
``store.read_all()``; the indexed path (``memorylib.fast``) must return exactly the
same ``RecallResult``, and the property tests hold it to that.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .candidates import build_recall_candidates
from .ranking import ScoreFunction, stable_rank_recall_candidates
from .records import (
    INSUFFICIENT_EVIDENCE,
    NO_MATCHING_TERMS,
    RecallQuery,
    RecallResult,
    StoredMemory,
)
from .scoring import DEFAULT_POLICY, ScoringPolicy, score_recall_candidate
from .timestamps import parse_timestamp

__all__ = ["empty_reason", "recall_pipeline"]


def empty_reason(hits: tuple, candidate_records: int) -> str | None:
    """None with hits; else no candidate at all, or candidates that lacked evidence."""
    if hits:
        return None
    return INSUFFICIENT_EVIDENCE if candidate_records else NO_MATCHING_TERMS


def recall_pipeline(
    query: RecallQuery,
    records: Iterable[StoredMemory],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
    score: ScoreFunction = score_recall_candidate,
) -> RecallResult:
    """Candidates of ``records``, scored at ``as_of``, stably ranked, with their counts."""
    moment = parse_timestamp(as_of, "as_of")
    candidate_set = build_recall_candidates(query, records)
    hits = stable_rank_recall_candidates(
        query, candidate_set, as_of=moment, policy=policy, score=score
    )
    return RecallResult(
        query=query,
        hits=hits,
        searched_records=candidate_set.searched_records,
        candidate_records=candidate_set.candidate_records,
        empty_reason=empty_reason(hits, candidate_set.candidate_records),
        retracted_records=candidate_set.retracted_records,
    )
