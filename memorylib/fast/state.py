"""What the index holds for one store file, and how records join it.

Per conversation record (its *doc*, numbered in file order): memory_id, where its line
is, its capture time (integer microseconds), its source, its term count and whether a
retraction hides it. Per term: the docs that hold it and how often, as CSR arrays (term id ->
slice of docs and term frequencies) plus the runs of docs added since the last merge.
Records join in chunks (``add``); ``fold_runs`` makes the new postings visible to
queries, merging them into the CSR arrays once there are many. ``Matches`` is what one
query finds in them: the shortlists (``shortlist``, ``bm25``) start from it.

**Text enters the index in exactly three places**, all calls into ``fast.tokenizer``:
``term_pairs`` files a record's ``summary + " " + content`` under its terms here;
``term_key`` turns a query term into its vocabulary key (``postings``); and ``terms``
gives a shortlisted record its ``searchable_terms`` (``index.RecallIndex``; the
databases' terms table is filled by it too, ``backends.rows.record_terms``). Each is
the taught ``extract_terms(normalize_text(...))`` exactly
(``tests/test_fast_equivalence.py``).

**Another analyzer** (``memorylib.analysis``: stems, stopwords, segmentation) is a
state of its own (``analyzer``; ``with_analyzer`` builds it from this one's docs) that
changes the first and third place together: ``tokenizer.analyzed_pairs`` files the
records, and the shortlisted ones get the taught ``analysis.text_terms`` (the second,
``term_key``, is the same for every analyzer). The taught stages apply the same
analyzer (``ScoringPolicy.analyzer``), and ``tests/test_analyzed_index.py`` holds the
paths equal. Only the chapter's state is saved (``persist``: a change of its terms
bumps ``persist.FORMAT``, so no saved index of the old terms is loaded). Each doc's
source (``source_of``, codes of ``sources``) is there for ``fast.context``: a record
counted with its neighbours in the same source.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

import numpy as np

from memorylib.analysis import CHAPTER_ANALYZER, Analyzer
from memorylib.records import MemoryKind, RecallQuery, StoredMemory
from memorylib.scoring import ScoringPolicy

from .codec import capture_micros
from .tokenizer import analyzed_pairs, spread, term_key, term_pairs

__all__ = ["Growable", "IndexState", "Matches", "Parts", "index_terms", "new_vocabulary"]

_DELTA_REBUILD_MIN = 50_000  # delta postings before they are merged into the CSR arrays
_CHUNK = 8_192  # records tokenized together (numpy work per chunk, bounded memory)
_BATCH_CHARS = 2_000_000  # characters per numpy pass (one long record may exceed it)

Parts = list[tuple[np.ndarray, np.ndarray]]  # one term's postings: [(docs, tf)], docs sorted


def new_vocabulary(start: int = 0) -> defaultdict[str | int, int]:
    """term key -> term id, handing out the next id to a key it has not seen."""
    return defaultdict(itertools.count(start).__next__)


def index_terms(text: str) -> set[str | int]:
    """The term keys the index files a record's raw ``summary + " " + content`` under.

    Equal to ``{term_key(t) for t in extract_terms(normalize_text(text))}``; computed
    by the index's own code (``term_pairs``), for tests.
    """
    vocab = new_vocabulary()
    _, ids, _ = term_pairs([text], [0], vocab.__getitem__, {})
    key_of = {term_id: key for key, term_id in vocab.items()}
    return {key_of[term_id] for term_id in ids.tolist()}


class Growable:
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


@dataclass(eq=False, slots=True)
class IndexState:
    """The arrays of one store's index (see the module docstring); ``generation`` is the
    ``FileLog`` generation they were read from."""

    generation: int = -1
    analyzer: Analyzer = CHAPTER_ANALYZER  # whose terms the postings hold
    ids: list[str] = field(default_factory=list)  # memory_id of each doc; position = doc id
    position: dict[str, int] | None = None  # memory_id -> doc, built at the first retraction
    # per doc: where its line starts in the file, and the line's length without newline
    offsets: Growable = field(default_factory=partial(Growable, np.int64))
    lengths: Growable = field(default_factory=partial(Growable, np.int32))
    # per doc: capture time (microseconds since the epoch), False once a retraction hides
    # it, and how many terms it holds, repeats counted (BM25's length)
    captured: Growable = field(default_factory=partial(Growable, np.int64))
    alive: Growable = field(default_factory=partial(Growable, np.bool_))
    term_lengths: Growable = field(default_factory=partial(Growable, np.int32))
    # per doc: its source_id, as a code of ``sources`` (source_id -> code, first seen first)
    source_of: Growable = field(default_factory=partial(Growable, np.int32))
    sources: dict[str, int] = field(default_factory=dict)
    alive_length: int = 0  # the sum of term_lengths over live docs
    dead: int = 0
    hidden_ids: set[str] = field(default_factory=set)  # retracted ids (any kind) seen so far
    vocab: defaultdict[str | int, int] = field(default_factory=new_vocabulary)
    packed: dict[int, int] = field(default_factory=dict)  # ASCII word (<= 16 bytes) -> term id
    csr_offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    csr_docs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    csr_tf: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint16))
    # Postings not in the CSR yet, one run per tokenized batch: (count of each term id,
    # the docs ordered by term then doc, their term frequencies). Runs arrive in doc order.
    runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    run_pairs: int = 0
    # the runs' postings, for queries until merged: term id -> ([doc], [tf])
    delta: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    runs_in_delta: int = 0
    # a delta posting as arrays, made by a query and kept while the posting does not grow
    delta_arrays: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def searched(self) -> int:
        """Live docs: the searched records of every query."""
        return len(self.ids) - self.dead

    # -- records join ---------------------------------------------------------------------

    def add(self, records: list[StoredMemory], offsets: list[int], lengths: list[int]) -> None:
        """Index newly read records (``lengths``: their lines' lengths without newline)."""
        for start in range(0, len(records), _CHUNK):  # chunks bound the temporary arrays
            stop = start + _CHUNK
            self._add_chunk(records[start:stop], offsets[start:stop], lengths[start:stop])

    def _add_chunk(
        self, records: list[StoredMemory], offsets: list[int], lengths: list[int]
    ) -> None:
        keep = [i for i, r in enumerate(records) if r.kind is MemoryKind.CONVERSATION]
        new = [records[i] for i in keep]
        first = len(self.ids)
        if new:
            ids = [r.memory_id for r in new]
            self.ids.extend(ids)
            if self.position is not None:
                self.position.update(zip(ids, itertools.count(first)))
            self.offsets.extend(np.asarray([offsets[i] for i in keep], dtype=np.int64))
            self.lengths.extend(np.asarray([lengths[i] for i in keep], dtype=np.int32))
            self.captured.extend(capture_micros([r.source.captured_at for r in new]))
            codes = self.sources
            self.source_of.extend(
                np.fromiter(
                    (codes.setdefault(r.source.source_id, len(codes)) for r in new),
                    dtype=np.int32,
                    count=len(new),
                )
            )
            self._add_terms([r.summary + " " + r.content for r in new], first)
            hidden = self.hidden_ids  # a retraction read before its target: not via the API
            dead = np.asarray([i in hidden for i in ids] if hidden else [], dtype=bool)
            self.alive.extend(np.ones(len(new), dtype=np.bool_))
            self.alive_length += int(self.term_lengths.view[first:].sum(dtype=np.int64))
            if dead.any():
                self.alive.view[first:][dead] = False
                self.dead += int(dead.sum())
                self.alive_length -= int(self.term_lengths.view[first:][dead].sum())
        for record in records:
            if record.kind is MemoryKind.RETRACTION:
                self._hide(record.retracts or "")

    def with_analyzer(
        self, analyzer: Analyzer, load: Callable[[list[int]], list[StoredMemory]]
    ) -> IndexState:
        """A state of the same docs (ids, lines, capture times, sources, liveness) whose
        postings hold ``analyzer``'s terms; ``load`` reads docs' records back."""
        other = IndexState(generation=self.generation, analyzer=analyzer)
        offsets, lengths = self.offsets.view.tolist(), self.lengths.view.tolist()
        for start in range(0, len(self.ids), _CHUNK):
            chunk = list(range(start, min(start + _CHUNK, len(self.ids))))
            other._add_chunk(
                load(chunk), offsets[start : chunk[-1] + 1], lengths[start : chunk[-1] + 1]
            )
        for target in sorted(self.hidden_ids):
            other._hide(target)
        other.fold_runs()
        return other

    def _hide(self, target: str) -> None:
        self.hidden_ids.add(target)
        if self.position is None:  # the first retraction: most stores have none
            self.position = {memory_id: doc for doc, memory_id in enumerate(self.ids)}
        doc = self.position.get(target)
        if doc is not None and self.alive.view[doc]:
            self.alive.view[doc] = False
            self.dead += 1
            self.alive_length -= int(self.term_lengths.view[doc])

    def _add_terms(self, texts: list[str], first: int) -> None:
        """File ``texts[i]`` (a record's raw summary + " " + content) under doc ``first + i``."""
        start, chars = 0, 0
        for i, text in enumerate(texts):  # tokenize in batches of bounded size
            chars += len(text)
            if chars >= _BATCH_CHARS or i == len(texts) - 1:
                batch, batch_docs = texts[start : i + 1], list(range(first + start, first + i + 1))
                if self.analyzer.is_chapter:
                    docs, term_ids, tfs = term_pairs(
                        batch, batch_docs, self.vocab.__getitem__, self.packed
                    )
                else:
                    docs, term_ids, tfs = analyzed_pairs(
                        batch, batch_docs, self.vocab.__getitem__, self.analyzer
                    )
                # term_pairs returns the pairs ordered by term, then doc: a sorted run
                counts = np.bincount(term_ids, minlength=len(self.vocab)).astype(np.int32)
                self.runs.append((counts, docs, tfs))
                self.run_pairs += len(docs)
                lengths = np.bincount(docs - (first + start), weights=tfs, minlength=i + 1 - start)
                self.term_lengths.extend(lengths.astype(np.int32))
                start, chars = i + 1, 0

    # -- new postings become visible ------------------------------------------------------

    def fold_runs(self) -> None:
        """Make every run's postings visible to ``postings``: merged into the CSR arrays
        when there are many, else added to the small delta."""
        if self.run_pairs >= max(_DELTA_REBUILD_MIN, len(self.csr_docs) // 8):
            self.merge_runs()
            return
        for counts, docs, tfs in self.runs[self.runs_in_delta :]:
            terms_of = np.repeat(np.arange(len(counts)), counts).tolist()
            for term, doc, tf in zip(terms_of, docs.tolist(), tfs.tolist(), strict=True):
                posting = self.delta.setdefault(term, ([], []))
                posting[0].append(doc)
                posting[1].append(tf)
        self.runs_in_delta = len(self.runs)

    def merge_runs(self) -> None:
        """Fold every pending run into the CSR arrays, without sorting.

        Within a term, the CSR's docs come first, then each run's in run order (runs
        arrive in doc order, and each run lists a term's docs in order), so every doc
        can be written straight to its place: the term's start in the new arrays, plus
        what the CSR and the earlier runs hold of that term, plus its rank in its run.
        """
        size = len(self.vocab)
        old = np.zeros(size, dtype=np.int64)
        old[: len(self.csr_offsets) - 1] = np.diff(self.csr_offsets)
        total = old.copy()
        for counts, _, _ in self.runs:
            total[: len(counts)] += counts
        offsets = np.concatenate(([0], np.cumsum(total)))
        docs = np.empty(int(offsets[-1]), dtype=np.int32)
        tf = np.empty(int(offsets[-1]), dtype=np.uint16)
        filled = old  # per term: how much of its new slice is written so far
        if len(self.csr_docs):  # the CSR's docs, term by term, at the start of each slice
            kept = len(self.csr_offsets) - 1
            where = spread(offsets[:kept] - self.csr_offsets[:-1], old[:kept])
            docs[where], tf[where] = self.csr_docs, self.csr_tf
            del where
        for counts, run_docs, run_tf in self.runs:
            # term t's docs go to offsets[t] + filled[t] onwards, in run order
            terms = len(counts)
            shift = offsets[:terms] + filled[:terms] - (np.cumsum(counts) - counts)
            where = spread(shift, counts)
            docs[where], tf[where] = run_docs, run_tf
            filled[:terms] += counts
        self.runs, self.run_pairs, self.delta, self.runs_in_delta = [], 0, {}, 0
        self.delta_arrays = {}
        self.csr_offsets, self.csr_docs, self.csr_tf = offsets, docs, tf

    # -- queries read -------------------------------------------------------------------

    def postings(self, term: str) -> Parts:
        """The term's postings: (docs, how often it occurs in each) from the CSR and delta."""
        term_id = self.vocab.get(term_key(term))
        if term_id is None:
            return []
        parts = []
        if term_id + 1 < len(self.csr_offsets):
            start, stop = self.csr_offsets[term_id], self.csr_offsets[term_id + 1]
            if stop > start:
                parts.append((self.csr_docs[start:stop], self.csr_tf[start:stop]))
        extra = self.delta.get(term_id)
        if extra:
            arrays = self.delta_arrays.get(term_id)
            if arrays is None or len(arrays[0]) != len(extra[0]):  # new, or grown since
                arrays = (np.asarray(extra[0], dtype=np.int32), np.asarray(extra[1], np.uint16))
                self.delta_arrays[term_id] = arrays
            parts.append(arrays)
        return parts


@dataclass(frozen=True, slots=True)
class Matches:
    """What one query found: its live matching docs (ascending), how many distinct query
    terms each holds (its level), and the postings of the query's terms (sorted)."""

    query: RecallQuery
    policy: ScoringPolicy
    moment: datetime  # the as_of
    postings: dict[str, Parts]
    docs: np.ndarray
    levels: np.ndarray
