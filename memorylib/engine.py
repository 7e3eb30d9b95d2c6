"""The engine: sequences normalize -> candidate -> score -> stable rank for one store.

``RecallEngine.recall`` reads the store (never writes it) and returns a
``RecallResult``. The query gets the terms of the policy's analyzer first
(``pipeline.prepare_query``, on the raw text, whose lines are a dialogue's turns).
It chooses one of two paths, which give identical results:

* ``teaching``: ``store.read_all()`` then the stage functions (``pipeline``), exactly
  as taught;
* ``indexed`` (default): a store that answers recall itself (``store.indexed_recall``:
  the database backends of ``memorylib.backends``, candidates from their terms
  table, for the chapter's coverage scorer and terms) does; a JSONL store gets
  ``memorylib.fast.index``, an inverted index kept in step with its file, for stores
  of 100,000 records. Any other store takes the teaching path, and so does a scoring
  function of your own (``score=``), which no index can know in advance.

The teaching path pauses Python's cyclic garbage collector while one recall runs
(``_collector_paused``). It builds a candidate, its tuples and a breakdown for most
records of a store (with a policy's context, a dozen objects or more per record), and
they all live until the recall returns. Collected meanwhile, they would survive the
young generations and be moved to the oldest one; each time enough have been moved, the
collector walks every object of the process, and that walk, not the stages, made the
slowest tenth of the taught recalls. Paused, they are freed by their reference counts
when the recall returns, as they would be anyway: the pause cannot change a result.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from .checks import MAX_LIMIT, require
from .errors import RemoteMemoryValidationError
from .interface import MemoryStore
from .pipeline import prepare_query, recall_pipeline
from .query import normalize_recall_query
from .ranking import ScoreFunction
from .records import RecallQuery, RecallResult
from .scoring import DEFAULT_POLICY, ScoringPolicy
from .store import RemoteMemoryStore
from .timestamps import parse_timestamp, utc_now

if TYPE_CHECKING:
    from .fast.index import RecallIndex
    from .vectors import VectorCache, VectorIndex

__all__ = ["RecallEngine", "Strategy"]

Strategy = Literal["indexed", "teaching"]


class RecallEngine:
    """Recall over one store. Read-only: the store's bytes never change."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        policy: ScoringPolicy = DEFAULT_POLICY,
        strategy: Strategy = "indexed",
        score: ScoreFunction | None = None,
    ) -> None:
        self.store = require(store, MemoryStore, "store")
        if strategy not in ("indexed", "teaching"):
            raise RemoteMemoryValidationError(
                f"strategy must be 'indexed' or 'teaching', got {strategy!r}"
            )
        self.policy = require(policy, ScoringPolicy, "policy")
        self.strategy: Strategy = strategy
        if score is not None and not callable(score):
            raise RemoteMemoryValidationError(
                f"score must be a scoring function, got {type(score).__name__}"
            )
        self.score = score
        self._index: RecallIndex | None = None
        self._vectors: VectorCache | None = None  # the teaching path's embeddings
        self._vector_index: VectorIndex | None = None  # the indexed path's

    def __repr__(self) -> str:
        return f"RecallEngine({self.store!r}, strategy={self.strategy!r})"

    def recall(
        self,
        text: str,
        *,
        limit: int = 5,
        query_id: str | None = None,
        as_of: datetime | str | None = None,
        policy: ScoringPolicy | None = None,
    ) -> RecallResult:
        """Normalize ``text`` and recall at most ``limit`` hits, scored at ``as_of``.

        ``as_of`` (default: now, UTC) is also the query's ``issued_at``; pass it and a
        ``query_id`` for reproducible results.
        """
        moment = utc_now() if as_of is None else parse_timestamp(as_of, "as_of")
        used = self.policy if policy is None else require(policy, ScoringPolicy, "policy")
        query = normalize_recall_query(
            text,
            user_scope=self.store.user_scope,
            limit=limit,
            query_id=query_id,
            issued_at=moment,
        )
        query = prepare_query(query, used, text)  # the policy's analyzer, on the raw lines
        if used.vector is not None:  # beyond the chapter: lexical and vector, fused (vectors.py)
            return self._hybrid(query, text, moment, used)
        return self._lexical(query, moment, used)

    def _hybrid(
        self, query: RecallQuery, text: str, moment: datetime, policy: ScoringPolicy
    ) -> RecallResult:
        from . import vectors

        assert policy.vector is not None
        lexical = self._lexical(
            dataclasses.replace(query, limit=MAX_LIMIT), moment, policy.lexical()
        )
        embedder = vectors.load_embedder(policy.vector)
        if self.strategy == "indexed" and self.score is None:  # the same result, faster
            if self._vector_index is None or self._vector_index.embedder is not embedder:
                self._vector_index = vectors.VectorIndex(self.store, embedder)
            wanted = embedder.query(text[-vectors.QUERY_CHARS :])
            return self._vector_index.recall(query, lexical, wanted, policy)
        if self._vectors is None or self._vectors.embedder is not embedder:
            self._vectors = vectors.VectorCache(embedder)
        records = vectors.searched_records(self.store.read_all())
        wanted = embedder.query(text[-vectors.QUERY_CHARS :])
        ranked = vectors.vector_ranking(wanted, records, self._vectors.passage)
        return vectors.fuse(query, lexical, ranked, policy, policy.vector)

    def _lexical(self, query: RecallQuery, moment: datetime, used: ScoringPolicy) -> RecallResult:
        if self.score is not None:
            with _collector_paused():
                return recall_pipeline(
                    query, self.store.read_all(), as_of=moment, policy=used, score=self.score
                )
        indexed_recall = getattr(self.store, "indexed_recall", None)
        if self.strategy == "indexed" and callable(indexed_recall):
            return indexed_recall(query, as_of=moment, policy=used)
        if self.strategy == "indexed" and isinstance(self.store, RemoteMemoryStore):
            if self._index is None:
                from .fast.index import RecallIndex  # numpy loads on the first indexed recall

                self._index = RecallIndex(self.store)
            return self._index.recall(query, as_of=moment, policy=used)
        with _collector_paused():
            return recall_pipeline(query, self.store.read_all(), as_of=moment, policy=used)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (see the module docstring), then
    on again if it was on; left as it is when it was off already (by a caller, or by
    another thread's pause, which turns it back on when its own block ends)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
