"""Each contract data type: exact field names, to_dict/from_dict round trip, strict parsing."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallEngine,
    RecallHit,
    RecallQuery,
    RecallResult,
    RecallScope,
    RecallScoreBreakdown,
    RemoteMemoryCorruptionError,
    StoredMemory,
)

SOURCE = MemorySource(
    "transcript-42", "conversation_transcript", "Persistence decision", "2026-08-01T12:00:00Z"
)
RECORD = StoredMemory(
    "memory-42",
    "0123456789abcdef",
    MemoryKind.CONVERSATION,
    "Selected SQLite WAL for local persistence.",
    "Selected SQLite WAL.",
    SOURCE,
    "2026-08-01T12:05:00Z",
)


def field_names(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_field_names_are_the_chapters() -> None:
    assert field_names(MemorySource) == ["source_id", "source_type", "title", "captured_at"]
    assert field_names(StoredMemory)[:7] == [
        "memory_id",
        "user_scope",
        "kind",
        "content",
        "summary",
        "source",
        "stored_at",
    ]
    assert field_names(StoredMemory)[7:] == ["schema_version", "retracts"]
    assert field_names(RecallQuery)[:7] == [
        "query_id",
        "text",
        "normalized_text",
        "terms",
        "user_scope",
        "limit",
        "issued_at",
    ]
    assert field_names(RecallQuery)[7:] == ["analysis"]  # beyond: another analyzer's terms
    assert field_names(RecallCandidate)[:5] == [
        "query_id",
        "record",
        "searchable_terms",
        "matched_terms",
        "captured_at",
    ]
    # beyond: BM25's counts; with a policy's context, the records a term was counted in
    assert field_names(RecallCandidate)[5:] == ["term_frequencies", "length", "term_sources"]
    assert field_names(RecallScoreBreakdown)[:7] == [
        "matched_terms",
        "query_term_count",
        "lexical_coverage",
        "recency",
        "lexical_contribution",
        "recency_contribution",
        "total",
    ]
    assert field_names(RecallScope) == ["user_scope", "memory_kind"]
    assert field_names(RecallHit) == [
        "query_id",
        "memory_id",
        "rank",
        "snippet",
        "scope",
        "provenance",
        "score_breakdown",
    ]
    assert field_names(RecallResult)[:5] == [
        "query",
        "hits",
        "searched_records",
        "candidate_records",
        "empty_reason",
    ]


@pytest.mark.parametrize(
    "cls",
    [
        MemorySource,
        StoredMemory,
        RecallQuery,
        RecallCandidate,
        RecallScoreBreakdown,
        RecallScope,
        RecallHit,
        RecallResult,
    ],
)
def test_contract_objects_are_frozen(cls) -> None:
    assert cls.__dataclass_params__.frozen


def test_memory_kind_values() -> None:
    assert MemoryKind.PROFILE == "profile"
    assert MemoryKind.CONVERSATION == "conversation"
    assert MemoryKind.RETRACTION == "retraction"


def test_memory_source_round_trip() -> None:
    assert MemorySource.from_dict(SOURCE.to_dict()) == SOURCE
    with pytest.raises(dataclasses.FrozenInstanceError):
        SOURCE.title = "x"  # type: ignore[misc]


def test_stored_memory_round_trip_through_json() -> None:
    payload = json.loads(json.dumps(RECORD.to_dict()))
    assert StoredMemory.from_dict(payload) == RECORD
    assert StoredMemory.from_dict(payload).to_dict() == payload
    assert payload["schema_version"] == 1
    assert "retracts" not in payload


def test_retraction_round_trip_keeps_target() -> None:
    retraction = dataclasses.replace(
        RECORD, memory_id="r-1", kind=MemoryKind.RETRACTION, retracts="memory-42"
    )
    assert StoredMemory.from_dict(retraction.to_dict()) == retraction
    assert retraction.to_dict()["retracts"] == "memory-42"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("memory_id"), "missing memory_id"),
        (lambda d: d.update(kind="fact"), "kind"),
        (lambda d: d.update(content=""), "content"),
        (lambda d: d.update(content=7), "content"),
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d.update(extra=1), "unknown field"),
        (lambda d: d.update(source="transcript-42"), "source"),
        (lambda d: d["source"].update(captured_at="yesterday"), "captured_at"),
        (lambda d: d.update(retracts="x"), "retracts"),
        (lambda d: d.update(stored_at=None), "stored_at"),
    ],
)
def test_stored_memory_from_malformed_payload_raises_corruption(mutate, message) -> None:
    payload = RECORD.to_dict()
    mutate(payload)
    with pytest.raises(RemoteMemoryCorruptionError, match=message):
        StoredMemory.from_dict(payload)


def test_from_dict_rejects_non_objects() -> None:
    for bad in (None, [], "x", 3):
        with pytest.raises(RemoteMemoryCorruptionError):
            StoredMemory.from_dict(bad)


def test_query_candidate_breakdown_hit_result_round_trip(teaching_store) -> None:
    result = RecallEngine(teaching_store).recall(
        "layered memory", query_id="q-1", as_of=TEACHING_AS_OF
    )
    assert RecallResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    query = result.query
    assert RecallQuery.from_dict(query.to_dict()) == query
    hit = result.hits[0]
    assert RecallHit.from_dict(hit.to_dict()) == hit
    assert RecallScope.from_dict(hit.scope.to_dict()) == hit.scope
    assert RecallScoreBreakdown.from_dict(hit.score_breakdown.to_dict()) == hit.score_breakdown
    record = next(r for r in teaching_store.read_all() if r.memory_id == "conversation-003")
    candidate = RecallCandidate(
        "q-1", record, ("a", "b"), ("a",), datetime(2026, 8, 1, 12, tzinfo=UTC)
    )
    assert RecallCandidate.from_dict(candidate.to_dict()) == candidate


def test_hit_compatibility_views(teaching_store) -> None:
    hit = RecallEngine(teaching_store).recall("layered memory", as_of=TEACHING_AS_OF).hits[0]
    assert hit.source is hit.provenance
    assert hit.score == hit.score_breakdown.total == 0.995161
    assert hit.matched_terms == ("layered", "memory")
    payload = hit.to_dict()
    assert payload["source"] == payload["provenance"]
    assert payload["score"] == payload["score_breakdown"]["total"]


def test_hit_from_dict_rejects_inconsistent_aliases(teaching_store) -> None:
    payload = (
        RecallEngine(teaching_store)
        .recall("layered memory", as_of=TEACHING_AS_OF)
        .hits[0]
        .to_dict()
    )
    payload["score"] = 0.5
    with pytest.raises(RemoteMemoryCorruptionError, match="score"):
        RecallHit.from_dict(payload)
