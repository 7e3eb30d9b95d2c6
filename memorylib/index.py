"""The indexed recall path: the same RecallResult as the stage functions, at 100k records.

Taught path cost per query: re-read, re-parse and re-tokenize every record, score and
sort every candidate. This module keeps, per process and per store:

* each conversation record's terms, tokenized once, in an inverted index
  (term -> record positions: CSR arrays plus a small delta for appended records);
* its capture time (integer microseconds) and whether a retraction hides it.

Building it tokenizes a few thousand records at a time: their texts are case-folded
(NFKC, casefold, NFKC: ``normalize_text`` without the whitespace folding, which no term
can see), joined, and read as one array of code points. Words are the maximal runs of
the tokenizer's word characters (a table read off its own regex); CJK bigrams and lone
characters come from the maximal runs of U+4E00..U+9FFF. A word is kept as its string
(short ASCII words are grouped by their bytes packed in integers), a CJK term as an
integer code (``term_key``). The terms are the taught ``extract_terms`` exactly, which
the property tests check on arbitrary Unicode.

A query finds, for every matching record, how many query terms it has: one
``bincount`` when the postings are large, a sort of the postings when they are
small. Records with the same match count have the same coverage, so within such a
level the contract's order (total, coverage, captured_at DESC, memory_id ASC) is just
captured_at DESC, memory_id ASC: recency only falls with age. So the global top
``limit`` lies among the ``limit`` newest records of each level, and a whole level is
skipped once ``limit`` records match so many more terms that recency cannot close the
gap. The records kept are pre-scored with the contract's formula and any whose score
is below the ``limit``-th best by more than rounding can explain (2e-6) is dropped.
Only the few left become RecallCandidates (with the taught ``searchable_terms``), and
the taught ``stable_rank_recall_candidates`` scores and orders them. Identical hits,
ranks, breakdowns and counts, by construction and by property test.

The index follows the file: a ``stat`` per query; when the file grew, only the new
tail is read (``store.synced_state``, under the store's lock); when it was replaced,
truncated or rewritten (identity, size, mtime or the bytes before the old end differ),
the index is rebuilt from the start.
"""

from __future__ import annotations

import gc
import itertools
import os
import threading
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache

import numpy as np

from ._checks import format_timestamp, parse_timestamp
from .candidates import searchable_terms
from .query import CJK_FIRST, _patterns, fold_case, narrow_fullwidth
from .ranking import capture_micros, stable_rank_recall_candidates
from .records import MemoryKind, RecallCandidate, RecallQuery, RecallResult, StoredMemory
from .scoring import DEFAULT_POLICY, ScoringPolicy, require_policy
from .store import RemoteMemoryStore

__all__ = ["RecallIndex", "index_terms", "term_key"]

_DELTA_REBUILD_MIN = 50_000  # delta postings before they are merged into the CSR arrays
_CHUNK = 8_192  # records tokenized together (numpy work per chunk, bounded memory)
_SORT_FRACTION = 16  # postings below 1/16 of the records: sort them instead of bincount
_HAN_BASE = ord(CJK_FIRST)  # U+4E00
_HAN_SPAN = 0x5200  # U+4E00..U+9FFF
_LONE_BASE = _HAN_SPAN * _HAN_SPAN  # codes of lone characters follow the bigram codes
_ROUNDING_SLACK = 2e-6  # > 2 x the largest change round(x, 6) makes, plus float error


def term_key(term: str) -> str | int:
    """The index's key of a term: a CJK bigram or character as an int code, else the word."""
    offsets = [ord(char) - _HAN_BASE for char in term[:3]]
    if offsets and all(0 <= offset < _HAN_SPAN for offset in offsets):
        if len(term) == 1:
            return _LONE_BASE + offsets[0]
        if len(term) == 2:
            return offsets[0] * _HAN_SPAN + offsets[1]
    return term  # a word (or a string the tokenizer never makes: it matches nothing)


def index_terms(text: str) -> set[str | int]:
    """The term keys the index files a record's raw ``summary + " " + content`` under.

    Equal to ``{term_key(t) for t in extract_terms(normalize_text(text))}``; computed
    by the index's own code (``_term_pairs``), for tests.
    """
    vocab: defaultdict[str | int, int] = defaultdict(itertools.count().__next__)
    _, ids = _term_pairs([text], [0], vocab.__getitem__, {})
    key_of = {term_id: key for key, term_id in vocab.items()}
    return {key_of[term_id] for term_id in ids.tolist()}


