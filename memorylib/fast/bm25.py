"""BM25, bm25+recency and a minimum evidence on the index: the shortlist by score.

Every matching doc is scored with numpy: term frequencies and lengths are in the
index (``state.IndexState``; with a policy's context, the fractional counts and lengths
of ``context.Neighbourhood``), and a common term's weights are kept spread over every
doc between queries (``BM25Scorer._impact``). A query's term weights (dialogue turns,
``scoring.query_weights``) multiply each term's idf as the taught ``weighted_idf`` does.
The docs whose total may reach the top ``limit`` (ties and rounding included) are
kept; the taught stages score and order them. For bm25+recency, the query's best BM25
(which scales every score) is the numpy top itself when each doc is counted alone (the
same float operations in the same order as the taught ``bm25_score``, see
``_with_best_bm25``), and with context the taught ``bm25_score`` of the docs whose numpy
BM25 is within rounding of the top.

**MaxScore.** When a query mixes common terms (on an eighth of the docs or more) with
rarer ones, only the rarer terms' docs are scored first: a term adds at most its
``weighted_idf`` times its largest term weight (kept with its weights, at most ``k1 +
1``), so a doc holding only common terms stays below the sum of theirs, and if ``limit``
of the scored docs beat that bound plus all that recency can add (the newest doc's
recency), nobody else can reach the top; otherwise every doc is scored. A store below
``_PRUNE_MIN`` docs scores every doc at once: one pass of numpy over a few thousand
floats costs less than MaxScore's own steps, and on a conversation's natural questions
(its speakers' names and "what", "did" in most turns) the bound failed three times in
four, leaving both to pay.

The numbers are the reference's: ``length_norms`` and ``term_weights`` are
``scoring.bm25_term_weight`` over arrays, ``recency`` is ``scoring.recency_score`` of
``timestamps.age_in_days`` (``tests/test_fast_equivalence.py`` compares them on random
inputs). The sums over terms run in sorted term order, as the taught ones do;
``ROUNDING_SLACK`` covers what context's fractional counts may still change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from memorylib.candidates import CorpusStats
from memorylib.records import RecallCandidate
from memorylib.scoring import bm25_score, query_weights, weighted_idf
from memorylib.timestamps import SECONDS_PER_DAY, epoch_micros

from .context import Neighbourhood
from .shortlist import ROUNDING_SLACK
from .state import IndexState, Matches

__all__ = ["BM25Scorer", "length_norms", "recency", "term_weights"]

_PRUNE_MIN = 8_192  # docs below which every doc is scored without trying MaxScore first
_NEAR_MAX = 16  # a shortlist longer than this (ties) is cut by the taught keys first
_IMPACT_MAX = 4_000_000  # BM25 term weights kept for long posting lists (32 MB of floats)

# The RecallCandidates of some docs of a query (records read back from the file).
Candidates = Callable[[Matches, list[int]], list[RecallCandidate]]


def length_norms(lengths: np.ndarray, average_length: float, k1: float, b: float) -> np.ndarray:
    """``k1 * (1 - b + b * length / average_length)`` of every length (``k1`` when the
    average is 0): ``scoring.bm25_term_weight``'s norm, operation for operation."""
    if not average_length:
        return np.full(len(lengths), k1)
    return k1 * (1.0 - b + b * lengths.astype(np.float64) / average_length)


def term_weights(tfs: np.ndarray, norms: np.ndarray, k1: float) -> np.ndarray:
    """``tf * (k1 + 1) / (tf + norm)`` of every posting: ``scoring.bm25_term_weight``."""
    tf = tfs.astype(np.float64)
    return tf * (k1 + 1.0) / (tf + norms)


def recency(captured: np.ndarray, now_micros: int, window_days: float) -> np.ndarray:
    """``recency_score(age_in_days(captured_at, as_of), window)`` of every capture time
    (integer microseconds, like ``now_micros``)."""
    age_days = np.maximum(0.0, (now_micros - captured) / 1e6 / SECONDS_PER_DAY)
    return 1.0 / (1.0 + age_days / window_days)


