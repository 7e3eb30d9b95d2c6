"""Notebook 06c's "Your turn" check: the first stage where each broken pipeline of the
notebook's ``BROKEN`` (label -> ``Pipeline``) differs on the chapter's example."""

from __future__ import annotations

from collections.abc import Mapping

from memorylib import TEACHING_AS_OF
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit.fixtures import CHAPTER_QUERY, CHAPTER_SCOPE, chapter_records
from memorylib.notebook.buildit.pipeline import STAGES, Pipeline
from memorylib.notebook.messages import say

_ANSWERS = (*STAGES, "none")


def first_difference_truth(broken: Mapping[str, Pipeline]) -> dict[str, str]:
    """Each pipeline's first stage that differs on the chapter's example, or "none"."""
    chapter = {"user_scope": CHAPTER_SCOPE, "as_of": TEACHING_AS_OF, "query_id": "query-1"}
    runs = {label: pipeline.compare(CHAPTER_QUERY, chapter_records(), **chapter)
            for label, pipeline in broken.items()}  # fmt: skip
    return {label: (run.difference or ("none",))[0] for label, run in runs.items()}


def _stage(given: object) -> object:
    if not isinstance(given, str):
        return "none" if given is None else given
    return " ".join(given.lower().replace("_", " ").replace("-", " ").split())


def check_first_differences(answer: object, broken: Mapping[str, Pipeline]) -> ex.CheckResult:
    """06c's check: ``answer`` maps each label of ``broken`` to its first differing stage."""
    described = say("capstone.described")

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, broken, described)
        one_of = say("capstone.answer_one_of", answers=", ".join(map(repr, _ANSWERS)))
        hints = {
            label: say(f"capstone.hint.{label}") if _stage(value) in _ANSWERS else one_of
            for label, value in given.items()
        }
        truth = first_difference_truth(broken)
        mistakes = ex.grade_labels(truth, given, hints, same=lambda g, e: _stage(g) == e)
        names = [label for label, stage in truth.items() if stage == "none"]
        lucky = (
            names[0]
            if len(names) == 1
            else say("capstone.lucky", first=", ".join(names[:-1]), last=names[-1])
        )
        return mistakes or ex.right(say("capstone.right", total=len(truth), lucky=lucky))

    return ex.check_value(answer, judge, placeholder=described)