# -- tokenizing many records at once ----------------------------------------------------------

VocabId = Callable[[str | int], int]
_EMPTY = np.zeros(0, dtype=np.int64)
_PACK_MAX = 16  # ASCII words of up to 16 bytes get exact integer keys (two uint64)
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # n low bytes
_MIX_LOW = np.uint64(0x9E3779B97F4A7C15)  # odd multipliers: spread every key bit upwards
_MIX_HIGH = np.uint64(0xC2B2AE3D27D4EB4F)
_BATCH_CHARS = 4_000_000  # characters per numpy pass (one long record may exceed it)


@lru_cache(maxsize=1)
def _bmp_word_table() -> np.ndarray:
    """``table[cp]``: is U+cp (cp < 0x10000) a word character? Read off the tokenizer's regex."""
    table = np.zeros(0x10000, dtype=np.bool_)
    for match in _patterns().word.finditer("".join(map(chr, range(0x10000)))):
        table[match.start() : match.end()] = True
    return table


def _term_pairs(
    texts: list[str], docs: list[int], vocab_id: VocabId, packed: dict[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Unique (doc, term id) pairs, ``docs[i]`` holding the terms of raw ``texts[i]``.

    Every text is case-folded (``fold_case`` is ``normalize_text`` minus the whitespace
    folding, which no term can tell apart) and the folded texts are joined by "\n" (not
    a word or CJK character, so no term crosses two texts), then read as code points:
    words are the maximal runs of word characters (``_word_pairs``), CJK terms come from
    the maximal runs of U+4E00..U+9FFF (``_han_pairs``), exactly as in ``term_set``.
    Plain-ASCII texts are joined apart from the others and read as bytes: they need no
    Unicode folding and hold no CJK.
    """
    plain: tuple[list[str], list[int]] = ([], [])
    other: tuple[list[str], list[int]] = ([], [])
    for text, doc in zip(texts, docs, strict=True):
        group = plain if text.isascii() else other
        group[0].append(text)
        group[1].append(doc)
    parts = [(_EMPTY, _EMPTY)]
    if plain[0]:
        joined = "\n".join(plain[0]).lower() + "\n"  # fold_case of ASCII is lower()
        points = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        sizes = np.fromiter(map(len, plain[0]), dtype=np.int64, count=len(plain[0])) + 1
        owner = np.repeat(np.asarray(plain[1], dtype=np.int32), sizes)  # doc of each byte
        parts.append(_word_pairs(joined, points, owner, vocab_id, packed))
    if other[0]:
        joined, sizes = _fold_joined(other[0])
        points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        owner = np.repeat(np.asarray(other[1], dtype=np.int32), sizes)  # doc of each point
        parts.append(_word_pairs(joined, points, owner, vocab_id, packed))
        parts.append(_han_pairs(points, owner, vocab_id))
    keys = np.concatenate([(docs_.astype(np.int64) << 32) | ids for docs_, ids in parts])
    keys.sort()
    keys = keys[_run_starts(keys)]
    return (keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32)


def _fold_joined(texts: list[str]) -> tuple[str, np.ndarray]:
    """``"\\n".join(map(fold_case, texts)) + "\\n"``, and each folded text's length + 1.

    Usually one pass over the whole batch: when the joined text passes NFKC's check
    before and after casefold and casefold keeps its length, folding it whole is folding
    each text ("\\n" never combines with a neighbour, and every character keeps its
    place). Otherwise each text is folded on its own.
    """
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1
    joined = "\n".join(texts) + "\n"
    if joined.isascii():
        return joined.lower(), sizes
    narrowed = narrow_fullwidth(joined)
    if unicodedata.is_normalized("NFKC", narrowed):
        folded = narrowed.casefold()
        if len(folded) == len(narrowed) and unicodedata.is_normalized("NFKC", folded):
            return folded, sizes
    each = [fold_case(text) for text in texts]
    return "\n".join(each) + "\n", np.fromiter(map(len, each), dtype=np.int64) + 1


def _word_pairs(
    joined: str, points: np.ndarray, owner: np.ndarray, vocab_id: VocabId, packed: dict[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(doc, word id) for every word occurrence in ``joined`` (``points``: its code points).

    An ASCII word of at most 16 bytes is keyed by its bytes as two zero-padded uint64
    (no word byte is zero, so the key is exact) and ``packed`` remembers each key's id;
    any other word is sliced out of ``joined`` as a str.
    """
    astral = np.flatnonzero(points > 0xFFFF) if points.dtype != np.uint8 else _EMPTY
    if len(astral):  # characters beyond the BMP (emoji, rare scripts): ask the regex
        word = _bmp_word_table()[np.minimum(points, 0xFFFF)]
        rule = _patterns().word
        word[astral] = [rule.fullmatch(chr(cp)) is not None for cp in points[astral].tolist()]
    else:
        word = _bmp_word_table()[points]
    flips = np.flatnonzero(word[1:] != word[:-1]) + 1
    if len(word) and word[0]:
        flips = np.concatenate(([0], flips))
    starts, ends = flips[0::2], flips[1::2]  # the final "\n" ends the last word
    if not len(starts):
        return _EMPTY, _EMPTY
    lengths = ends - starts
    packable = lengths <= _PACK_MAX
    wide = _EMPTY if points.dtype == np.uint8 else np.flatnonzero(word & (points > 0x7F))
    if len(wide):  # a word with a non-ASCII character (rare) is not packed
        packable[np.searchsorted(starts, wide, "right") - 1] = False
    raw = np.concatenate((points.astype(np.uint8), np.zeros(_PACK_MAX, dtype=np.uint8)))
    # windows[i] = the 8 bytes raw[i:i + 8] as one little-endian uint64 (a strided view)
    windows = np.ndarray((len(points) + 8,), dtype="<u8", buffer=raw, strides=(1,))
    first, size = starts[packable], lengths[packable]
    low = windows[first] & _LOW_BYTES[np.minimum(size, 8)]
    high = windows[first + 8] & _LOW_BYTES[np.clip(size - 8, 0, 8)]
    order, fresh = _group(low, high)
    distinct = order[fresh]
    pairs = zip(low[distinct].tolist(), high[distinct].tolist(), strict=True)
    keys = [a | (b << 64) for a, b in pairs]
    ids = [packed.get(key) for key in keys]
    for i, term_id in enumerate(ids):
        if term_id is None:
            text = keys[i].to_bytes(_PACK_MAX, "little").rstrip(b"\0").decode("ascii")
            ids[i] = packed[keys[i]] = vocab_id(text)
    packed_ids = np.empty(len(order), dtype=np.int64)
    packed_ids[order] = np.asarray(ids, dtype=np.int64)[np.cumsum(fresh) - 1]
    spans = zip(starts[~packable].tolist(), ends[~packable].tolist(), strict=True)
    other_ids = np.fromiter((vocab_id(joined[a:b]) for a, b in spans), dtype=np.int64)
    docs = np.concatenate((owner[first], owner[starts[~packable]]))
    return docs, np.concatenate((packed_ids, other_ids))


_POSITION_BITS = 24  # sort keys carry a position in their low 24 bits (batches stay below)


def _sorted_with_positions(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (non-negative, < 2**40) sorted, and the order that sorts them.

    One ``np.sort`` of value << 24 | position: numpy sorts integers far faster than it
    argsorts them.
    """
    if len(values) >= 1 << _POSITION_BITS:  # positions would not fit: the plain way
        order = np.argsort(values, kind="stable")
        return values[order], order
    keys = (values.astype(np.uint64) << _POSITION_BITS) | np.arange(len(values), dtype=np.uint64)
    keys.sort()
    return keys >> _POSITION_BITS, (keys & ((1 << _POSITION_BITS) - 1)).astype(np.int64)


def _group(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An order that puts equal (low, high) keys together, and where each group starts.

    Sorts a 40-bit mix of the two keys; if two different keys share a mix (rare), sorts
    the key pairs themselves instead, so the grouping is always exact.
    """
    mixed = ((low * _MIX_LOW) ^ (high * _MIX_HIGH)) >> np.uint64(_POSITION_BITS)
    ordered, order = _sorted_with_positions(mixed)
    fresh = _run_starts(ordered)
    lo, hi = low[order], high[order]
    if np.any(~fresh[1:] & ((lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1]))):  # a collision
        order = np.lexsort((high, low))
        lo, hi = low[order], high[order]
        fresh = _run_starts(lo)
        fresh[1:] |= hi[1:] != hi[:-1]
    return order, fresh


def _han_pairs(
    points: np.ndarray, owner: np.ndarray, vocab_id: VocabId
) -> tuple[np.ndarray, np.ndarray]:
    """(doc, term id) for the CJK terms: a run of one character gives that character,
    a longer run its overlapping bigrams (``term_set``, vectorized)."""
    offset = points.view(np.int32) - _HAN_BASE  # code points < 2**21: int32 is enough
    han = (offset >= 0) & (offset < _HAN_SPAN)
    where = np.flatnonzero(han)
    if not len(where):
        return _EMPTY, _EMPTY
    after = han[where + 1]  # the last character is "\n": where + 1 stays in range
    before = han[where - 1]  # where - 1 == -1 reads that final "\n": not CJK
    firsts = where[after]
    lones = where[~after & ~before]
    head = offset[firsts].astype(np.int64)
    codes = np.concatenate((head * _HAN_SPAN + offset[firsts + 1], _LONE_BASE + offset[lones]))
    ordered, order = _sorted_with_positions(codes)  # codes < 2**29
    fresh = _run_starts(ordered)
    distinct = ordered[fresh].tolist()
    ids = np.fromiter(map(vocab_id, distinct), dtype=np.int64, count=len(distinct))
    code_ids = np.empty(len(codes), dtype=np.int64)
    code_ids[order] = ids[np.cumsum(fresh) - 1]
    return owner[np.concatenate((firsts, lones))], code_ids


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """True where a sorted array's value differs from the one before (and at 0)."""
    starts = np.empty(len(ordered), dtype=np.bool_)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return starts


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
            state = self.store.synced_state()
            if state.generation != self._generation:
                self._reset(state.generation)
            new = state.records[self._consumed :]
            self._consumed = len(state.records)
            self._add(new)
        finally:
            if pause:
                gc.enable()
        if state.identity is not None:
            self._stat_key = (*state.identity, state.offset, state.mtime_ns)
        else:
            self._stat_key = None

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
                docs, terms = _term_pairs(
                    texts[start : i + 1],
                    list(range(first + start, first + i + 1)),
                    self._vocab.__getitem__,
                    self._packed,
                )
                self._pair_terms.extend(terms)
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
            return self._taught(query, as_of=as_of, policy=policy)  # it raises the same error
        with self._lock:  # the arrays change under refresh: one recall at a time
            return self._recall(query, as_of=as_of, policy=policy)

    def _recall(
        self, query: RecallQuery, *, as_of: datetime | str, policy: ScoringPolicy
    ) -> RecallResult:
        self.refresh()
        moment = parse_timestamp(as_of, "as_of")
        policy = require_policy(policy)
        unique_terms = dict.fromkeys(query.terms)  # a hand-built query may repeat a term
        parts = [part for term in unique_terms for part in self._postings(term)]
        docs, levels = self._match(parts)
        chosen = self._shortlist(docs, levels, query, moment, policy)
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
            searched_records=len(self._records) - self._dead,
            candidate_records=len(docs),
            empty_reason=None if hits else "no_matching_terms",
            retracted_records=self._dead,
            as_of=format_timestamp(moment),
        )

    def _taught(
        self, query: RecallQuery, *, as_of: datetime | str, policy: ScoringPolicy
    ) -> RecallResult:
        from .engine import recall_pipeline

        return recall_pipeline(query, self.store.read_all(), as_of=as_of, policy=policy)

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
        seconds = (capture_micros(moment) - captured[picked]) / 1e6
        age_days = np.maximum(0.0, seconds / 86_400.0)
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
    """``capture_micros(parse_timestamp(captured_at))``, quicker for the usual ``...Z`` form."""
    if captured_at[-1:] == "Z":
        try:
            return capture_micros(_from_isoformat(captured_at))  # UTC already
        except ValueError:
            pass
    return capture_micros(parse_timestamp(captured_at, "captured_at"))


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
