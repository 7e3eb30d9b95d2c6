"""The indexed path for a policy's analysis: another analyzer, query weights or context.

``RecallIndex`` keeps the chapter's terms in its own arrays (``fast.state``, its numpy
tokenizer). A policy whose terms are not the chapter's (``ScoringPolicy.chapter_terms``
false) is answered here, by one ``AnalyzedIndex`` per (analyzer, context) setting, built
on the first query that needs it and kept in step with the same file:

* postings: each live conversation record's terms under the analyzer
  (``analysis.text_terms``, the taught function), term -> (docs, counts);
* with context, each record's neighbours in the taught order (``candidates.neighbours``:
  the live records of its source by captured_at, memory_id), as one array per slot
  (distance 1 before, distance 1 after, 2 before, ...), recomputed when a record is
  added or retracted; and the records' lengths counted with their neighbours, summed in
  the taught order, so the corpus length (``math.fsum``) is the taught one exactly.

A query (already analyzed: ``pipeline.prepare_query``) finds each term's records (with
context: the holders and, weighted, the records next to them), its exact document
frequency, and scores every matching record with numpy: BM25 with the query weights,
BM25 over the best, coverage, the evidence share, recency. Every record whose total is
within rounding (``ROUNDING_SLACK``) of the ``limit``-th best is kept (ties included);
only those become RecallCandidates, built by the taught functions from their records
(and their neighbours' records) read back from the file, and the taught
``stable_rank_recall_candidates`` scores and orders them with the taught corpus counts.
For bm25+recency the query's best BM25 is computed exactly the same way first. So the
RecallResult equals the taught path's, field for field; ``tests/test_index.py`` checks
it on random stores for every named configuration.
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memorylib.analysis import Analyzer, cjk_terms, stem, stop_terms, text_terms
from memorylib.candidates import CorpusStats, Neighbour, in_context
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import RecallCandidate, RecallHit, RecallQuery, StoredMemory
from memorylib.scoring import ScoringPolicy, bm25_score, idf, query_weights
from memorylib.timestamps import SECONDS_PER_DAY, epoch_micros, parse_timestamp

from .tokenizer import fold_case, runs

__all__ = ["AnalyzedIndex", "DocsView", "analyzed_counts"]

_SLACK = 2e-6  # > 2 x the largest change round(x, 6) makes, plus float error
_RECORDS_KEPT = 20_000  # records read back kept for the next queries (then read again)


def analyzed_counts(text: str, analyzer: Analyzer) -> dict[str, int]:
    """``analysis.text_terms(text, analyzer).counts``, quicker (the tokenizer's regexes
    instead of a loop over characters, nothing cached): for building the index."""
    words, han_runs = runs(fold_case(text))
    stop = stop_terms(analyzer.stopwords)
    counts: dict[str, int] = {}
    for word in words:
        if word not in stop:
            term = stem(analyzer.stemmer, word) if analyzer.stemmer else word
            counts[term] = counts.get(term, 0) + 1
    for run in han_runs:
        for term, _ in cjk_terms(run, analyzer):
            if term not in stop:
                counts[term] = counts.get(term, 0) + 1
    return counts


@dataclass(frozen=True)
class DocsView:
    """What the chapter's index knows of the store's conversation records, by doc number:
    the generation of the file it read, memory_ids, liveness, capture microseconds, and
    how to read records back from the file."""

    generation: int
    ids: Sequence[str]
    alive: np.ndarray
    captured: np.ndarray
    load: Callable[[list[int]], list[StoredMemory]]


class AnalyzedIndex:
    """Postings of one analyzer (and neighbours of one context) over a store's records."""

    def __init__(self, analyzer: Analyzer, context: tuple[float, ...]) -> None:
        self.analyzer, self.context = analyzer, context
        self._reset(generation=-1)

    def _reset(self, generation: int) -> None:
        self._generation = generation
        self._size = 0  # docs indexed so far
        self._docs: defaultdict[str, array] = defaultdict(lambda: array("i"))
        self._counts: defaultdict[str, array] = defaultdict(lambda: array("i"))
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # term -> numpy, cached
        self._length = array("i")  # each doc's own length in terms
        self._source: list[str] = []
        self._alive_key: bytes | None = None  # which docs the neighbours were built for
        self._slots: list[tuple[np.ndarray, float, int]] = []  # (neighbour of each doc, w, d)
        self._moves: list[tuple[np.ndarray, np.ndarray, float]] = []  # the slots' pairs
        self._inverse: list[tuple[np.ndarray, float]] = []  # per slot: whose neighbour a doc is
        self._lengths = np.zeros(0)  # each doc's length with its neighbours
        self._total: float = 0
        self._records: dict[int, StoredMemory] = {}  # docs read back (a generation's lines)
        self._placed: dict[int, tuple] = {}  # a doc's neighbours and terms, while they hold

    # -- keeping up with the chapter's index ----------------------------------------------

    def sync(self, view: DocsView) -> None:
        if view.generation != self._generation or len(view.ids) < self._size:
            self._reset(view.generation)
        new = list(range(self._size, len(view.ids)))
        for start in range(0, len(new), 4096):
            chunk = new[start : start + 4096]
            for doc, record in zip(chunk, view.load(chunk), strict=True):
                counts = analyzed_counts(record.summary + " " + record.content, self.analyzer)
                for term, count in counts.items():
                    self._docs[term].append(doc)
                    self._counts[term].append(count)
                self._length.append(sum(counts.values()))
                self._source.append(record.source.source_id)
            self._arrays.clear()
        self._size = len(view.ids)
        alive = view.alive[: self._size]
        key = alive.tobytes() + self._size.to_bytes(8, "little")
        if key != self._alive_key:
            self._alive_key = key
            self._place(view, alive)

    def _place(self, view: DocsView, alive: np.ndarray) -> None:
        """Neighbour slots and context lengths for the live docs (the taught order)."""
        self._placed = {}
        own = np.frombuffer(self._length, dtype=np.int32).astype(np.float64)
        self._slots = []
        if self.context:
            by_source: defaultdict[str, list[int]] = defaultdict(list)
            for doc in np.flatnonzero(alive).tolist():
                by_source[self._source[doc]].append(doc)
            captured, ids = view.captured, view.ids
            orders = [
                sorted(docs, key=lambda d: (int(captured[d]), ids[d]))
                for docs in by_source.values()
            ]
            for distance, weight in enumerate(self.context, start=1):
                for step in (-distance, distance):
                    slot = np.full(self._size, -1, dtype=np.int64)
                    for order in orders:
                        if len(order) > distance:
                            at = np.asarray(order)
                            if step < 0:
                                slot[at[distance:]] = at[:-distance]
                            else:
                                slot[at[:-distance]] = at[distance:]
                    self._slots.append((slot, weight, distance))
        self._moves, self._inverse = [], []
        for slot, weight, _ in self._slots:
            at = np.flatnonzero(slot >= 0)
            self._moves.append((at, slot[at], weight))
            if len(at):  # slot[a] = t: a's neighbour is t, so t's count reaches a
                inverse = np.full(self._size, -1, dtype=np.int64)
                inverse[slot[at]] = at
                self._inverse.append((inverse, weight))
        lengths = own.copy()
        for at, there, weight in self._moves:  # the taught sum's order: slot by slot
            lengths[at] += weight * own[there]
        self._lengths = lengths
        live = lengths[alive]
        self._total = math.fsum(live.tolist()) if self.context else int(own[alive].sum())

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        found = self._arrays.get(term)
        if found is None:
            docs = np.frombuffer(self._docs[term], dtype=np.int32).astype(np.int64)
            counts = np.frombuffer(self._counts[term], dtype=np.int32).astype(np.float64)
            found = self._arrays[term] = (docs, counts)
        return found

    # -- answering --------------------------------------------------------------------------

    def recall(
        self, query: RecallQuery, moment: datetime, policy: ScoringPolicy, view: DocsView
    ) -> tuple[tuple[RecallHit, ...], int]:
        """The taught hits of ``query`` (analyzed for ``policy``) and its candidate count."""
        self.sync(view)
        alive = view.alive[: self._size]
        searched = int(alive.sum())
        terms = sorted(set(query.terms))
        frequency: dict[str, int] = dict.fromkeys(query.terms, 0)
        found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term in terms:
            docs, counts = self._postings(term) if term in self._docs else (None, None)
            if docs is None:
                continue
            if self._inverse:  # the holders, and (weighted) the docs next to them
                parts, values = [docs], [counts]
                for inverse, weight in self._inverse:  # inverse[d]: whose neighbour d is
                    next_to = inverse[docs]
                    there = next_to >= 0
                    parts.append(next_to[there])
                    values.append(weight * counts[there])
                docs, at = np.unique(np.concatenate(parts), return_inverse=True)
                counts = np.bincount(at, weights=np.concatenate(values), minlength=len(docs))
            keep = alive[docs]
            docs, counts = docs[keep], counts[keep]
            if len(docs):
                found[term] = (docs, counts)
                frequency[term] = len(docs)
        corpus = CorpusStats(searched, self._total, frequency)
        if not found:
            return (), 0
        matched = np.unique(np.concatenate([docs for docs, _ in found.values()]))
        chosen, corpus = self._shortlist(query, policy, moment, view, corpus, found, matched)
        candidates = self._candidates(query, chosen, view)
        hits = stable_rank_recall_candidates(
            query, candidates, as_of=moment, policy=policy, corpus=corpus
        )
        return hits, len(matched)

    def _shortlist(
        self,
        query: RecallQuery,
        policy: ScoringPolicy,
        moment: datetime,
        view: DocsView,
        corpus: CorpusStats,
        found: dict[str, tuple[np.ndarray, np.ndarray]],
        matched: np.ndarray,
    ) -> tuple[list[int], CorpusStats]:
        """Docs that certainly hold the top ``limit`` (within rounding of the limit-th)."""
        weights = query_weights(query)
        k1, b = policy.bm25_k1, policy.bm25_b
        average = corpus.average_length
        lengths = self._lengths[matched]
        norm = k1 * (1.0 - b + b * lengths / average) if average else np.full(len(matched), k1)
        raw, share, levels = np.zeros(len(matched)), np.zeros(len(matched)), np.zeros(len(matched))
        for term, (docs, tf) in found.items():
            at = np.searchsorted(matched, docs)  # every doc of a term is among the matched
            weight = idf(term, corpus) * (1.0 if weights is None else weights.get(term, 1.0))
            raw[at] += weight * tf * (k1 + 1.0) / (tf + norm[at])
            share[at] += weight
            levels[at] += 1
        if policy.scorer == "bm25":
            lexical = raw
        elif policy.scorer == "bm25+recency":
            top = float(raw.max())
            near_top = matched[raw >= top - _SLACK * (1.0 + top)].tolist()
            best = max(
                bm25_score(c, corpus, policy, weights)
                for c in self._candidates(query, near_top, view)
            )
            corpus = dataclasses.replace(corpus, best_bm25=best)
            lexical = raw / best if best else np.zeros(len(matched))
        else:
            lexical = levels / len(query.terms)
        totals = policy.lexical_weight * lexical
        if policy.recency_weight:
            seconds = (epoch_micros(moment) - view.captured[matched]) / 1e6
            age = np.maximum(0.0, seconds / SECONDS_PER_DAY)
            totals = totals + policy.recency_weight / (1.0 + age / policy.recency_window_days)
        docs = matched
        if policy.min_evidence:
            total_idf = sum(
                idf(t, corpus) * (1.0 if weights is None else weights.get(t, 1.0))
                for t in query.terms
            )
            fraction = share / total_idf if total_idf else np.zeros(len(matched))
            keep = fraction >= policy.min_evidence - _SLACK
            docs, totals = docs[keep], totals[keep]
        if len(docs) <= query.limit:
            return docs.tolist(), corpus
        kth = np.partition(totals, len(totals) - query.limit)[len(totals) - query.limit]
        slack = _SLACK * (1.0 + float(np.abs(totals).max()))
        return docs[totals >= kth - slack].tolist(), corpus

    def _candidates(
        self, query: RecallQuery, docs: list[int], view: DocsView
    ) -> list[RecallCandidate]:
        """RecallCandidates of ``docs`` as the taught stage builds them, from their records
        (and, with context, their neighbours' records) read back from the file."""
        near_docs = {
            doc: [(int(slot[doc]), w, d) for slot, w, d in self._slots if slot[doc] >= 0]
            for doc in docs
        }
        wanted_docs = {*docs, *(m for v in near_docs.values() for m, _, _ in v)}
        missing = sorted(wanted_docs - self._records.keys())
        if len(self._records) + len(missing) > _RECORDS_KEPT:
            self._records.clear()
            missing = sorted(wanted_docs)
        self._records.update(zip(missing, view.load(missing), strict=True))
        record_of = self._records
        wanted = sorted(set(query.terms))
        made = []
        for doc in docs:
            record = record_of[doc]
            own = text_terms(record.summary + " " + record.content, self.analyzer)
            if self.context:
                placed = self._placed.get(doc)
                if placed is None:  # the doc among its neighbours: the same for every query
                    around = tuple(
                        (
                            Neighbour(record_of[m], d, w),
                            text_terms(
                                record_of[m].summary + " " + record_of[m].content, self.analyzer
                            ),
                        )
                        for m, w, d in near_docs[doc]
                    )
                    nearby = frozenset().union(*(theirs.counts for _, theirs in around))
                    placed = (around, nearby, tuple(sorted(nearby.union(own.terms))))
                    self._placed[doc] = placed
                around, nearby, searchable = placed
                matched = tuple(t for t in wanted if t in own.counts or t in nearby)
                frequencies, length, sources = in_context(record, own, around, matched)
            else:
                matched = tuple(t for t in wanted if t in own.counts)
                frequencies, length = tuple(own.counts[t] for t in matched), own.length
                sources, searchable = (), own.terms
            made.append(
                RecallCandidate(
                    query_id=query.query_id,
                    record=record,
                    searchable_terms=searchable,
                    matched_terms=matched,
                    captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
                    term_frequencies=frequencies,
                    length=length,
                    term_sources=sources,
                )
            )
        return made
