"""Shared fixtures: temporary stores, the chapter's teaching store, a fixed clock."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memorylib import MemoryKind, MemorySource, RemoteMemoryStore, seed_teaching_store, vectors
from memorylib.analysis import FULL_ANALYZER, text_terms


class HashEmbedder:
    """A stand-in for the "e5-small" model in tests: each term of the text (the full
    analyzer's) adds a fixed pseudo-random vector, then the sum is made unit length. Texts
    that share terms are similar; it knows no meaning. Deterministic and fast."""

    name = "e5-small"
    dimensions = 32

    def _vector(self, text: str) -> Sequence[float]:
        total = [0.0] * self.dimensions
        for term, count in sorted(text_terms(text, FULL_ANALYZER).counts.items()):
            digest = hashlib.sha256(term.encode("utf-8")).digest()
            for i in range(self.dimensions):
                total[i] += count * (digest[i] - 127.5)
        norm = math.sqrt(sum(x * x for x in total)) or 1.0
        return [x / norm for x in total]

    def query(self, text: str) -> Sequence[float]:
        return self._vector(text)

    def passage(self, text: str) -> Sequence[float]:
        return self._vector(text)


@pytest.fixture(autouse=True, scope="session")
def _hash_embedder() -> Iterator[None]:
    """Every test recalls hybrid policies with HashEmbedder, unless marked real_vectors."""
    saved = vectors._LOADED.pop("e5-small", None)
    vectors._LOADED["e5-small"] = HashEmbedder()
    yield
    vectors._LOADED.pop("e5-small", None)
    if saved is not None:
        vectors._LOADED["e5-small"] = saved


@pytest.fixture(autouse=True)
def _real_vectors(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("real_vectors") is None:
        yield
        return
    fake = vectors._LOADED.pop("e5-small")
    try:
        yield
    finally:
        vectors._LOADED["e5-small"] = fake


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
