"""Reference solution for notebook 03's build-it exercise (for instructors).

From the contract alone: check every record's scope first, hide what retractions name,
search only conversations, and match terms (normalize, then cut) against the query's.
"""

# build-it: candidate (notebook 06c runs this cell, as saved, in your pipeline)
from collections.abc import Sequence

from memorylib import (
    CandidateSet,
    MemoryKind,
    RecallCandidate,
    RecallQuery,
    RemoteMemoryScopeError,
    StoredMemory,
    extract_terms,
    normalize_text,
)
from memorylib.timestamps import parse_timestamp


def my_build_recall_candidates(query: RecallQuery, records: Sequence[StoredMemory]) -> CandidateSet:
    for record in records:
        if record.user_scope != query.user_scope:
            raise RemoteMemoryScopeError(
                f"{record.memory_id} belongs to user_scope {record.user_scope}, "
                f"not {query.user_scope}"
            )
    hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION}
    candidates, searched, retracted = [], 0, 0
    for record in records:
        if record.kind is not MemoryKind.CONVERSATION:
            continue
        if record.memory_id in hidden:
            retracted += 1
            continue
        searched += 1
        terms = extract_terms(normalize_text(record.summary + " " + record.content))
        matched = tuple(term for term in terms if term in query.terms)
        if matched:
            candidates.append(
                RecallCandidate(
                    query_id=query.query_id,
                    record=record,
                    searchable_terms=terms,
                    matched_terms=matched,
                    captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
                )
            )
    return CandidateSet(query.query_id, tuple(candidates), searched, retracted)
