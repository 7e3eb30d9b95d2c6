"""Records: the contract's data types, frozen and serialisable.

A ``StoredMemory`` is durable evidence with an owner (``user_scope``) and a
``MemorySource``. Everything else here (``RecallQuery`` ... ``RecallResult``) is a
query-scoped view that lives for one recall and is never written back.
Every type has ``to_dict()`` / ``from_dict()``; they round-trip exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from ._checks import parse_timestamp
from .errors import RemoteMemoryCorruptionError, RemoteMemoryValidationError

__all__ = [
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


class MemoryKind(StrEnum):
    PROFILE = "profile"
    CONVERSATION = "conversation"
    RETRACTION = "retraction"  # beyond the chapter: an audit record that hides a target


# -- small helpers for strict from_dict ------------------------------------------------


def _mapping(payload: object, what: str) -> Mapping[str, Any]:
    if not isinstance(payload, Mapping):
        raise RemoteMemoryCorruptionError(
            f"{what} must be a JSON object, got {type(payload).__name__}"
        )
    return payload


def _keys(
    payload: Mapping[str, Any],
    what: str,
    required: set[str],
    optional: frozenset[str] = frozenset(),
) -> None:
    keys = set(payload)
    missing = required - keys
    if missing:
        raise RemoteMemoryCorruptionError(f"{what} is missing {', '.join(sorted(missing))}")
    extra = keys - required - optional
    if extra:
        raise RemoteMemoryCorruptionError(f"{what} has unknown field(s) {', '.join(sorted(extra))}")


def _str(payload: Mapping[str, Any], key: str, what: str) -> str:
    value = payload[key]
    if not isinstance(value, str) or not value:
        raise RemoteMemoryCorruptionError(f"{what}.{key} must be a non-empty string")
    return value


def _int(payload: Mapping[str, Any], key: str, what: str) -> int:
    value = payload[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise RemoteMemoryCorruptionError(f"{what}.{key} must be an integer")
    return value


def _float(payload: Mapping[str, Any], key: str, what: str) -> float:
    value = payload[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RemoteMemoryCorruptionError(f"{what}.{key} must be a number")
    return float(value)


def _terms(payload: Mapping[str, Any], key: str, what: str) -> tuple[str, ...]:
    value = payload[key]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise RemoteMemoryCorruptionError(f"{what}.{key} must be a list of strings")
    return tuple(value)


def _timestamp(payload: Mapping[str, Any], key: str, what: str) -> str:
    value = _str(payload, key, what)
    try:
        parse_timestamp(value, f"{what}.{key}")
    except RemoteMemoryValidationError as exc:
        raise RemoteMemoryCorruptionError(str(exc)) from None
    return value


_from_isoformat = datetime.fromisoformat


def _clean_utc_timestamp(value: object) -> bool:
    """True for a str ending in ``Z`` that ``fromisoformat`` reads as-is.

    Such a value always passes ``_timestamp`` (no whitespace to strip, UTC offset 0,
    so the conversion to UTC cannot overflow); anything else takes the full checks.
    """
    if type(value) is not str or value[-1:] != "Z":
        return False
    try:
        _from_isoformat(value)
    except ValueError:
        return False
    return True


# -- durable records --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemorySource:
    """Where a memory came from. ``captured_at`` is when the source event happened."""

    source_id: str
    source_type: str
    title: str
    captured_at: str

    def to_dict(self) -> dict[str, str]:
        return {
            "source_id": self.source_id,
            "source_type": self.source_type,
            "title": self.title,
            "captured_at": self.captured_at,
        }

    @classmethod
    def from_dict(cls, payload: object) -> MemorySource:
        fast = _clean_source(payload) if cls is MemorySource else None
        if fast is not None:
            return fast
        what = "source"
        data = _mapping(payload, what)
        _keys(data, what, {"source_id", "source_type", "title", "captured_at"})
        return cls(
            source_id=_str(data, "source_id", what),
            source_type=_str(data, "source_type", what),
            title=_str(data, "title", what),
            captured_at=_timestamp(data, "captured_at", what),
        )


_MEMORY_KEYS = {
    "memory_id",
    "user_scope",
    "kind",
    "content",
    "summary",
    "source",
    "stored_at",
    "schema_version",
}
_MEMORY_OPTIONAL = frozenset({"retracts"})
_SOURCE_KEYS = frozenset({"source_id", "source_type", "title", "captured_at"})
_KIND_BY_VALUE = {kind.value: kind for kind in MemoryKind}


def _clean_source(payload: object) -> MemorySource | None:
    """The MemorySource of a payload that passes every check, else None (full checks run).

    A fast path for reading 100,000 lines: same acceptance, same values, no messages.
    """
    if type(payload) is not dict or payload.keys() != _SOURCE_KEYS:
        return None
    source_id = payload["source_id"]
    source_type = payload["source_type"]
    title = payload["title"]
    captured_at = payload["captured_at"]
    if (
        type(source_id) is str
        and source_id
        and type(source_type) is str
        and source_type
        and type(title) is str
        and title
        and _clean_utc_timestamp(captured_at)
    ):
        return checked_source(source_id, source_type, title, captured_at)
    return None


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """One durable line of the store: owned (user_scope), sourced, timestamped."""

    memory_id: str
    user_scope: str
    kind: MemoryKind
    content: str
    summary: str
    source: MemorySource
    stored_at: str
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
        if type(payload) is dict and payload.keys() == _MEMORY_KEYS:  # fast path, see below
            kind = payload["kind"]
            kind = _KIND_BY_VALUE.get(kind) if type(kind) is str else None
            version = payload["schema_version"]
            memory_id = payload["memory_id"]
            user_scope = payload["user_scope"]
            content = payload["content"]
            summary = payload["summary"]
            stored_at = payload["stored_at"]
            if (
                kind is not None
                and kind is not MemoryKind.RETRACTION
                and type(version) is int
                and version == SCHEMA_VERSION
                and type(memory_id) is str
                and memory_id
                and type(user_scope) is str
                and user_scope
                and type(content) is str
                and content
                and type(summary) is str
                and summary
                and _clean_utc_timestamp(stored_at)
            ):
                source = _clean_source(payload["source"])
                if source is not None:
                    if cls is not StoredMemory:  # a subclass: let its own __init__ run
                        return cls(memory_id, user_scope, kind, content, summary, source, stored_at)
                    return checked_memory(
                        memory_id, user_scope, kind, content, summary, source, stored_at
                    )
        # The fast path accepts only what the checks below accept, with the same values.
        # Everything else comes here: faults (named in this order), and rarer valid
        # shapes such as a non-dict mapping, a timestamp with an offset, a retraction.
        what = "record"
        data = _mapping(payload, what)
        _keys(data, what, _MEMORY_KEYS, _MEMORY_OPTIONAL)
        version = _int(data, "schema_version", what)
        if version != SCHEMA_VERSION:
            raise RemoteMemoryCorruptionError(
                f"record.schema_version {version} is not supported "
                f"(this library reads {SCHEMA_VERSION})"
            )
        try:
            kind = MemoryKind(data["kind"])
        except (ValueError, TypeError):
            raise RemoteMemoryCorruptionError(
                f"record.kind {data['kind']!r} is not a MemoryKind"
            ) from None
        retracts = data.get("retracts")
        if kind is MemoryKind.RETRACTION:
            if not isinstance(retracts, str) or not retracts:
                raise RemoteMemoryCorruptionError(
                    "record.retracts must name the retracted memory_id"
                )
        elif "retracts" in data:
            raise RemoteMemoryCorruptionError(
                "record.retracts is only allowed on retraction records"
            )
        return cls(
            memory_id=_str(data, "memory_id", what),
            user_scope=_str(data, "user_scope", what),
            kind=kind,
            content=_str(data, "content", what),
            summary=_str(data, "summary", what),
            source=MemorySource.from_dict(data["source"]),
            stored_at=_timestamp(data, "stored_at", what),
            schema_version=version,
            retracts=retracts,
        )


# Building checked records quickly. A frozen dataclass's __init__ sets each field with
# object.__setattr__; setting the slots directly gives an equal object in about half
# the time, which counts when a store of 100,000 lines is read. Only for values that
# already passed every check (the fast paths of from_dict and store.parse_line).

_new_object = object.__new__
assert MemorySource.__slots__ == ("source_id", "source_type", "title", "captured_at")
assert StoredMemory.__slots__ == (
    "memory_id", "user_scope", "kind", "content", "summary", "source", "stored_at",
    "schema_version", "retracts",
)  # fmt: skip
_set_source_id, _set_source_type, _set_title, _set_captured_at = (
    MemorySource.__dict__[name].__set__ for name in MemorySource.__slots__
)
(
    _set_memory_id, _set_user_scope, _set_kind, _set_content, _set_summary, _set_source,
    _set_stored_at, _set_schema_version, _set_retracts,
) = (StoredMemory.__dict__[name].__set__ for name in StoredMemory.__slots__)  # fmt: skip


def checked_source(source_id: str, source_type: str, title: str, captured_at: str) -> MemorySource:
    """``MemorySource(...)`` for values that passed ``MemorySource.from_dict``'s checks."""
    source = _new_object(MemorySource)
    _set_source_id(source, source_id)
    _set_source_type(source, source_type)
    _set_title(source, title)
    _set_captured_at(source, captured_at)
    return source


