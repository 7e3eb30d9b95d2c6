"""Terms quickly: ``extract_terms(normalize_text(text))`` for one text or thousands.

Three tricks, each checked against the reference by property tests on arbitrary
Unicode (``tests/test_fast_equivalence.py``):

* ``fold_case`` skips Unicode work for ASCII (NFKC leaves it alone and casefold is
  ``lower``) and narrows common fullwidth punctuation first (replacing a character by
  its NFKD form never changes the NFKC of the text, and without them most Chinese text
  passes NFKC's quick check instead of being rebuilt);
* ``terms`` reads words with one regex and CJK runs with another instead of a loop
  over characters; ``[^\\W...]`` matches ``is_word_char`` minus the combining marks,
  which are added as a class read off ``unicodedata`` once (and the plain rule, three
  times faster, is used when the text has none);
* ``term_pairs`` tokenizes a batch of texts as one numpy array of code points (see its
  docstring), for building the inverted index.

Another analyzer than the chapter's (``memorylib.analysis``) files a record under its
own terms: ``analyzed_counts`` reads the words and CJK runs with the same regexes and
applies the analysis's own steps to them (``analysis.stem``, ``analysis.cjk_terms``, the
stopword set), and ``analyzed_pairs`` turns a batch of texts into the same (doc, term
id, count) pairs as ``term_pairs``. Both are held equal to ``analysis.text_terms``.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from memorylib.analysis import Analyzer, cjk_terms, stem, stop_terms
from memorylib.query import CJK_FIRST, CJK_LAST, is_word_char

__all__ = [
    "HAN_BASE",
    "HAN_SPAN",
    "LONE_BASE",
    "analyzed_counts",
    "analyzed_pairs",
    "fold_case",
    "narrow_fullwidth",
    "runs",
    "spread",
    "term_key",
    "term_pairs",
    "terms",
    "unique_terms",
]

HAN_BASE = ord(CJK_FIRST)  # U+4E00
HAN_SPAN = ord(CJK_LAST) - HAN_BASE + 1  # U+4E00..U+9FFF
LONE_BASE = HAN_SPAN * HAN_SPAN  # term keys of lone characters follow the bigram keys

# Fullwidth punctuation common in Chinese text, with its NFKD form (plain ASCII).
_FULLWIDTH = tuple(
    (chr(cp), chr(cp - 0xFEE0)) for cp in (0xFF0C, 0xFF1A, 0xFF1B, 0xFF01, 0xFF1F, 0xFF08, 0xFF09)
)
_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")  # what \w+ matches in ASCII-only text


def narrow_fullwidth(text: str) -> str:
    """``text`` with common fullwidth punctuation replaced by its NFKD form (same NFKC)."""
    for wide, narrow in _FULLWIDTH:
        if wide in text:
            text = text.replace(wide, narrow)
    return text


def fold_case(text: str) -> str:
    """``normalize_text`` without the whitespace folding (no term can tell them apart)."""
    if text.isascii():
        return text.lower()
    text = narrow_fullwidth(text)
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def _char_class(code_points: list[int]) -> str:
    """The body of a regex character class matching exactly ``code_points`` (as ranges)."""
    runs: list[list[int]] = []
    for cp in code_points:
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs
    )


# Combining marks live in planes 0, 1 and 14 only: planes 2 and 3 are reserved for
# ideographs, 15 and 16 for private use, 4 to 13 are unassigned (Unicode's roadmap).
# Scanning these three planes instead of all 17 saves about 0.08 s on the first recall;
# tests/test_fast_equivalence.py checks the result against the full scan.
_MARK_PLANES = (0, 1, 14)


class _Rules(NamedTuple):
    full: re.Pattern[str]  # a word, combining marks included
    plain: re.Pattern[str]  # a word, for text without combining marks
    han: re.Pattern[str]  # a maximal run of CJK characters
    marks: frozenset[str]  # every combining mark (a set lookup beats a regex search here)


@lru_cache(maxsize=1)
def _rules() -> _Rules:
    marks = [
        cp
        for plane in _MARK_PLANES
        for cp in range(plane << 16, (plane + 1) << 16)
        if unicodedata.category(chr(cp))[0] == "M"
    ]
    mark_class = _char_class(marks)
    han = f"{CJK_FIRST}-{CJK_LAST}"
    # (?:a+|b+)+ matches what (?:a|b)+ matches, a run at a time instead of a character.
    return _Rules(
        full=re.compile(rf"(?:[^\W{han}]+|[{mark_class}]+)+"),
        plain=re.compile(rf"[^\W{han}]+"),
        han=re.compile(rf"[{han}]+"),
        marks=frozenset(map(chr, marks)),
    )


def unique_terms(normalized: str) -> set[str]:
    """The set of ``extract_terms(normalized)`` (text already folded).

    No character is both a word character and a CJK one, so words and CJK runs are read
    by two regex passes (one set built in C from the words) instead of one pass that
    returns a pair per match.
    """
    if normalized.isascii():  # no CJK run and no mark: words are exactly [A-Za-z0-9_]+
        return set(_ASCII_WORD.findall(normalized))
    rules = _rules()
    words = rules.plain if rules.marks.isdisjoint(normalized) else rules.full
    found = set(words.findall(normalized))
    for run in rules.han.findall(normalized):
        if len(run) == 1:
            found.add(run)
        else:  # character bigrams: run[i] + run[i + 1]
            found.update(map(operator.add, run[:-1], run[1:]))
    return found


def runs(folded: str) -> tuple[list[str], list[str]]:
    """Every word and every maximal CJK run of folded text (``fold_case``), repeats kept,
    as the reference's ``char_class`` groups them (for the analyzers' index)."""
    if folded.isascii():
        return _ASCII_WORD.findall(folded), []
    rules = _rules()
    words = rules.plain if rules.marks.isdisjoint(folded) else rules.full
    return words.findall(folded), rules.han.findall(folded)


def terms(text: str) -> tuple[str, ...]:
    """``extract_terms(normalize_text(text))``, quicker."""
    return tuple(sorted(unique_terms(fold_case(text))))


def analyzed_counts(text: str, analyzer: Analyzer) -> dict[str, int]:
    """``analysis.text_terms(text, analyzer).counts`` of raw ``text``, quicker (the regexes
    of ``runs`` instead of a loop over characters; nothing cached): for the index."""
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


def term_key(term: str) -> str | int:
    """The index's key of a term: a CJK bigram or character as an int code, else the word."""
    offsets = [ord(char) - HAN_BASE for char in term[:3]]
    if offsets and all(0 <= offset < HAN_SPAN for offset in offsets):
        if len(term) == 1:
            return LONE_BASE + offsets[0]
        if len(term) == 2:
            return offsets[0] * HAN_SPAN + offsets[1]
    return term  # a word (or a string the tokenizer never makes: it matches nothing)


