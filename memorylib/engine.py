"""The engine: sequences normalize -> candidate -> score -> stable rank for one store.

``RecallEngine.recall`` reads the store (never writes it) and returns a
``RecallResult``. Two paths give identical results:

* ``teaching``: ``store.read_all()`` then the stage functions, exactly as taught;
* ``indexed`` (default): an inverted index kept in step with the file's tail
  (``memorylib.index``), for stores of 100,000 records.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from ._checks import format_timestamp, parse_timestamp, type_name, utc_now
from .candidates import build_recall_candidates
from .errors import RemoteMemoryValidationError
from .query import normalize_recall_query
from .ranking import stable_rank_recall_candidates
from .records import RecallQuery, RecallResult, StoredMemory
from .scoring import DEFAULT_POLICY, ScoringPolicy, require_policy
from .store import RemoteMemoryStore

__all__ = ["NO_MATCHING_TERMS", "RecallEngine", "recall_pipeline"]

NO_MATCHING_TERMS = "no_matching_terms"
Strategy = Literal["indexed", "teaching"]


def recall_pipeline(
    query: RecallQuery,
    records: Iterable[StoredMemory],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> RecallResult:
    """The taught path over records already in memory: candidate -> score -> rank."""
    moment = parse_timestamp(as_of, "as_of")
    candidate_set = build_recall_candidates(query, records)
    hits = stable_rank_recall_candidates(query, candidate_set, as_of=moment, policy=policy)
    return RecallResult(
        query=query,
        hits=hits,
        searched_records=candidate_set.searched_records,
        candidate_records=candidate_set.candidate_records,
        empty_reason=None if hits else NO_MATCHING_TERMS,
        retracted_records=candidate_set.retracted_records,
        as_of=format_timestamp(moment),
    )


class RecallEngine:
    """Recall over one store. Read-only: the store's bytes never change."""

    def __init__(
        self,
        store: RemoteMemoryStore,
        *,
        policy: ScoringPolicy = DEFAULT_POLICY,
        strategy: Strategy = "indexed",
    ) -> None:
        if not isinstance(store, RemoteMemoryStore):
            raise RemoteMemoryValidationError(
                f"store must be a RemoteMemoryStore, got {type_name(store)}"
            )
        if strategy not in ("indexed", "teaching"):
            raise RemoteMemoryValidationError(
                f"strategy must be 'indexed' or 'teaching', got {strategy!r}"
            )
        self.store = store
        self.policy = require_policy(policy)
        self.strategy: Strategy = strategy
        self._index = None

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
        moment = parse_timestamp(as_of, "as_of") if as_of is not None else utc_now()
        used_policy = self.policy if policy is None else require_policy(policy)
        query = normalize_recall_query(
            text,
            user_scope=self.store.user_scope,
            limit=limit,
            query_id=query_id,
            issued_at=moment,
        )
        if self.strategy == "teaching":
            return recall_pipeline(query, self.store.read_all(), as_of=moment, policy=used_policy)
        if self._index is None:
            from .index import RecallIndex

            self._index = RecallIndex(self.store)
        return self._index.recall(query, as_of=moment, policy=used_policy)
