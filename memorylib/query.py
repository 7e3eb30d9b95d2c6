"""Stage 1, normalize: raw recall text -> one RecallQuery with stable, sorted terms.

Contract: ``text`` keeps a readable whitespace-folded form; ``normalized_text`` is
NFKC + casefold + NFKC (casefold can denormalize) + whitespace fold; ``terms`` are
sorted and unique. Rejects empty text, text with no searchable term, text over 2,000
characters and a bad limit.

Terms come from one rule, read character by character:

* a run of word characters is one term: what ``str.isalnum()`` accepts, ``_`` and
  combining marks, outside U+4E00..U+9FFF. For ASCII that is ``[a-z0-9_]`` (the rule of
  the chapter's reference code); beyond the chapter, letters and digits of other scripts
  count too, so "café" and "память" stay whole (and so does a run of kana or Hangul);
* a run of Chinese characters (U+4E00..U+9FFF after NFKC) gives its character
  bigrams ("分层记忆" -> 分层 / 层记 / 记忆); a lone character stays a unigram.

A change of class ends a run: "cache失效" gives "cache" and "失效". ``extract_terms``
takes text ``normalize_text`` already folded; it does not fold again.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from .checks import fold_whitespace, require, require_limit
from .errors import RemoteMemoryValidationError
from .records import RecallQuery
from .timestamps import format_timestamp, parse_timestamp, utc_now

__all__ = [
    "CJK_FIRST",
    "CJK_LAST",
    "MAX_QUERY_CHARS",
    "char_class",
    "extract_terms",
    "is_cjk",
    "is_word_char",
    "normalize_recall_query",
    "normalize_text",
    "term_counts",
    "term_occurrences",
]

MAX_QUERY_CHARS = 2_000
CJK_FIRST, CJK_LAST = "\u4e00", "\u9fff"  # CJK Unified Ideographs: the contract's range


def normalize_text(text: str) -> str:
    """NFKC, casefold, NFKC again, and every run of whitespace as one space."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return fold_whitespace(folded)


def is_cjk(char: str) -> bool:
    return CJK_FIRST <= char <= CJK_LAST


def is_word_char(char: str) -> bool:
    """Letters, digits and ``_`` (what ``\\w`` matches) and combining marks; not CJK."""
    return (
        char.isalnum() or char == "_" or unicodedata.category(char).startswith("M")
    ) and not is_cjk(char)


@functools.cache  # a character's class never changes: work it out once per character
def char_class(char: str) -> str:
    """``"word"``, ``"cjk"`` or ``"other"`` (spaces, punctuation, symbols)."""
    if is_cjk(char):
        return "cjk"
    return "word" if is_word_char(char) else "other"


def term_occurrences(normalized: str) -> Iterator[str]:
    """Every term of already-normalized text, in text order, repeats included."""
    for kind, chars in itertools.groupby(normalized, key=char_class):
        run = "".join(chars)
        if kind == "word" or (kind == "cjk" and len(run) == 1):  # a word, a lone character
            yield run
        elif kind == "cjk":  # a run of Chinese characters: its overlapping bigrams
            yield from (run[i : i + 2] for i in range(len(run) - 1))


def extract_terms(normalized: str) -> tuple[str, ...]:
    """Sorted unique terms of already-normalized text: words and CJK bigrams."""
    return tuple(sorted(set(term_occurrences(normalized))))


def term_counts(normalized: str) -> Counter[str]:
    """How often each term occurs (BM25's term frequencies; their sum is the length)."""
    return Counter(term_occurrences(normalized))


def normalize_recall_query(
    text: object,
    *,
    user_scope: str,
    limit: object = 5,
    query_id: str | None = None,
    issued_at: datetime | str | None = None,
) -> RecallQuery:
    """Build the one RecallQuery every later stage reads. Pure: no I/O.

    ``issued_at`` defaults to now (UTC); pass it for reproducible output.
    """
    readable = fold_whitespace(require(text, str, "query text"))
    if not readable:
        raise RemoteMemoryValidationError(
            "recall query must not be empty: the query text says what history to recall"
        )
    if len(readable) > MAX_QUERY_CHARS:
        raise RemoteMemoryValidationError(
            f"query text is {len(readable)} characters; the limit is {MAX_QUERY_CHARS}"
        )
    checked_limit = require_limit(limit)
    if not isinstance(user_scope, str) or not user_scope:
        raise RemoteMemoryValidationError("user_scope must be a non-empty str")
    if query_id is None:
        query_id = uuid.uuid4().hex
    elif not isinstance(query_id, str) or not query_id.strip():
        raise RemoteMemoryValidationError(
            f"query_id must be a non-empty str, got {type(query_id).__name__} {query_id!r}"
        )
    normalized = normalize_text(readable)
    terms = extract_terms(normalized)
    if not terms:
        raise RemoteMemoryValidationError(
            f"query text {readable[:60]!r} has no searchable terms (only punctuation or "
            "symbols); restate the topic in words"
        )
    moment = utc_now() if issued_at is None else parse_timestamp(issued_at, "issued_at")
    return RecallQuery(
        query_id=query_id,
        text=readable,
        normalized_text=normalized,
        terms=terms,
        user_scope=user_scope,
        limit=checked_limit,
        issued_at=format_timestamp(moment),
    )