def checked_memory(
    memory_id: str,
    user_scope: str,
    kind: MemoryKind,
    content: str,
    summary: str,
    source: MemorySource,
    stored_at: str,
) -> StoredMemory:
    """``StoredMemory(...)`` (schema 1, no ``retracts``) for values that passed the checks."""
    record = _new_object(StoredMemory)
    _set_memory_id(record, memory_id)
    _set_user_scope(record, user_scope)
    _set_kind(record, kind)
    _set_content(record, content)
    _set_summary(record, summary)
    _set_source(record, source)
    _set_stored_at(record, stored_at)
    _set_schema_version(record, SCHEMA_VERSION)
    _set_retracts(record, None)
    return record


# -- query-scoped views -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """One normalized recall request. ``query_id`` binds candidates, scores and hits."""

    query_id: str
    text: str
    normalized_text: str
    terms: tuple[str, ...]
    user_scope: str
    limit: int
    issued_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "text": self.text,
            "normalized_text": self.normalized_text,
            "terms": list(self.terms),
            "user_scope": self.user_scope,
            "limit": self.limit,
            "issued_at": self.issued_at,
        }

    @classmethod
    def from_dict(cls, payload: object) -> RecallQuery:
        what = "query"
        data = _mapping(payload, what)
        _keys(
            data,
            what,
            {"query_id", "text", "normalized_text", "terms", "user_scope", "limit", "issued_at"},
        )
        return cls(
            query_id=_str(data, "query_id", what),
            text=_str(data, "text", what),
            normalized_text=_str(data, "normalized_text", what),
            terms=_terms(data, "terms", what),
            user_scope=_str(data, "user_scope", what),
            limit=_int(data, "limit", what),
            issued_at=_timestamp(data, "issued_at", what),
        )


