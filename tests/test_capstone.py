"""Notebook 06c, the capstone: the broken pipelines of its exercise differ where the
checker says, the checker accepts the reference solution and names each mistake, and a
student's stage that loses every term is reported as a difference, never raised."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from pathlib import Path

import nbformat
import pytest

import memorylib
from memorylib.datasets import load_labelled_queries
from memorylib.notebook import buildit
from memorylib.notebook.buildit import capstone
from memorylib.notebook.buildit.fixtures import CHAPTER_QUERY, CHAPTER_SCOPE, chapter_records
from memorylib.timestamps import TEACHING_AS_OF

ROOT = Path(__file__).resolve().parents[1]
ANSWER = runpy.run_path(str(ROOT / "notebooks" / "solutions" / "06c_capstone.py"))["my_prediction"]


def _cell(cell_id: str) -> nbformat.NotebookNode:
    nb = nbformat.read(ROOT / "notebooks" / "06c_capstone.ipynb", as_version=4)
    return next(c for c in nb.cells if c.id == cell_id)


def _broken_cell() -> dict:
    """The namespace of 06c's cell that defines the five broken functions and ``BROKEN``."""
    namespace = {"buildit": buildit, **{n: getattr(memorylib, n) for n in memorylib.__all__}}
    exec(_cell("nb06c-your-turn-code").source, namespace)
    return namespace


BROKEN = _broken_cell()["BROKEN"]
SLOTS = {"A": "normalize_text", "B": "build_recall_candidates", "C": "score_recall_candidate"}
SLOTS |= {"D": "stable_rank_recall_candidates", "E": "render_recall_context"}


def check(answer: object) -> object:
    return capstone.check_first_differences(answer, BROKEN)


def test_each_broken_pipeline_replaces_one_slot_and_is_really_broken() -> None:
    assert {label: pipeline.yours for label, pipeline in BROKEN.items()} == {
        label: (slot,) for label, slot in SLOTS.items()
    }
    truth = capstone.first_difference_truth(BROKEN)
    assert truth == ANSWER
    # the two that agree on the chapter's example are caught by the corpus
    for label in [label for label, stage in truth.items() if stage == "none"]:
        corpus = buildit.compare_on_corpus(BROKEN[label])
        assert not corpus.differences.empty, f"{label} is not broken on the corpus either"


def test_the_checker_accepts_the_solution_in_any_accepted_spelling() -> None:
    assert check(ANSWER).is_right
    spelled = {**ANSWER, "A": " Normalize ", "D": None, "E": "NONE"}
    assert check(spelled).is_right
    ranked = {
        label: ("stable_rank" if stage == "stable rank" else stage)
        for label, stage in ANSWER.items()
    }
    assert check(ranked).is_right


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
    result = check({**ANSWER, **change})
    assert not result.is_right and fragment in str(result)


def test_the_checker_placeholder() -> None:
    assert str(check(...)).startswith("⏳ Not answered yet")
    assert "dict" in str(check(["none"]))


def test_the_placeholder_and_its_message_name_no_stage_for_any_label() -> None:
    """The template holds only the keys; neither it nor the not-answered message pairs a
    label with a stage (a wrong value would still rule one option out)."""
    source = _cell("nb06c-your-turn-answer").source
    namespace: dict[str, object] = {}
    exec(source, namespace)
    template = namespace["my_prediction"]
    assert template == dict.fromkeys(BROKEN, ...)
    for answer in (template, ...):
        message = str(check(answer))
        assert message.startswith("⏳ Not answered yet"), message
        assert re.search(r"'[A-E]'\s*:", message) is None, message


def _run_after_check_cell(answer: object) -> str:
    namespace = {"buildit": buildit, "capstone": capstone, "BROKEN": BROKEN}
    namespace["checked"] = check(answer)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_cell("nb06c-after-check").source, namespace)
    return out.getvalue()


def test_the_cell_after_the_check_stays_closed_until_the_answer_is_right() -> None:
    wrong = {**ANSWER, "D": "stable rank"}
    for answer in (..., wrong):
        shown = _run_after_check_cell(answer)
        assert shown.startswith("Not shown yet") and "queries differ" not in shown
    shown = _run_after_check_cell(ANSWER).splitlines()
    assert [line.split(":")[0] for line in shown] == list(BROKEN)
    for label, line in zip(BROKEN, shown, strict=True):
        # each broken pipeline, the lucky ones too, is caught by some labelled query
        assert not line.startswith(f"{label}: 0 of"), line
        assert f" of {len(load_labelled_queries())} queries differ" in line


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
    broken = [BROKEN[label].choices[slot].function.__name__ for label, slot in SLOTS.items()]
    assert len(broken) == 5 and "normalize_keeps_case" in broken
    for name in broken:
        assert name not in before
    assert "BROKEN" not in before
