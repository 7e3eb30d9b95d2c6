"""The exercise scaffolding every notebook checker shares: one result type, two renderings,
one way to parse answers."""

from __future__ import annotations

import importlib
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from memorylib.notebook.exercises import (
    CheckResult,
    Counterexample,
    Verdict,
    checker,
    expect_labels,
    expect_number,
    expect_sequence,
    expect_type,
    grade_labels,
    not_answered,
    right,
    wrong,
)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def test_the_three_verdicts_as_text() -> None:
    assert str(not_answered("Not answered yet.")) == "⏳ Not answered yet."
    assert str(right("Right: 42.")) == "✅ Right: 42."
    result = wrong("2 of 5 wrong:", ["A: hint a", "B: hint b"])
    assert result.text == "❌ 2 of 5 wrong:\n  A: hint a\n  B: hint b"
    assert (result.verdict, result.mark, result.is_right) == (Verdict.WRONG, "❌", False)
    assert right("x").is_right and not not_answered("x").is_right


def test_the_html_rendering_escapes_and_names_the_verdict() -> None:
    markup = wrong("You said <script>", ["A: <b>bold</b>"])._repr_html_()
    root = ET.fromstring(markup)
    assert root.get("data-verdict") == "wrong" and root.get("class") == "memorylib-check"
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert [li.text for li in root.iter("li")] == ["A: <b>bold</b>"]
    assert ET.fromstring(right("ok")._repr_html_()).get("data-verdict") == "right"


def test_a_counterexample_is_part_of_both_renderings() -> None:
    # the slot a later "build-it" checker fills: the smallest input where the student's
    # function and the reference disagree
    example = Counterexample("generated", "normalize('Ａ  b')", "('a', 'b')", "('Ａ', 'b')")
    result = wrong("NFKC first: fullwidth letters become ASCII.", counterexample=example)
    assert result.text.splitlines() == [
        "❌ NFKC first: fullwidth letters become ASCII.",
        "  counterexample (generated): normalize('Ａ  b')",
        "  expected: ('a', 'b')",
        "  got:      ('Ａ', 'b')",
    ]
    cells = [td.findtext("code") for td in ET.fromstring(result._repr_html_()).iter("td")]
    assert cells == ["normalize('Ａ  b')", "('a', 'b')", "('Ａ', 'b')"]


@checker(placeholder="a number")
def _check_double(answer: object, of: int) -> CheckResult:
    value = expect_number(answer)
    return right("Right.") if value == 2 * of else wrong("Not yet: double it.")


def test_checker_answers_the_placeholder_and_stops_on_a_parse_error() -> None:
    assert str(_check_double(..., 3)) == "⏳ Not answered yet: replace ... with a number."
    assert _check_double(None, 3).verdict is Verdict.NOT_ANSWERED
    assert str(_check_double("6", 3)) == "❌ The answer must be a number, not str."
    assert str(_check_double(True, 3)) == "❌ The answer must be a number, not bool."
    assert str(_check_double(float("nan"), 3)) == "❌ The answer must be a finite number."
    assert _check_double(6, 3).is_right and not _check_double(5, 3).is_right
    assert _check_double.__name__ == "_check_double"  # wraps keeps the name


@checker(placeholder="anything")
def _parse(answer: object, how: str) -> CheckResult:
    if how == "str":
        value = expect_type(answer, str, "a str")
    elif how == "int":
        value = expect_type(answer, int, "an int")
    elif how == "terms":
        value = expect_sequence(answer, "a tuple of str", item=str, item_message="Only str.")
    else:
        value = expect_labels(answer, "AB", "a dict from 'A'..'B'")
    return right(repr(value))


@pytest.mark.parametrize(
    ("answer", "how", "expected"),
    [
        ("x", "str", "✅ 'x'"),
        (3, "str", "❌ The answer must be a str, not int."),
        (True, "int", "❌ The answer must be an int, not bool."),
        (["a", "b"], "terms", "✅ ('a', 'b')"),
        ("ab", "terms", "❌ The answer must be a tuple of str, not str."),
        (("a", 1), "terms", "❌ Only str."),
        ({"A": 1, "B": None, "C": 3}, "labels", "✅ {'A': 1, 'B': None}"),
        ({"A": 1}, "labels", "⏳ Not answered yet for B."),
        ({"A": ..., "B": ...}, "labels", "⏳ Not answered yet for A, B."),
        ([1, 2], "labels", "❌ The answer must be a dict from 'A'..'B', not list."),
    ],
)
def test_the_shared_parsing(answer: object, how: str, expected: str) -> None:
    assert str(_parse(answer, how)) == expected


def test_grade_labels_lists_one_hint_per_wrong_label() -> None:
    truth = {"A": 1, "B": 2, "C": 3}
    hints = {"A": "a", "B": "b", "C": "c"}
    same = lambda given, expected: given == expected  # noqa: E731
    assert grade_labels(truth, {"A": 1, "B": 2, "C": 3}, hints, same=same) is None
    result = grade_labels(truth, {"A": 1, "B": 5, "C": "3"}, hints, same=same)
    assert result is not None
    assert result.text == ("❌ 2 of 3 wrong:\n  B: you said 5. Hint: b\n  C: you said '3'. Hint: c")


# Every checker of the course, called with the committed placeholder: it must return a
# CheckResult whose text is exactly what its notebook shows (the committed output).
CHECKERS = [
    ("01_stored_records", "records_views", "check_append_predictions", (), {}),
    ("01_stored_records", "records_views", "check_scope_function", (), {}),
    ("02_normalize", "normalize_views", "check_predicted_terms", (), {}),
    (
        "03_candidates",
        "candidate_views",
        "check_quiet_query",
        ((),),
        {"user_scope": "x", "as_of": "x"},
    ),
    ("04_scoring", "scoring_views", "check_total_answer", (None,), {}),
    ("05_stable_rank", "rank_views", "check_order_answer", (), {}),
    ("06_render", "render_views", "check_render_predictions", (), {}),
    ("06b_profile", "render_views", "check_profile_predictions", (), {}),
    ("07_failures_and_recovery", "failure_views", "check_error_predictions", (), {}),
    ("07b_retraction", "retraction_views", "check_retraction_predictions", (), {}),
    ("08_query_playground", "playground", "check_isolation_query", (None,), {}),
    ("09_live_agent", "live_agent", "check_restated_query", (None,), {"as_of": "x"}),
]


@pytest.mark.parametrize(
    ("notebook", "module", "name", "args", "kwargs"),
    CHECKERS,
    ids=[f"{c[0]}-{c[2]}" for c in CHECKERS],
)
def test_every_checker_returns_the_shared_result(notebook, module, name, args, kwargs) -> None:
    check = getattr(importlib.import_module(f"memorylib.notebook.{module}"), name)
    result = check(..., *args, **kwargs)
    assert isinstance(result, CheckResult) and result.verdict is Verdict.NOT_ANSWERED
    nb = nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and f"{name}(" in c.source]
    shown = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    assert shown == f"{result}\n"
