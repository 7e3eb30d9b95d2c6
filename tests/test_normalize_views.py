"""The views of notebook 02 (normalize): pure, never raising, and agreeing with stage 1."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from memorylib import extract_terms, normalize_text
from memorylib.notebook.normalize_views import (
    EXERCISE_TEXT,
    check_predicted_terms,
    normalization_frame,
    normalize_view,
    normalize_widget,
    rejection_frame,
    term_count_chart,
    term_count_frame,
    term_kind,
    term_table,
    visible,
)

SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "02_normalize.py"


def test_view_of_the_chapter_query() -> None:
    view = normalize_view("  LAYERED   Memory  ")
    assert view["accepted"] is True
    assert view["text"] == "LAYERED Memory"
    assert view["normalized_text"] == "layered memory"
    assert view["terms"] == ("layered", "memory")
    assert view["term_count"] == 2
    assert view["error_type"] is None and view["error_message"] is None


@pytest.mark.parametrize(
    ("text", "limit", "needle"),
    [
        ("", 5, "empty"),
        ("   \t\n", 5, "empty"),
        ("?!...", 5, "no searchable term"),
        ("x" * 2001, 5, "2000"),
        ("memory", 0, "between 1 and 10"),
        ("memory", 11, "between 1 and 10"),
        ("memory", True, "int"),
        (None, 5, "str"),
    ],
)
def test_view_returns_rejections_as_data(text: object, limit: object, needle: str) -> None:
    view = normalize_view(text, limit=limit)
    assert view["accepted"] is False
    assert view["error_type"] == "RemoteMemoryValidationError"
    assert needle in view["error_message"]
    assert view["terms"] == () and view["term_count"] == 0


def test_visible_marks_invisible_whitespace() -> None:
    assert visible("a\tb\nc\u3000d") == "a⇥b↵c□d"


def test_term_kind() -> None:
    assert term_kind("分层") == "Chinese bigram"
    assert term_kind("记") == "Chinese single character"
    assert term_kind("memory") == "word"
    assert term_kind("café") == "word"


def test_normalization_frame_matches_the_library() -> None:
    cases = [("fullwidth", "ＬＡＹＥＲＥＤ　Ｍｅｍｏｒｙ"), ("eszett", "Straße"), ("bad", "?!")]
    frame = normalization_frame(cases)
    assert list(frame["case"]) == ["fullwidth", "eszett", "bad"]
    assert frame.loc[0, "normalized_text"] == "layered memory"
    assert frame.loc[0, "input"] == "ＬＡＹＥＲＥＤ□Ｍｅｍｏｒｙ"
    assert frame.loc[1, "terms"] == "strasse"
    assert frame.loc[2, "term_count"] == 0


def test_term_table_lists_kinds_in_term_order() -> None:
    table = term_table("记忆 layered")
    assert list(table["term"]) == ["layered", "记忆"]
    assert list(table["kind"]) == ["word", "Chinese bigram"]


def test_rejection_frame() -> None:
    frame = rejection_frame([("ok", "memory", 5), ("punct", "!!!", 5), ("limit", "memory", 0)])
    assert list(frame["accepted"]) == [True, False, False]
    assert frame.loc[0, "error_type"] == ""
    assert frame.loc[2, "limit"] == "0"


def test_term_count_frame_and_chart() -> None:
    frame = term_count_frame()
    first = frame.iloc[0]
    assert (first["english_terms"], first["chinese_terms"]) == (2, 3)  # 分层 层记 记忆
    for _, row in frame.iterrows():
        assert row["english_terms"] == len(extract_terms(normalize_text(row["english"])))
        assert row["chinese_terms"] == row["chinese_chars"] - 1  # one run: n - 1 bigrams
    fig = term_count_chart(frame)
    assert len(fig.axes) == 1
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == list(frame["question"])


def test_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(SOLUTION))["predicted_terms"]
    assert str(check_predicted_terms(answer)).startswith("✅")
    assert answer == extract_terms(normalize_text(EXERCISE_TEXT))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (("SQLite", "wal", "持久化方案"), "casefold"),
        (("ｓｑｌｉｔｅ", "wal", "久化", "化方", "持久", "方案"), "NFKC"),
        (("sqlite", "wal", "持久化方案"), "bigrams"),
        (("sqlite", "wal", "wal", "久化", "化方", "持久", "方案"), "each term is listed once"),
        (("sqlite", "wal"), "missing"),
    ],
)
def test_checker_rejects_wrong_answers_with_a_hint(answer: tuple[str, ...], hint: str) -> None:
    verdict = str(check_predicted_terms(answer))
    assert verdict.startswith("❌")
    assert hint in verdict


def test_the_terms_are_a_set_any_order_is_right() -> None:
    # code-point order is the contract's output, not something a student can do by eye
    assert check_predicted_terms(("wal", "sqlite", "方案", "久化", "持久", "化方")).is_right


def test_checker_placeholder_and_wrong_types() -> None:
    assert str(check_predicted_terms(...)).startswith("⏳")
    assert str(check_predicted_terms("sqlite wal")).startswith("❌")
    assert str(check_predicted_terms((1, 2))).startswith("❌")


def test_widget_updates_from_the_view() -> None:
    widget = normalize_widget("Straße")
    box, shown = widget.children
    assert "strasse" in shown.value
    box.value = "?!"
    assert "rejected" in shown.value and "RemoteMemoryValidationError" in shown.value


def test_query_card_lists_every_field() -> None:
    from memorylib import normalize_recall_query
    from memorylib.notebook.normalize_views import query_card

    query = normalize_recall_query(
        "  LAYERED   Memory  ", user_scope="s", query_id="q-1", issued_at="2026-08-02T12:00:00Z"
    )
    card = query_card(query).set_index("field")["value"]
    assert card["text"] == "'LAYERED Memory'"
    assert card["terms"] == "layered | memory"
    assert card["limit"] == "5"
    assert list(card.index) == list(query.to_dict())
