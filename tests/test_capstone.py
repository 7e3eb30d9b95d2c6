"""Notebook 06c, the capstone: the broken pipelines of its exercise differ where the
checker says, the checker accepts the reference solution and names each mistake, and a
student's stage that loses every term is reported as a difference, never raised."""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest

from memorylib.notebook import buildit
from memorylib.notebook.buildit import capstone
from memorylib.notebook.buildit.fixtures import CHAPTER_QUERY, CHAPTER_SCOPE, chapter_records
from memorylib.timestamps import TEACHING_AS_OF

ROOT = Path(__file__).resolve().parents[1]
ANSWER = runpy.run_path(str(ROOT / "notebooks" / "solutions" / "06c_capstone.py"))["my_prediction"]


def test_each_broken_pipeline_replaces_one_slot_and_is_really_broken() -> None:
    for label, (slot, _) in capstone.BROKEN.items():
        pipeline = capstone.broken_pipeline(label)
        assert pipeline.yours == (slot,), label
    truth = capstone.first_difference_truth()
    assert truth == ANSWER
    # the two that agree on the chapter's example are caught by the corpus
    for label in [label for label, stage in truth.items() if stage == "none"]:
        corpus = buildit.compare_on_corpus(capstone.broken_pipeline(label))
        assert not corpus.differences.empty, f"{label} is not broken on the corpus either"


def test_the_checker_accepts_the_solution_in_any_accepted_spelling() -> None:
    assert capstone.check_first_differences(ANSWER).is_right
    spelled = {**ANSWER, "A": " Normalize ", "D": None, "E": "NONE"}
    assert capstone.check_first_differences(spelled).is_right
    ranked = {
        label: ("stable_rank" if stage == "stable rank" else stage)
        for label, stage in ANSWER.items()
    }
    assert capstone.check_first_differences(ranked).is_right


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"A": "none"}, "written in capitals"),
        ({"B": "none"}, "searched_records"),
        ({"C": "stable rank"}, "recency depends on the window"),
        ({"D": "stable rank"}, "does a limit of 5 cut anything"),
        ({"E": "render"}, "empty wrapper"),
        ({"E": "rendering"}, "answer one of"),
    ],
)
def test_the_checker_names_each_mistake(change: dict, fragment: str) -> None:
    result = capstone.check_first_differences({**ANSWER, **change})
    assert not result.is_right and fragment in str(result)


def test_the_checker_placeholder() -> None:
    assert str(capstone.check_first_differences(...)).startswith("⏳ Not answered yet")
    assert "dict" in str(capstone.check_first_differences(["none"]))


def test_terms_lost_by_your_stage_are_a_difference_not_an_error() -> None:
    def english_words_only(normalized: str) -> tuple[str, ...]:
        return tuple(sorted({w for w in normalized.split() if w.isascii()}))

    pipeline = buildit.Pipeline.from_functions(extract_terms=english_words_only)
    comparison = pipeline.compare(
        "分层记忆", chapter_records(), user_scope=CHAPTER_SCOPE, as_of=TEACHING_AS_OF
    )
    stage, detail = comparison.difference
    assert stage == "normalize" and "no terms" in detail and "分层" in detail
    corpus = buildit.compare_on_corpus(pipeline)  # Chinese queries no longer stop the run
    assert "normalize" in set(corpus.differences["first difference"])
    assert comparison.reference.result is not None  # the library's run is untouched
    assert (
        pipeline.compare(
            CHAPTER_QUERY, chapter_records(), user_scope=CHAPTER_SCOPE, as_of=TEACHING_AS_OF
        ).difference
        is None
    )


def test_no_broken_function_runs_before_the_exercise() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "06c_capstone.ipynb", as_version=4)
    cut = next(i for i, c in enumerate(nb.cells) if "## Your turn" in c.source)
    before = "\n".join(c.source for c in nb.cells[:cut])
    for _, broken in capstone.BROKEN.values():
        assert broken.__name__ not in before
    assert "capstone.BROKEN" not in before and "broken_pipeline" not in before
