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

import re
import unicodedata
import uuid
from datetime import datetime
from functools import lru_cache

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

__all__ = ["MAX_QUERY_CHARS", "extract_terms", "normalize_recall_query", "normalize_text"]

MAX_QUERY_CHARS = 2_000
CJK_FIRST, CJK_LAST = "\u4e00", "\u9fff"


@lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    """One regex, compiled on first use: group 1 = a word, group 2 = a CJK run.

    Python's ``\\w`` covers letters, digits and ``_`` of every script but not
    combining marks (Devanagari vowel signs, for instance), so the marks are added
    explicitly; CJK ideographs are taken out of words and handled as bigram runs.
    """
    marks = "".join(
        chr(cp)
        for cp in range(0x300, 0x20000)
        if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me")
    )
    word = rf"(?:[^\W{CJK_FIRST}-{CJK_LAST}]|[{re.escape(marks)}])+"
    return re.compile(rf"({word})|([{CJK_FIRST}-{CJK_LAST}]+)")


def normalize_text(text: str) -> str:
    """NFKC, casefold, whitespace-fold (casefold can change length, so NFKC again)."""
    return fold_whitespace(
        unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    )


def extract_terms(normalized: str) -> tuple[str, ...]:
    """Sorted unique terms of already-normalized text (see the module docstring)."""
    terms: set[str] = set()
    for word, han in _token_pattern().findall(normalized):
        if word:
            terms.add(word)
        elif len(han) == 1:
            terms.add(han)
        else:
            terms.update(han[i : i + 2] for i in range(len(han) - 1))
    return tuple(sorted(terms))


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
