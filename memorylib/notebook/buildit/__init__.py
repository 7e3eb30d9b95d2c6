"""Build-it exercises: write a stage yourself; the exercise engine compares it with the library's.

Each stage notebook (02-06) ends with a build-it exercise: a template cell holding the
stage function's signature and contract (its first line is ``# build-it: <stage>``), a
check cell, then the library's real source, closed (03 displays it only once the check
passed, or with ``SHOW_REFERENCE = True``). The checks:

* ``check_normalize(my_normalize_text, my_extract_terms)`` (02)
* ``check_candidates(my_build_recall_candidates)`` (03)
* ``check_scoring(my_score_recall_candidate)`` (04)
* ``check_ranking(my_stable_rank_recall_candidates)`` (05)
* ``check_render(my_render_recall_context)`` (06)

each run ``memorylib.notebook.exercises.check_function`` on the stage's exercise: the
worked examples, then generated inputs, and a ``CheckResult`` that is not answered yet
(the template still raises ``NotImplementedError``), right, or wrong with the smallest
counterexample and a hint from the stage's catalogue of typical mistakes.
``reference_source(stage)`` is the library's source for a stage, closed. The capstone
(notebook 06c) runs your functions as one pipeline (``Pipeline``, ``compare_on_corpus``);
its exercise, five pipelines each with one stage broken on purpose, is ``capstone``.

One module per stage (``normalize``, ``candidates``, ``scoring``, ``ranking``,
``render``: worked examples, a strategy of generated inputs, typical mistakes; the
"Your turn" checks of 02 to 06 live in their stage's module too:
``normalize.check_predicted_terms``, ``candidates.check_quiet_query``,
``candidates.check_cache_query``, ``scoring.check_q11_note``, ``ranking.check_tie_order``
and ``render.check_render_predictions``), 06b's profile
check (``profile``: the profile takes no stage), the records they share (``fixtures``),
the closed source (``reference``) and the capstone (``pipeline``, and its exercise
``capstone``). A shared notebook helper: it imports no view module.
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

__all__ = [
    "EXERCISES",
    "SLOTS",
    "CheckResult",
    "Comparison",
    "CorpusComparison",
    "Pipeline",
    "PipelineRun",
    "ReferenceSource",
    "check_candidates",
    "check_normalize",
    "check_ranking",
    "check_render",
    "check_scoring",
    "compare_on_corpus",
    "load_buildit_cells",
    "reference_source",
]

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
    results = (
        check_function(NORMALIZE_TEXT, normalize_text),
        check_function(EXTRACT_TERMS, extract_terms),
    )
    for verdict in (Verdict.WRONG, Verdict.NOT_ANSWERED):
        for result in results:
            if result.verdict is verdict:
                return result
    first, second = results
    return CheckResult(Verdict.RIGHT, first.message, (second.message,))


def check_candidates(build_recall_candidates: object) -> CheckResult:
    """Stage 2: ``build_recall_candidates(query, records) -> CandidateSet``."""
    return check_function(BUILD_RECALL_CANDIDATES, build_recall_candidates)


def check_scoring(score_recall_candidate: object) -> CheckResult:
    """Stage 3: ``score_recall_candidate(query, candidate, *, as_of)``, the chapter's formula."""
    return check_function(SCORE_RECALL_CANDIDATE, score_recall_candidate)


def check_ranking(stable_rank_recall_candidates: object) -> CheckResult:
    """Stage 4: ``stable_rank_recall_candidates(query, candidates, *, as_of, score=...)``.

    A function written in a notebook cell is checked as that cell defines it when it runs
    alone (``run_alone``), the way notebook 06c runs the saved cell: a function that reads
    a name from another cell of notebook 05 (``four_keys``, an import) fails here too."""
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
