"""The self-check of notebook 07b (retraction): six retractions, five predictions.

The notebook's tables and chart are written in its cells and compared by nbval; what is
tested here is the checker it relies on: what the five steps really leave behind, that the
reference solution passes and plausible wrong answers fail with their hint, and that the
steps and questions the notebook prints are the ones the checker runs.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest

from memorylib.notebook.retraction_views import (
    EXERCISE_STEPS,
    check_retraction_predictions,
    exercise_truth,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "07b_retraction.ipynb"
SOLUTION = ROOT / "notebooks" / "solutions" / "07b_retraction.py"
# the five questions as the notebook's table asks them; the checker answers these keys
EXERCISE_QUESTIONS = {
    "lines": "len(store.read_all()) after the six steps (an int)",
    "returned": "the memory_id of the record step 3 returns (a str)",
    "profile": "store.latest_profile(): its memory_id, or None",
    "searched": 'RecallEngine(store).recall("memory", as_of=AS_OF).searched_records (an int)',
    "retracted": 'RecallEngine(store).recall("memory", as_of=AS_OF).retracted_records (an int)',
}
TRUTH = {"lines": 11, "returned": "r-2", "profile": None, "searched": 3, "retracted": 3}


def test_exercise_truth() -> None:
    # 7 seeded lines + r-1 + r-2 (+ nothing for the repeat, nothing for the refused r-4) + r-5
    # + r-6;
    # the only profile is retracted; the profile is never searched, so never "retracted" either
    assert exercise_truth() == TRUTH
    assert list(TRUTH) == list(EXERCISE_QUESTIONS)


def test_the_notebook_shows_the_steps_and_questions_the_checker_runs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    (your_turn,) = [c for c in nb.cells if c.cell_type == "markdown" and "## Your turn" in c.source]
    for step, (target, rid) in enumerate(EXERCISE_STEPS, start=1):
        call = f'store.retract("{target}", reason=..., source=..., retraction_id="{rid}")'
        assert f"| {step} | `{call}` |" in your_turn.source, step
    plain = your_turn.source.replace("`", "")
    for key, question in EXERCISE_QUESTIONS.items():
        assert f"| {key} | {question} |" in plain, key


def test_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_prediction"]
    result = check_retraction_predictions(answer)
    assert result.is_right and str(result).startswith("✅ All 5 right")


def test_checker_accepts_none_spelled_as_text() -> None:
    assert check_retraction_predictions({**TRUTH, "profile": "None"}).is_right


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        ({**TRUTH, "searched": ...}, "⏳", "searched"),
        ({**TRUTH, "lines": 12}, "❌", "repeated retraction returns the first one"),
        ({**TRUTH, "lines": 13}, "❌", "lines: you said 13"),
        ({**TRUTH, "lines": "11"}, "❌", "lines: you said '11'"),
        # the audit store of section 3 has 10 lines: copying it is wrong here
        ({**TRUTH, "lines": 10}, "❌", "lines: you said 10"),
        ({**TRUTH, "returned": "r-3"}, "❌", "idempotent"),
        ({**TRUTH, "profile": "profile-001"}, "❌", "skips a retracted profile"),
        ({**TRUTH, "searched": 6}, "❌", "retracted ones are not"),
        # every retraction counted, the profile's too
        ({**TRUTH, "retracted": 4}, "❌", "is a profile ever searched"),
        # "retracted_records counts retracted records that match the query": no, all of them
        ({**TRUTH, "retracted": 0}, "❌", "retracted: you said 0"),
        ({**TRUTH, "retracted": True}, "❌", "retracted: you said True"),
        ({**TRUTH, "searched": 4, "retracted": 2}, "❌", "2 of 5 wrong"),
        ([10, "r-2"], "❌", "dict"),
    ],
)
def test_checker_rejects_wrong_answers(answer: object, start: str, fragment: str) -> None:
    result = check_retraction_predictions(answer)
    message = str(result)
    assert message.startswith(start) and fragment in message, message
    assert not result.is_right
