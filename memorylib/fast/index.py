"""The indexed recall path: the same RecallResult as the stage functions, at 100k records.

Taught path cost per query: re-read, re-parse and re-tokenize every record, score and
sort every candidate. ``RecallIndex`` keeps, per process and per store, an
``IndexState`` (``fast.state``): each conversation record's terms, tokenized once, in
an inverted index, its capture time and whether a retraction hides it. The terms are
the taught ``extract_terms`` exactly, which the property tests check on arbitrary
Unicode.

A query finds, for every matching live record, how many query terms it has (its
level): one ``bincount`` when the postings are large, a sort of the postings when
they are small. Then a shortlist keeps the few records that certainly hold the top
``limit``: ``fast.shortlist`` for the chapter's coverage scorer (levels and recency
alone decide), ``fast.bm25`` for BM25, bm25+recency and a minimum evidence (every
match scored with numpy, MaxScore when it provably suffices). Only those become
RecallCandidates (their records read back from the file), and the taught
``stable_rank_recall_candidates`` scores and orders them. Identical hits, ranks,
breakdowns and counts, by construction and by property test.

A policy's analysis beyond the chapter's terms (``ScoringPolicy.chapter_terms`` false)
is answered the same way from another *view*: the query analyzed as taught
(``pipeline.prepare_query``); the postings of the policy's analyzer (another
``IndexState`` of the same docs, built on its first query and kept in step with this
one, ``IndexState.with_analyzer``); with context, those postings and lengths counted
with the neighbours (``fast.context``); a ``BM25Scorer`` of its own, with the query's
weights. Its shortlisted records become candidates through the taught
``analysis.text_terms`` and ``candidates.in_context`` (its numbers kept per doc and
term, ``Neighbourhood.counted``).

The index follows the file: a ``stat`` per query; when the file grew, only the new
committed lines are read (``log.FileLog``); when it was replaced, truncated or
rewritten (identity, size, mtime or the bytes before the old end differ), the index
is rebuilt from the start. A large store's index is saved beside it (``persist``)
for the next process.
"""

from __future__ import annotations

import gc
import os
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

import numpy as np

from memorylib.analysis import CHAPTER_ANALYZER, Analyzer, text_terms
from memorylib.checks import require
from memorylib.errors import RemoteMemoryCorruptionError
from memorylib.pipeline import empty_reason, prepare_query, recall_pipeline
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import RecallCandidate, RecallQuery, RecallResult, StoredMemory
from memorylib.scoring import DEFAULT_POLICY, ScoringPolicy
from memorylib.store import RemoteMemoryStore
from memorylib.timestamps import epoch_micros, parse_timestamp

from . import persist
from .bm25 import BM25Scorer
from .codec import decode_line
from .context import Neighbourhood
from .log import FileLog
from .score import QueryScorer
from .shortlist import coverage_shortlist
from .state import IndexState, Matches, Parts
from .tokenizer import terms

__all__ = ["RecallIndex"]

_SORT_FRACTION = 16  # postings below 1/16 of the records: sort them instead of bincount
_KEPT_MAX = 4_096  # shortlisted records kept decoded between queries (then read again)


class _Moved(Exception):
    """A record's line is not where the index last read it: the file changed under us."""


def _frequencies(parts: Parts, docs: np.ndarray) -> list[int]:
    """How often a term occurs in each of ``docs``, from its postings (docs are sorted);
    0 where it does not. ``docs`` are cast to the postings' type, never the other way
    (``searchsorted`` would copy a common term's whole list to int64 for every query)."""
    found = np.zeros(len(docs), dtype=np.int64)
    for term_docs, tfs in parts:
        if not len(term_docs):
            continue
        wanted = docs.astype(term_docs.dtype, copy=False)
        at = term_docs.searchsorted(wanted)
        np.minimum(at, len(term_docs) - 1, out=at)  # past the end: compared, found absent
        held = term_docs[at] == wanted
        found[held] = tfs[at[held]]
    return found.tolist()


