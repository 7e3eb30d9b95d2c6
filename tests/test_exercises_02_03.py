"""The "Your turn" checks of notebooks 02 (normalize) and 03 (candidates): each accepts the
reference solution, refuses the likely wrong answers (right-by-accident ones included) with
a hint aimed at them, and no cell of its notebook shows an accepted answer before the attempt.
"""

from __future__ import annotations

import ast
import json
import runpy
from pathlib import Path

import nbformat
import pytest

from memorylib import extract_terms, normalize_text
from memorylib.datasets import COURSE_USERS, course_records
from memorylib.notebook.buildit.candidates import (
    CACHE_TARGET,
    CACHE_WORDS,
    QUIET_QUESTION,
    check_cache_query,
    check_quiet_query,
)
from memorylib.notebook.buildit.normalize import EXERCISE_TEXT, check_predicted_terms

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SOLUTIONS = NOTEBOOKS / "solutions"


def _cells(stem: str) -> list:
    return nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4).cells


def _shown(cell) -> str:
    """A cell's source and every text its outputs carry."""
    parts = [cell.source]
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        for mime, value in output.get("data", {}).items():
            if mime.startswith("text/"):
                parts.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(parts)


def _before_your_turn(stem: str) -> list:
    cells = _cells(stem)
    cut = next(i for i, c in enumerate(cells) if "## Your turn" in c.source)
    return cells[:cut]


# -- 02: predict the terms -------------------------------------------------------------------


def test_02_accepts_the_solution_in_any_order() -> None:
    answer = runpy.run_path(str(SOLUTIONS / "02_normalize.py"))["my_predicted_terms"]
    assert answer == extract_terms(normalize_text(EXERCISE_TEXT))
    assert check_predicted_terms(answer).is_right
    assert check_predicted_terms(tuple(reversed(answer))).is_right
    assert check_predicted_terms(list(answer)).is_right


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (("SQLite", "wal", "持久化方案"), "casefold"),
        (("ｓｑｌｉｔｅ", "wal", "久化", "化方", "持久", "方案"), "NFKC"),
        (("sqlite", "wal", "持久化方案"), "bigrams"),
        (("sqlite", "wal", "wal", "久化", "化方", "持久", "方案"), "list each term only once"),
        (["sqlite", "wal", "wal", "久化", "化方", "持久", "方案"], "list each term only once"),
        (["方案", "方案", "sqlite", "持久", "wal", "化方", "久化"], "list each term only once"),
        (("sqlite", "wal"), "4 term(s) missing"),
        (("sqlite", "wal", "持久", "化方", "方案"), "1 term(s) missing"),  # 久化 forgotten
        # a repeat does not make up for a missing term
        (("sqlite", "wal", "持久", "化方", "方案", "方案"), "1 term(s) missing"),
        (("sqlite",), "5 term(s) missing"),  # trivially short
        ((), "6 term(s) missing"),  # empty
        (("sqlite", "wal", "久化", "化方", "持久", "方案", "数据"), "1 term(s) that are not terms"),
        ("sqlite wal", "tuple"),
        ((1, 2), "tuple"),
    ],
)
def test_02_refuses_wrong_terms_with_a_hint(answer: object, hint: str) -> None:
    verdict = str(check_predicted_terms(answer))
    assert verdict.startswith("❌") and hint in verdict, verdict


def test_02_placeholder() -> None:
    assert str(check_predicted_terms(...)).startswith("⏳")


def test_02_never_shows_the_exercise_terms_before_the_attempt() -> None:
    # 化方 and 方案 exist only in the exercise's text: no cell before it may show them,
    # and no earlier output holds the answer's tuple
    expected = repr(extract_terms(normalize_text(EXERCISE_TEXT)))
    for index, cell in enumerate(_before_your_turn("02_normalize")):
        shown = _shown(cell)
        assert "化方" not in shown and "方案" not in shown, f"cell {index}"
        assert expected not in shown, f"cell {index}"


