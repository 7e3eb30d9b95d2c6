"""The course's one exercise engine: three verdicts, two renderings, value checks, function
checks (worked examples, generated cases, shrinking, the mistake catalogue, one float
tolerance), quiz questions, and one catalogue of the engine's own messages."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import strategies as st

from memorylib.notebook.exercises import (
    FLOAT_NOISE,
    TOLERANCE,
    Call,
    CheckResult,
    Counterexample,
    FunctionExercise,
    Malformed,
    Mistake,
    Question,
    Verdict,
    check_function,
    check_value,
    expect_labels,
    expect_sequence,
    grade_labels,
    not_answered,
    right,
    same,
    within,
    wrong,
)


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


def test_a_mistake_caught_on_a_worked_example_prints_its_hint_and_the_call() -> None:
    double = FunctionExercise(
        "double",
        lambda n: 2 * n,
        examples={"two doubled": Call(2)},
        cases=st.integers(-5, 5).map(Call),
        mistakes=(Mistake("adds one", "Multiply by 2.", lambda n: n + 1),),
    )
    assert str(check_function(double, lambda n: n + 1, name="mine")).splitlines() == [
        "❌ Not yet — adds one. Multiply by 2.",
        "  counterexample (named): two doubled: mine(2)",
        "  expected: 4",
        "  got:      3",
    ]


# -- value exercises ----------------------------------------------------------------------------


def _double(answer: object, of: int = 3) -> CheckResult:
    return check_value(
        answer,
        lambda a: right("Right.") if a == 2 * of else wrong("Not yet: double it."),
        placeholder="a number",
        kind=int,
        described="an int",
    )


def test_a_value_check_answers_the_placeholder_and_checks_the_type() -> None:
    assert str(_double(...)) == "⏳ Not answered yet: replace ... with a number."
    assert _double(None).verdict is Verdict.NOT_ANSWERED
    assert str(_double("6")) == "❌ The answer must be an int, not str."
    assert str(_double(True)) == "❌ The answer must be an int, not bool."  # a bool is no int
    assert _double(6).is_right and not _double(5).is_right


def test_a_value_check_can_require_a_type() -> None:
    def check(answer: object) -> CheckResult:
        return check_value(
            answer, lambda q: right(q), placeholder="a query", kind=str, described="a str (a query)"
        )

    assert str(check(3)) == "❌ The answer must be a str (a query), not int."
    assert str(check("x")) == "✅ x"


@pytest.mark.parametrize(
    ("answer", "how", "expected"),
    [
        (["a", "b"], "terms", "✅ ('a', 'b')"),
        ("ab", "terms", "❌ The answer must be a tuple of str, not str."),
        (("a", 1), "terms", "❌ The answer must be a tuple of str, not int."),
        ({"A": 1, "B": None, "C": 3}, "labels", "✅ {'A': 1, 'B': None}"),
        ({"A": 1}, "labels", "⏳ Not answered yet for B."),
        ({"A": ..., "B": ...}, "labels", "⏳ Not answered yet for A, B."),
        ([1, 2], "labels", "❌ The answer must be a dict from 'A'..'B', not list."),
    ],
)
def test_the_shared_parsing(answer: object, how: str, expected: str) -> None:
    def judge(value: object) -> CheckResult:
        if how == "terms":
            return right(repr(expect_sequence(value, "a tuple of str", item=str)))
        return right(repr(expect_labels(value, "AB", "a dict from 'A'..'B'")))

    assert str(check_value(answer, judge, placeholder="anything")) == expected


def test_grade_labels_lists_one_hint_per_wrong_label() -> None:
    truth = {"A": 1, "B": 2, "C": 3}
    hints = {"A": "a", "B": "b", "C": "c"}
    same_value = lambda given, expected: given == expected  # noqa: E731
    assert grade_labels(truth, {"A": 1, "B": 2, "C": 3}, hints, same=same_value) is None
    result = grade_labels(truth, {"A": 1, "B": 5, "C": "3"}, hints, same=same_value)
    assert result is not None
    assert result.text == ("❌ 2 of 3 wrong:\n  B: you said 5. Hint: b\n  C: you said '3'. Hint: c")


# -- the one comparison ------------------------------------------------------------------------


def test_one_float_tolerance_everywhere_in_a_result() -> None:
    assert (TOLERANCE, FLOAT_NOISE) == (1e-6, 1e-12)
    assert same(0.995161, 0.995162)  # a sum of rounded parts vs a rounded sum
    assert not same(0.995161, 0.995163)
    assert same({"total": 0.5, "terms": ("a",)}, {"total": 0.5000004, "terms": ("a",)})
    assert not same({"terms": ("a",)}, {"terms": ["a"]})  # a list is not the contract's tuple
    assert not same(1, True) and same(1, 1.0000001)
    assert not same({"a": 1}, {"a": 1, "b": 2})


def test_one_unit_in_the_sixth_place_agrees_and_two_do_not() -> None:
    # 1 of 3 terms, 3.75 days old: the rounded parts add to 0.416666, the unrounded sum
    # rounds to 0.416667; in binary floats they are a hair more than 1e-6 apart
    parts = round(0.85 / 3, 6) + round(0.15 / (1 + 3.75 / 30), 6)
    whole = round(0.85 / 3 + 0.15 / (1 + 3.75 / 30), 6)
    assert (parts, whole) == (0.416666, 0.416667)
    assert abs(parts - whole) > 1e-6  # why a bare `<= 1e-6` is not the rule
    assert within(whole, parts) and within(parts, whole) and same(whole, parts)
    assert same({"total": whole}, {"total": parts})
    assert not within(0.416667, 0.416665) and not same(0.416667, 0.416665)  # 2e-6
    # a rounded intermediate multiplied: 5 x 0.121429 is 2 units off 0.85 x 5/7
    assert round(0.85 * 5 / 7, 6) == 0.607143 and not same(0.607143, 5 * 0.121429)


# -- function exercises -------------------------------------------------------------------------

SQUARE = FunctionExercise(
    function="square",
    reference=lambda n: n * n,
    examples={"three squared": Call(3), "zero": Call(0)},
    cases=st.integers(-50, 50).map(Call),
    mistakes=(
        Mistake("doubles", "Multiply the number by itself, not by 2.", lambda n: 2 * n),
        Mistake("absolute value only", "Square it: n * n.", abs),
    ),
)


def test_a_right_function_passes_named_and_generated_cases() -> None:
    result = check_function(SQUARE, lambda n: n**2, name="mine")
    assert result.is_right, result.text
    assert "2 worked examples" in result.message and "generated inputs" in result.message


def test_a_catalogued_mistake_gets_its_hint_and_a_counterexample() -> None:
    result = check_function(SQUARE, lambda n: 2 * n, name="mine")
    assert result.verdict is Verdict.WRONG
    assert result.message == "Not yet — doubles. Multiply the number by itself, not by 2."
    assert result.counterexample == Counterexample("named", "three squared: mine(3)", "9", "6")


def test_a_mistake_only_generated_cases_show_is_shrunk_to_the_smallest() -> None:
    # right on 3 and 0, wrong from 10 on: hypothesis finds a failure and shrinks it to 10
    result = check_function(SQUARE, lambda n: n * n if abs(n) < 10 else 0, name="mine")
    assert result.counterexample is not None and result.counterexample.stage == "generated"
    assert result.counterexample.example.endswith("mine(10)")
    assert result.details[-1].startswith("passed first: the 2 worked examples and ")
    assert result.message == "Not yet — mine disagrees with the contract on the input below."


def test_the_mistake_that_agrees_on_most_examples_names_it() -> None:
    # abs agrees with "absolute value only" on both examples; "doubles" on none
    result = check_function(SQUARE, abs, name="mine")
    assert "absolute value only" in result.message


def _square(n: int) -> int:
    return n * n


def _square_of_sum(numbers: list[int]) -> int:
    return _square(sum(numbers))


REFUSING = FunctionExercise(
    function="square",
    reference=_square,
    examples={"three squared": Call(3)},
    cases=st.integers(-50, 50).map(Call),
    refuses=(_square,),
)


@pytest.mark.parametrize(
    "student",
    [
        lambda n: _square(n),  # the reference itself
        lambda n: _square_of_sum([n]),  # through another function
        lambda n: n * n if n < 20 else _square(n),  # only on some generated inputs
    ],
    ids=["direct", "through another function", "on generated inputs only"],
)
def test_a_function_that_calls_a_refused_one_is_not_an_answer(student) -> None:
    result = check_function(REFUSING, student, name="mine")
    assert result.verdict is Verdict.WRONG
    assert result.message.startswith("Not yet — mine calls the library's _square")
    assert sys.getprofile() is None  # the check put the profiler back


def test_a_refused_call_is_caught_even_when_it_raises_and_a_profiler_survives() -> None:
    def raising(n: int) -> int:
        _square(n)
        raise ValueError("after the call")

    seen: list[str] = []
    hook = lambda frame, event, arg: seen.append(event)  # noqa: E731
    sys.setprofile(hook)
    try:
        result = check_function(REFUSING, raising, name="mine")
        assert sys.getprofile() is hook
    finally:
        sys.setprofile(None)
    assert "calls the library's _square" in result.message
    assert check_function(REFUSING, lambda n: n * n, name="mine").is_right  # written out


def test_a_check_is_deterministic() -> None:
    wrong_from_seven = lambda n: n * n if n < 7 else n  # noqa: E731
    first = check_function(SQUARE, wrong_from_seven, name="mine").text
    assert all(check_function(SQUARE, wrong_from_seven, name="mine").text == first for _ in "ab")


_SAME_EVERYWHERE = """
import sys
if sys.argv[1] == "more":  # other local modules loaded: hypothesis must not read them
    import memorylib.backends, memorylib.notebook.ranker_exercises, memorylib.s12  # noqa: F401