class _Kept(NamedTuple):
    """A shortlisted record as candidates need it: decoded, its capture time parsed, its
    searchable text, and the line it was decoded from."""

    record: StoredMemory
    captured_at: datetime
    text: str
    line: bytes  # the bytes it was decoded from


@dataclass(frozen=True, slots=True)
class _View:
    """What a policy's terms are read from: the state of its analyzer, with its context
    (None: each record counted alone), and the BM25 scorer over them."""

    state: IndexState
    context: Neighbourhood | None
    scorer: BM25Scorer

    def postings(self, term: str) -> Parts:
        if self.context is None:
            return self.state.postings(term)
        found = self.context.expanded(term)  # kept since docs last joined or died
        return self.context.postings(term, self.state.postings(term)) if found is None else found


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
        self._start(IndexState(generation=-1))
        self._saved_offset = 0  # bytes of the store the saved index covers (0: none)
        self._snapshot_checked = False

    def _start(self, state: IndexState) -> None:
        """Answer from ``state`` from now on (a new, a rebuilt or a loaded index)."""
        self._state = state
        self._bm25 = BM25Scorer(state, self._candidates)
        self._made: dict[int, RecallCandidate] = {}  # one recall's candidates, by doc
        self._kept: dict[int, _Kept] = {}  # records shortlisted before, while the state lasts
        self._chapter_terms: dict[int, tuple[str, ...]] = {}  # their searchable_terms
        self._analyzed: dict[Analyzer, IndexState] = {}  # the same docs, another analyzer's
        self._views: dict[tuple[Analyzer, tuple[float, ...]], _View] = {}

    def _view(self, policy: ScoringPolicy) -> _View:
        """The view ``policy``'s terms are read from (built on first use)."""
        analyzer = CHAPTER_ANALYZER if policy.analyzer.is_chapter else policy.analyzer
        key = (analyzer, policy.context)
        view = self._views.get(key)
        if view is None:
            if analyzer.is_chapter:
                state = self._state
            else:
                state = self._analyzed.get(analyzer)
                if state is None:
                    state = self._analyzed[analyzer] = self._state.with_analyzer(
                        analyzer, self._load
                    )
            if key == (CHAPTER_ANALYZER, ()):
                view = _View(state, None, self._bm25)
            else:
                context = Neighbourhood(state, policy.context) if policy.context else None
                view = _View(state, context, BM25Scorer(state, self._candidates, context))
            self._views[key] = view
        if view.context is not None:
            view.context.sync()
        return view

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
                loaded = persist.load_index(self._log)
                if loaded is not None:
                    self._start(loaded)
                    self._saved_offset = self._log.offset
            self._log.sync(self._consume)
            if self._log.generation != self._state.generation:  # the file is gone or empty
                self._start(IndexState(generation=self._log.generation))
            self._state.fold_runs()
            for other in self._analyzed.values():
                other.fold_runs()
        finally:
            if pause:
                gc.enable()
        self._stat_key = self._log.stat_key()
        big = self._log.offset >= max(persist.MIN_BYTES, 1.5 * self._saved_offset)
        if big and persist.save_index(self._state, self._log):
            self._saved_offset = self._log.offset

    def _consume(
        self, records: list[StoredMemory], offsets: list[int], lengths: list[int], generation: int
    ) -> None:
        """Index one chunk of newly read records (``FileLog.sync`` calls this)."""
        if generation != self._state.generation:
            self._start(IndexState(generation=generation))
        self._state.add(records, offsets, lengths)
        for other in self._analyzed.values():  # the other analyzers' states keep in step
            other.add(records, offsets, lengths)

    def _lines(self, docs: list[int]) -> list[bytes]:
        """The lines of ``docs``, read from where the index found them in the file."""
        state = self._state
        offsets, lengths = state.offsets.view, state.lengths.view
        try:
            handle = open(self.store.path, "rb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            raise _Moved from None
        lines = []
        with handle:
            for doc in docs:
                handle.seek(int(offsets[doc]))
                lines.append(handle.read(int(lengths[doc])))
        return lines

    def _decoded(self, doc: int, raw: bytes) -> StoredMemory:
        """The record of ``doc`` from its line, which must still be that record's."""
        try:
            record = decode_line(raw, 0)
        except RemoteMemoryCorruptionError:
            raise _Moved from None
        if record.memory_id != self._state.ids[doc]:
            raise _Moved
        return record

    def _load(self, docs: list[int]) -> list[StoredMemory]:
        """The records of ``docs``, read back from their lines in the file."""
        if not docs:
            return []
        return [self._decoded(doc, raw) for doc, raw in zip(docs, self._lines(docs), strict=True)]

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
                self._start(IndexState(generation=-1))
                self._stat_key = None
                return self._recall(query, as_of=as_of, policy=policy)

    def _recall(
        self, query: RecallQuery, *, as_of: datetime | str, policy: ScoringPolicy
    ) -> RecallResult:
        self.refresh()
        self._made = {}
        moment = parse_timestamp(as_of, "as_of")
        policy = require(policy, ScoringPolicy, "policy")
        query = prepare_query(query, policy)  # the policy's analysis of the query, as taught
        view = self._view(policy)
        state = view.state
        unique_terms = sorted(set(query.terms))  # a hand-built query may repeat a term
        postings = {term: view.postings(term) for term in unique_terms}
        docs, levels = self._match([docs for parts in postings.values() for docs, _ in parts])
        found = Matches(query, policy, moment, postings, docs, levels)
        corpus = None
        if policy.uses_bm25 or policy.min_evidence:
            chosen, corpus = view.scorer.shortlist(found)
        else:
            chosen = self._coverage_shortlist(found)
        hits = stable_rank_recall_candidates(
            query,
            self._candidates(found, chosen),
            as_of=moment,
            policy=policy,
            corpus=corpus,
            score=QueryScorer(query, policy, corpus),  # = score_recall_candidate
        )
        return RecallResult(
            query=query,
            hits=hits,
            searched_records=state.searched,
            candidate_records=len(docs),
            empty_reason=empty_reason(hits, len(docs)),
            retracted_records=state.dead,
        )

    def _match(self, parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The live records that hold a query term, and how many of the terms each holds."""
        state = self._state
        if not parts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        if len(parts) == 1:  # one posting list: unique docs, each matching once
            docs, levels = parts[0], np.ones(len(parts[0]), dtype=np.int64)
        else:
            postings = np.concatenate(parts)
            if len(postings) * _SORT_FRACTION < len(state.ids):
                postings.sort()
                edges = np.flatnonzero(postings[1:] != postings[:-1]) + 1
                starts = np.concatenate(([0], edges))
                docs = postings[starts]
                levels = np.diff(np.concatenate((starts, [len(postings)])))
            else:
                counts = np.bincount(postings, minlength=len(state.ids))
                docs = np.flatnonzero(counts > 0)
                levels = counts[docs]
        if state.dead:
            live = state.alive.view[docs]
            docs, levels = docs[live], levels[live]
        return docs, levels

    def _coverage_shortlist(self, found: Matches) -> list[int]:
        """``fast.shortlist.coverage_shortlist`` on the index's levels and capture times."""
        docs, levels, limit = found.docs, found.levels, found.query.limit
        if len(docs) <= limit:  # every match fits: nothing to prune
            return docs.tolist()
        captured = self._state.captured.view
        sizes = np.bincount(levels)
        present = np.flatnonzero(sizes).tolist()

        def newest(level: int) -> list[tuple[int, int]]:
            at_level = docs if len(present) == 1 else docs[levels == level]
            picked = self._newest(at_level, captured, limit)
            return list(zip(picked, captured[picked].tolist(), strict=True))

        return coverage_shortlist(
            {level: int(sizes[level]) for level in present},
            newest,
            term_count=len(found.query.terms),
            limit=limit,
            now_micros=epoch_micros(found.moment),
            policy=found.policy,
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
                sorted(at_cut.tolist(), key=self._state.ids.__getitem__)[: k - len(newer)],
                dtype=docs.dtype,
            )
        return newer.tolist() + at_cut.tolist()

    def _kept_of(self, docs: list[int]) -> list[_Kept]:
        """The records of ``docs`` as candidates need them. Their lines are read again
        every time (a file rewritten under the index is seen, ``_Moved``), and decoded
        again only when the bytes differ from those decoded before."""
        if not docs:
            return []
        kept = self._kept
        if len(kept) + len(docs) > _KEPT_MAX:
            kept.clear()
            self._chapter_terms.clear()
        found = []
        for doc, raw in zip(docs, self._lines(docs), strict=True):
            before = kept.get(doc)
            if before is None or before.line != raw:
                record = self._decoded(doc, raw)
                captured = parse_timestamp(record.source.captured_at, "captured_at")
                text = record.summary + " " + record.content
                before = kept[doc] = _Kept(record, captured, text, raw)
                self._chapter_terms.pop(doc, None)
            found.append(before)
        return found

    def _searchable(self, doc: int, text: str) -> tuple[str, ...]:
        """The chapter's ``searchable_terms`` of a kept doc (the tokenizer's third call)."""
        found = self._chapter_terms.get(doc)
        if found is None:
            found = self._chapter_terms[doc] = terms(text)
        return found

    def _candidates(self, found: Matches, docs: list[int]) -> list[RecallCandidate]:
        """RecallCandidates of ``docs``: records read back, terms as the taught stage finds
        them (the tokenizer's third call, see ``fast.state``; another analyzer's terms by
        the taught ``text_terms``), term frequencies and lengths from the index, or with
        context counted by the taught ``in_context`` among the neighbours (kept per doc and
        term: ``Neighbourhood.counted``)."""
        view = self._view(found.policy)
        state, context, analyzer = view.state, view.context, view.state.analyzer
        wanted = set(found.query.terms)
        ordered = sorted(wanted)
        made = self._made  # this recall's candidates so far (bm25+recency asks twice)
        new = list(dict.fromkeys(doc for doc in docs if doc not in made))
        kept = self._kept_of(new)
        tf: dict[str, list[int]] = {}
        if context is None and new:  # each wanted term's frequency in each new doc
            at = np.asarray(new, dtype=np.int64)
            tf = {t: _frequencies(found.postings[t], at) for t in ordered}
        for position, (doc, (record, captured_at, text, _)) in enumerate(
            zip(new, kept, strict=True)
        ):
            sources: tuple = ()
            if context is not None:  # the record among its neighbours
                own = text_terms(text, analyzer)
                around, nearby, searchable = context.placed(doc, own, self._load)
                matched = tuple(t for t in ordered if t in own.counts or t in nearby)
                frequencies, length, sources = context.counted(doc, record, own, around, matched)
            else:
                if analyzer.is_chapter:
                    searchable = self._searchable(doc, text)  # = searchable_terms
                else:
                    searchable = text_terms(text, analyzer).terms
                matched = tuple(t for t in searchable if t in wanted)
                frequencies = tuple(tf[t][position] for t in matched)
                if 0 in frequencies:
                    raise _Moved  # the record holds a term the index does not: the file changed
                length = int(state.term_lengths.view[doc])
            made[doc] = RecallCandidate(
                query_id=found.query.query_id,
                record=record,
                searchable_terms=searchable,
                matched_terms=matched,
                captured_at=captured_at,
                term_frequencies=frequencies,
                length=length,
                term_sources=sources,
            )
        return [made[doc] for doc in docs]
