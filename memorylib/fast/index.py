"""The indexed recall path: the same RecallResult as the stage functions, at 100k records.

Taught path cost per query: re-read, re-parse and re-tokenize every record, score and
sort every candidate. This module keeps, per process and per store:

* each conversation record's terms, tokenized once, in an inverted index
  (term -> record positions: CSR arrays plus a small delta for appended records);
* its capture time (integer microseconds) and whether a retraction hides it.

Building it tokenizes a few thousand records at a time (``tokenizer.term_pairs``): a
word is kept as its string, a CJK term as an integer code (``tokenizer.term_key``).
The terms are the taught ``extract_terms`` exactly, which the property tests check on
arbitrary Unicode.

A query finds, for every matching record, how many query terms it has: one
``bincount`` when the postings are large, a sort of the postings when they are
small. Records with the same match count have the same coverage, so within such a
level the contract's order (total, coverage, captured_at DESC, memory_id ASC) is just
captured_at DESC, memory_id ASC: recency only falls with age. So the global top
``limit`` lies among the ``limit`` newest records of each level, and a whole level is
skipped once ``limit`` records match so many more terms that recency cannot close the
gap. The records kept are pre-scored with the contract's formula and any whose score
is below the ``limit``-th best by more than rounding can explain (2e-6) is dropped.
Only the few left become RecallCandidates (with their ``searchable_terms``), and
the taught ``stable_rank_recall_candidates`` scores and orders them. Identical hits,
ranks, breakdowns and counts, by construction and by property test.

The index follows the file: a ``stat`` per query; when the file grew, only the new
committed lines are read (``log.FileLog``); when it was replaced, truncated or
rewritten (identity, size, mtime or the bytes before the old end differ), the index
is rebuilt from the start.
"""

from __future__ import annotations

import gc
import itertools
import os
import threading
from collections import defaultdict
from datetime import datetime

import numpy as np

from memorylib.checks import require
from memorylib.pipeline import recall_pipeline
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import (
    NO_MATCHING_TERMS,
    MemoryKind,
    RecallCandidate,
    RecallQuery,
    RecallResult,
    StoredMemory,
)
from memorylib.scoring import DEFAULT_POLICY, ScoringPolicy
from memorylib.store import RemoteMemoryStore
from memorylib.timestamps import SECONDS_PER_DAY, epoch_micros, format_timestamp, parse_timestamp

from .log import FileLog
from .tokenizer import term_key, term_pairs, terms

__all__ = ["RecallIndex", "index_terms"]

_DELTA_REBUILD_MIN = 50_000  # delta postings before they are merged into the CSR arrays
_CHUNK = 8_192  # records tokenized together (numpy work per chunk, bounded memory)
_SORT_FRACTION = 16  # postings below 1/16 of the records: sort them instead of bincount
_ROUNDING_SLACK = 2e-6  # > 2 x the largest change round(x, 6) makes, plus float error
_BATCH_CHARS = 4_000_000  # characters per numpy pass (one long record may exceed it)


