"""The indexed recall path: the same RecallResult as the stage functions, at 100k records.

Taught path cost per query: re-read, re-parse and re-tokenize every record, score and
sort every candidate. This module keeps, per process and per store:

* each conversation record's terms, tokenized once, in an inverted index
  (term -> record positions, a CSR array plus a small delta for appended records);
* its capture time (integer microseconds) and whether a retraction hides it.

A query counts matched terms per record with one ``bincount`` over its terms'
postings. Records with the same match count have the same coverage, so within such a
level the contract's order (total, coverage, captured_at DESC, memory_id ASC) is just
captured_at DESC, memory_id ASC: recency only falls with age. The global top ``limit``
therefore lies among the ``limit`` newest records of each level; only those (at most
``limit`` x query terms) are turned into RecallCandidates and handed to the taught
``stable_rank_recall_candidates``, which scores and orders them. Identical hits,
ranks, breakdowns and counts, by construction and by property test.

The index follows the file: a ``stat`` per query; when the file grew, only the new
tail is read (under the store's lock); when it was replaced, truncated or rewritten,
the index is rebuilt.
"""

from __future__ import annotations

import itertools
import os
from collections import defaultdict
from datetime import datetime

import numpy as np

from ._checks import format_timestamp, parse_timestamp
from .candidates import searchable_terms
from .query import _token_pattern, normalize_text
from .ranking import capture_micros, stable_rank_recall_candidates
from .records import MemoryKind, RecallCandidate, RecallQuery, RecallResult, StoredMemory
from .scoring import DEFAULT_POLICY, ScoringPolicy
from .store import RemoteMemoryStore

__all__ = ["RecallIndex", "index_terms"]

_DELTA_REBUILD_MIN = 50_000  # delta postings before they are merged into the CSR arrays


def index_terms(text: str) -> set[str]:
    """The unsorted term set of normalized text (``extract_terms`` without the sort)."""
    terms: set[str] = set()
    for word, han in _token_pattern().findall(text):
        if word:
            terms.add(word)
        elif len(han) == 1:
            terms.add(han)
        else:
            terms.update(han[i : i + 2] for i in range(len(han) - 1))
    return terms


