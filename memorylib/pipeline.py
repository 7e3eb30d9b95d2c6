"""The taught path: candidate -> score -> stable rank over records already in memory.

``recall_pipeline`` is what ``RecallEngine(strategy="teaching")`` runs after
``store.read_all()``; the indexed path (``memorylib.fast``) must return exactly the
same ``RecallResult``, and the property tests hold it to that.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .candidates import build_recall_candidates
from .ranking import stable_rank_recall_candidates
from .records import NO_MATCHING_TERMS, RecallQuery, RecallResult, StoredMemory
from .scoring import DEFAULT_POLICY, ScoringPolicy
from .timestamps import format_timestamp, parse_timestamp

__all__ = ["recall_pipeline"]


def recall_pipeline(
    query: RecallQuery,
    records: Iterable[StoredMemory],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> RecallResult:
    """Candidates of ``records``, scored at ``as_of``, stably ranked, with their counts."""
    moment = parse_timestamp(as_of, "as_of")
    candidate_set = build_recall_candidates(query, records)
    hits = stable_rank_recall_candidates(query, candidate_set, as_of=moment, policy=policy)
    return RecallResult(
        query=query,
        hits=hits,
        searched_records=candidate_set.searched_records,
        candidate_records=candidate_set.candidate_records,
        empty_reason=None if hits else NO_MATCHING_TERMS,
        retracted_records=candidate_set.retracted_records,
        as_of=format_timestamp(moment),
    )
