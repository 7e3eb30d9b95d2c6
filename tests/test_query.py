"""Stage 1, normalize: readable text, NFKC/casefold/whitespace, words and Chinese bigrams."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memorylib import (
    TEACHING_AS_OF,
    RemoteMemoryValidationError,
    extract_terms,
    normalize_recall_query,
    normalize_text,
)

SCOPE = "0123456789abcdef"


def q(text, **kw):
    kw.setdefault("user_scope", SCOPE)
    kw.setdefault("issued_at", TEACHING_AS_OF)
    return normalize_recall_query(text, **kw)


def chapter_terms(text: str) -> tuple[str, ...]:
    """The chapter's rule, written independently: [a-z0-9_]+ words + CJK bigrams."""
    normalized = unicodedata.normalize("NFKC", text).casefold()
    terms = set(re.findall(r"[a-z0-9_]+", normalized))
    for run in re.findall(r"[\u4e00-\u9fff]+", normalized):
        terms.update([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return tuple(sorted(terms))


def test_english_readable_and_normalized_forms() -> None:
    query = q("  LAYERED   Memory  ", query_id="query-1")
    assert query.text == "LAYERED Memory"
    assert query.normalized_text == "layered memory"
    assert query.terms == ("layered", "memory")
    assert query.query_id == "query-1"
    assert query.limit == 5
    assert query.issued_at == TEACHING_AS_OF


def test_chinese_bigrams() -> None:
    assert q("分层记忆").terms == ("分层", "层记", "记忆")


def test_single_chinese_character_stays_a_unigram() -> None:
    assert q("记").terms == ("记",)


def test_mixed_script_query() -> None:
    assert q("SQLite WAL 持久化").terms == ("sqlite", "wal", "久化", "持久")


def test_nfkc_and_casefold() -> None:
    assert q("ＬＡＹＥＲＥＤ　ｍｅｍｏｒｙ").normalized_text == "layered memory"
    assert q("STRASSE").terms == q("straße").terms == ("strasse",)


def test_other_alphabetic_scripts_are_words_not_dropped() -> None:
    assert q("café").terms == ("café",)
    assert q("Память агента").terms == ("агента", "память")
    assert q("Μνήμη").terms == ("μνήμη",)
    assert q("नमस्ते").terms == ("नमस्ते",)  # vowel signs (marks) stay inside the word


def test_missing_query_id_gets_a_fresh_uuid4_hex() -> None:
    first, second = q("memory"), q("memory")
    assert re.fullmatch(r"[0-9a-f]{32}", first.query_id)
    assert first.query_id != second.query_id


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_query_is_rejected(text) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="empty"):
        q(text)


@pytest.mark.parametrize("text", ["?!", "...", "—— ！？", "@#$%^&*()"])
def test_punctuation_only_query_is_rejected(text) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="no searchable term"):
        q(text)


def test_oversized_query_is_rejected() -> None:
    q("a" * 2000)
    with pytest.raises(RemoteMemoryValidationError, match="2000"):
        q("a" * 2001)


@pytest.mark.parametrize("limit", [0, 11, -1, True, False, 5.0, "5", None])
def test_limit_outside_1_to_10_or_not_int_is_rejected(limit) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="limit"):
        q("memory", limit=limit)


@pytest.mark.parametrize("limit", [1, 10])
def test_limit_bounds_are_inclusive(limit) -> None:
    assert q("memory", limit=limit).limit == limit


@pytest.mark.parametrize("text", [None, b"memory", 42, ["memory"]])
def test_query_text_must_be_str(text) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="query text must be a str"):
        q(text)


def test_naive_issued_at_is_taken_as_utc() -> None:
    from datetime import datetime

    assert q("memory", issued_at=datetime(2026, 8, 2, 12)).issued_at == "2026-08-02T12:00:00Z"
    assert q("memory", issued_at="2026-08-02T14:00:00+02:00").issued_at == "2026-08-02T12:00:00Z"


# -- properties --------------------------------------------------------------------------

ascii_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
any_text = st.text(max_size=80)


@given(ascii_text)
def test_ascii_terms_are_exactly_the_chapters_rule(text) -> None:
    assert extract_terms(normalize_text(text)) == chapter_terms(text)


@given(st.text(alphabet="abc 分层记忆的中文 ,。", max_size=40))
def test_chinese_terms_match_the_chapters_rule(text) -> None:
    assert extract_terms(normalize_text(text)) == chapter_terms(text)


@given(any_text)
def test_normalization_is_idempotent(text) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert extract_terms(normalize_text(once)) == extract_terms(once)


@given(any_text)
def test_terms_are_sorted_and_unique(text) -> None:
    terms = extract_terms(normalize_text(text))
    assert list(terms) == sorted(set(terms))
    assert all(terms)


@given(any_text)
def test_terms_ignore_case_and_compatibility_forms(text) -> None:
    base = extract_terms(normalize_text(text))
    assert extract_terms(normalize_text(text.upper())) == extract_terms(
        normalize_text(text.upper().casefold())
    )
    assert extract_terms(normalize_text(unicodedata.normalize("NFKD", text))) == base
    assert extract_terms(normalize_text(text.casefold())) == base
