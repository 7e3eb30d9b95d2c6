"""Stage 1, normalize: raw recall text -> one RecallQuery with stable, sorted terms.

Contract: ``text`` keeps a readable whitespace-folded form; ``normalized_text`` is
NFKC + casefold + whitespace-folded; ``terms`` are sorted and unique. Rejects empty
text, text with no searchable term, text over 2,000 characters and a bad limit.

Terms are words plus Chinese character bigrams:

* a word is a run of word characters: ``[a-z0-9_]`` for ASCII (exactly the
  chapter's rule) and, beyond the chapter, letters, marks and digits of every other
  script, so "café", "straße" (-> "strasse") and "память" stay whole;
* each run of CJK unified ideographs (U+4E00..U+9FFF after NFKC) gives its
  character bigrams ("分层记忆" -> 分层 / 层记 / 记忆); a lone character stays a unigram.
"""

from __future__ import annotations

import operator
import re
import unicodedata
import uuid
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from ._checks import (
    fold_whitespace,
    format_timestamp,
    parse_timestamp,
    require_limit,
    type_name,
    utc_now,
)
from .errors import RemoteMemoryValidationError
from .records import RecallQuery

__all__ = [
    "MAX_QUERY_CHARS",
    "extract_terms",
    "fold_case",
    "narrow_fullwidth",
    "normalize_recall_query",
    "normalize_text",
    "term_set",
]

MAX_QUERY_CHARS = 2_000
CJK_FIRST, CJK_LAST = "\u4e00", "\u9fff"


class _Patterns(NamedTuple):
    full: re.Pattern[str]  # the rule: group 1 = a word, group 2 = a CJK run
    plain: re.Pattern[str]  # the rule for text without combining marks
    needs_full: re.Pattern[str]  # finds a combining mark (or anything beyond U+FFFF)
    word: re.Pattern[str]  # words only: group 1 of ``full``, on its own


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    """The tokenizer's regexes, compiled on first use.

    ``full`` is the one rule: group 1 = a word, group 2 = a CJK run. Python's ``\\w``
    covers letters, digits and ``_`` of every script but not combining marks
    (Devanagari vowel signs, for instance), so the marks are added explicitly; CJK
    ideographs are taken out of words and handled as bigram runs.

    ``plain`` is the same rule without the marks. In text where ``needs_full`` finds
    nothing both give the same matches, and ``plain`` is three times faster. Word and
    CJK characters never overlap, so ``word`` alone finds exactly the words.
    """
    marks = [
        cp for cp in range(0x300, 0x20000) if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me")
    ]
    bmp = _char_class([cp for cp in marks if cp <= 0xFFFF])
    astral = _char_class([cp for cp in marks if cp > 0xFFFF])
    han = f"{CJK_FIRST}-{CJK_LAST}"
    # (?:a+|b+)+ matches exactly what (?:a|b)+ matches, one run at a time instead of
    # one character at a time.
    word = rf"(?:[^\W{han}]+|[{bmp}]+|[{astral}]+)+"
    plain_word = rf"[^\W{han}]+"
    return _Patterns(
        full=re.compile(rf"({word})|([{han}]+)"),
        plain=re.compile(rf"({plain_word})|([{han}]+)"),
        needs_full=re.compile(f"[{bmp}\U00010000-\U0010ffff]"),
        word=re.compile(word),
    )


def _char_class(code_points: list[int]) -> str:
    """The body of a character class matching exactly ``code_points`` (as ranges)."""
    runs: list[list[int]] = []
    for cp in code_points:
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs
    )


def _token_pattern() -> re.Pattern[str]:
    """The tokenizer's rule as one regex: group 1 = a word, group 2 = a CJK run."""
    return _patterns().full


_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")  # what \w+ matches in ASCII-only text


# Fullwidth punctuation common in Chinese text, with its NFKD form (plain ASCII).
# Replacing a character by its NFKD form never changes the NFKC of the whole text, and
# without them most Chinese text passes NFKC's quick check instead of being rebuilt.
_FULLWIDTH = tuple(
    (chr(cp), chr(cp - 0xFEE0)) for cp in (0xFF0C, 0xFF1A, 0xFF1B, 0xFF01, 0xFF1F, 0xFF08, 0xFF09)
)


def fold_case(text: str) -> str:
    """NFKC, casefold, NFKC again (casefold can denormalize): ``normalize_text`` minus spaces.

    Whitespace is never part of a term, so terms can be cut from this directly.
    """
    if text.isascii():  # NFKC leaves ASCII unchanged and casefold is lower: same result
        return text.lower()
    text = narrow_fullwidth(text)
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def narrow_fullwidth(text: str) -> str:
    """``text`` with common fullwidth punctuation replaced by its NFKD form (same NFKC)."""
    for wide, narrow in _FULLWIDTH:
        if wide in text:
            text = text.replace(wide, narrow)
    return text


def normalize_text(text: str) -> str:
    """NFKC, casefold, whitespace-fold (casefold can change length, so NFKC again)."""
    if text.isascii():
        return " ".join(text.lower().split())
    return fold_whitespace(fold_case(text))


def term_set(normalized: str) -> set[str]:
    """The unique terms of already-normalized text, unsorted (``extract_terms`` sorts)."""
    if normalized.isascii():  # no CJK run and no mark: words are exactly [A-Za-z0-9_]+
        return set(_ASCII_WORD.findall(normalized))
    patterns = _patterns()
    pattern = patterns.full if patterns.needs_full.search(normalized) else patterns.plain
    terms: set[str] = set()
    for word, han in pattern.findall(normalized):
        if word:
            terms.add(word)
        elif len(han) == 1:
            terms.add(han)
        else:  # character bigrams: han[i] + han[i + 1]
            terms.update(map(operator.add, han[:-1], han[1:]))
    return terms


def extract_terms(normalized: str) -> tuple[str, ...]:
    """Sorted unique terms of already-normalized text (see the module docstring)."""
    return tuple(sorted(term_set(normalized)))


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
    if not isinstance(text, str):
        raise RemoteMemoryValidationError(f"query text must be a str, got {type_name(text)}")
    readable = fold_whitespace(text)
    if not readable:
        raise RemoteMemoryValidationError("query text is empty: say what history to recall")
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
            f"query_id must be a non-empty str, got {type_name(query_id)} {query_id!r}"
        )
    normalized = normalize_text(readable)
    terms = extract_terms(normalized)
    if not terms:
        raise RemoteMemoryValidationError(
            f"query text {readable[:60]!r} has no searchable term (only punctuation or symbols); "
            "restate the topic in words"
        )
    moment = parse_timestamp(issued_at, "issued_at") if issued_at is not None else None

    return RecallQuery(
        query_id=query_id,
        text=readable,
        normalized_text=normalized,
        terms=terms,
        user_scope=user_scope,
        limit=checked_limit,
        issued_at=format_timestamp(moment or utc_now()),
    )
