"""Records for the stage exercises: the chapter's, and small stores drawn as ``RecordSpec``s."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from memorylib.interface import new_memory, new_retraction, user_scope_for
from memorylib.notebook.messages import say
from memorylib.query import normalize_recall_query
from memorylib.records import MemoryKind, MemorySource, RecallQuery, StoredMemory
from memorylib.seed import TEACHING_RECORDS
from memorylib.timestamps import TEACHING_AS_OF, format_timestamp, parse_timestamp

CHAPTER_QUERY = "  LAYERED   Memory  "
CHAPTER_SCOPE = user_scope_for("local-user")
_CLOCK = parse_timestamp(TEACHING_AS_OF, "as_of")  # conversation-003 is one day old


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
    """What a generated record is made of (``kind``: conversation, profile or retraction)."""

    memory_id: str
    kind: str = "conversation"
    summary: tuple[str, ...] = ("memory",)
    content: tuple[str, ...] = ("note",)
    captured_days_before: float = 1.0  # before the teaching clock
    stored_lag_days: float = 0.0  # stored_at = captured_at + lag
    retracts: str | None = None
    source_id: str | None = None

    def record(self, scope: str) -> StoredMemory:
        days = self.captured_days_before
        captured = format_timestamp(_CLOCK - timedelta(days=days))
        stored = format_timestamp(_CLOCK - timedelta(days=days - self.stored_lag_days))
        source_id = self.source_id or f"src-{self.memory_id}"
        source = MemorySource(source_id, "conversation_transcript", "a note", captured)
        at: dict[str, Any] = dict(user_scope=scope, source=source, stored_at=stored)
        if self.kind == "retraction":
            hidden, own = self.retracts or "nothing", self.memory_id
            return new_retraction(memory_id=hidden, reason="withdrawn", retraction_id=own, **at)
        texts = dict(summary=" ".join(self.summary), content=" ".join(self.content))
        return new_memory(kind=MemoryKind(self.kind), memory_id=self.memory_id, **texts, **at)


def build_records(
    specs: tuple[RecordSpec, ...], scope: str = CHAPTER_SCOPE
) -> tuple[StoredMemory, ...]:
    return tuple(spec.record(scope) for spec in specs)


def words(choices: Sequence[str], *, most: int = 3) -> st.SearchStrategy[tuple[str, ...]]:
    """1..``most`` words drawn from ``choices`` (hypothesis shrinks towards the first)."""
    return st.lists(st.sampled_from(choices), min_size=1, max_size=most).map(tuple)


def memory_ids(count: int) -> st.SearchStrategy[list[str]]:
    """``count`` ids in a drawn order (storage order is not id order)."""
    return st.permutations([f"m{n}" for n in range(1, count + 1)])


def show_records(records: tuple[StoredMemory, ...]) -> str:
    """One line per record (the chapter's store, first, named but not listed)."""
    chapter, lines = chapter_records(), []
    if records[: len(chapter)] == chapter:
        lines.append(say("fixtures.chapter"))
        records = records[len(chapter) :]
    for r in records:
        if r.kind is MemoryKind.RETRACTION:
            lines.append(say("fixtures.retraction", memory_id=r.memory_id, retracts=r.retracts))
            continue
        scope = say("fixtures.scope", scope=r.user_scope) if r.user_scope != CHAPTER_SCOPE else ""
        captured, kind = r.source.captured_at, r.kind.value
        values = dict(summary=r.summary, content=r.content, captured=captured, scope=scope)
        lines.append(say("fixtures.memory", memory_id=r.memory_id, kind=kind, **values))
    return "\n".join(lines) or say("fixtures.none")