@dataclass(frozen=True, slots=True)
class RecallCandidate:
    """A conversation record that shares a term with the query: no score, no rank yet."""

    query_id: str
    record: StoredMemory
    searchable_terms: tuple[str, ...]
    matched_terms: tuple[str, ...]
    captured_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "record": self.record.to_dict(),
            "searchable_terms": list(self.searchable_terms),
            "matched_terms": list(self.matched_terms),
            "captured_at": self.record.source.captured_at,
        }

    @classmethod
    def from_dict(cls, payload: object) -> RecallCandidate:
        what = "candidate"
        data = _mapping(payload, what)
        _keys(
            data, what, {"query_id", "record", "searchable_terms", "matched_terms", "captured_at"}
        )
        captured = _timestamp(data, "captured_at", what)
        return cls(
            query_id=_str(data, "query_id", what),
            record=StoredMemory.from_dict(data["record"]),
            searchable_terms=_terms(data, "searchable_terms", what),
            matched_terms=_terms(data, "matched_terms", what),
            captured_at=parse_timestamp(captured, "candidate.captured_at"),
        )


@dataclass(frozen=True, slots=True)
class RecallScoreBreakdown:
    """Why a candidate scored what it did. Floats are rounded to 6 places.

    The last three fields (beyond the chapter) report the ScoringPolicy actually used.
    """

    matched_terms: tuple[str, ...]
    query_term_count: int
    lexical_coverage: float
    recency: float
    lexical_contribution: float
    recency_contribution: float
    total: float
    lexical_weight: float = 0.85
    recency_weight: float = 0.15
    recency_window_days: float = 30.0

    def to_dict(self) -> dict[str, Any]:
        return {
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

    @classmethod
    def from_dict(cls, payload: object) -> RecallScoreBreakdown:
        what = "score_breakdown"
        data = _mapping(payload, what)
        _keys(
            data,
            what,
            {
                "matched_terms",
                "query_term_count",
                "lexical_coverage",
                "recency",
                "weights",
                "recency_window_days",
                "contributions",
                "total",
            },
        )
        weights = _mapping(data["weights"], f"{what}.weights")
        _keys(weights, f"{what}.weights", {"lexical", "recency"})
        contributions = _mapping(data["contributions"], f"{what}.contributions")
        _keys(contributions, f"{what}.contributions", {"lexical", "recency"})
        return cls(
            matched_terms=_terms(data, "matched_terms", what),
            query_term_count=_int(data, "query_term_count", what),
            lexical_coverage=_float(data, "lexical_coverage", what),
            recency=_float(data, "recency", what),
            lexical_contribution=_float(contributions, "lexical", f"{what}.contributions"),
            recency_contribution=_float(contributions, "recency", f"{what}.contributions"),
            total=_float(data, "total", what),
            lexical_weight=_float(weights, "lexical", f"{what}.weights"),
            recency_weight=_float(weights, "recency", f"{what}.weights"),
            recency_window_days=_float(data, "recency_window_days", what),
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
        what = "scope"
        data = _mapping(payload, what)
        _keys(data, what, {"user_scope", "memory_kind"})
        try:
            kind = MemoryKind(data["memory_kind"])
        except (ValueError, TypeError):
            raise RemoteMemoryCorruptionError("scope.memory_kind is not a MemoryKind") from None
        return cls(user_scope=_str(data, "user_scope", what), memory_kind=kind)


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
        what = "hit"
        data = _mapping(payload, what)
        _keys(
            data,
            what,
            {"query_id", "memory_id", "rank", "snippet", "scope", "provenance", "score_breakdown"},
            frozenset({"source", "score"}),
        )
        hit = cls(
            query_id=_str(data, "query_id", what),
            memory_id=_str(data, "memory_id", what),
            rank=_int(data, "rank", what),
            snippet=_str(data, "snippet", what),
            scope=RecallScope.from_dict(data["scope"]),
            provenance=MemorySource.from_dict(data["provenance"]),
            score_breakdown=RecallScoreBreakdown.from_dict(data["score_breakdown"]),
        )
        if "source" in data and MemorySource.from_dict(data["source"]) != hit.provenance:
            raise RemoteMemoryCorruptionError("hit.source must equal hit.provenance")
        if "score" in data and _float(data, "score", what) != hit.score:
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
    as_of: str | None = None  # beyond: the moment recency was measured against

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query.to_dict(),
            "hits": [hit.to_dict() for hit in self.hits],
            "searched_records": self.searched_records,
            "candidate_records": self.candidate_records,
            "retracted_records": self.retracted_records,
            "empty_reason": self.empty_reason,
            "as_of": self.as_of,
        }

    @classmethod
    def from_dict(cls, payload: object) -> RecallResult:
        what = "result"
        data = _mapping(payload, what)
        _keys(
            data,
            what,
            {"query", "hits", "searched_records", "candidate_records", "empty_reason"},
            frozenset({"retracted_records", "as_of"}),
        )
        hits = data["hits"]
        if not isinstance(hits, list | tuple):
            raise RemoteMemoryCorruptionError("result.hits must be a list")
        empty_reason = data["empty_reason"]
        if empty_reason is not None and not isinstance(empty_reason, str):
            raise RemoteMemoryCorruptionError("result.empty_reason must be a string or null")
        as_of = data.get("as_of")
        if as_of is not None:
            as_of = _timestamp(data, "as_of", what)
        return cls(
            query=RecallQuery.from_dict(data["query"]),
            hits=tuple(RecallHit.from_dict(h) for h in hits),
            searched_records=_int(data, "searched_records", what),
            candidate_records=_int(data, "candidate_records", what),
            empty_reason=empty_reason,
            retracted_records=_int(data, "retracted_records", what)
            if "retracted_records" in data
            else 0,
            as_of=as_of,
        )