def _locate(sorted_values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``wanted`` would stand in ``sorted_values``, and whether it is there.
    ``wanted`` is cast to the type of ``sorted_values`` (docs fit either), never the other
    way: ``searchsorted`` would copy a long int32 posting list to int64 on every call."""
    wanted = wanted.astype(sorted_values.dtype, copy=False)
    where = np.searchsorted(sorted_values, wanted)
    found = where < len(sorted_values)
    found[found] = sorted_values[where[found]] == wanted[found]
    return where, found


def _union(parts: list[np.ndarray], n: int) -> np.ndarray:
    """The docs of ``parts`` (each below ``n``), sorted, each once: a sort when they are
    few, else a mark per doc (``np.unique`` hashes and then sorts: slower either way)."""
    joined = np.concatenate(parts).astype(np.int64)
    if len(joined) * 16 < n:
        joined.sort()
        return joined[np.concatenate(([True], joined[1:] != joined[:-1]))]
    marked = np.zeros(n, dtype=np.bool_)
    marked[joined] = True
    return np.flatnonzero(marked)


def _top_of(total: np.ndarray, level: np.ndarray, captured: np.ndarray, k: int) -> np.ndarray:
    """Positions of the first ``k`` by the taught keys (total rounded to 6 places DESC,
    coverage DESC, captured_at DESC), with every doc tied with the k-th on those keys
    (memory_id decides among them), and every doc whose total sits so close to a
    rounding boundary that its rounded value is not certain."""
    rounded = np.round(total, 6)
    order = np.lexsort((-captured, -level, -rounded))
    last = order[k - 1]
    kept = np.zeros(len(total), dtype=bool)
    kept[order[:k]] = True
    kept |= (rounded == rounded[last]) & (level == level[last]) & (captured == captured[last])
    half = np.abs(total * 1e6 - np.floor(total * 1e6) - 0.5)
    kept |= (half < 1e-3) & (rounded >= rounded[last] - 2e-6)
    return np.flatnonzero(kept)


class BM25Scorer:
    """The BM25/bm25+recency/min_evidence shortlist over one ``IndexState`` (and, for a
    policy's context, its ``Neighbourhood``), with the length norms and common terms'
    weights it keeps between queries (a new state or context, a new scorer)."""

    def __init__(
        self, state: IndexState, candidates: Candidates, context: Neighbourhood | None = None
    ) -> None:
        self.state = state
        self.context = context
        self._candidates = candidates
        self._norms: tuple[tuple, np.ndarray] | None = None
        self._impacts: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # see _impact
        self._largest_of: dict[tuple, float] = {}  # the largest of each cached impact
        self._newest = (0, np.iinfo(np.int64).min)  # (docs seen, their latest capture time)

    def corpus(self, found: Matches) -> CorpusStats:
        """The taught candidate stage's counts: live docs, their terms, each query term's df."""
        state = self.state
        alive = state.alive.view
        frequency = dict.fromkeys(found.query.terms, 0)
        for term, parts in found.postings.items():
            if state.dead:
                frequency[term] = sum(int(np.count_nonzero(alive[docs])) for docs, _ in parts)
            else:
                frequency[term] = sum(len(docs) for docs, _ in parts)
        total = state.alive_length if self.context is None else self.context.total
        return CorpusStats(state.searched, total, frequency)

    def shortlist(self, found: Matches) -> tuple[list[int], CorpusStats]:
        """Docs that certainly hold the top ``limit`` by ``found.policy``, and the corpus
        (for bm25+recency, with the query's exact best BM25) the taught stages score with."""
        corpus = self.corpus(found)
        weights = query_weights(found.query)
        docs, levels, query, policy = found.docs, found.levels, found.query, found.policy
        if not len(docs):
            return [], corpus
        k1, n = policy.bm25_k1, len(self.state.ids)
        norm = self._length_norms(corpus, k1, policy.bm25_b)
        sparse = len(docs) * 8 < n  # few matches: work on them alone
        every = None if sparse else self._every(found, corpus, norm)
        if every is not None and not policy.min_evidence and policy.uses_bm25 and n >= _PRUNE_MIN:
            pruned = self._pruned(found, corpus, norm, every)
            if pruned is not None:
                return pruned
        raw = np.zeros(len(docs)) if every is None else every
        matched_idf = np.zeros(len(raw)) if policy.min_evidence else None
        for term, parts in found.postings.items():  # sorted terms: the taught sums' order
            weight = weighted_idf(term, corpus, weights)
            for term_docs, tfs in parts:
                if not sparse:  # BM25 added already: the evidence only
                    if matched_idf is not None:
                        matched_idf[term_docs] += weight
                    continue
                where, hit = _locate(docs, term_docs)  # few docs: positions in docs
                at, held = where[hit], term_docs[hit]
                raw[at] += weight * term_weights(tfs[hit], norm[held], k1)
                if matched_idf is not None:
                    matched_idf[at] += weight
        if not sparse and len(docs) < len(raw):  # (every doc matching: already aligned)
            raw = raw[docs]
            matched_idf = None if matched_idf is None else matched_idf[docs]
        query_idf = sum(weighted_idf(term, corpus, weights) for term in query.terms)
        if policy.scorer == "bm25+recency":
            corpus = self._with_best_bm25(found, docs, raw, corpus)
            best = corpus.best_bm25
            lexical = raw / best if best else np.zeros(len(docs))
        elif policy.scorer == "bm25":
            lexical = raw
        else:
            lexical = levels / len(query.terms)
        if matched_idf is not None:  # the taught filter (on the rounded share) is exact
            share = matched_idf / query_idf if query_idf else np.zeros(len(docs))
            keep = share >= policy.min_evidence - ROUNDING_SLACK
            docs, levels, lexical = docs[keep], levels[keep], lexical[keep]
        if len(docs) <= query.limit:
            return docs.tolist(), corpus
        totals = policy.lexical_weight * lexical
        if policy.recency_weight:
            # recency adds at most recency_weight: drop docs that cannot reach the top even so
            floor = np.partition(totals, len(totals) - query.limit)[len(totals) - query.limit]
            reach = totals + policy.recency_weight >= floor - ROUNDING_SLACK * (1.0 + floor)
            docs, levels, totals = docs[reach], levels[reach], totals[reach]
            totals = totals + self._recency_part(found, docs)
        slack = ROUNDING_SLACK * (1.0 + float(np.abs(totals).max()))
        kth = np.partition(totals, len(totals) - query.limit)[len(totals) - query.limit]
        near = np.flatnonzero(totals >= kth - slack)  # every doc that may reach the top
        if len(near) > _NEAR_MAX:  # many ties: the taught keys decide, as far as is certain
            captured = self.state.captured.view[docs[near]]
            near = near[_top_of(totals[near], levels[near], captured, query.limit)]
        return docs[near].tolist(), corpus

    def _every(self, found: Matches, corpus: CorpusStats, norm: np.ndarray) -> np.ndarray:
        """The numpy BM25 of every doc (0.0 where no query term is), the terms added in
        sorted order: the taught sums' order."""
        weights, n = query_weights(found.query), len(self.state.ids)
        every = np.zeros(n)
        for term, parts in found.postings.items():
            weight = weighted_idf(term, corpus, weights)
            for part, (term_docs, _) in enumerate(parts):
                impact = self._impact(found, term, part, norm)
                if len(impact) == n:  # a long list, spread over every doc (0.0 where absent)
                    every += weight * impact
                else:
                    every[term_docs] += weight * impact
        return every

    def _pruned(
        self, found: Matches, corpus: CorpusStats, norm: np.ndarray, every: np.ndarray
    ) -> tuple[list[int], CorpusStats] | None:
        """The shortlist from the docs holding a rarer query term alone (``every``: each
        doc's numpy BM25), when that is provably enough (MaxScore, see the module
        docstring); None when it cannot be shown (then every doc is ranked)."""
        policy, limit, n = found.policy, found.query.limit, len(self.state.ids)
        postings = found.postings
        common = {t for t, parts in postings.items() if sum(len(d) for d, _ in parts) * 8 >= n}
        rare = [docs_ for t, parts in postings.items() if t not in common for docs_, _ in parts]
        if not common or not rare:
            return None
        cand = _union(rare, n)  # sorted, without repeats
        if self.state.dead:
            cand = cand[self.state.alive.view[cand]]
        if len(cand) <= limit:
            return None
        weights = query_weights(found.query)
        raw = every[cand]
        # any other doc's BM25: each common term adds at most its largest term weight
        bound = sum(
            weighted_idf(term, corpus, weights) * self._largest(found, term, part, norm)
            for term in sorted(common)
            for part in range(len(postings[term]))
        )
        top = float(raw.max())
        slack = ROUNDING_SLACK * (1.0 + top + bound)
        if policy.scorer == "bm25+recency":
            if top <= bound + slack:  # the best BM25 might be outside: score every doc
                return None
            corpus = self._with_best_bm25(found, cand, raw, corpus)
            best = corpus.best_bm25
            if not best:
                return None
            lexical, others = raw / best, bound / best
        else:
            lexical, others = raw, bound
        totals = policy.lexical_weight * lexical
        if policy.recency_weight:
            totals = totals + self._recency_part(found, cand)
        kth = np.partition(totals, len(totals) - limit)[len(totals) - limit]
        slack = ROUNDING_SLACK * (1.0 + float(np.abs(totals).max()) + others)
        reach = policy.recency_weight * self._newest_recency(found)  # the most recency adds
        if policy.lexical_weight * others + reach >= kth - slack:
            return None  # a doc with only common terms could still reach the top
        near = np.flatnonzero(totals >= kth - slack)
        if len(near) > _NEAR_MAX:
            levels = found.levels[np.searchsorted(found.docs, cand[near])]
            captured = self.state.captured.view[cand[near]]
            near = near[_top_of(totals[near], levels, captured, limit)]
        return cand[near].tolist(), corpus

    def _recency_part(self, found: Matches, docs: np.ndarray) -> np.ndarray:
        """``recency_weight * recency`` of each doc, as the contract computes it."""
        policy = found.policy
        captured = self.state.captured.view[docs]
        now = epoch_micros(found.moment)
        return policy.recency_weight * recency(captured, now, policy.recency_window_days)

    def _newest_recency(self, found: Matches) -> float:
        """The recency of the newest doc at the query's clock: no doc's is higher."""
        captured = self.state.captured.view
        if self._newest[0] != len(captured):  # docs only join: the newest of the new ones
            self._newest = (
                len(captured),
                int(captured[self._newest[0] :].max(initial=self._newest[1])),
            )
        now, window = epoch_micros(found.moment), found.policy.recency_window_days
        return float(recency(np.asarray([self._newest[1]]), now, window)[0])

    def _with_best_bm25(
        self, found: Matches, docs: np.ndarray, raw: np.ndarray, corpus: CorpusStats
    ) -> CorpusStats:
        """``corpus`` with the query's exact best BM25 (bm25+recency divides by it). Each doc
        counted alone, the numpy BM25 (``raw``) is the taught ``bm25_score`` itself: both
        add ``weighted_idf * bm25_term_weight`` of the matched terms in sorted order (the
        taught candidates' ``matched_terms``), with the same operations, from 0.0 (an
        absent term adds exactly 0.0). With context (fractional counts) the top docs are
        scored by the taught ``bm25_score``, as every doc within rounding of the top."""
        top = float(raw.max())
        if self.context is None:
            return dataclasses.replace(corpus, best_bm25=top)
        best_docs = docs[raw >= top - ROUNDING_SLACK * (1.0 + top)].tolist()
        weights = query_weights(found.query)
        best = max(
            bm25_score(c, corpus, found.policy, weights) for c in self._candidates(found, best_docs)
        )
        return dataclasses.replace(corpus, best_bm25=best)

    def _length_norms(self, corpus: CorpusStats, k1: float, b: float) -> np.ndarray:
        """``length_norms`` of every doc, cached while the corpus and parameters stay the same."""
        key = (k1, b, corpus.documents, corpus.total_length, len(self.state.ids))
        if self._norms is None or self._norms[0] != key:
            lengths = self.state.term_lengths.view if self.context is None else self.context.lengths
            norms = length_norms(lengths, corpus.average_length, k1, b)
            self._norms = (key, norms)
            self._impacts.clear()
            self._largest_of.clear()
        return self._norms[1]

    def _impact(self, found: Matches, term: str, part: int, norm: np.ndarray) -> np.ndarray:
        """``term_weights`` of every posting of one part of a query term's list: BM25's
        term weight before idf. A long list (an eighth of the docs or more) gets it spread
        over every doc (0 where the term is absent), kept while the norms stay the same
        (any append or retraction recomputes them and empties this cache): a common
        term's list is as long as the store, and most queries hold one."""
        docs, tfs = found.postings[term][part]
        key = (term, part, len(docs))
        cached = self._impacts.get(key)
        if cached is not None and cached[0] is norm:
            return cached[1]
        impact = term_weights(tfs, norm[docs], found.policy.bm25_k1)
        n = len(self.state.ids)
        if len(docs) * 8 >= n:
            everywhere = np.zeros(n)
            everywhere[docs] = impact
            if sum(len(v[1]) for v in self._impacts.values()) + len(everywhere) > _IMPACT_MAX:
                self._impacts.clear()
            self._impacts[key] = (norm, everywhere)
            return everywhere
        return impact

    def _largest(self, found: Matches, term: str, part: int, norm: np.ndarray) -> float:
        """The largest ``term_weights`` of one part of a query term's list (0 when empty),
        kept while the norms stay the same."""
        key = (term, part, len(found.postings[term][part][0]))
        largest = self._largest_of.get(key)
        if largest is None:
            impact = self._impact(found, term, part, norm)
            largest = self._largest_of[key] = float(impact.max()) if len(impact) else 0.0
        return largest