class _Growable:
    """A numpy array with amortized O(1) append (capacity doubling)."""

    def __init__(self, dtype: type) -> None:
        self._data = np.zeros(1024, dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            grown = np.zeros(max(need, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.size]


class RecallIndex:
    """Inverted index over one store's conversation records, kept in step with its file."""

    def __init__(self, store: RemoteMemoryStore) -> None:
        self.store = store
        self._stat_key: tuple[int, int, int, int] | None = None
        self._reset(generation=-1)

    def _reset(self, generation: int) -> None:
        self._generation = generation
        self._consumed = 0  # how many of the store state's records were indexed
        self._records: list[StoredMemory] = []  # conversation records, position = doc id
        self._position: dict[str, int] = {}
        self._captured = _Growable(np.int64)
        self._dead: list[int] = []
        self._hidden_ids: set[str] = set()  # retracted ids (any kind) seen so far
        self._vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self._pair_terms = _Growable(np.int32)  # (term, doc) pairs, in arrival order
        self._pair_docs = _Growable(np.int32)
        self._csr_offsets = np.zeros(1, dtype=np.int64)
        self._csr_docs = np.zeros(0, dtype=np.int32)
        self._csr_pairs = 0  # pairs covered by the CSR arrays
        self._delta: dict[int, list[int]] = {}

    # -- keeping up with the file ---------------------------------------------------------

    def refresh(self) -> None:
        """Index whatever the file gained since the last call (cheap when nothing did)."""
        try:
            st = os.stat(self.store.path)
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            key = None
        if key is not None and key == self._stat_key:
            return
        state = self.store.synced_state()
        if state.generation != self._generation:
            self._reset(state.generation)
        new = state.records[self._consumed :]
        self._consumed = len(state.records)
        self._add(new)
        if state.identity is not None:
            self._stat_key = (*state.identity, state.offset, state.mtime_ns)
        else:
            self._stat_key = None

    def _add(self, records: list[StoredMemory]) -> None:
        first = len(self._records)
        term_ids: list[int] = []
        counts: list[int] = []
        captured: list[int] = []
        vocab_id = self._vocab.__getitem__
        for record in records:
            if record.kind is MemoryKind.RETRACTION:
                target = record.retracts or ""
                self._hidden_ids.add(target)
                if target in self._position:
                    self._dead.append(self._position[target])
                continue
            if record.kind is not MemoryKind.CONVERSATION:
                continue
            doc = len(self._records)
            self._records.append(record)
            self._position[record.memory_id] = doc
            if record.memory_id in self._hidden_ids:  # cannot happen via the store API
                self._dead.append(doc)
            terms = index_terms(_normalized(record))
            term_ids.extend(map(vocab_id, terms))
            counts.append(len(terms))
            captured.append(
                capture_micros(parse_timestamp(record.source.captured_at, "captured_at"))
            )
        if not counts:
            return
        docs = np.repeat(np.arange(first, len(self._records), dtype=np.int32), counts)
        terms_arr = np.asarray(term_ids, dtype=np.int32)
        self._captured.extend(np.asarray(captured, dtype=np.int64))
        self._pair_terms.extend(terms_arr)
        self._pair_docs.extend(docs)
        pending = self._pair_terms.size - self._csr_pairs
        if pending >= max(_DELTA_REBUILD_MIN, self._csr_pairs // 8):
            self._rebuild_csr()
        else:
            for term, doc in zip(terms_arr.tolist(), docs.tolist(), strict=True):
                self._delta.setdefault(term, []).append(doc)

    def _rebuild_csr(self) -> None:
        terms = self._pair_terms.view
        order = np.argsort(terms, kind="stable")
        self._csr_docs = self._pair_docs.view[order].copy()
        counts = np.bincount(terms, minlength=len(self._vocab))
        self._csr_offsets = np.concatenate(([0], np.cumsum(counts)))
        self._csr_pairs = len(terms)
        self._delta = {}

    def _postings(self, term_id: int) -> list[np.ndarray]:
        parts = []
        if term_id + 1 < len(self._csr_offsets):
            start, stop = self._csr_offsets[term_id], self._csr_offsets[term_id + 1]
            if stop > start:
                parts.append(self._csr_docs[start:stop])
        extra = self._delta.get(term_id)
        if extra:
            parts.append(np.asarray(extra, dtype=np.int32))
        return parts

    # -- answering --------------------------------------------------------------------------

    def recall(
        self,
        query: RecallQuery,
        *,
        as_of: datetime | str,
        policy: ScoringPolicy = DEFAULT_POLICY,
    ) -> RecallResult:
        """The RecallResult the taught path would return for the same store and query."""
        self.refresh()
        moment = parse_timestamp(as_of, "as_of")
        total_docs = len(self._records)
        dead = np.unique(np.asarray(self._dead, dtype=np.int64))
        parts: list[np.ndarray] = []
        for term in query.terms:
            term_id = self._vocab.get(term)
            if term_id is not None:
                parts.extend(self._postings(term_id))
        chosen: list[int] = []
        candidate_count = 0
        if parts:
            counts = np.bincount(np.concatenate(parts), minlength=total_docs)
            counts[dead] = 0
            matched = np.flatnonzero(counts)
            candidate_count = len(matched)
            levels = counts[matched]
            captured = self._captured.view
            for level in np.unique(levels):
                chosen.extend(self._newest(matched[levels == level], captured, query.limit))
        wanted = set(query.terms)
        candidates = []
        for doc in chosen:
            record = self._records[doc]
            terms = searchable_terms(record)
            candidates.append(
                RecallCandidate(
                    query_id=query.query_id,
                    record=record,
                    searchable_terms=terms,
                    matched_terms=tuple(t for t in terms if t in wanted),
                    captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
                )
            )
        hits = stable_rank_recall_candidates(query, candidates, as_of=moment, policy=policy)
        return RecallResult(
            query=query,
            hits=hits,
            searched_records=total_docs - len(dead),
            candidate_records=candidate_count,
            empty_reason=None if hits else "no_matching_terms",
            retracted_records=len(dead),
            as_of=format_timestamp(moment),
        )

    def _newest(self, docs: np.ndarray, captured: np.ndarray, k: int) -> list[int]:
        """The k docs first by (captured_at DESC, memory_id ASC); ties at the cut kept exact."""
        if len(docs) <= k:
            return docs.tolist()
        times = captured[docs]
        cut = np.partition(times, len(times) - k)[len(times) - k]  # k-th newest time
        newer = docs[times > cut]
        at_cut = docs[times == cut]
        if len(newer) + len(at_cut) > k:  # break the tie at the cut by memory_id
            at_cut = np.asarray(
                sorted(at_cut.tolist(), key=lambda d: self._records[d].memory_id)[: k - len(newer)],
                dtype=docs.dtype,
            )
        return newer.tolist() + at_cut.tolist()


def _normalized(record: StoredMemory) -> str:
    return normalize_text(record.summary + " " + record.content)
