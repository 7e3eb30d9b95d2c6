"""Build-it exercises of 02-06: write a stage yourself, checked against the library's."""

from __future__ import annotations

from functools import partial

from memorylib.notebook.buildit.pipeline import (
    SLOTS,
    Pipeline,
    compare_on_corpus,
    load_buildit_cells,
    run_alone,
)
from memorylib.notebook.buildit.ranking import ALONE_HINT
from memorylib.notebook.buildit.reference import ReferenceSource, reference_source
from memorylib.notebook.exercises import CheckResult, Verdict, check_function, wrong
from memorylib.notebook.messages import say

__all__ = [  # what the notebooks, the playground and the tests use
    "EXERCISES", "SLOTS", "CheckResult", "Pipeline", "ReferenceSource", "check_candidates",
    "check_normalize", "check_ranking", "check_render", "check_scoring", "compare_on_corpus",
    "load_buildit_cells", "reference_source",
]  # fmt: skip

EXERCISES = {slot.name: slot.exercise for slot in SLOTS}  # by the contract's name


def check_normalize(normalize_text: object, extract_terms: object) -> CheckResult:
    """Both functions: the first wrong one is reported, then one not written yet."""
    results = (
        check_function(EXERCISES["normalize_text"], normalize_text),
        check_function(EXERCISES["extract_terms"], extract_terms),
    )
    for verdict in (Verdict.WRONG, Verdict.NOT_ANSWERED):
        if found := [result for result in results if result.verdict is verdict]:
            return found[0]
    return CheckResult(Verdict.RIGHT, results[0].message, (results[1].message,))


check_candidates = partial(check_function, EXERCISES["build_recall_candidates"])
check_scoring = partial(check_function, EXERCISES["score_recall_candidate"])
check_render = partial(check_function, EXERCISES["render_recall_context"])


def check_ranking(stable_rank_recall_candidates: object) -> CheckResult:
    """Run alone, as 06c runs the saved cell: a name from another cell of 05 fails here too."""
    alone, problem = run_alone(stable_rank_recall_candidates)
    if problem is not None:
        return wrong(say("buildit.alone", problem=problem, hint=ALONE_HINT))
    name = getattr(stable_rank_recall_candidates, "__name__", None)
    return check_function(EXERCISES["stable_rank_recall_candidates"], alone, name=name)
