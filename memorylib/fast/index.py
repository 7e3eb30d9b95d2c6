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

BM25 and hybrid score every matching record with numpy (term frequencies and lengths
are in the index; a common term's weights are kept spread over every record). When a
query mixes common terms (on an eighth of the records or more) with rarer ones, only
the rarer terms' records are scored first (MaxScore): a term adds less than
``idf * (k1 + 1)``, so a record holding only common terms stays below their sum, and if
``limit`` records beat that bound plus all that recency can add, nobody else can reach
the top; otherwise every record is scored.

The index follows the file: a ``stat`` per query; when the file grew, only the new
committed lines are read (``log.FileLog``); when it was replaced, truncated or
rewritten (identity, size, mtime or the bytes before the old end differ), the index
is rebuilt from the start.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import os
import threading
from collections import defaultdict
from datetime import datetime

import numpy as np

from memorylib.candidates import CorpusStats
from memorylib.checks import require
from memorylib.errors import RemoteMemoryCorruptionError
from memorylib.pipeline import empty_reason, prepare_query, recall_pipeline
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import (
    MemoryKind,
    RecallCandidate,
    RecallQuery,
    RecallResult,
    StoredMemory,
)
from memorylib.scoring import DEFAULT_POLICY, ScoringPolicy, bm25_score, idf
from memorylib.store import RemoteMemoryStore
from memorylib.timestamps import SECONDS_PER_DAY, epoch_micros, parse_timestamp

from . import persist
from .analyzed import AnalyzedIndex, DocsView
from .codec import decode_line
from .log import FileLog
from .tokenizer import spread, term_key, term_pairs, terms

__all__ = ["RecallIndex", "index_terms"]

_DELTA_REBUILD_MIN = 50_000  # delta postings before they are merged into the CSR arrays
_CHUNK = 8_192  # records tokenized together (numpy work per chunk, bounded memory)
_SORT_FRACTION = 16  # postings below 1/16 of the records: sort them instead of bincount
_ROUNDING_SLACK = 2e-6  # > 2 x the largest change round(x, 6) makes, plus float error
_NEAR_MAX = 64  # a shortlist longer than this (ties) is cut by the taught keys first
_IMPACT_MAX = 4_000_000  # BM25 term weights kept for long posting lists (32 MB of floats)
_BATCH_CHARS = 2_000_000  # characters per numpy pass (one long record may exceed it)


def index_terms(text: str) -> set[str | int]:
    """The term keys the index files a record's raw ``summary + " " + content`` under.

    Equal to ``{term_key(t) for t in extract_terms(normalize_text(text))}``; computed
    by the index's own code (``term_pairs``), for tests.
    """
    vocab: defaultdict[str | int, int] = defaultdict(itertools.count().__next__)
    _, ids, _ = term_pairs([text], [0], vocab.__getitem__, {})
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


Postings = dict[str, list[tuple[np.ndarray, np.ndarray]]]  # term -> [(docs, tf)]


def _locate(sorted_values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``wanted`` would stand in ``sorted_values``, and whether it is there."""
    where = np.searchsorted(sorted_values, wanted)
    found = where < len(sorted_values)
    found[found] = sorted_values[where[found]] == wanted[found]
    return where, found


def _frequency(parts: list[tuple[np.ndarray, np.ndarray]], doc: int) -> int:
    """How often a term occurs in ``doc``, from its postings (docs are sorted)."""
    for docs, tfs in parts:
        at = int(np.searchsorted(docs, doc))
        if at < len(docs) and docs[at] == doc:
            return int(tfs[at])
    raise _Moved  # the record holds a term the index does not: the file changed


class _Moved(Exception):
    """A record's line is not where the index last read it: the file changed under us."""


class RecallIndex:
    """Inverted index over one store's conversation records, kept in step with its file.

    Per record it keeps only what ranking needs (memory_id, capture time, alive) and
    where its line is; the few records a query shortlists are read back from the file.
    """

    def __init__(self, store: RemoteMemoryStore) -> None:
        self.store = store
        self._lock = threading.RLock()  # recall and refresh: one thread at a time
        self._stat_key: tuple[int, int, int, int] | None = None
        self._log = FileLog(store.path, store.user_scope)
        self._reset(generation=-1)
        self._saved_offset = 0  # bytes of the store the saved index covers (0: none)
        self._snapshot_checked = False
        self._analyzed: dict[tuple, AnalyzedIndex] = {}  # per (analyzer, context) setting

    def _reset(self, generation: int) -> None:
        self._generation = generation
        self._ids: list[str] = []  # memory_id of each conversation record; position = doc id
        self._position: dict[str, int] | None = None  # memory_id -> doc, built on demand
        self._offsets = _Growable(np.int64)  # where each doc's line starts in the file
        self._lengths = _Growable(np.int32)  # and its length without the newline
        self._captured = _Growable(np.int64)  # capture time, microseconds since the epoch
        self._alive = _Growable(np.bool_)  # False once a retraction hides the record
        self._term_lengths = _Growable(np.int32)  # terms in each doc, repeats counted (BM25)
        self._alive_length = 0  # the sum of _term_lengths over live docs
        self._dead = 0
        self._hidden_ids: set[str] = set()  # retracted ids (any kind) seen so far
        self._vocab: defaultdict[str | int, int] = defaultdict(itertools.count().__next__)
        self._packed: dict[int, int] = {}  # ASCII word (<= 16 bytes) as an int -> term id
        self._csr_offsets = np.zeros(1, dtype=np.int64)  # term id -> slice of _csr_docs
        self._csr_docs = np.zeros(0, dtype=np.int32)
        self._csr_tf = np.zeros(0, dtype=np.uint16)  # how often the term occurs in each doc
        # Postings not in the CSR yet, one run per tokenized batch: (count of each term id,
        # the docs ordered by term then doc, their term frequencies). Runs arrive in doc order.
        self._runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._run_pairs = 0
        # the runs' postings, for queries until merged: term id -> ([doc], [tf])
        self._delta: dict[int, tuple[list[int], list[int]]] = {}
        self._runs_in_delta = 0
        self._norms: tuple[tuple, np.ndarray] | None = None  # BM25 length norms, cached
        self._made: dict[int, RecallCandidate] = {}  # one recall's candidates, by doc
        self._impacts: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # see _impact

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
            if not self._snapshot_checked:  # a new process: is there a saved index to load?
                self._snapshot_checked = True
                self._load_snapshot()
            self._log.sync(self._consume)
            if self._log.generation != self._generation:  # the file is gone or empty now
                self._reset(self._log.generation)
            if self._run_pairs >= max(_DELTA_REBUILD_MIN, len(self._csr_docs) // 8):
                self._merge_runs()
            else:
                for counts, docs, tfs in self._runs[self._runs_in_delta :]:
                    terms_of = np.repeat(np.arange(len(counts)), counts).tolist()
                    for term, doc, tf in zip(terms_of, docs.tolist(), tfs.tolist(), strict=True):
                        posting = self._delta.setdefault(term, ([], []))
                        posting[0].append(doc)
                        posting[1].append(tf)
                self._runs_in_delta = len(self._runs)
        finally:
            if pause:
                gc.enable()
        self._stat_key = self._log.stat_key()
        if self._log.offset >= max(persist.MIN_BYTES, 1.5 * self._saved_offset):
            self._save_snapshot()

    # -- the saved index ----------------------------------------------------------------------

    def _save_snapshot(self) -> None:
        if self._runs:
            self._merge_runs()
        words = [key for key in self._vocab if isinstance(key, str)]
        codes = [key for key in self._vocab if isinstance(key, int)]
        log = self._log
        meta = {
            "user_scope": self.store.user_scope,
            "offset": log.offset,
            "crc32": log.crc32,
            "lines": log.lines,
            "docs": len(self._ids),
            "dead": self._dead,
            "alive_length": self._alive_length,
            "words": len(words),
            "all_ids": len(log.ids),
            "hidden": len(self._hidden_ids),
        }
        arrays = {
            "csr_offsets": self._csr_offsets,
            "csr_docs": self._csr_docs,
            "csr_tf": self._csr_tf,
            "term_lengths": self._term_lengths.view,
            "doc_offsets": self._offsets.view,
            "doc_lengths": self._lengths.view,
            "captured": self._captured.view,
            "alive": self._alive.view,
            "doc_ids": persist.pack_strings(self._ids),
            "all_ids": persist.pack_strings(sorted(log.ids)),
            "hidden": persist.pack_strings(sorted(self._hidden_ids)),
            "words": persist.pack_strings(words),
            "word_ids": np.asarray([self._vocab[w] for w in words], dtype=np.int64),
            "codes": np.asarray(codes, dtype=np.int64),
            "code_ids": np.asarray([self._vocab[c] for c in codes], dtype=np.int64),
        }
        if persist.save_snapshot(self.store.path, meta, arrays):
            self._saved_offset = log.offset

    def _load_snapshot(self) -> None:
        loaded = persist.load_snapshot(self.store.path, self.store.user_scope)
        if loaded is None:
            return
        meta, arrays = loaded
        self._reset(self._log.generation)
        unpack = persist.unpack_strings
        words = unpack(arrays["words"], meta["words"])
        vocab_size = len(words) + len(arrays["codes"])
        self._vocab = defaultdict(itertools.count(vocab_size).__next__)
        self._vocab.update(zip(words, arrays["word_ids"].tolist(), strict=True))
        self._vocab.update(zip(arrays["codes"].tolist(), arrays["code_ids"].tolist(), strict=True))
        self._csr_offsets, self._csr_docs = arrays["csr_offsets"], arrays["csr_docs"]
        self._csr_tf = arrays["csr_tf"]
        self._alive_length = meta["alive_length"]
        self._ids = unpack(arrays["doc_ids"], meta["docs"])
        for name, growable in (
            ("doc_offsets", self._offsets),
            ("doc_lengths", self._lengths),
            ("captured", self._captured),
            ("alive", self._alive),
            ("term_lengths", self._term_lengths),
        ):
            growable.extend(arrays[name])
        self._dead = meta["dead"]
        self._hidden_ids = set(unpack(arrays["hidden"], meta["hidden"]))
        self._log.restore(
            offset=meta["offset"],
            lines=meta["lines"],
            ids=set(unpack(arrays["all_ids"], meta["all_ids"])),
            crc32=meta["crc32"],
        )
        self._saved_offset = meta["offset"]

    def _consume(
        self, records: list[StoredMemory], offsets: list[int], lengths: list[int], generation: int
    ) -> None:
        """Index one chunk of newly read records (``FileLog.sync`` calls this)."""
        if generation != self._generation:
            self._reset(generation)
        for start in range(0, len(records), _CHUNK):  # chunks bound the temporary arrays
            stop = start + _CHUNK
            self._add(records[start:stop], offsets[start:stop], lengths[start:stop])

    def _add(self, records: list[StoredMemory], offsets: list[int], lengths: list[int]) -> None:
        """Index a few thousand records: their terms, capture times, lines and liveness."""
        keep = [i for i, r in enumerate(records) if r.kind is MemoryKind.CONVERSATION]
        new = [records[i] for i in keep]
        first = len(self._ids)
        if new:
            ids = [r.memory_id for r in new]
            self._ids.extend(ids)
            if self._position is not None:
                self._position.update(zip(ids, itertools.count(first)))
            self._offsets.extend(np.asarray([offsets[i] for i in keep], dtype=np.int64))
            self._lengths.extend(np.asarray([lengths[i] for i in keep], dtype=np.int32))
            self._captured.extend(_capture_micros([r.source.captured_at for r in new]))
            self._add_terms([r.summary + " " + r.content for r in new], first)
            hidden = self._hidden_ids  # a retraction read before its target: not via the API
            dead = np.asarray([i in hidden for i in ids] if hidden else [], dtype=bool)
            self._alive.extend(np.ones(len(new), dtype=np.bool_))
            self._alive_length += int(self._term_lengths.view[first:].sum(dtype=np.int64))
            if dead.any():
                self._alive.view[first:][dead] = False
                self._dead += int(dead.sum())
                self._alive_length -= int(self._term_lengths.view[first:][dead].sum())
        for record in records:
            if record.kind is MemoryKind.RETRACTION:
                target = record.retracts or ""
                self._hidden_ids.add(target)
                if self._position is None:  # the first retraction: most stores have none
                    self._position = {memory_id: doc for doc, memory_id in enumerate(self._ids)}
                doc = self._position.get(target)
                if doc is not None and self._alive.view[doc]:
                    self._alive.view[doc] = False
                    self._dead += 1
                    self._alive_length -= int(self._term_lengths.view[doc])

    def _add_terms(self, texts: list[str], first: int) -> None:
        """File ``texts[i]`` (a record's raw summary + " " + content) under doc ``first + i``."""
        start, chars = 0, 0
        for i, text in enumerate(texts):  # tokenize in batches of bounded size
            chars += len(text)
            if chars >= _BATCH_CHARS or i == len(texts) - 1:
                docs, term_ids, tfs = term_pairs(
                    texts[start : i + 1],
                    list(range(first + start, first + i + 1)),
                    self._vocab.__getitem__,
                    self._packed,
                )
                # term_pairs returns the pairs ordered by term, then doc: a sorted run
                counts = np.bincount(term_ids, minlength=len(self._vocab)).astype(np.int32)
                self._runs.append((counts, docs, tfs))
                self._run_pairs += len(docs)
                lengths = np.bincount(docs - (first + start), weights=tfs, minlength=i + 1 - start)
                self._term_lengths.extend(lengths.astype(np.int32))
                start, chars = i + 1, 0

    def _merge_runs(self) -> None:
        """Fold every pending run into the CSR arrays, without sorting.

        Within a term, the CSR's docs come first, then each run's in run order (runs
        arrive in doc order, and each run lists a term's docs in order), so every doc
        can be written straight to its place: the term's start in the new arrays, plus
        what the CSR and the earlier runs hold of that term, plus its rank in its run.
        """
        size = len(self._vocab)
        old = np.zeros(size, dtype=np.int64)
        old[: len(self._csr_offsets) - 1] = np.diff(self._csr_offsets)
        total = old.copy()
        for counts, _, _ in self._runs:
            total[: len(counts)] += counts
        offsets = np.concatenate(([0], np.cumsum(total)))
        docs = np.empty(int(offsets[-1]), dtype=np.int32)
        tf = np.empty(int(offsets[-1]), dtype=np.uint16)
        filled = old  # per term: how much of its new slice is written so far
        if len(self._csr_docs):  # the CSR's docs, term by term, at the start of each slice
            kept = len(self._csr_offsets) - 1
            where = spread(offsets[:kept] - self._csr_offsets[:-1], old[:kept])
            docs[where], tf[where] = self._csr_docs, self._csr_tf
            del where
        for counts, run_docs, run_tf in self._runs:
            # term t's docs go to offsets[t] + filled[t] onwards, in run order
            terms = len(counts)
            shift = offsets[:terms] + filled[:terms] - (np.cumsum(counts) - counts)
            where = spread(shift, counts)
            docs[where], tf[where] = run_docs, run_tf
            filled[:terms] += counts
        self._runs, self._run_pairs, self._delta, self._runs_in_delta = [], 0, {}, 0
        self._csr_offsets, self._csr_docs, self._csr_tf = offsets, docs, tf

    def _postings(self, term: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """The term's postings: (docs, how often it occurs in each) from the CSR and delta."""
        term_id = self._vocab.get(term_key(term))
        if term_id is None:
            return []
        parts = []
        if term_id + 1 < len(self._csr_offsets):
            start, stop = self._csr_offsets[term_id], self._csr_offsets[term_id + 1]
            if stop > start:
                parts.append((self._csr_docs[start:stop], self._csr_tf[start:stop]))
        extra = self._delta.get(term_id)
        if extra:
            parts.append((np.asarray(extra[0], dtype=np.int32), np.asarray(extra[1], np.uint16)))
        return parts

    def _load(self, docs: list[int]) -> list[StoredMemory]:
        """The records of ``docs``, read back from their lines in the file."""
        if not docs:
            return []
        offsets, lengths = self._offsets.view, self._lengths.view
        records = []
        try:
            handle = open(self.store.path, "rb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            raise _Moved from None
        with handle:
            for doc in docs:
                handle.seek(int(offsets[doc]))
                raw = handle.read(int(lengths[doc]))
                try:
                    record = decode_line(raw, 0)
                except RemoteMemoryCorruptionError:
                    raise _Moved from None
                if record.memory_id != self._ids[doc]:
                    raise _Moved
                records.append(record)
        return records

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
            try:
                return self._recall(query, as_of=as_of, policy=policy)
            except _Moved:  # rewritten between the stat and the read: start again, once
                self._log = FileLog(self.store.path, self.store.user_scope)
                self._reset(generation=-1)
                self._analyzed.clear()
                self._stat_key = None
                return self._recall(query, as_of=as_of, policy=policy)

    def _recall(
        self, query: RecallQuery, *, as_of: datetime | str, policy: ScoringPolicy
    ) -> RecallResult:
        self.refresh()
        self._made = {}
        moment = parse_timestamp(as_of, "as_of")
        policy = require(policy, ScoringPolicy, "policy")
        query = prepare_query(query, policy)
        if not policy.chapter_terms:  # another analyzer, query weights or context
            return self._analyzed_recall(query, moment, policy)
        unique_terms = sorted(set(query.terms))  # a hand-built query may repeat a term
        postings = {term: self._postings(term) for term in unique_terms}
        docs, levels = self._match([docs for parts in postings.values() for docs, _ in parts])
        corpus = None
        if policy.uses_bm25 or policy.min_evidence:
            corpus = self._corpus(query, postings)
            chosen, corpus = self._shortlist_by_score(
                docs, levels, query, postings, corpus, moment, policy
            )
        else:
            chosen = self._shortlist(docs, levels, query, moment, policy)
        hits = stable_rank_recall_candidates(
            query,
            self._candidates(query, chosen, postings),
            as_of=moment,
            policy=policy,
            corpus=corpus,
        )
        return RecallResult(
            query=query,
            hits=hits,
            searched_records=len(self._ids) - self._dead,
            candidate_records=len(docs),
            empty_reason=empty_reason(hits, len(docs)),
            retracted_records=self._dead,
        )

    def _analyzed_recall(
        self, query: RecallQuery, moment: datetime, policy: ScoringPolicy
    ) -> RecallResult:
        """``fast.analyzed``: the index of the policy's analyzer and context, built on first
        use and kept in step with this one's view of the file."""
        key = (policy.analyzer, policy.context)
        if key not in self._analyzed:
            self._analyzed[key] = AnalyzedIndex(policy.analyzer, policy.context)
        view = DocsView(
            self._generation, self._ids, self._alive.view, self._captured.view, self._load
        )
        hits, matched = self._analyzed[key].recall(query, moment, policy, view)
        return RecallResult(
            query=query,
            hits=hits,
            searched_records=len(self._ids) - self._dead,
            candidate_records=matched,
            empty_reason=empty_reason(hits, matched),
            retracted_records=self._dead,
        )

    def _candidates(
        self, query: RecallQuery, docs: list[int], postings: Postings
    ) -> list[RecallCandidate]:
        """RecallCandidates of ``docs``: records read back, terms as the taught stage finds
        them, term frequencies and lengths from the index."""
        wanted = set(query.terms)
        made = self._made  # this recall's candidates so far (hybrid asks twice for the best)
        new = [doc for doc in docs if doc not in made]
        for doc, record in zip(new, self._load(new), strict=True):
            found = terms(record.summary + " " + record.content)  # = searchable_terms(record)
            matched = tuple(t for t in found if t in wanted)
            made[doc] = RecallCandidate(
                query_id=query.query_id,
                record=record,
                searchable_terms=found,
                matched_terms=matched,
                captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
                term_frequencies=tuple(_frequency(postings[t], doc) for t in matched),
                length=int(self._term_lengths.view[doc]),
            )
        return [made[doc] for doc in docs]

    def _length_norms(self, k1: float, b: float, corpus: CorpusStats) -> np.ndarray:
        """``k1 * (1 - b + b * length / average_length)`` of every doc, as the taught
        BM25 computes it (cached while the corpus and the parameters stay the same)."""
        key = (k1, b, corpus.documents, corpus.total_length, len(self._ids))
        if self._norms is None or self._norms[0] != key:
            average = corpus.average_length
            lengths = self._term_lengths.view.astype(np.float64)
            norm = k1 * (1.0 - b + b * lengths / average) if average else np.full(len(lengths), k1)
            self._norms = (key, norm)
            self._impacts.clear()
        return self._norms[1]

    def _corpus(self, query: RecallQuery, postings: Postings) -> CorpusStats:
        """The taught candidate stage's counts: live docs, their terms, each query term's df."""
        alive = self._alive.view
        frequency = dict.fromkeys(query.terms, 0)
        for term, parts in postings.items():
            if self._dead:
                frequency[term] = sum(int(np.count_nonzero(alive[docs])) for docs, _ in parts)
            else:
                frequency[term] = sum(len(docs) for docs, _ in parts)
        return CorpusStats(len(self._ids) - self._dead, self._alive_length, frequency)

    def _impact(
        self, term: str, part: int, docs: np.ndarray, tfs: np.ndarray, k1: float, norm: np.ndarray
    ) -> np.ndarray:
        """``tf * (k1 + 1) / (tf + norm[doc])`` of every posting of one part of a term's
        list: BM25's term weight before idf (the shortlist's slack covers the float rounding
        of the different order). A long list (an eighth of the docs or more) gets it spread
        over every doc (0 where the term is absent), kept while the norms stay the same
        (any append or retraction recomputes them and empties this cache): a common term's
        list is as long as the store, and most queries hold one."""
        key = (term, part, len(docs))
        cached = self._impacts.get(key)
        if cached is not None and cached[0] is norm:
            return cached[1]
        tf = tfs.astype(np.float64)
        impact = tf * (k1 + 1.0) / (tf + norm[docs])
        if len(docs) * 8 >= len(self._ids):
            everywhere = np.zeros(len(self._ids))
            everywhere[docs] = impact
            if sum(len(v[1]) for v in self._impacts.values()) + len(everywhere) > _IMPACT_MAX:
                self._impacts.clear()
            self._impacts[key] = (norm, everywhere)
            return everywhere
        return impact

    def _shortlist_by_score(
        self,
        docs: np.ndarray,
        levels: np.ndarray,
        query: RecallQuery,
        postings: Postings,
        corpus: CorpusStats,
        moment: datetime,
        policy: ScoringPolicy,
    ) -> tuple[list[int], CorpusStats]:
        """For BM25, hybrid or a minimum evidence: score every matching doc with numpy,
        keep the few that can reach the top ``limit`` (ties and rounding included), and
        for hybrid find the query's exact best BM25 (it scales every score)."""
        if not len(docs):
            return [], corpus
        k1, b = policy.bm25_k1, policy.bm25_b
        norm = self._length_norms(k1, b, corpus)
        sparse = len(docs) * 8 < len(self._ids)  # few matches: work on them alone
        if not sparse and not policy.min_evidence and policy.uses_bm25:
            pruned = self._pruned(docs, levels, query, postings, corpus, moment, policy, norm)
            if pruned is not None:
                return pruned
        size = len(docs) if sparse else len(self._ids)
        raw = np.zeros(size)
        matched_idf = np.zeros(size) if policy.min_evidence else None
        for term, parts in postings.items():  # sorted terms: the taught sums' order
            weight = idf(term, corpus)
            for part, (term_docs, tfs) in enumerate(parts):
                if not sparse:
                    impact = self._impact(term, part, term_docs, tfs, k1, norm)
                    if len(impact) == len(raw):  # a long list, spread over every doc
                        raw += weight * impact
                    else:
                        raw[term_docs] += weight * impact
                    if matched_idf is not None:
                        matched_idf[term_docs] += weight
                    continue
                where, found = _locate(docs, term_docs)  # few docs: positions in docs
                at, tf, term_docs = where[found], tfs[found].astype(np.float64), term_docs[found]
                raw[at] += weight * tf * (k1 + 1.0) / (tf + norm[term_docs])
                if matched_idf is not None:
                    matched_idf[at] += weight
        if not sparse and len(docs) < len(raw):  # (every doc matching: already aligned)
            raw = raw[docs]
            matched_idf = None if matched_idf is None else matched_idf[docs]
        query_idf = sum(idf(term, corpus) for term in query.terms)
        if policy.scorer == "bm25+recency":
            corpus = self._with_best_bm25(query, docs, raw, postings, corpus, policy)
            best = corpus.best_bm25
            lexical = raw / best if best else np.zeros(len(docs))
        elif policy.scorer == "bm25":
            lexical = raw
        else:
            lexical = levels / len(query.terms)
        if matched_idf is not None:  # the taught filter (on the rounded share) is exact
            share = matched_idf / query_idf if query_idf else np.zeros(len(docs))
            keep = share >= policy.min_evidence - _ROUNDING_SLACK
            docs, levels, lexical = docs[keep], levels[keep], lexical[keep]
        if len(docs) <= query.limit:
            return docs.tolist(), corpus
        totals = policy.lexical_weight * lexical
        if policy.recency_weight:
            # recency adds at most recency_weight: drop docs that cannot reach the top even so
            floor = np.partition(totals, len(totals) - query.limit)[len(totals) - query.limit]
            reach = totals + policy.recency_weight >= floor - _ROUNDING_SLACK * (1.0 + floor)
            docs, levels, totals = docs[reach], levels[reach], totals[reach]
            totals = totals + self._recency_part(docs, moment, policy)
        slack = _ROUNDING_SLACK * (1.0 + float(np.abs(totals).max()))
        kth = np.partition(totals, len(totals) - query.limit)[len(totals) - query.limit]
        near = np.flatnonzero(totals >= kth - slack)  # every doc that may reach the top
        if len(near) > _NEAR_MAX:  # many ties: the taught keys decide, as far as is certain
            near = near[self._top_of(near, totals, levels, docs, query.limit)]
        return docs[near].tolist(), corpus

    def _pruned(
        self,
        docs: np.ndarray,
        levels: np.ndarray,
        query: RecallQuery,
        postings: Postings,
        corpus: CorpusStats,
        moment: datetime,
        policy: ScoringPolicy,
        norm: np.ndarray,
    ) -> tuple[list[int], CorpusStats] | None:
        """The BM25/hybrid shortlist from the docs holding a rarer query term alone, when
        that is provably enough (MaxScore): a term's BM25 weight is below idf * (k1 + 1),
        so a doc holding only the common terms (on an eighth of the docs or more) scores
        below the sum of theirs; if ``limit`` of the rarer terms' docs beat that bound with
        the most recency can add, no other doc can reach the top. None when it cannot be
        shown (then every doc is scored)."""
        k1, n, limit = policy.bm25_k1, len(self._ids), query.limit
        common = {t for t, parts in postings.items() if sum(len(d) for d, _ in parts) * 8 >= n}
        rare = [docs_ for t, parts in postings.items() if t not in common for docs_, _ in parts]
        if not common or not rare:
            return None
        cand = np.unique(np.concatenate(rare)).astype(np.int64)  # sorted, without repeats
        if self._dead:
            cand = cand[self._alive.view[cand]]
        if len(cand) <= limit:
            return None
        raw = np.zeros(len(cand))
        for term, parts in postings.items():
            weight = idf(term, corpus)
            for part, (term_docs, tfs) in enumerate(parts):
                if term in common:
                    impact = self._impact(term, part, term_docs, tfs, k1, norm)
                    if len(impact) == n:  # spread over every doc
                        raw += weight * impact[cand]
                        continue
                    where, found = _locate(term_docs, cand)  # cand's docs in a long list
                    raw[found] += weight * impact[where[found]]
                    continue
                where, found = _locate(cand, term_docs)  # a short list's docs in cand
                tf = tfs[found].astype(np.float64)
                raw[where[found]] += weight * tf * (k1 + 1.0) / (tf + norm[term_docs[found]])
        bound = sum(idf(term, corpus) for term in common) * (k1 + 1.0)  # any other doc's BM25
        top = float(raw.max())
        slack = _ROUNDING_SLACK * (1.0 + top + bound)
        if policy.scorer == "bm25+recency":
            if top <= bound + slack:  # the best BM25 might be outside: score every doc
                return None
            corpus = self._with_best_bm25(query, cand, raw, postings, corpus, policy)
            best = corpus.best_bm25
            if not best:
                return None
            lexical, others = raw / best, bound / best
        else:
            lexical, others = raw, bound
        totals = policy.lexical_weight * lexical
        if policy.recency_weight:
            totals = totals + self._recency_part(cand, moment, policy)
        kth = np.partition(totals, len(totals) - limit)[len(totals) - limit]
        slack = _ROUNDING_SLACK * (1.0 + float(np.abs(totals).max()) + others)
        if policy.lexical_weight * others + policy.recency_weight >= kth - slack:
            return None  # a doc with only common terms could still reach the top
        near = np.flatnonzero(totals >= kth - slack)
        if len(near) > _NEAR_MAX:
            at = np.searchsorted(docs, cand)  # cand's positions in docs, for their levels
            near = near[self._top_of(near, totals, levels[at], cand, limit)]
        return cand[near].tolist(), corpus

    def _recency_part(
        self, docs: np.ndarray, moment: datetime, policy: ScoringPolicy
    ) -> np.ndarray:
        """``recency_weight * recency`` of each doc, as the contract computes it."""
        seconds = (epoch_micros(moment) - self._captured.view[docs]) / 1e6
        age_days = np.maximum(0.0, seconds / SECONDS_PER_DAY)
        return policy.recency_weight / (1.0 + age_days / policy.recency_window_days)

    def _with_best_bm25(
        self,
        query: RecallQuery,
        docs: np.ndarray,
        raw: np.ndarray,
        postings: Postings,
        corpus: CorpusStats,
        policy: ScoringPolicy,
    ) -> CorpusStats:
        """``corpus`` with the query's exact best BM25 (hybrid divides by it): the taught
        ``bm25_score`` of the docs whose numpy BM25 (``raw``) is within rounding of the top."""
        top = float(raw.max())
        best_docs = docs[raw >= top - _ROUNDING_SLACK * (1.0 + top)].tolist()
        candidates = self._candidates(query, best_docs, postings)
        best = max(bm25_score(c, corpus, policy) for c in candidates)
        return dataclasses.replace(corpus, best_bm25=best)

    def _top_of(
        self, near: np.ndarray, totals: np.ndarray, levels: np.ndarray, docs: np.ndarray, k: int
    ) -> np.ndarray:
        """Positions in ``near`` of the first ``k`` by the taught keys (total rounded to 6
        places DESC, coverage DESC, captured_at DESC), with every doc tied with the k-th
        on those keys (memory_id decides among them), and every doc whose total sits so
        close to a rounding boundary that its rounded value is not certain."""
        total = totals[near]
        rounded = np.round(total, 6)
        captured = self._captured.view[docs[near]]
        order = np.lexsort((-captured, -levels[near], -rounded))
        last = order[k - 1]
        kept = np.zeros(len(near), dtype=bool)
        kept[order[:k]] = True
        kept |= (
            (rounded == rounded[last])
            & (levels[near] == levels[near[last]])
            & (captured == captured[last])
        )
        half = np.abs(total * 1e6 - np.floor(total * 1e6) - 0.5)
        kept |= (half < 1e-3) & (rounded >= rounded[last] - 2e-6)
        return np.flatnonzero(kept)

    def _match(self, parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The live records that hold a query term, and how many of the terms each holds."""
        if not parts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        if len(parts) == 1:  # one posting list: unique docs, each matching once
            docs, levels = parts[0], np.ones(len(parts[0]), dtype=np.int64)
        else:
            postings = np.concatenate(parts)
            if len(postings) * _SORT_FRACTION < len(self._ids):
                postings.sort()
                edges = np.flatnonzero(postings[1:] != postings[:-1]) + 1
                starts = np.concatenate(([0], edges))
                docs = postings[starts]
                levels = np.diff(np.concatenate((starts, [len(postings)])))
            else:
                counts = np.bincount(postings, minlength=len(self._ids))
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
        totals = policy.lexical_weight * coverage + self._recency_part(picked, moment, policy)
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
                sorted(at_cut.tolist(), key=self._ids.__getitem__)[: k - len(newer)],
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