from memorylib.notebook import buildit
from memorylib.notebook.exercises import check_function
for exercise in buildit.EXERCISES.values():
    for mistake in exercise.mistakes:
        print(check_function(exercise, mistake.variant, name="v").text)
"""


def test_a_check_says_the_same_whatever_else_is_imported_and_writes_nothing(tmp_path) -> None:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    texts = [
        subprocess.run(
            [sys.executable, "-c", _SAME_EVERYWHERE, mode],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,  # a notebook's working directory
            env=env,
        ).stdout
        for mode in ("less", "more")
    ]
    assert texts[0] == texts[1] and "counterexample (generated)" in texts[0]
    assert list(tmp_path.iterdir()) == []  # no .hypothesis/ in the notebooks folder


def test_not_answered_placeholder_template_and_none() -> None:
    def template(n: int) -> int:
        raise NotImplementedError

    def body_left_as_dots(n: int) -> None: ...

    assert str(check_function(SQUARE, ...)).startswith("⏳ Not answered yet: define square")
    assert "still raises NotImplementedError" in check_function(SQUARE, template).message
    assert "returns None" in check_function(SQUARE, body_left_as_dots).message
    assert "Pass the function itself (square), not int" in check_function(SQUARE, 7).message


def test_a_raising_function_gets_its_error_and_its_own_line() -> None:
    def crashes(n: int) -> int:
        table = {0: 0}
        return table[n]  # KeyError on 3

    result = check_function(SQUARE, crashes)
    assert result.message == "crashes raised KeyError: 3."
    (where,) = result.details  # the line of the student's own code (in a notebook: the cell's)
    assert re.fullmatch(r"where: line \d+, in crashes: return table\[n\]  # KeyError on 3", where)
    assert result.counterexample is not None and result.counterexample.got == "raised KeyError: 3"
    assert "Traceback" not in result.text


def test_a_result_of_the_wrong_shape_is_named() -> None:
    def read(result: object, call: Call) -> int:
        if not isinstance(result, int):
            raise Malformed(f"square must return an int, not {type(result).__name__}")
        return result

    typed = FunctionExercise("square", SQUARE.reference, SQUARE.examples, SQUARE.cases, read=read)
    result = check_function(typed, lambda n: str(n * n))
    assert result.message == "Not yet — square must return an int, not str"
    assert result.counterexample is not None and result.counterexample.got == "'9'"


def test_a_contract_that_raises_must_be_matched() -> None:
    def positive_root(n: int) -> int:
        if n < 0:
            raise ValueError("negative")
        return round(n**0.5)

    root = FunctionExercise("root", positive_root, {"four": Call(4)}, st.integers(-3, 9).map(Call))
    assert check_function(root, positive_root).is_right
    lenient = check_function(root, lambda n: round(abs(n) ** 0.5), name="lenient")
    assert lenient.message.startswith("Not yet — the contract rejects this input with ValueError")
    assert lenient.counterexample is not None and lenient.counterexample.example.endswith("(-1)")


# -- quiz questions -------------------------------------------------------------------------------

CHOICE = Question(
    "Which stage turns a query into terms?",
    accepted=("B",),
    choices=("candidate", "normalize", "render"),
    hint="Terms exist before any record is read.",
    hints={"C": "render writes the prompt block, the last stage."},
    why="normalize folds the text and cuts it into terms.",
)


def test_a_multiple_choice_question() -> None:
    assert str(CHOICE).splitlines()[1:] == ["  A) candidate", "  B) normalize", "  C) render"]
    assert str(CHOICE.check(...)) == "⏳ Not answered yet: replace ... with one of A, B, C."
    assert str(CHOICE.check(" b ")) == "✅ Right. normalize folds the text and cuts it into terms."
    assert str(CHOICE.check("A")) == "❌ Not yet: Terms exist before any record is read."
    assert "the last stage" in CHOICE.check("C").message  # a hint of its own
    assert "is not one of the choices" in CHOICE.check("D").message


# -- every checker of the course is on the engine -------------------------------------------------

CHECKERS = [
    ("records_exercises", "check_append_predictions", (), {}),
    ("records_exercises", "check_built_record", (None,), {}),
    ("records_exercises", "check_scope_function", (), {}),
    ("buildit.normalize", "check_predicted_terms", (), {}),
    ("buildit.candidates", "check_quiet_query", (), {}),
    ("buildit.candidates", "check_cache_query", (), {}),
    ("buildit.scoring", "check_q11_note", (), {}),
    ("buildit.ranking", "check_tie_order", (), {}),
    ("buildit.render", "check_render_predictions", (), {}),
    ("buildit.profile", "check_profile_predictions", (), {}),
    ("buildit.capstone", "check_first_differences", ({},), {}),
    ("failure_views", "check_error_predictions", (), {}),
    ("retraction_views", "check_retraction_predictions", (), {}),
    ("playground", "check_isolation_query", (None,), {}),
    ("playground", "check_isolation_why", (), {}),
    ("live_agent", "check_restated_query", (None,), {"as_of": "x"}),
    ("ranker_exercises", "check_my_score", (), {}),
    ("service_views", "check_service_predictions", (), {}),
]


@pytest.mark.parametrize(
    ("module", "name", "args", "kwargs"), CHECKERS, ids=[c[1] for c in CHECKERS]
)
def test_every_checker_returns_the_engines_result(module, name, args, kwargs) -> None:
    check = getattr(importlib.import_module(f"memorylib.notebook.{module}"), name)
    result = check(..., *args, **kwargs)
    assert isinstance(result, CheckResult) and result.verdict is Verdict.NOT_ANSWERED
    assert result.message.startswith("Not answered yet: replace ... with ")
