"""The chapter's teaching store: one PROFILE snapshot and six CONVERSATION records.

Recalling "  LAYERED   Memory  " at ``timestamps.TEACHING_AS_OF`` (the teaching clock)
searches 6 records, finds 1 candidate and ranks ``conversation-003`` first with the
chapter's worked numbers (coverage 1.0, recency 0.967742, total 0.995161): it was
captured one day earlier.

``TEACHING_RECORDS`` holds them in the form ``store.append`` takes (keyword
arguments), so ``seed_teaching_store`` writes them with ``append_many`` and
``datasets`` exports them to ``data/chapter_records.jsonl`` from the same source.
"""

from __future__ import annotations

from typing import Any

from .interface import MemoryStore
from .records import MemoryKind, MemorySource, StoredMemory

__all__ = ["TEACHING_RECORDS", "seed_teaching_store"]


def _record(
    memory_id: str,
    kind: MemoryKind,
    source: tuple[str, str, str, str],
    summary: str,
    content: str,
) -> dict[str, Any]:
    """``store.append`` keyword arguments; the record is stored when it was captured."""
    return {
        "kind": kind,
        "memory_id": memory_id,
        "content": content,
        "summary": summary,
        "source": MemorySource(*source),
        "stored_at": source[3],
    }


TEACHING_RECORDS: tuple[dict[str, Any], ...] = (
    _record(
        "profile-001",
        MemoryKind.PROFILE,
        (
            "profile-snapshot-001",
            "profile_snapshot",
            "remote profile snapshot",
            "2026-07-30T09:00:00Z",
        ),
        "Backend engineer; prefers concise answers with runnable examples.",
        "Backend engineer on the WorkBuddy agent harness. Prefers concise answers with "
        "runnable Python examples. Works in UTC+8 and reviews pull requests in the morning.",
    ),
    _record(
        "conversation-001",
        MemoryKind.CONVERSATION,
        (
            "transcript-conversation-001",
            "conversation_transcript",
            "transcript storage format",
            "2026-07-10T08:30:00Z",
        ),
        "Chose append-only JSONL for session transcripts.",
        "Compared SQLite, Parquet and JSONL for transcripts; chose append-only JSONL because "
        "a crash can only tear the last line.",
    ),
    _record(
        "conversation-002",
        MemoryKind.CONVERSATION,
        (
            "transcript-conversation-002",
            "conversation_transcript",
            "shell safety policy",
            "2026-07-15T14:00:00Z",
        ),
        "The agent must ask before running commands that delete files.",
        "Agreed that any shell command that deletes or overwrites files needs an explicit "
        "confirmation from the user first.",
    ),
    _record(
        "conversation-003",
        MemoryKind.CONVERSATION,
        (
            "transcript-conversation-003",
            "conversation_transcript",
            "layered memory design",
            "2026-08-01T12:00:00Z",
        ),
        "Separated workspace, user and remote memory boundaries.",
        "Designed layered memory: workspace facts, user preferences and remote history each "
        "get their own owner, file and loading rule.",
    ),
    _record(
        "conversation-004",
        MemoryKind.CONVERSATION,
        (
            "transcript-conversation-004",
            "conversation_transcript",
            "Persistence decision",
            "2026-07-20T12:00:00Z",
        ),
        "Selected SQLite WAL.",
        "Selected SQLite WAL for local persistence.",
    ),
    _record(
        "conversation-005",
        MemoryKind.CONVERSATION,
        (
            "transcript-conversation-005",
            "conversation_transcript",
            "上下文预算",
            "2026-07-25T03:00:00Z",
        ),
        "工具输出超过预算时外部化到文件。",
        "讨论了上下文预算：工具输出超过四千字符时写入文件，提示词里只保留路径和摘要。",
    ),
    _record(
        "conversation-006",
        MemoryKind.CONVERSATION,
        (
            "transcript-conversation-006",
            "conversation_transcript",
            "recall provenance review",
            "2026-07-28T16:45:00Z",
        ),
        "Recall hits must carry provenance and a score breakdown.",
        "Reviewed the recall tool: every hit keeps its source_id, captured_at and the "
        "contribution of each score part, so a reader can explain a ranking.",
    ),
)


def seed_teaching_store(store: MemoryStore) -> tuple[StoredMemory, ...]:
    """Write the teaching records into an EMPTY store; a non-empty store is left alone.

    Returns the records written (empty when the store already held records).
    """
    if store.read_all():
        return ()
    return store.append_many(TEACHING_RECORDS)
