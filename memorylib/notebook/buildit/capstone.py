"""Notebook 06c's "Your turn": five pipelines, each with one function broken on purpose."""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from memorylib import (
    TEACHING_AS_OF,
    CandidateSet,
    MemoryKind,
    RecallCandidate,
    RecallHit,
    RecallQuery,
    RecallResult,
    RecallScoreBreakdown,
    ScoringPolicy,
    StoredMemory,
    build_recall_candidates,
    render_recall_context,
    score_recall_candidate,
    stable_rank_recall_candidates,
)
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit.fixtures import CHAPTER_QUERY, CHAPTER_SCOPE, chapter_records
from memorylib.notebook.buildit.pipeline import STAGES, Pipeline
from memorylib.notebook.messages import say
from memorylib.render import escape_xml


def normalize_keeps_case(text: str) -> str:
    """NFKC and whitespace folding, but no casefold."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def candidates_with_profiles(query: RecallQuery, records: Iterable[StoredMemory]) -> CandidateSet:
    """The library's candidates, but every PROFILE record is searched as a conversation."""
    searched = [
        dataclasses.replace(r, kind=MemoryKind.CONVERSATION) if r.kind is MemoryKind.PROFILE else r
        for r in records
    ]
    return build_recall_candidates(query, searched)


def score_with_a_week_window(
    query: RecallQuery, candidate: RecallCandidate, *, as_of: datetime | str
) -> RecallScoreBreakdown:
    """The contract's scoring, with a 7-day recency window instead of its 30 days."""
    week = ScoringPolicy(recency_window_days=7)
    return score_recall_candidate(query, candidate, as_of=as_of, policy=week)


def rank_ignoring_the_limit(
    query: RecallQuery,
    candidates: CandidateSet,
    *,
    as_of: datetime | str,
    score: Callable[..., RecallScoreBreakdown] = score_recall_candidate,
) -> tuple[RecallHit, ...]:
    """The library's ranking, but it keeps up to 10 hits whatever the query's limit."""
    no_limit = dataclasses.replace(query, limit=10)
    return stable_rank_recall_candidates(no_limit, candidates, as_of=as_of, score=score)


def render_with_empty_wrapper(result: RecallResult) -> str:
    """The library's block, but an empty wrapper instead of "" when there are no hits."""
    if result.hits:
        return render_recall_context(result)
    query_id = escape_xml(result.query.query_id, attribute=True)
    return f'<recalled_context query_id="{query_id}">\n</recalled_context>'


# label -> (the slot it replaces, the broken function)
BROKEN: dict[str, tuple[str, Callable[..., Any]]] = {
    "A": ("normalize_text", normalize_keeps_case),
    "B": ("build_recall_candidates", candidates_with_profiles),
    "C": ("score_recall_candidate", score_with_a_week_window),
    "D": ("stable_rank_recall_candidates", rank_ignoring_the_limit),
    "E": ("render_recall_context", render_with_empty_wrapper),
}


def broken_pipeline(label: str) -> Pipeline:
    """The library's pipeline with ``BROKEN[label]`` in its slot."""
    slot, function = BROKEN[label]
    return Pipeline.from_functions(**{slot: function})


def first_difference_truth() -> dict[str, str]:
    """Each broken pipeline's first stage that differs on the chapter's example, or "none"."""
    chapter = {"user_scope": CHAPTER_SCOPE, "as_of": TEACHING_AS_OF, "query_id": "query-1"}
    runs = {label: broken_pipeline(label).compare(CHAPTER_QUERY, chapter_records(), **chapter)
            for label in BROKEN}  # fmt: skip
    return {label: (run.difference or ("none",))[0] for label, run in runs.items()}


_ANSWERS = (*STAGES, "none")


def _stage(given: object) -> object:
    if not isinstance(given, str):
        return "none" if given is None else given
    return " ".join(given.lower().replace("_", " ").replace("-", " ").split())


def check_first_differences(answer: object) -> ex.CheckResult:
    """06c's check: ``answer`` maps "A".."E" to ``first_difference_truth``'s stages."""
    described = say("capstone.described")

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, BROKEN, described)
        one_of = say("capstone.answer_one_of", answers=", ".join(map(repr, _ANSWERS)))
        hints = {
            label: say(f"capstone.hint.{label}") if _stage(value) in _ANSWERS else one_of
            for label, value in given.items()
        }
        truth = first_difference_truth()
        mistakes = ex.grade_labels(truth, given, hints, same=lambda g, e: _stage(g) == e)
        lucky = " and ".join(label for label, stage in truth.items() if stage == "none")
        return mistakes or ex.right(say("capstone.right", total=len(truth), lucky=lucky))

    return ex.check_value(answer, judge, placeholder=described)
