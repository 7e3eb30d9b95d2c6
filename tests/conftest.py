"""Shared fixtures: temporary stores, the chapter's teaching store, a fixed clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from memorylib import MemoryKind, MemorySource, RemoteMemoryStore, seed_teaching_store


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "memories.jsonl"


@pytest.fixture
def store(store_path: Path) -> RemoteMemoryStore:
    return RemoteMemoryStore(store_path, user_id="alice")


@pytest.fixture
def teaching_store(tmp_path: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "teaching.jsonl")
    seed_teaching_store(store)
    return store


def source(
    n: int | str = 1, captured_at: str = "2026-08-01T12:00:00Z", title: str = "t"
) -> MemorySource:
    return MemorySource(
        source_id=f"transcript-{n}",
        source_type="conversation_transcript",
        title=title,
        captured_at=captured_at,
    )


def add(
    store: RemoteMemoryStore,
    memory_id: str,
    text: str,
    captured_at: str = "2026-08-01T12:00:00Z",
    kind: MemoryKind = MemoryKind.CONVERSATION,
    summary: str | None = None,
):
    return store.append(
        kind=kind,
        memory_id=memory_id,
        content=text,
        summary=summary if summary is not None else text,
        source=source(memory_id, captured_at),
        stored_at="2026-08-02T00:00:00Z",
    )


def outcome(call):
    """("ok", value) or (exception type, message): what differential tests compare."""
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc), str(exc))


# The backends (JSONL, SQLite, PostgreSQL) as fixtures, the real PostgreSQL server
# behind them, and the "PostgreSQL suite: ..." line of pytest's summary.
from .backends_support import (  # noqa: E402
    backend,
    postgres_server,
    pytest_collection_modifyitems,
    pytest_runtest_logreport,
    pytest_terminal_summary,
)

__all__ = [
    "backend",
    "postgres_server",
    "pytest_collection_modifyitems",
    "pytest_runtest_logreport",
    "pytest_terminal_summary",
]
