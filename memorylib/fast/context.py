"""A record counted with its neighbours in the same source, on the index.

With ``ScoringPolicy.context`` weights ``(w1, w2, ...)`` the taught candidate stage
(``candidates.neighbours``, ``candidates.in_context``) counts a searched record's term as
its own count plus ``w_d`` times the count of each neighbour at distance d: the live
conversation records of its source_id, ordered by (captured_at, memory_id). Its length
grows the same way, and the corpus length is their ``math.fsum``. ``Neighbourhood``
does the same for one ``IndexState`` (any analyzer's) and one tuple of weights:

* **slots**, one array per place (distance 1 before, 1 after, 2 before, ...: the
  order the taught sums take): ``slot[doc]`` is the doc at that place from ``doc`` (-1:
  none), for the live docs, rebuilt whenever docs join or a retraction hides one;
* **lengths**: each doc's own length plus, slot by slot, the weighted length of its
  neighbour there, so every float is the taught one; ``total`` is their ``math.fsum``
  over the live docs, the taught corpus length exactly;
* ``postings``: a query term's postings in context, its holders and, weighted, the
  docs next to them (one sorted part of fractional counts, for ``fast.bm25`` and the
  index's levels);
* ``placed``: a shortlisted doc's neighbours as the taught stage lists them (their
  records read back, their terms), so the candidate is built by ``in_context`` itself;
* ``counted``: ``in_context`` of a shortlisted doc for some terms, each term's count and
  sources kept for the doc's next queries. A term's numbers in ``in_context`` depend on
  that term alone (its own sum, in the taught order), so those kept from one call are
  the ones another call would give: a doc shortlisted again costs lookups.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from memorylib.analysis import TextTerms, text_terms
from memorylib.candidates import Neighbour, in_context
from memorylib.explanation import TermSource
from memorylib.records import StoredMemory

from .state import IndexState, Parts

__all__ = ["Neighbourhood", "Placed"]

_PLACED_MAX = 20_000  # docs whose neighbours are kept (then they are read again)

# A doc among its neighbours: each neighbour with its terms, the neighbours' terms, and
# every term the doc can be found by (its own and theirs, sorted).
Placed = tuple[tuple[tuple[Neighbour, TextTerms], ...], frozenset[str], tuple[str, ...]]
Load = Callable[[list[int]], list[StoredMemory]]
# What in_context gives a doc for a few terms: frequencies, length, sources.
Counted = tuple[tuple[float, ...], float, tuple[tuple[TermSource, ...], ...]]


class Neighbourhood:
    """The docs of one ``IndexState`` among their neighbours (see the module docstring)."""

    def __init__(self, state: IndexState, weights: tuple[float, ...]) -> None:
        self.state, self.weights = state, weights
        self._key: tuple[int, int] | None = None  # (docs, dead) the slots were built for
        self.sync()

    def sync(self) -> None:
        """Rebuild the slots and lengths if docs joined or one was hidden since."""
        state = self.state
        key = (len(state.ids), state.dead)  # a hidden doc never comes back: dead only grows
        if key == self._key:
            return
        self._key = key
        self._expanded: dict[str, Parts] = {}
        self._placed: dict[int, Placed] = {}
        # per doc: its memory_id, length in context, each term's (frequency, sources)
        self._counted: dict[int, tuple[str, float, dict]] = {}
        self._records: dict[int, StoredMemory] = {}
        size = len(state.ids)
        order, group = self._taught_order()
        self.slots: list[tuple[np.ndarray, float, int]] = []  # (slot, weight, distance)
        for distance, weight in enumerate(self.weights, start=1):
            later = np.arange(distance, len(order))
            same = later[group[later] == group[later - distance]]
            before = np.full(size, -1, dtype=np.int64)
            before[order[same]] = order[same - distance]
            after = np.full(size, -1, dtype=np.int64)
            after[order[same - distance]] = order[same]
            self.slots += [(before, weight, distance), (after, weight, distance)]
        own = state.term_lengths.view.astype(np.float64)
        lengths = own.copy()
        self._inverse: list[tuple[np.ndarray, float]] = []  # per slot: whose neighbour a doc is
        for slot, weight, _ in self.slots:
            at = np.flatnonzero(slot >= 0)
            lengths[at] += weight * own[slot[at]]  # the taught sum's order: slot by slot
            inverse = np.full(size, -1, dtype=np.int64)
            inverse[slot[at]] = at  # slot[a] = t: t's count reaches a (one a per t and slot)
            self._inverse.append((inverse, weight))
        self.lengths = lengths
        self.total = math.fsum(lengths[state.alive.view].tolist())

    def _taught_order(self) -> tuple[np.ndarray, np.ndarray]:
        """The live docs by (source, captured_at, memory_id), and each one's source code."""
        state = self.state
        live = np.flatnonzero(state.alive.view)
        source = state.source_of.view[live]
        captured = state.captured.view[live]
        order = live[np.lexsort((captured, source))]  # stable: docs in file order at a tie
        source, captured = state.source_of.view[order], state.captured.view[order]
        tied = (source[1:] == source[:-1]) & (captured[1:] == captured[:-1])
        if tied.any():  # the same source and capture time: memory_id decides
            ids = state.ids
            edges = np.flatnonzero(np.diff(np.concatenate(([0], tied.astype(np.int8), [0]))))
            for start, stop in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
                order[start : stop + 1] = sorted(
                    order[start : stop + 1].tolist(), key=ids.__getitem__
                )
        return order, source

    def expanded(self, term: str) -> Parts | None:
        """``postings`` of ``term`` as made since the last rebuild (None: not made yet)."""
        return self._expanded.get(term)

    def postings(self, term: str, parts: Parts) -> Parts:
        """``parts`` (a term's postings in the state) in context: the docs that hold the
        term or sit next to one that does, with their counts summed as taught."""
        found = self._expanded.get(term)
        if found is not None:
            return found
        if not parts:
            self._expanded[term] = []
            return []
        docs = np.concatenate([d for d, _ in parts]).astype(np.int64)
        counts = np.concatenate([c for _, c in parts]).astype(np.float64)
        all_docs, all_counts = [docs], [counts]
        for inverse, weight in self._inverse:
            next_to = inverse[docs]
            there = next_to >= 0
            all_docs.append(next_to[there])
            all_counts.append(weight * counts[there])
        unique, at = np.unique(np.concatenate(all_docs), return_inverse=True)
        summed = np.bincount(at, weights=np.concatenate(all_counts), minlength=len(unique))
        self._expanded[term] = found = [(unique, summed)]
        return found

    def placed(self, doc: int, own: TextTerms, load: Load) -> Placed:
        """``doc`` (its terms ``own``) among its neighbours, in the taught order."""
        found = self._placed.get(doc)
        if found is not None:
            return found
        near = [(int(slot[doc]), w, d) for slot, w, d in self.slots if slot[doc] >= 0]
        missing = [m for m, _, _ in near if m not in self._records]
        if len(self._records) + len(missing) > _PLACED_MAX:
            self._records.clear()
            self._placed.clear()
            self._counted.clear()
            missing = [m for m, _, _ in near]
        self._records.update(zip(missing, load(missing), strict=True))
        analyzer, records = self.state.analyzer, self._records
        around = tuple(
            (
                Neighbour(records[m], d, w),
                text_terms(records[m].summary + " " + records[m].content, analyzer),
            )
            for m, w, d in near
        )
        nearby = frozenset().union(*(theirs.counts for _, theirs in around))
        self._placed[doc] = found = (around, nearby, tuple(sorted(nearby.union(own.terms))))
        return found

    def counted(
        self, doc: int, record: StoredMemory, own: TextTerms, around: tuple, terms: tuple[str, ...]
    ) -> Counted:
        """= ``in_context(record, own, around, terms)`` for ``doc`` (``around``: its
        ``placed`` neighbours), from the terms' numbers kept for the doc when it has them."""
        kept = self._counted.get(doc)
        if kept is None or kept[0] != record.memory_id:
            kept = None
        missing = terms if kept is None else tuple(t for t in terms if t not in kept[2])
        if missing or kept is None:
            frequencies, length, sources = in_context(record, own, around, missing)
            if kept is None:
                kept = self._counted[doc] = (record.memory_id, length, {})
            kept[2].update(zip(missing, zip(frequencies, sources, strict=True), strict=True))
        table = kept[2]
        found = [table[t] for t in terms]
        return tuple(f for f, _ in found), kept[1], tuple(s for _, s in found)