# -- many texts at once --------------------------------------------------------------------

VocabId = Callable[[str | int], int]
_EMPTY = np.zeros(0, dtype=np.int64)
_PACK_MAX = 16  # ASCII words of up to 16 bytes get exact integer keys (two uint64)
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # n low bytes
_MIX_LOW = np.uint64(0x9E3779B97F4A7C15)  # odd multipliers: spread every key bit upwards
_MIX_HIGH = np.uint64(0xC2B2AE3D27D4EB4F)
_POSITION_BITS = 24  # sort keys carry a position in their low 24 bits (batches stay below)


@lru_cache(maxsize=1)
def _bmp_word_table() -> np.ndarray:
    """``table[cp]``: is U+cp (cp < 0x10000) a word character (``query.is_word_char``)?"""
    return np.fromiter((is_word_char(chr(cp)) for cp in range(0x10000)), dtype=np.bool_)


def term_pairs(
    texts: list[str], docs: list[int], vocab_id: VocabId, packed: dict[int, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (doc, term id) pairs, ordered by term id then doc, ``docs[i]`` (ascending)
    holding the terms of raw ``texts[i]``, and how often each term occurs in its doc
    (``term_counts``; capped at 65,535, far above what a 20,000-character record holds).

    Every text is case-folded (``fold_case``) and the folded texts are joined by "\\n"
    (not a word or CJK character, so no term crosses two texts), then read as code
    points: words are the maximal runs of word characters (``_word_pairs``), CJK terms
    come from the maximal runs of U+4E00..U+9FFF (``_han_pairs``). A batch of plain-ASCII
    texts is read as bytes: it needs no Unicode folding and holds no CJK. ``vocab_id``
    maps a term key (``term_key``) to its id.

    Both readers hand back their occurrences grouped by term, each group in text order
    (so in doc order), and no term in two groups: one pass counts the repeats and a
    gather puts the groups in term id order, with no sort of the occurrences.
    """
    if not texts:
        return _EMPTY.astype(np.int32), _EMPTY.astype(np.int32), _EMPTY.astype(np.uint16)
    if all(text.isascii() for text in texts):
        joined = "\n".join(texts).lower() + "\n"  # fold_case of ASCII is lower()
        points = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1
        owner = np.repeat(np.asarray(docs, dtype=np.int32), sizes)  # doc of each byte
        parts = [_word_pairs(joined, points, owner, vocab_id, packed)]
    else:
        joined, sizes = _fold_joined(texts)
        points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        owner = np.repeat(np.asarray(docs, dtype=np.int32), sizes)  # doc of each point
        parts = [
            _word_pairs(joined, points, owner, vocab_id, packed),
            _han_pairs(points, owner, vocab_id),
        ]
    occurrence_docs = np.concatenate([part[0] for part in parts])
    occurrence_ids = np.concatenate([part[1] for part in parts])
    return _ordered_pairs(occurrence_docs, occurrence_ids)


def analyzed_pairs(
    texts: list[str], docs: list[int], vocab_id: VocabId, analyzer: Analyzer
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``term_pairs`` for another analyzer: the unique (doc, term id) pairs of raw
    ``texts`` under ``analyzer`` (``analyzed_counts``), ordered by term id then doc, and
    how often each term occurs in its doc (capped at 65,535). Term keys are ``term_key``'s,
    so a query term finds its postings the same way."""
    pair_docs: list[int] = []
    pair_ids: list[int] = []
    pair_counts: list[int] = []
    for doc, text in zip(docs, texts, strict=True):
        for term, count in analyzed_counts(text, analyzer).items():
            pair_docs.append(doc)
            pair_ids.append(vocab_id(term_key(term)))
            pair_counts.append(count)
    found_docs = np.asarray(pair_docs, dtype=np.int32)
    found_ids = np.asarray(pair_ids, dtype=np.int32)
    order = np.lexsort((found_docs, found_ids))
    counts = np.minimum(np.asarray(pair_counts, dtype=np.int64), 0xFFFF).astype(np.uint16)
    return found_docs[order], found_ids[order], counts[order]


def _ordered_pairs(docs: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(docs, term ids, counts) of the distinct pairs, ordered by term id then doc, from
    occurrences grouped by term (one group per term) with docs ascending in each group."""
    fresh = _run_starts(ids)
    fresh[1:] |= docs[1:] != docs[:-1]
    starts = np.flatnonzero(fresh)
    counts = np.diff(np.append(starts, len(ids)))  # occurrences of each (term, doc)
    pair_docs, pair_ids = docs[starts], ids[starts]
    group_starts = np.flatnonzero(_run_starts(pair_ids))  # one group per term
    group_sizes = np.diff(np.append(group_starts, len(pair_ids)))
    order = np.argsort(pair_ids[group_starts], kind="stable")
    sizes = group_sizes[order]
    moved = np.cumsum(sizes) - sizes  # where each group starts once in order
    take = spread(group_starts[order] - moved, sizes)
    return (
        pair_docs[take].astype(np.int32),
        pair_ids[take].astype(np.int32),
        np.minimum(counts[take], 0xFFFF).astype(np.uint16),
    )


def spread(shift: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``i + shift[t]`` for every position ``i`` of an array made of ``counts[t]`` items
    of each group ``t`` in turn: where each item of a group moves when groups move."""
    where = np.repeat(shift, counts)
    where += np.arange(len(where))
    return where


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
    """(doc, word id) for every word occurrence in ``joined`` (``points``: its code points),
    grouped by word, each group in text order.

    An ASCII word of at most 16 bytes is keyed by its bytes as two zero-padded uint64
    (no word byte is zero, so the key is exact) and ``packed`` remembers each key's id;
    any other word is sliced out of ``joined`` as a str.
    """
    table = _bmp_word_table()
    if points.dtype == np.uint8:  # ASCII bytes
        word, astral = table[points], _EMPTY
    else:
        word, astral = table[np.minimum(points, 0xFFFF)], np.flatnonzero(points > 0xFFFF)
    if len(astral):  # characters beyond the BMP (emoji, rare scripts): ask the rule itself
        word[astral] = [is_word_char(chr(cp)) for cp in points[astral].tolist()]
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
    packed_ids = np.asarray(ids, dtype=np.int64)[np.cumsum(fresh) - 1]  # in ``order``
    spans = zip(starts[~packable].tolist(), ends[~packable].tolist(), strict=True)
    other_ids = np.fromiter((vocab_id(joined[a:b]) for a, b in spans), dtype=np.int64)
    other_order = np.argsort(other_ids, kind="stable")  # few: group them by term
    docs = np.concatenate((owner[first[order]], owner[starts[~packable][other_order]]))
    return docs, np.concatenate((packed_ids, other_ids[other_order]))


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
    """(doc, term id) for the CJK terms, grouped by term, each group in text order: a run
    of one character gives that character, a longer run its overlapping bigrams
    (``extract_terms``, vectorized)."""
    offset = points.view(np.int32) - HAN_BASE  # code points < 2**21: int32 is enough
    han = (offset >= 0) & (offset < HAN_SPAN)
    where = np.flatnonzero(han)
    if not len(where):
        return _EMPTY, _EMPTY
    after = han[where + 1]  # the last character is "\n": where + 1 stays in range
    before = han[where - 1]  # where - 1 == -1 reads that final "\n": not CJK
    firsts = where[after]
    lones = where[~after & ~before]
    head = offset[firsts].astype(np.int64)
    codes = np.concatenate((head * HAN_SPAN + offset[firsts + 1], LONE_BASE + offset[lones]))
    ordered, order = _sorted_with_positions(codes)  # codes < 2**29
    fresh = _run_starts(ordered)
    distinct = ordered[fresh].tolist()
    ids = np.fromiter(map(vocab_id, distinct), dtype=np.int64, count=len(distinct))
    return owner[np.concatenate((firsts, lones))[order]], ids[np.cumsum(fresh) - 1]


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """True where a sorted array's value differs from the one before (and at 0)."""
    starts = np.empty(len(ordered), dtype=np.bool_)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return starts
