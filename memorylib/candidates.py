"""Stage 2, candidate: records -> the conversation records that share a query term.

Contract: only CONVERSATION records are searched; every record's user_scope must
equal the query's (else RemoteMemoryScopeError); searchable terms come from
``summary + " " + content``; a candidate shares at least one term. A candidate has
no score and no rank and holds the record itself, never a copy or a change.
Beyond the chapter: a conversation record named by a RETRACTION in ``records`` is
not searched, and is counted in ``retracted_records`` instead; and the stage counts
what the BM25 scorers need about the searched records (``CorpusStats``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .checks import require, require_items
from .errors import RemoteMemoryScopeError
from .query import normalize_text, term_counts
from .records import MemoryKind, RecallCandidate, RecallQuery, StoredMemory
from .timestamps import parse_timestamp

__all__ = [
    "CandidateSet",
    "CorpusStats",
    "build_recall_candidates",
    "record_term_counts",
    "retracted_ids",
    "searchable_terms",
]


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What BM25 knows about the searched records: how many, their mean length in
    terms, and how many hold each query term. ``best_bm25`` is the query's highest
    BM25 among its candidates (set by the ranking stage for the hybrid scorer)."""

    documents: int
    total_length: int
    document_frequency: Mapping[str, int] = field(default_factory=dict)
    best_bm25: float | None = None

    @property
    def average_length(self) -> float:
        return self.total_length / self.documents if self.documents else 0.0


@dataclass(frozen=True, slots=True)
class CandidateSet:
    """The candidates of one query plus the counts that explain an empty result."""

    query_id: str
    candidates: tuple[RecallCandidate, ...]
    searched_records: int
    retracted_records: int = 0
    corpus: CorpusStats | None = None

    @property
    def candidate_records(self) -> int:
        return len(self.candidates)


def record_term_counts(record: StoredMemory) -> dict[str, int]:
    """Each term of normalized ``summary + " " + content`` and how often it occurs."""
    return dict(term_counts(normalize_text(record.summary + " " + record.content)))


def searchable_terms(record: StoredMemory) -> tuple[str, ...]:
    """The terms a record can be found by: normalized ``summary + " " + content``."""
    return tuple(sorted(record_term_counts(record)))


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
                f"records[{position}] ({record.memory_id!r}) belongs to another user scope "
                f"(user_scope {record.user_scope!r}; the query's is {query.user_scope!r})"
            )
    hidden = retracted_ids(records)
    wanted = set(query.terms)
    candidates: list[RecallCandidate] = []
    searched = retracted = total_length = 0
    frequency = dict.fromkeys(query.terms, 0)
    for record in records:
        if record.kind is not MemoryKind.CONVERSATION:
            continue
        if record.memory_id in hidden:
            retracted += 1
            continue
        searched += 1
        counts = record_term_counts(record)
        total_length += sum(counts.values())  # the record's length in terms
        terms = tuple(sorted(counts))
        matched = tuple(term for term in terms if term in wanted)
        for term in matched:
            frequency[term] += 1
        if matched:
            candidates.append(
                RecallCandidate(
                    query_id=query.query_id,
                    record=record,
                    searchable_terms=terms,
                    matched_terms=matched,
                    captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
                    term_frequencies=tuple(counts[term] for term in matched),
                    length=sum(counts.values()),
                )
            )
    corpus = CorpusStats(searched, total_length, frequency)
    return CandidateSet(query.query_id, tuple(candidates), searched, retracted, corpus)
