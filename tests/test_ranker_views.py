"""memorylib.notebook.ranker_views: the views behind notebook 10 and its build-it checker."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from memorylib import RecallEngine, ScoringPolicy, score_recall_candidate
from memorylib.datasets import build_course_store
from memorylib.evaluation import CONFIGURATIONS, CourseStores, evaluate
from memorylib.notebook import ranker_views as views
from memorylib.notebook.exercises import Verdict
from memorylib.scoring import DEFAULT_POLICY, idf

SOLUTION_PATH = (
    Path(__file__).resolve().parents[1]
    / "notebooks"
    / "solutions"
    / "10_beyond_the_teaching_ranker.py"
)


def _solution():
    spec = importlib.util.spec_from_file_location("solution_10", SOLUTION_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.my_score


reference = _solution()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def stores():
    with CourseStores() as built:
        yield built


@pytest.fixture(scope="module")
def report(stores):
    return evaluate(stores=stores)


@pytest.fixture(scope="module")
def mei(tmp_path_factory):
    return RecallEngine(build_course_store(tmp_path_factory.mktemp("course")))


# -- sections 1-3 ---------------------------------------------------------------------------------


def test_coverage_ranks_the_only_matches_above_the_topic(mei) -> None:
    frame = views.ranking_frame(mei, "the bigram", policy=ScoringPolicy(), query_id="q")
    assert list(frame["matched"])[:5] == ["the", "the", "the", "the", "bigram"]
    assert list(frame["memory_id"])[4] == "mei-conv-060"
    assert set(frame["lexical"]) == {0.5}
    bm25 = views.ranking_frame(mei, "the bigram", policy=ScoringPolicy.bm25(), query_id="q")
    assert list(bm25["matched"])[:3] == ["bigram"] * 3
    assert list(bm25["total"]) == list(bm25["lexical"])  # BM25 alone: no recency part


def test_idf_frame_is_the_scorers_idf() -> None:
    frame = views.idf_frame(["the", "bigram", "retrieval"])
    rows = {row["term"]: row for row in frame.to_dict("records")}
    assert (rows["the"]["records_with_term"], rows["the"]["records"]) == (32, 69)
    assert rows["the"]["idf"] == 0.767255 and rows["retrieval"]["idf"] == 3.84303
    assert list(frame["term"]) == ["retrieval", "bigram", "the"]  # rarest first
    assert isinstance(views.idf_figure(frame), matplotlib.figure.Figure)


def test_length_frame_uses_the_average_bm25_uses(mei) -> None:
    frame = views.length_frame()
    average = frame.set_index("record").loc["average"]
    result = mei.recall(
        "the bigram", as_of="2026-11-30T09:00:00Z", query_id="q", policy=ScoringPolicy.bm25()
    )
    assert dict(result.hits[0].score_breakdown.parameters)["average_length"] == pytest.approx(
        average["length_terms"], abs=0.01
    )
    assert average["tf=1, b=0.75"] == 1.0 and set(frame["tf=1, b=0"]) == {1.0}
    shortest, _, longest = frame["tf=1, b=0.75"]
    assert shortest > 1.0 > longest
    assert len(views.length_figure().axes) == 1


# -- sections 4-8 ----------------------------------------------------------------------------------


def test_comparison_and_per_query_frames(report) -> None:
    frame = views.comparison_frame(report)
    assert len(frame) == 2 * len(CONFIGURATIONS) and list(frame.columns[3:7]) == [
        "recall@5",
        "recall@10",
        "MRR",
        "nDCG@10",
    ]
    dev_bm25 = frame[(frame.split == "dev") & (frame.scorer == "bm25")].iloc[0]
    assert (dev_bm25["nDCG@10"], dev_bm25["abstain"], dev_bm25["empty"]) == (0.722, "5/9", "0/77")
    per_query = views.per_query_frame(report)
    assert len(per_query) == 110 and list(per_query["query_id"]) == sorted(per_query["query_id"])
    q11 = per_query.set_index("query_id").loc["q-11"]
    assert (q11["coverage"], q11["bm25"], q11["bm25 - coverage"]) == (0.21, 0.812, 0.602)
    categories = views.category_frame(report)
    assert categories["queries"].sum() == 110
    assert categories.loc["inflection", "bm25"] == 0.371
    assert len(views.metrics_figure(report).axes) == 2


def test_stale_no_relevant_and_ceiling_frames(report) -> None:
    stale = views.stale_vs_fresh_frame(report)
    assert list(stale["query_id"]) == ["e-008", "e-054", "e-057", "e-076", "q-06", "q-10"]
    assert stale.set_index("query_id").loc["e-054", "change"] == -0.131
    none = views.no_relevant_frame(report)
    assert len(none) == 13 and (none[none.split == "dev"]["bm25"] == 0).sum() == 5
    ceiling = views.candidate_ceiling_frame()
    assert tuple(ceiling.loc["all"]) == (110, 11) and ceiling.loc["inflection"].iloc[1] == 8


def test_evidence_example_says_insufficient_evidence(mei) -> None:
    frame = views.evidence_example_frame(
        mei, "what timezone does Mei work in", query_id="e-022", min_evidence=0.4
    )
    assert list(frame["hits"]) == [10, 0]
    assert list(frame["empty_reason"]) == ["-", "insufficient_evidence"]
    assert set(frame["best evidence"]) == {0.163016}


def test_tuning_views(stores) -> None:
    curve = [
        {
            "min_evidence": t / 10,
            "bm25 nDCG@10": 0.7 - t / 20,
            "abstained": t,
            "no_relevant": 9,
            "answerable": 77,
            "empty answerable": t,
            "objective": 0.6,
        }
        for t in range(10)
    ]
    assert len(views.tuning_frame(curve)) == 10
    assert len(views.tuning_figure(curve, 0.4).axes) == 1


# -- the build-it exercise -----------------------------------------------------------------------


def test_the_checker_accepts_the_reference_solution() -> None:
    result = views.check_my_score(reference)
    assert result.is_right, result.text
    assert "3 worked examples and on 40 generated inputs" in result.message


def test_the_placeholder_and_an_empty_body_are_not_answered() -> None:
    def blank(query, candidate, *, as_of, policy, corpus):
        """Template as committed."""

    assert views.check_my_score(...).verdict is Verdict.NOT_ANSWERED
    assert views.check_my_score(blank).verdict is Verdict.NOT_ANSWERED


def _replace(**fields):
    def score(query, candidate, *, as_of, policy, corpus):
        good = reference(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
        changed = {k: (v(good) if callable(v) else v) for k, v in fields.items()}
        return dataclasses.replace(good, **changed)

    return score


def _chapter_with_name(query, candidate, *, as_of, policy, corpus):
    """Plain coverage under the new name: every term weighs the same."""
    b = score_recall_candidate(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
    return dataclasses.replace(b, scorer="idf_coverage", lexical_score=b.lexical_coverage)


def _idf_over_term_count(query, candidate, *, as_of, policy, corpus):
    good = reference(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
    share = sum(idf(t, corpus) for t in candidate.matched_terms) / len(query.terms)
    lexical = round(policy.lexical_weight * share, 6)
    return dataclasses.replace(
        good,
        lexical_score=round(share, 6),
        lexical_contribution=lexical,
        total=round(lexical + good.recency_contribution, 6),
    )


def _chapter_policy(query, candidate, *, as_of, policy, corpus):
    return reference(query, candidate, as_of=as_of, policy=DEFAULT_POLICY, corpus=corpus)


def _raises(query, candidate, *, as_of, policy, corpus):
    return 1 / 0


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a, **k: 0.5, "return a RecallScoreBreakdown, not float"),
        (score_recall_candidate, "lexical_score is None"),  # the chapter's, not yours
        (_replace(scorer="mine"), "scorer: the contract has 'idf_coverage', yours 'mine'"),
        (_replace(scorer="coverage"), "the scorer is not named"),
        (_chapter_with_name, "plain coverage"),
        (_idf_over_term_count, "not by their number"),
        (_replace(lexical_score=None), "set it to the idf-weighted share"),
        (_replace(lexical_coverage=lambda b: b.lexical_score), "lexical_coverage stays"),
        (_replace(total=lambda b: b.lexical_contribution), "total: the contract has"),
        (_chapter_policy, "Use the policy you are given"),
        (_replace(lexical_contribution=lambda b: b.lexical_score), "lexical_contribution: the"),
        (_replace(matched_terms=()), "matched_terms"),
        (_replace(total=lambda b: b.total + 1e-9), "round every float to 6 places"),
        (_raises, "ZeroDivisionError"),
    ],
)
def test_the_checker_rejects_wrong_solutions_with_a_hint(answer, hint) -> None:
    result = views.check_my_score(answer)
    assert result.verdict is Verdict.WRONG, result.text
    assert hint in result.text


def test_a_fixed_window_is_caught_on_a_generated_case() -> None:
    def thirty_days(query, candidate, *, as_of, policy, corpus):
        fixed = dataclasses.replace(policy, recency_window_days=30.0)
        good = reference(query, candidate, as_of=as_of, policy=fixed, corpus=corpus)
        return dataclasses.replace(good, recency_window_days=policy.recency_window_days)

    result = views.check_my_score(thirty_days)
    assert result.verdict is Verdict.WRONG and "not 30" in result.message
    assert result.counterexample is not None and result.counterexample.stage == "generated"


def test_the_checker_never_shows_the_formula_before_an_attempt() -> None:
    text = views.check_my_score(...).text
    assert "idf(" not in text and "sum" not in text


def test_evaluate_yours_adds_a_row_only_when_the_check_passes(stores) -> None:
    frame, table = views.evaluate_yours(lambda *a, **k: None, stores)
    assert list(frame["scorer"]) == ["coverage", "bm25"] and "not evaluated yet" in table
    frame, table = views.evaluate_yours(reference, stores)
    assert list(frame["scorer"]) == ["coverage", "bm25", "yours"]
    yours = frame.set_index("scorer").loc["yours"]
    assert (yours["nDCG@10"], yours["recall@5"]) == (0.714, 0.766)
