"""Records for the stage exercises: the chapter's teaching records, and small stores
described by ``RecordSpec``s (the strategies draw specs; hypothesis shrinks them). Records
are made by ``new_memory`` / ``new_retraction``, as ``store.append`` and ``store.retract``
make them, so each is one a real store could hold. Nothing here touches a file.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from hypothesis import strategies as st

from memorylib.interface import new_memory, new_retraction, user_scope_for
from memorylib.query import normalize_recall_query
from memorylib.records import MemoryKind, MemorySource, RecallQuery, StoredMemory
from memorylib.seed import TEACHING_RECORDS
from memorylib.timestamps import TEACHING_AS_OF, format_timestamp, parse_timestamp

CHAPTER_QUERY = "  LAYERED   Memory  "
CHAPTER_SCOPE = user_scope_for("local-user")
_CLOCK = parse_timestamp(TEACHING_AS_OF, "as_of")  # conversation-003 is one day old


def _at(days_before: float) -> str:
    """The canonical timestamp ``days_before`` days before the teaching clock."""
    return format_timestamp(_CLOCK - timedelta(days=days_before))


@functools.cache
def chapter_records() -> tuple[StoredMemory, ...]:
    """The contract's seven teaching records (one profile, six conversations), as stored."""
    return tuple(new_memory(user_scope=CHAPTER_SCOPE, **record) for record in TEACHING_RECORDS)


def make_query(
    text: str, *, limit: int = 5, query_id: str = "q-buildit", scope: str = CHAPTER_SCOPE
) -> RecallQuery:
    """Stage 1 of the library (the exercises of later stages start from a right query)."""
    return normalize_recall_query(
        text, user_scope=scope, limit=limit, query_id=query_id, issued_at=TEACHING_AS_OF
    )


@dataclass(frozen=True)
class RecordSpec:
    """What a generated record is made of; ``build_records`` turns specs into records."""

    memory_id: str
    kind: str = "conversation"  # "conversation", "profile" or "retraction"
    summary: tuple[str, ...] = ("memory",)
    content: tuple[str, ...] = ("note",)
    captured_days_before: float = 1.0
    stored_lag_days: float = 0.0  # stored_at = captured_at + lag
    retracts: str | None = None
    source_id: str | None = None


def _record(spec: RecordSpec, scope: str) -> StoredMemory:
    captured = _at(spec.captured_days_before)
    stored = _at(spec.captured_days_before - spec.stored_lag_days)
    source = MemorySource(
        spec.source_id or f"src-{spec.memory_id}", "conversation_transcript", "a note", captured
    )
    if spec.kind == "retraction":
        return new_retraction(
            user_scope=scope,
            memory_id=spec.retracts or "nothing",
            reason="withdrawn",
            source=source,
            retraction_id=spec.memory_id,
            stored_at=stored,
        )
    return new_memory(
        user_scope=scope,
        kind=MemoryKind(spec.kind),
        memory_id=spec.memory_id,
        summary=" ".join(spec.summary),
        content=" ".join(spec.content),
        source=source,
        stored_at=stored,
    )


def build_records(
    specs: tuple[RecordSpec, ...], scope: str = CHAPTER_SCOPE
) -> tuple[StoredMemory, ...]:
    return tuple(_record(spec, scope) for spec in specs)


def words(choices: Sequence[str], *, most: int = 3) -> st.SearchStrategy[tuple[str, ...]]:
    """1..``most`` words drawn from ``choices`` (hypothesis shrinks towards the first)."""
    return st.lists(st.sampled_from(choices), min_size=1, max_size=most).map(tuple)


def memory_ids(count: int) -> st.SearchStrategy[list[str]]:
    """``count`` ids in a drawn order (storage order is not id order)."""
    return st.permutations([f"m{n}" for n in range(1, count + 1)])


def show_records(records: tuple[StoredMemory, ...]) -> str:
    """One line per record: id, kind, summary and content (or what a retraction hides)."""
    chapter, lines = chapter_records(), []
    if records[: len(chapter)] == chapter:  # the chapter's store: named, not listed
        lines.append(
            "the chapter's 7 teaching records (profile-001, conversation-001 … conversation-006)"
        )
        records = records[len(chapter) :]
    for record in records:
        if record.kind is MemoryKind.RETRACTION:
            lines.append(f"{record.memory_id}: retraction of {record.retracts}")
            continue
        scope = f", user_scope {record.user_scope}" if record.user_scope != CHAPTER_SCOPE else ""
        lines.append(
            f"{record.memory_id}: {record.kind.value}, summary {record.summary!r}, "
            f"content {record.content!r}, captured {record.source.captured_at}{scope}"
        )
    return "\n".join(lines) or "no records"