# -- 03: a quieter query -----------------------------------------------------------------------


def test_03_accepts_the_solutions() -> None:
    solution = runpy.run_path(str(SOLUTIONS / "03_candidates.py"))
    assert check_quiet_query(solution["my_quiet_query"]).is_right
    assert check_quiet_query("filelock fcntl").is_right  # any two rare words of the record
    assert check_cache_query(solution["my_cache_query"]).is_right
    assert check_cache_query("缓存 减少").is_right  # two words of its content: 1 candidate


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (QUIET_QUESTION, "34 candidates"),
        ("lock file windows", "'file' (11)"),  # the filler is gone, a common word is not
        ("windows", "shares only windows"),  # 3 candidates, right by accident: one word
        ("Windows windows", "shares only windows"),  # still one term
        ("windows xyzzy", "shares only windows"),  # padded with a word no record holds
        ("lock work", "shares only lock"),  # 'work' is not the record's 'works'
        ("kubernetes helm", "no longer a candidate"),
        ("!!", "rejects"),
        (42, "str"),
    ],
)
def test_03_refuses_wrong_queries_with_a_hint(answer: object, hint: str) -> None:
    verdict = str(check_quiet_query(answer))
    assert verdict.startswith("❌") and hint in verdict, verdict


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ("召回结果 cache 失效", "27 candidates"),  # the notebook's query
        ("失效 追加", "6 candidates"),  # two words of the record, both in other records
        ("缓存", "its Chinese words: 缓存."),  # 1 candidate, right by accident: one word
        ("缓存 缓存", "its Chinese words: 缓存."),  # still one term
        ("件一追", "its Chinese words: none"),  # 1 candidate: bigrams across two words
        ("版本 件一", "its Chinese words: 版本."),  # one word and a straddling bigram
        ("offset ttl", "its Chinese words: none"),  # words of the record, not in Chinese
        ("index status", "no longer a candidate"),
    ],
)
def test_03_stretch_refuses_wrong_queries(answer: str, hint: str) -> None:
    verdict = str(check_cache_query(answer))
    assert verdict.startswith("❌") and hint in verdict, verdict


def test_03_stretch_words_are_terms_of_the_record() -> None:
    """Every word the stretch counts is a searchable term of its record: none is dead."""
    record = next(r for r in course_records(COURSE_USERS[0]) if r.memory_id == CACHE_TARGET)
    terms = set(extract_terms(normalize_text(record.summary + " " + record.content)))
    assert terms >= CACHE_WORDS and "件一" in terms  # the straddling bigrams are terms too


def test_03_placeholders_wait() -> None:
    assert str(check_quiet_query(...)).startswith("⏳")
    assert str(check_cache_query(...)).startswith("⏳")


def test_03_no_query_the_notebook_runs_answers_an_exercise() -> None:
    """Every str in 03's code cells (its queries included) fails both checks, the exercise's
    question is never run there, and the solutions appear nowhere in the notebook."""
    cells = _cells("03_candidates")
    texts = {
        node.value
        for cell in cells
        if cell.cell_type == "code"
        for node in ast.walk(ast.parse(cell.source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert {"memory block budget tokens", "召回结果 cache 失效"} <= texts  # the walker sees them
    assert QUIET_QUESTION not in texts  # a question the notebook never runs
    for text in sorted(texts):
        for check in (check_quiet_query, check_cache_query):
            assert not check(text).is_right, f"{text!r} answers {check.__name__}"
    shown = "\n".join(_shown(cell) for cell in cells).casefold()
    solution = runpy.run_path(str(SOLUTIONS / "03_candidates.py"))
    assert solution["my_quiet_query"].casefold() not in shown
    # the stretch's word is in a summary the student is meant to read, never as a query
    for answer in (solution["my_quiet_query"], solution["my_cache_query"]):
        assert f'"{answer.casefold()}"' not in shown, f"{answer!r} is in the notebook"