def index_terms(text: str) -> set[str | int]:
    """The term keys the index files a record's raw ``summary + " " + content`` under.

    Equal to ``{term_key(t) for t in extract_terms(normalize_text(text))}``; computed
    by the index's own code (``term_pairs``), for tests.
    """
    vocab: defaultdict[str | int, int] = defaultdict(itertools.count().__next__)
    _, ids = term_pairs([text], [0], vocab.__getitem__, {})
    key_of = {term_id: key for key, term_id in vocab.items()}
    return {key_of[term_id] for term_id in ids.tolist()}


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
        self._log = FileLog(store.path, store.user_scope)
        self._lock = threading.RLock()  # recall and refresh: one thread at a time
        self._stat_key: tuple[int, int, int, int] | None = None
        self._reset(generation=-1)

    def _reset(self, generation: int) -> None:
        self._generation = generation
        self._consumed = 0  # how many of the store state's records were indexed
        self._records: list[StoredMemory] = []  # conversation records, position = doc id
        self._position: dict[str, int] | None = None  # memory_id -> doc, built on demand
        self._captured = _Growable(np.int64)  # capture time, microseconds since the epoch
        self._alive = _Growable(np.bool_)  # False once a retraction hides the record
        self._dead = 0
        self._hidden_ids: set[str] = set()  # retracted ids (any kind) seen so far
        self._vocab: defaultdict[str | int, int] = defaultdict(itertools.count().__next__)
        self._packed: dict[int, int] = {}  # ASCII word (<= 16 bytes) as an int -> term id
        self._pair_terms = _Growable(np.int32)  # (term, doc) pairs, in arrival order
        self._pair_docs = _Growable(np.int32)
        self._csr_offsets = np.zeros(1, dtype=np.int64)
        self._csr_docs = np.zeros(0, dtype=np.int32)
        self._csr_pairs = 0  # pairs covered by the CSR arrays
        self._delta: dict[int, list[int]] = {}

    # -- keeping up with the file ---------------------------------------------------------

    def refresh(self) -> None:
        """Index whatever the file gained since the last call (cheap when nothing did)."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        try:
            st = os.stat(self.store.path)
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            key = None
        if key is not None and key == self._stat_key:
            return
        grown = 0 if key is None else key[2] - (self._stat_key or (0, 0, 0))[2]
        pause = gc.isenabled() and grown > 1 << 20
        if pause:  # a big batch allocates ~10 objects a record; collecting them all is waste
            gc.disable()
        try:
            log = self._log.sync()
            if log.generation != self._generation:
                self._reset(log.generation)
            new = log.records[self._consumed :]
            self._consumed = len(log.records)
            self._add(new)
        finally:
            if pause:
                gc.enable()
        self._stat_key = log.stat_key()

    def _add(self, records: list[StoredMemory]) -> None:
        before = self._pair_terms.size
        for start in range(0, len(records), _CHUNK):  # chunks bound the temporary arrays
            self._add_chunk(records[start : start + _CHUNK])
        pending = self._pair_terms.size - self._csr_pairs
        if pending >= max(_DELTA_REBUILD_MIN, self._csr_pairs // 8):
            self._rebuild_csr()
            return
        delta = self._delta
        terms = self._pair_terms.view[before:].tolist()
        docs = self._pair_docs.view[before:].tolist()
        for term, doc in zip(terms, docs, strict=True):
            delta.setdefault(term, []).append(doc)

    def _add_chunk(self, records: list[StoredMemory]) -> None:
        """Index a few thousand records: their terms, capture times and liveness."""
        new = [r for r in records if r.kind is MemoryKind.CONVERSATION]
        first = len(self._records)
        if new:
            self._records.extend(new)
            if self._position is not None:
                self._position.update(zip([r.memory_id for r in new], itertools.count(first)))
            self._captured.extend(_capture_micros([r.source.captured_at for r in new]))
            hidden = self._hidden_ids  # a retraction read before its target: not via the API
            dead = np.asarray([r.memory_id in hidden for r in new] if hidden else [], dtype=bool)
            self._alive.extend(np.ones(len(new), dtype=np.bool_))
            if dead.any():
                self._alive.view[first:][dead] = False
                self._dead += int(dead.sum())
            self._add_terms([r.summary + " " + r.content for r in new], first)
        for record in records:
            if record.kind is MemoryKind.RETRACTION:
                target = record.retracts or ""
                self._hidden_ids.add(target)
                if self._position is None:  # the first retraction: most stores have none
                    self._position = {r.memory_id: doc for doc, r in enumerate(self._records)}
                doc = self._position.get(target)
                if doc is not None and self._alive.view[doc]:
                    self._alive.view[doc] = False
                    self._dead += 1

    def _add_terms(self, texts: list[str], first: int) -> None:
        """File ``texts[i]`` (a record's raw summary + " " + content) under doc ``first + i``."""
        start, chars = 0, 0
        for i, text in enumerate(texts):  # tokenize in batches of bounded size
            chars += len(text)
            if chars >= _BATCH_CHARS or i == len(texts) - 1:
                docs, term_ids = term_pairs(
                    texts[start : i + 1],
                    list(range(first + start, first + i + 1)),
                    self._vocab.__getitem__,
                    self._packed,
                )
                self._pair_terms.extend(term_ids)
                self._pair_docs.extend(docs)
                start, chars = i + 1, 0

    def _rebuild_csr(self) -> None:
        terms = self._pair_terms.view
        # (term, doc) pairs are unique: sorting them as one int64 key orders by term, then
        # by doc, and numpy sorts int64 far faster than it argsorts int32.
        keys = (terms.astype(np.int64) << 32) | self._pair_docs.view
        keys.sort()
        self._csr_docs = (keys & 0xFFFFFFFF).astype(np.int32)
        del keys
        counts = np.bincount(terms, minlength=len(self._vocab))
        self._csr_offsets = np.concatenate(([0], np.cumsum(counts)))
        self._csr_pairs = len(terms)
        self._delta = {}

    def _postings(self, term: str) -> list[np.ndarray]:
        term_id = self._vocab.get(term_key(term))
        if term_id is None:
            return []
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
        if not isinstance(query, RecallQuery) or query.user_scope != self.store.user_scope:
            # the taught path raises the error this query deserves
            return recall_pipeline(query, self.store.read_all(), as_of=as_of, policy=policy)
        with self._lock:  # the arrays change under refresh: one recall at a time
            return self._recall(query, as_of=as_of, policy=policy)

    def _recall(
        self, query: RecallQuery, *, as_of: datetime | str, policy: ScoringPolicy
    ) -> RecallResult:
        self.refresh()
        moment = parse_timestamp(as_of, "as_of")
        policy = require(policy, ScoringPolicy, "policy")
        unique_terms = dict.fromkeys(query.terms)  # a hand-built query may repeat a term
        parts = [part for term in unique_terms for part in self._postings(term)]
        docs, levels = self._match(parts)
        chosen = self._shortlist(docs, levels, query, moment, policy)
        wanted = set(query.terms)
        candidates = []
        for doc in chosen:
            record = self._records[doc]
            found = terms(record.summary + " " + record.content)  # = searchable_terms(record)
            candidates.append(
                RecallCandidate(
                    query_id=query.query_id,
                    record=record,
                    searchable_terms=found,
                    matched_terms=tuple(t for t in found if t in wanted),
                    captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
                )
            )
        hits = stable_rank_recall_candidates(query, candidates, as_of=moment, policy=policy)
        return RecallResult(
            query=query,
            hits=hits,
            searched_records=len(self._records) - self._dead,
            candidate_records=len(docs),
            empty_reason=None if hits else NO_MATCHING_TERMS,
            retracted_records=self._dead,
            as_of=format_timestamp(moment),
        )

    def _match(self, parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The live records that hold a query term, and how many of the terms each holds."""
        if not parts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        if len(parts) == 1:  # one posting list: unique docs, each matching once
            docs, levels = parts[0], np.ones(len(parts[0]), dtype=np.int64)
        else:
            postings = np.concatenate(parts)
            if len(postings) * _SORT_FRACTION < len(self._records):
                postings.sort()
                edges = np.flatnonzero(postings[1:] != postings[:-1]) + 1
                starts = np.concatenate(([0], edges))
                docs = postings[starts]
                levels = np.diff(np.concatenate((starts, [len(postings)])))
            else:
                counts = np.bincount(postings, minlength=len(self._records))
                docs = np.flatnonzero(counts > 0)
                levels = counts[docs]
        if self._dead:
            live = self._alive.view[docs]
            docs, levels = docs[live], levels[live]
        return docs, levels

    def _shortlist(
        self,
        docs: np.ndarray,
        levels: np.ndarray,
        query: RecallQuery,
        moment: datetime,
        policy: ScoringPolicy,
    ) -> list[int]:
        """A subset of ``docs`` that certainly holds the top ``query.limit`` of them."""
        limit = query.limit
        if len(docs) <= limit:
            return docs.tolist()
        captured = self._captured.view
        chosen: list[int] = []
        chosen_levels: list[int] = []
        sizes = np.bincount(levels)
        present = np.flatnonzero(sizes).tolist()[::-1]  # most matched terms first
        slack = _ROUNDING_SLACK + 1e-12 * (policy.lexical_weight + policy.recency_weight)
        step = policy.lexical_weight / len(query.terms)  # lexical gain of one more term
        for level in present:
            # Recency adds at most recency_weight: a record with d more matched terms wins
            # whenever step * d exceeds it. Once ``limit`` records win over this level,
            # it (and every level below) cannot reach the top.
            margin = policy.recency_weight + slack
            beaten_by = sum(int(sizes[up]) for up in present if step * (up - level) >= margin)
            if beaten_by >= limit:
                break
            at_level = docs if len(present) == 1 else docs[levels == level]
            newest = self._newest(at_level, captured, limit)
            chosen.extend(newest)
            chosen_levels.extend([level] * len(newest))
        if len(chosen) <= limit:
            return chosen
        # Pre-score with the contract's formula; drop what ranks below the limit-th best
        # by more than rounding can explain (the taught stage re-scores what is kept).
        picked = np.asarray(chosen, dtype=np.int64)
        coverage = np.asarray(chosen_levels, dtype=np.float64) / len(query.terms)
        seconds = (epoch_micros(moment) - captured[picked]) / 1e6
        age_days = np.maximum(0.0, seconds / SECONDS_PER_DAY)
        recency = 1.0 / (1.0 + age_days / policy.recency_window_days)
        totals = policy.lexical_weight * coverage + policy.recency_weight * recency
        kth = np.partition(totals, len(totals) - limit)[len(totals) - limit]
        return picked[totals >= kth - slack].tolist()

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


_from_isoformat = datetime.fromisoformat


def _micros(captured_at: str) -> int:
    """``epoch_micros(parse_timestamp(captured_at))``, quicker for the usual ``...Z`` form."""
    if captured_at[-1:] == "Z":
        try:
            return epoch_micros(_from_isoformat(captured_at))  # UTC already
        except ValueError:
            pass
    return epoch_micros(parse_timestamp(captured_at, "captured_at"))


_STAMP = "0000-00-00T00:00:00Z"  # the canonical shape: digits where this has 0
_STAMP_DIGITS = np.array([c == "0" for c in _STAMP])
_STAMP_MARKS = np.frombuffer(_STAMP.encode(), dtype=np.uint8)


def _capture_micros(stamps: list[str]) -> np.ndarray:
    """``[_micros(s) for s in stamps]`` as int64, vectorized for ``YYYY-MM-DDTHH:MM:SSZ``.

    Every stamp here already passed ``parse_timestamp`` (the store validated it), so one
    of that exact shape names a real date and time; its microseconds since the epoch
    are computed with integer arithmetic (days from the civil date, Hinnant's method).
    Any other shape (fractions, offsets) goes through ``_micros``.
    """
    out = np.empty(len(stamps), dtype=np.int64)
    if not stamps:
        return out
    blob = "".join(stamps)
    if len(blob) == 20 * len(stamps) and blob.isascii():
        chars = np.frombuffer(blob.encode("ascii"), dtype=np.uint8).reshape(-1, 20)
        digits = chars.astype(np.int64) - ord("0")
        ok = np.all(
            np.where(_STAMP_DIGITS, (digits >= 0) & (digits <= 9), chars == _STAMP_MARKS), axis=1
        )
        d = digits
        year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
        month, day = d[:, 5] * 10 + d[:, 6], d[:, 8] * 10 + d[:, 9]
        hour, minute, second = (
            d[:, 11] * 10 + d[:, 12],
            d[:, 14] * 10 + d[:, 15],
            d[:, 17] * 10 + d[:, 18],
        )
        ok &= hour < 24
        year = year - (month <= 2)
        era = year // 400
        yoe = year - era * 400
        doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
        days = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
        out[:] = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000
        rest = np.flatnonzero(~ok).tolist()
    else:
        rest = range(len(stamps))
    for i in rest:
        out[i] = _micros(stamps[i])
    return out
