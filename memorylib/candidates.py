"""Stage 2, candidate: records -> the conversation records that share a query term.

Contract: only CONVERSATION records are searched; every record's user_scope must
equal the query's (else RemoteMemoryScopeError); searchable terms come from
``summary + " " + content``; a candidate shares at least one term. A candidate has
no score and no rank and holds the record itself, never a copy or a change.
Beyond the chapter: a conversation record named by a RETRACTION in ``records`` is
not searched, and is counted in ``retracted_records`` instead; the stage counts what
the BM25 scorers need about the searched records (``CorpusStats``); a policy's
``analyzer`` (``memorylib.analysis``; default: the chapter's term rule) gives the terms,
and its ``context`` counts a record together with its neighbours in the same source:

* the **neighbours** of a searched record are the searched records of its ``source_id``
  at distance 1, 2, ... in their order by (captured_at, memory_id) (``neighbours``): a
  retracted record or a profile is no neighbour;
* with context weights ``(w1, w2, ...)`` a record's term frequency is its own count plus
  ``w_d`` times the count of each neighbour at distance d (a fraction, then), and its
  length grows the same way: a turn that answers with "yes" is found by the words of
  the question before it. The sums are taken in one fixed order (the record, then
  distance 1 before and after, then 2, ...) and the corpus length with ``math.fsum``,
  so any other path that follows the order gets the same floats.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from .analysis import CHAPTER_ANALYZER, Analyzer, TextTerms, text_terms
from .checks import require, require_items
from .errors import RemoteMemoryScopeError
from .explanation import TermSource
from .records import MemoryKind, RecallCandidate, RecallQuery, StoredMemory
from .timestamps import epoch_micros, parse_timestamp

__all__ = [
    "CandidateSet",
    "Context",
    "CorpusStats",
    "Neighbour",
    "build_recall_candidates",
    "contexts",
    "in_context",
    "neighbours",
    "record_term_counts",
    "record_terms",
    "retracted_ids",
    "searchable_terms",
]


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What BM25 knows about the searched records: how many, their mean length in
    terms, and how many hold each query term. ``best_bm25`` is the query's highest
    BM25 among its candidates (set by the ranking stage for the bm25+recency scorer)."""

    documents: int
    total_length: float
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


def record_terms(record: StoredMemory, analyzer: Analyzer = CHAPTER_ANALYZER) -> TextTerms:
    """The analyzed terms of normalized ``summary + " " + content`` (cached per text)."""
    return text_terms(record.summary + " " + record.content, analyzer)


def record_term_counts(
    record: StoredMemory, analyzer: Analyzer = CHAPTER_ANALYZER
) -> dict[str, int]:
    """Each term of normalized ``summary + " " + content`` and how often it occurs."""
    return dict(record_terms(record, analyzer).counts)


