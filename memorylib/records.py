"""Records: the contract's data types, frozen and serialisable.

A ``StoredMemory`` is durable evidence with an owner (``user_scope``) and a
``MemorySource``. Everything else here (``RecallQuery`` ... ``RecallResult``) is a
query-scoped view that lives for one recall and is never written back.
Every type has ``to_dict()`` / ``from_dict()``; they round-trip exactly, and
``from_dict`` of a malformed payload raises ``RemoteMemoryCorruptionError``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from .decoding import Timestamp, decode_fields
from .errors import RemoteMemoryCorruptionError
from .explanation import QueryAnalysis, TermMatch, TermSource, json_object, text_pairs

__all__ = [
    "DEFAULT_LEXICAL_WEIGHT",
    "DEFAULT_RECENCY_WEIGHT",
    "DEFAULT_RECENCY_WINDOW_DAYS",
    "INSUFFICIENT_EVIDENCE",
    "NO_MATCHING_TERMS",
    "SCHEMA_VERSION",
    "MemoryKind",
    "MemorySource",
    "RecallCandidate",
    "RecallHit",
    "RecallQuery",
    "RecallResult",
    "RecallScope",
    "RecallScoreBreakdown",
    "StoredMemory",
]

SCHEMA_VERSION = 1
NO_MATCHING_TERMS = "no_matching_terms"  # RecallResult.empty_reason when nothing matched
INSUFFICIENT_EVIDENCE = "insufficient_evidence"  # candidates, all below a policy's min_evidence
# The chapter's scoring numbers (scoring.ScoringPolicy's defaults).
DEFAULT_LEXICAL_WEIGHT = 0.85
DEFAULT_RECENCY_WEIGHT = 0.15
DEFAULT_RECENCY_WINDOW_DAYS = 30.0


class MemoryKind(StrEnum):
    PROFILE = "profile"
    CONVERSATION = "conversation"
    RETRACTION = "retraction"  # beyond the chapter: an audit record that hides a target


# -- durable records --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemorySource:
    """Where a memory came from. ``captured_at`` is when the source event happened."""

    source_id: str
    source_type: str
    title: str
    captured_at: Timestamp

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, payload: object) -> MemorySource:
        return decode_fields(cls, payload, "source")


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """One durable line of the store: owned (user_scope), sourced, timestamped."""

    memory_id: str
    user_scope: str
    kind: MemoryKind
    content: str
    summary: str
    source: MemorySource
    stored_at: Timestamp
    schema_version: int = SCHEMA_VERSION
    retracts: str | None = None  # only on RETRACTION records: the memory_id it hides

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "schema_version": self.schema_version,
            "memory_id": self.memory_id,
            "user_scope": self.user_scope,
            "kind": self.kind.value,
            "content": self.content,
            "summary": self.summary,
            "source": self.source.to_dict(),
            "stored_at": self.stored_at,
        }
        if self.retracts is not None:
            payload["retracts"] = self.retracts
        return payload

    @classmethod
    def from_dict(cls, payload: object) -> StoredMemory:
        """Parse a stored line; anything malformed raises RemoteMemoryCorruptionError."""
        record = decode_fields(cls, payload, "record", optional=frozenset({"retracts"}))
        if record.schema_version != SCHEMA_VERSION:
            raise RemoteMemoryCorruptionError(
                f"record.schema_version {record.schema_version} is not supported "
                f"(this library reads {SCHEMA_VERSION})"
            )
        if (record.kind is MemoryKind.RETRACTION) != (record.retracts is not None):
            raise RemoteMemoryCorruptionError(
                f"record {record.memory_id!r}: record.retracts is inconsistent with its kind "
                "(it must name the retracted memory_id on a retraction record, and only there)"
            )
        return record


# -- query-scoped views -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """One normalized recall request. ``query_id`` binds candidates, scores and hits.

    Beyond the chapter: ``analysis`` (None for the chapter's term rule) says how a
    policy's analyzer made ``terms``; it is serialized only when present.
    """

    query_id: str
    text: str
    normalized_text: str
    terms: tuple[str, ...]
    user_scope: str
    limit: int
    issued_at: Timestamp
    analysis: QueryAnalysis | None = None

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "query_id": self.query_id,
            "text": self.text,
            "normalized_text": self.normalized_text,
            "terms": list(self.terms),
            "user_scope": self.user_scope,
            "limit": self.limit,
            "issued_at": self.issued_at,
        }
        if self.analysis is not None:
            payload["analysis"] = self.analysis.to_dict()
        return payload

    @classmethod
    def from_dict(cls, payload: object) -> RecallQuery:
        return decode_fields(cls, payload, "query")


@dataclass(frozen=True, slots=True)
class RecallCandidate:
    """A conversation record that shares a term with the query: no score, no rank yet.

    Beyond the chapter, for the BM25 scorers: how often each matched term occurs in the
    record (aligned with ``matched_terms``) and the record's length in terms. With a
    policy's context both count the neighbours too, weighted (so they may be fractions),
    and ``term_sources`` says, per matched term, which records it was counted in.
    """

    query_id: str
    record: StoredMemory
    searchable_terms: tuple[str, ...]
    matched_terms: tuple[str, ...]
    captured_at: datetime
    term_frequencies: tuple[float, ...] = ()
    length: float = 0
    term_sources: tuple[tuple[TermSource, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        payload = {
            "query_id": self.query_id,
            "record": self.record.to_dict(),
            "searchable_terms": list(self.searchable_terms),
            "matched_terms": list(self.matched_terms),
            "captured_at": self.record.source.captured_at,
        }
        if self.term_frequencies or self.length:
            payload["term_frequencies"] = list(self.term_frequencies)
            payload["length"] = self.length
        if self.term_sources:
            payload["term_sources"] = [[s.to_dict() for s in group] for group in self.term_sources]
        return payload

    @classmethod
    def from_dict(cls, payload: object) -> RecallCandidate:
        return decode_fields(cls, payload, "candidate")


@dataclass(frozen=True, slots=True)
class RecallScoreBreakdown:
    """Why a candidate scored what it did. Floats are rounded to 6 places.

    Beyond the chapter: the weights and window actually used; and, for another scorer
    than the chapter's ``coverage`` (see ``scoring``), its name, the lexical score it
    weighted, the raw BM25, the idf-weighted ``evidence`` and its ``parameters``; for
    another analysis than the chapter's term rule, the ``analyzer``, its parameters and
    each matched term explained (``term_matches``). The contributions always add up to
    the total. A ``coverage`` breakdown serializes exactly as the chapter's (the extra
    keys appear only when they say something).
    """

    matched_terms: tuple[str, ...]
    query_term_count: int
    lexical_coverage: float
    recency: float
    lexical_contribution: float
    recency_contribution: float
    total: float
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    recency_window_days: float = DEFAULT_RECENCY_WINDOW_DAYS
    scorer: str = "coverage"
    lexical_score: float | None = None
    bm25: float | None = None
    evidence: float | None = None
    parameters: tuple[tuple[str, float], ...] = ()
    analyzer: str | None = None
    analysis_parameters: tuple[tuple[str, str], ...] = ()
    term_matches: tuple[TermMatch, ...] = ()
    vector_model: str | None = None
    vector_similarity: float | None = None
    vector_contribution: float | None = None

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "matched_terms": list(self.matched_terms),
            "query_term_count": self.query_term_count,
            "lexical_coverage": self.lexical_coverage,
            "recency": self.recency,
            "weights": {"lexical": self.lexical_weight, "recency": self.recency_weight},
            "recency_window_days": self.recency_window_days,
            "contributions": {
                "lexical": self.lexical_contribution,
                "recency": self.recency_contribution,
            },
            "total": self.total,
        }
        if self.scorer != "coverage" or self.evidence is not None or self.parameters:
            payload["scorer"] = self.scorer
            for key in ("lexical_score", "bm25", "evidence"):
                if getattr(self, key) is not None:
                    payload[key] = getattr(self, key)
            payload["parameters"] = dict(self.parameters)
        if self.analyzer is not None:
            payload["analysis"] = {
                "analyzer": self.analyzer,
                "parameters": dict(self.analysis_parameters),
                "terms": [match.to_dict() for match in self.term_matches],
            }
        if self.vector_model is not None:  # a hybrid: the contributions are the two RRF parts
            payload["contributions"]["vector"] = self.vector_contribution
            payload["vector"] = {"model": self.vector_model, "similarity": self.vector_similarity}
        return payload

    @classmethod
    def from_dict(cls, payload: object) -> RecallScoreBreakdown:
        what = "score_breakdown"
        flat = dict(json_object(payload, what))
        if "vector" in flat:
            vector = dict(json_object(flat.pop("vector"), f"{what}.vector"))
            if set(vector) != {"model", "similarity"}:
                raise RemoteMemoryCorruptionError(f"{what}.vector must hold model and similarity")
            parts = dict(json_object(flat.get("contributions"), f"{what}.contributions"))
            flat["contributions"] = parts
            flat.update(vector_model=vector["model"], vector_similarity=vector["similarity"])
            flat["vector_contribution"] = parts.pop("vector", None)
        for group, suffix in (("weights", "weight"), ("contributions", "contribution")):
            parts = json_object(flat.pop(group, None), f"{what}.{group}")
            if set(parts) != {"lexical", "recency"}:
                raise RemoteMemoryCorruptionError(f"{what}.{group} must hold lexical and recency")
            flat.update({f"{name}_{suffix}": value for name, value in parts.items()})
        parameters = json_object(flat.pop("parameters", {}), f"{what}.parameters")
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in parameters.values()
        ):
            raise RemoteMemoryCorruptionError(f"{what}.parameters must map names to numbers")
        analysis_parameters: tuple[tuple[str, str], ...] = ()
        if "analysis" in flat:
            analysis = dict(json_object(flat.pop("analysis"), f"{what}.analysis"))
            if set(analysis) != {"analyzer", "parameters", "terms"}:
                raise RemoteMemoryCorruptionError(
                    f"{what}.analysis must hold analyzer, parameters and terms"
                )
            analysis_parameters = text_pairs(analysis["parameters"], f"{what}.analysis.parameters")
            flat.update(analyzer=analysis["analyzer"], term_matches=analysis["terms"])
        optional = frozenset(
            {"scorer", "lexical_score", "bm25", "evidence", "parameters", "analyzer"}
            | {"analysis_parameters", "term_matches"}
            | {"vector_model", "vector_similarity", "vector_contribution"}
        )
        breakdown = decode_fields(cls, flat, what, optional=optional)
        return dataclasses.replace(
            breakdown,
            parameters=tuple((str(k), float(v)) for k, v in parameters.items()),
            analysis_parameters=analysis_parameters,
        )


@dataclass(frozen=True, slots=True)
class RecallScope:
    """The user boundary and memory kind a hit belongs to."""

    user_scope: str
    memory_kind: MemoryKind

    def to_dict(self) -> dict[str, str]:
        return {"user_scope": self.user_scope, "memory_kind": self.memory_kind.value}

    @classmethod
    def from_dict(cls, payload: object) -> RecallScope:
        return decode_fields(cls, payload, "scope")


@dataclass(frozen=True, slots=True)
class RecallHit:
    """A ranked, query-scoped projection of one StoredMemory. Never stored."""

    query_id: str
    memory_id: str
    rank: int
    snippet: str
    scope: RecallScope
    provenance: MemorySource
    score_breakdown: RecallScoreBreakdown

    @property
    def source(self) -> MemorySource:
        """Compatibility alias of ``provenance`` (new code reads provenance)."""
        return self.provenance

    @property
    def score(self) -> float:
        """Compatibility scalar: ``score_breakdown.total``."""
        return self.score_breakdown.total

    @property
    def matched_terms(self) -> tuple[str, ...]:
        return self.score_breakdown.matched_terms

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "memory_id": self.memory_id,
            "rank": self.rank,
            "snippet": self.snippet,
            "scope": self.scope.to_dict(),
            "provenance": self.provenance.to_dict(),
            "source": self.provenance.to_dict(),
            "score": self.score_breakdown.total,
            "score_breakdown": self.score_breakdown.to_dict(),
        }

    @classmethod
    def from_dict(cls, payload: object) -> RecallHit:
        data = dict(json_object(payload, "hit"))
        source, score = data.pop("source", None), data.pop("score", None)  # the aliases
        hit = decode_fields(cls, data, "hit")
        if source is not None and MemorySource.from_dict(source) != hit.provenance:
            raise RemoteMemoryCorruptionError("hit.source must equal hit.provenance")
        if score is not None and score != hit.score:
            raise RemoteMemoryCorruptionError("hit.score must equal hit.score_breakdown.total")
        return hit


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Everything one recall produced: the query, the hits and the counts that explain them."""

    query: RecallQuery
    hits: tuple[RecallHit, ...]
    searched_records: int
    candidate_records: int
    empty_reason: str | None
    retracted_records: int = 0  # beyond: conversation records hidden by a retraction

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query.to_dict(),
            "hits": [hit.to_dict() for hit in self.hits],
            "searched_records": self.searched_records,
            "candidate_records": self.candidate_records,
            "retracted_records": self.retracted_records,
            "empty_reason": self.empty_reason,
        }

    @classmethod
    def from_dict(cls, payload: object) -> RecallResult:
        return decode_fields(cls, payload, "result")
