"""The synthetic corpus: deterministic, bilingual, with ties; bulk and append write the same."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from memorylib import (
    MemoryKind,
    RecallEngine,
    RemoteMemoryDuplicateError,
    RemoteMemoryStore,
    normalize_recall_query,
)
from memorylib.synthetic import (
    SYNTHETIC_END,
    synthetic_entries,
    synthetic_queries,
    write_synthetic_store,
)


def test_entries_are_deterministic_per_seed() -> None:
    assert synthetic_entries(50, seed=3) == synthetic_entries(50, seed=3)
    assert synthetic_entries(50, seed=3) != synthetic_entries(50, seed=4)


def test_entries_look_like_a_bilingual_history() -> None:
    entries = synthetic_entries(2_000, seed=0)
    assert len({e["memory_id"] for e in entries}) == 2_000
    kinds = Counter(e["kind"] for e in entries)
    assert kinds[MemoryKind.PROFILE] == 1 and kinds[MemoryKind.CONVERSATION] == 1_999
    chinese = sum(any("\u4e00" <= c <= "\u9fff" for c in e["content"]) for e in entries)
    ascii_only = sum(e["content"].isascii() for e in entries)
    assert 0.3 < ascii_only / 2_000 < 0.6 and 0.4 < chinese / 2_000 < 0.7
    times = [e["source"].captured_at for e in entries]
    assert min(times) >= "2024-08-01" and max(times) <= SYNTHETIC_END.isoformat()[:10] + "Z"
    repeated = sum(count - 1 for count in Counter(times).values())
    assert repeated > 50  # identical capture times exist: the memory_id tie-break matters
    sentences = [e["content"].count(".") + e["content"].count("。") for e in entries]
    assert min(sentences) >= 1 and max(sentences) <= 4 + 4  # 1-4 sentences (+ inner dots)


def test_word_frequencies_are_skewed() -> None:
    words = Counter(w for e in synthetic_entries(1_000, seed=0) for w in e["content"].split())
    ((_, top_count),) = words.most_common(1)
    singletons = sum(1 for count in words.values() if count == 1)
    assert top_count > 50 * sorted(words.values())[len(words) // 2]
    assert singletons > len(words) // 3


def test_queries_are_deterministic_and_searchable() -> None:
    queries = synthetic_queries(30, seed=2)
    assert queries == synthetic_queries(30, seed=2)
    assert len(queries) == 30
    for text in queries:
        assert normalize_recall_query(text, user_scope="0" * 16).terms
    assert any(q.isascii() for q in queries) and any(not q.isascii() for q in queries)
    assert any(" " in q and not q.isascii() for q in queries)  # mixed English + Chinese


def test_bulk_writes_the_bytes_append_would(tmp_path: Path) -> None:
    appended = write_synthetic_store(tmp_path / "a" / "s.jsonl", 60, seed=5, user_id="u")
    bulk = write_synthetic_store(tmp_path / "b" / "s.jsonl", 60, seed=5, user_id="u", bulk=True)
    assert bulk.path.read_bytes() == appended.path.read_bytes()
    assert [r.memory_id for r in bulk.read_all()] == [f"{r.memory_id}" for r in appended.read_all()]
    before = bulk.path.read_bytes()
    with pytest.raises(RemoteMemoryDuplicateError, match="already stored"):  # all or nothing
        write_synthetic_store(bulk.path, 5, seed=5, user_id="u", bulk=True)
    assert bulk.path.read_bytes() == before


def test_synthetic_store_recalls_identically_on_both_paths(tmp_path: Path) -> None:
    store = write_synthetic_store(tmp_path / "s.jsonl", 400, seed=1, bulk=True)
    assert isinstance(store, RemoteMemoryStore)
    teaching = RecallEngine(store, strategy="teaching")
    indexed = RecallEngine(store)
    for i, text in enumerate(synthetic_queries(12, seed=1)):
        kwargs = {"limit": 1 + i % 10, "as_of": SYNTHETIC_END, "query_id": f"q-{i}"}
        assert indexed.recall(text, **kwargs) == teaching.recall(text, **kwargs)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_bad_sizes_are_rejected(bad) -> None:
    with pytest.raises(ValueError):
        synthetic_entries(bad)
    with pytest.raises(ValueError):
        synthetic_queries(bad)