def searchable_terms(
    record: StoredMemory, analyzer: Analyzer = CHAPTER_ANALYZER
) -> tuple[str, ...]:
    """The terms a record can be found by: normalized ``summary + " " + content``."""
    return record_terms(record, analyzer).terms


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A record near another in the same source: how far (1 = next to it) and its weight."""

    record: StoredMemory
    distance: int
    weight: float


def neighbours(
    searched: Sequence[StoredMemory], weights: Sequence[float]
) -> dict[str, tuple[Neighbour, ...]]:
    """For each of ``searched`` (live conversation records), its neighbours: the records
    of its source_id at distance 1 .. len(weights) in (captured_at, memory_id) order,
    nearest first and, at one distance, the earlier one first."""
    by_source: defaultdict[str, list[StoredMemory]] = defaultdict(list)
    for record in searched:
        by_source[record.source.source_id].append(record)
    found: dict[str, tuple[Neighbour, ...]] = {}
    for turns in by_source.values():
        turns.sort(
            key=lambda r: (
                epoch_micros(parse_timestamp(r.source.captured_at, "captured_at")),
                r.memory_id,
            )
        )
        for at, record in enumerate(turns):
            near = []
            for distance, weight in enumerate(weights, start=1):
                for other in (at - distance, at + distance):
                    if 0 <= other < len(turns):
                        near.append(Neighbour(turns[other], distance, weight))
            found[record.memory_id] = tuple(near)
    return found


@dataclass(frozen=True, slots=True)
class Context:
    """A record among its neighbours: each neighbour with its terms, the neighbours'
    terms, every term the record can be found by (its own and theirs, sorted), and its
    length counted with them."""

    around: tuple[tuple[Neighbour, TextTerms], ...]
    nearby: frozenset[str]
    terms: tuple[str, ...]
    length: float


def contexts(
    searched: tuple[StoredMemory, ...], analyzer: Analyzer, weights: tuple[float, ...]
) -> Mapping[str, Context]:
    """Each of ``searched`` in its context, by memory_id. A pure function of the records,
    cached: the taught path asks it again for every query of an unchanged store."""
    # (1,) == (1.0,) as cache keys, yet a weight prints as it was given: key on types too
    return _contexts(searched, analyzer, weights, tuple(map(type, weights)))


@functools.lru_cache(maxsize=4)  # a few stores: each entry holds all their records
def _contexts(
    searched: tuple[StoredMemory, ...],
    analyzer: Analyzer,
    weights: tuple[float, ...],
    _types: tuple[type, ...],
) -> Mapping[str, Context]:
    near = neighbours(searched, weights)
    found = {}
    for record in searched:
        own = record_terms(record, analyzer)
        around = tuple((n, record_terms(n.record, analyzer)) for n in near[record.memory_id])
        nearby = frozenset().union(*(theirs.counts for _, theirs in around))
        length = float(own.length)
        for neighbour, theirs in around:  # the order in_context sums in
            length += neighbour.weight * theirs.length
        found[record.memory_id] = Context(
            around, nearby, tuple(sorted(nearby.union(own.terms))), length
        )
    return MappingProxyType(found)


# A TermSource is a value: the same record, distance, weight and count give an equal one,
# and they recur for every query of an unchanged store. Made once each (bounded), they
# cost a lookup instead of a frozen object's construction, most of in_context's time
# (typed: a weight of 1 and one of 1.0 are equal, yet print differently).
_term_source = functools.lru_cache(maxsize=1 << 14, typed=True)(TermSource)


def in_context(
    record: StoredMemory,
    own: TextTerms,
    around: Sequence[tuple[Neighbour, TextTerms]],
    terms: Sequence[str],
) -> tuple[tuple[float, ...], float, tuple[tuple[TermSource, ...], ...]]:
    """For ``terms``: the record's term frequency counted with its neighbours (``own``: its
    terms; ``around``: each neighbour and its terms), its length counted the same way,
    and the records each term was counted in."""
    length = float(own.length)
    for neighbour, theirs in around:
        length += neighbour.weight * theirs.length
    frequencies, sources = [], []
    for term in terms:
        count = own.counts.get(term, 0)
        frequency = float(count)
        found = [_term_source(record.memory_id, 0, 1.0, count)] if count else []
        for neighbour, theirs in around:
            count = theirs.counts.get(term, 0)
            if count:  # (a neighbour without the term adds nothing)
                frequency += neighbour.weight * count
                found.append(
                    _term_source(
                        neighbour.record.memory_id, neighbour.distance, neighbour.weight, count
                    )
                )
        frequencies.append(frequency)
        sources.append(tuple(found))
    return tuple(frequencies), length, tuple(sources)


def retracted_ids(records: Iterable[StoredMemory]) -> frozenset[str]:
    """The memory_ids that a RETRACTION among ``records`` hides."""
    return frozenset(
        r.retracts for r in records if r.kind is MemoryKind.RETRACTION and r.retracts is not None
    )


def build_recall_candidates(
    query: RecallQuery,
    records: Iterable[StoredMemory],
    *,
    analyzer: Analyzer = CHAPTER_ANALYZER,
    context: Sequence[float] = (),
) -> CandidateSet:
    """Pure: reads ``records``, returns candidates in the order the records came.

    ``analyzer`` and ``context`` are a policy's (the defaults: the chapter's terms, each
    record counted alone)."""
    query = require(query, RecallQuery, "query")
    records = require_items(records, StoredMemory, "records")
    analyzer = require(analyzer, Analyzer, "analyzer")
    for position, record in enumerate(records):
        if record.user_scope != query.user_scope:
            raise RemoteMemoryScopeError(
                f"records[{position}] ({record.memory_id!r}) belongs to another user scope "
                f"(user_scope {record.user_scope!r}; the query's is {query.user_scope!r})"
            )
    hidden = retracted_ids(records)
    wanted = sorted(set(query.terms))
    candidates: list[RecallCandidate] = []
    retracted = 0
    searched: list[StoredMemory] = []
    for record in records:
        if record.kind is not MemoryKind.CONVERSATION:
            continue
        if record.memory_id in hidden:
            retracted += 1
            continue
        searched.append(record)
    placed = contexts(tuple(searched), analyzer, tuple(context)) if context else {}
    lengths: list[float] = []
    frequency = dict.fromkeys(query.terms, 0)
    for record in searched:
        own = record_terms(record, analyzer)
        terms = own.terms
        sources: tuple[tuple[TermSource, ...], ...] = ()
        if context:  # the record counted with its neighbours
            where = placed[record.memory_id]
            matched = tuple(t for t in wanted if t in own.counts or t in where.nearby)
            length, terms = where.length, where.terms
            if matched:
                frequencies, _, sources = in_context(record, own, where.around, matched)
        else:
            matched = tuple(t for t in wanted if t in own.counts)
            frequencies, length = tuple(own.counts[t] for t in matched), own.length
        lengths.append(length)  # the record's length in terms
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
                    term_frequencies=frequencies,
                    length=length,
                    term_sources=sources,
                )
            )
    total_length = math.fsum(lengths) if context else sum(lengths)
    corpus = CorpusStats(len(searched), total_length, frequency)
    return CandidateSet(query.query_id, tuple(candidates), len(searched), retracted, corpus)
