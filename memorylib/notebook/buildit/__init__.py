"""Build-it exercises: write a stage yourself; the exercise engine compares it with the library's.

Each stage notebook (02-06) ends with a template cell holding the stage function's signature
and contract (first line ``# build-it: <stage>``), a check cell (``check_normalize``,
``check_candidates``, ``check_scoring``, ``check_ranking``, ``check_render``: not answered,
right, or wrong with the smallest counterexample and a hint from the stage's catalogue of
mistakes), then ``reference_source(stage)``, the library's real source, closed. One module
per stage (worked examples, a strategy of generated inputs, the mistakes, and the notebook's
"Your turn" checks), 06b's ``profile``, the records they share (``fixtures``), the closed
source (``reference``), and the capstone of 06c (``pipeline``: your functions as one
pipeline; ``capstone``: its exercise).
"""

from __future__ import annotations

from memorylib.notebook.buildit.candidates import BUILD_RECALL_CANDIDATES
from memorylib.notebook.buildit.normalize import EXTRACT_TERMS, NORMALIZE_TEXT
from memorylib.notebook.buildit.pipeline import (
    SLOTS,
    Comparison,
    CorpusComparison,
    Pipeline,
    PipelineRun,
    compare_on_corpus,
    load_buildit_cells,
    run_alone,
)
from memorylib.notebook.buildit.ranking import ALONE_HINT, STABLE_RANK_RECALL_CANDIDATES
from memorylib.notebook.buildit.reference import ReferenceSource, reference_source
from memorylib.notebook.buildit.render import RENDER_RECALL_CONTEXT
from memorylib.notebook.buildit.scoring import SCORE_RECALL_CANDIDATE
from memorylib.notebook.exercises import (
    CheckResult,
    FunctionExercise,
    Verdict,
    check_function,
    wrong,
)

__all__ = [  # what the notebooks and the playground use
    "EXERCISES", "SLOTS", "CheckResult", "Comparison", "CorpusComparison", "Pipeline",
    "PipelineRun", "ReferenceSource", "check_candidates", "check_normalize", "check_ranking",
    "check_render", "check_scoring", "compare_on_corpus", "load_buildit_cells",
    "reference_source",
]  # fmt: skip

EXERCISES: dict[str, FunctionExercise] = {
    exercise.function: exercise
    for exercise in (
        NORMALIZE_TEXT,
        EXTRACT_TERMS,
        BUILD_RECALL_CANDIDATES,
        SCORE_RECALL_CANDIDATE,
        STABLE_RANK_RECALL_CANDIDATES,
        RENDER_RECALL_CONTEXT,
    )
}


def check_normalize(normalize_text: object, extract_terms: object) -> CheckResult:
    """Stage 1: both functions. The first that is wrong is reported; then one not written."""
    first, second = (
        check_function(NORMALIZE_TEXT, normalize_text),
        check_function(EXTRACT_TERMS, extract_terms),
    )
    for verdict in (Verdict.WRONG, Verdict.NOT_ANSWERED):
        for result in (first, second):
            if result.verdict is verdict:
                return result
    return CheckResult(Verdict.RIGHT, first.message, (second.message,))


def check_candidates(build_recall_candidates: object) -> CheckResult:
    """Stage 2: ``build_recall_candidates(query, records) -> CandidateSet``."""
    return check_function(BUILD_RECALL_CANDIDATES, build_recall_candidates)


def check_scoring(score_recall_candidate: object) -> CheckResult:
    """Stage 3: ``score_recall_candidate(query, candidate, *, as_of)``, the chapter's formula."""
    return check_function(SCORE_RECALL_CANDIDATE, score_recall_candidate)


def check_ranking(stable_rank_recall_candidates: object) -> CheckResult:
    """Stage 4: ``stable_rank_recall_candidates(query, candidates, *, as_of, score=...)``, as
    its cell defines it run alone, the way 06c runs the saved cell (``run_alone``): a name
    read from another cell of 05 (``four_keys``, an import) fails here too."""
    alone, problem = run_alone(stable_rank_recall_candidates)
    if problem is not None:
        return wrong(
            f"Your build-it cell raised {problem} when run alone, as notebook 06c runs it. "
            f"{ALONE_HINT}"
        )
    name = getattr(stable_rank_recall_candidates, "__name__", None)
    return check_function(STABLE_RANK_RECALL_CANDIDATES, alone, name=name)


def check_render(render_recall_context: object) -> CheckResult:
    """Stage 5: ``render_recall_context(result) -> str``."""
    return check_function(RENDER_RECALL_CONTEXT, render_recall_context)
