"""Stage 2, candidate: records -> the conversation records that share a query term.

Contract: only CONVERSATION records are searched; every record's user_scope must
equal the query's (else RemoteMemoryScopeError); searchable terms come from
``summary + " " + content``; a candidate shares at least one term. A candidate has
no score and no rank and holds the record itself, never a copy or a change.
Beyond the chapter: a conversation record named by a RETRACTION in ``records`` is
not searched, and is counted in ``retracted_records`` instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .checks import require, require_items
from .errors import RemoteMemoryScopeError
from .query import extract_terms, normalize_text
from .records import MemoryKind, RecallCandidate, RecallQuery, StoredMemory
from .timestamps import parse_timestamp

__all__ = ["CandidateSet", "build_recall_candidates", "retracted_ids", "searchable_terms"]


@dataclass(frozen=True, slots=True)
class CandidateSet:
    """The candidates of one query plus the counts that explain an empty result."""

    query_id: str
    candidates: tuple[RecallCandidate, ...]
    searched_records: int
    retracted_records: int = 0

    @property
    def candidate_records(self) -> int:
        return len(self.candidates)


def searchable_terms(record: StoredMemory) -> tuple[str, ...]:
    """The terms a record can be found by: normalized ``summary + " " + content``."""
    return extract_terms(normalize_text(record.summary + " " + record.content))


def retracted_ids(records: Iterable[StoredMemory]) -> frozenset[str]:
    """The memory_ids that a RETRACTION among ``records`` hides."""
    return frozenset(
        r.retracts for r in records if r.kind is MemoryKind.RETRACTION and r.retracts is not None
    )


def build_recall_candidates(query: RecallQuery, records: Iterable[StoredMemory]) -> CandidateSet:
    """Pure: reads ``records``, returns candidates in the order the records came."""
    query = require(query, RecallQuery, "query")
    records = require_items(records, StoredMemory, "records")
    for position, record in enumerate(records):
        if record.user_scope != query.user_scope:
            raise RemoteMemoryScopeError(
                f"records[{position}] ({record.memory_id!r}) has user_scope "
                f"{record.user_scope!r}; the query's is {query.user_scope!r}"
            )
    hidden = retracted_ids(records)
    wanted = set(query.terms)
    candidates: list[RecallCandidate] = []
    searched = retracted = 0
    for record in records:
        if record.kind is not MemoryKind.CONVERSATION:
            continue
        if record.memory_id in hidden:
            retracted += 1
            continue
        searched += 1
        terms = searchable_terms(record)
        matched = tuple(term for term in terms if term in wanted)
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
