"""The views of notebook 07b (retraction): hidden from recall and profiles, kept in the file."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from memorylib import MemoryKind, RecallEngine, RemoteMemoryStore, seed_teaching_store
from memorylib.notebook.retraction_views import (
    EXERCISE_QUESTIONS,
    EXERCISE_STEPS,
    REVIEW_SOURCE,
    add_newer_profile,
    audit_frame,
    check_retraction_predictions,
    exercise_questions_frame,
    exercise_steps_frame,
    exercise_truth,
    recall_summary_frame,
    retraction_errors_frame,
    retraction_timeline,
)

AS_OF = "2026-08-02T12:00:00Z"
SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "07b_retraction.py"
TRUTH = {"lines": 10, "returned": "r-2", "profile": None, "searched": 4, "retracted": 2}


@pytest.fixture
def chapter(tmp_path: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl")
    seed_teaching_store(store)
    return store


def test_retraction_views(chapter: RemoteMemoryStore) -> None:
    add_newer_profile(chapter)
    engine = RecallEngine(chapter)
    before = engine.recall("layered memory", query_id="q", as_of=AS_OF)
    chapter.retract(
        "conversation-003", reason="wrong", source=REVIEW_SOURCE, retraction_id="retraction-001"
    )
    after = engine.recall("layered memory", query_id="q", as_of=AS_OF)
    summary = recall_summary_frame({"before": before, "after": after}).set_index("moment")
    assert summary.loc["before", "hits"] == "conversation-003"
    assert summary.loc["after", "hits"] == "(none)"
    assert summary.loc["after", "retracted_records"] == 1
    assert summary.loc["after", "searched_records"] == 5
    lines = len(chapter.read_all())
    errors = retraction_errors_frame(chapter)
    assert list(errors["error"]) == ["RemoteMemoryValidationError"] * 3
    assert len(chapter.read_all()) == lines  # refused retractions write nothing
    trail = audit_frame(chapter).set_index("memory_id")
    assert trail.loc["conversation-003", "hidden_by"] == "retraction-001"
    assert trail.loc["retraction-001", "retracts"] == "conversation-003"
    assert trail.loc["retraction-001", "kind"] == MemoryKind.RETRACTION.value


def test_retraction_timeline_draws_every_line_and_arc(chapter: RemoteMemoryStore) -> None:
    import matplotlib.pyplot as plt

    chapter.retract(
        "conversation-003", reason="wrong", source=REVIEW_SOURCE, retraction_id="retraction-001"
    )
    fig = retraction_timeline(chapter)
    (ax,) = fig.axes
    assert len(ax.get_xticks()) == 8
    assert len(ax.patches) == 1  # one arc: one retraction
    assert ax.get_title() == "8 lines, 1 hidden, 0 deleted"
    plt.close(fig)


def test_exercise_frames_show_every_step_and_question() -> None:
    assert list(exercise_steps_frame()["step"]) == list(EXERCISE_STEPS) == ["1", "2", "3", "4", "5"]
    assert list(exercise_questions_frame()["key"]) == list(EXERCISE_QUESTIONS)


def test_exercise_truth() -> None:
    # 7 seeded lines + r-1 + r-2 (+ nothing for the repeat, nothing for the refused r-4) + r-5;
    # the only profile is retracted; the profile is never searched, so never "retracted" either
    assert exercise_truth() == TRUTH


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
        ({**TRUTH, "lines": 11}, "❌", "repeated retraction returns the first one"),
        ({**TRUTH, "lines": 12}, "❌", "lines: you said 12"),
        ({**TRUTH, "lines": "10"}, "❌", "lines: you said '10'"),
        ({**TRUTH, "returned": "r-3"}, "❌", "idempotent"),
        ({**TRUTH, "profile": "profile-001"}, "❌", "skips a retracted profile"),
        ({**TRUTH, "searched": 6}, "❌", "retracted ones are not"),
        ({**TRUTH, "retracted": 3}, "❌", "is a profile ever searched"),
        ({**TRUTH, "retracted": True}, "❌", "retracted: you said True"),
        ({**TRUTH, "searched": 5, "retracted": 1}, "❌", "2 of 5 wrong"),
        ([10, "r-2"], "❌", "dict"),
    ],
)
def test_checker_rejects_wrong_answers(answer: object, start: str, fragment: str) -> None:
    result = check_retraction_predictions(answer)
    message = str(result)
    assert message.startswith(start) and fragment in message, message
    assert not result.is_right
