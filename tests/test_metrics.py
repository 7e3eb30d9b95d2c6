"""memorylib.metrics against published worked examples, plus properties.

Sources of the reference values:

* scikit-learn, ``sklearn.metrics.ndcg_score``, the "Examples" section of its docstring
  (true relevance [10, 0, 0, 1, 5]; nDCG 0.69..., 0.49..., 0.35... at k=4, 1.0 for a
  perfect ranking at k=4). scikit-learn uses the relevance itself as the gain and
  log2(rank + 1) as the discount, as we do.
* Wikipedia, "Discounted cumulative gain", section "Example": six results graded
  3, 2, 3, 0, 1, 2, two more judged documents graded 3 and 2; DCG6 = 6.861,
  IDCG6 = 8.740, nDCG6 = 0.785.
* Wikipedia, "Mean reciprocal rank", its example: three queries whose first correct
  answer is at ranks 3, 2 and 1; MRR = (1/3 + 1/2 + 1) / 3 = 11/18 = 0.61.

The same definitions were compared with trec_eval (``pytrec-eval-terrier``, relevance
level 2) on every query of the evaluation set; that comparison runs here too whenever
``ir_measures`` happens to be installed (it is not a dependency of the project).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorylib.metrics import (
    UndefinedMetricError,
    abstained,
    dcg,
    hit_at_k,
    is_answerable,
    mean,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)

# -- published worked examples ------------------------------------------------------------------

SKLEARN_TRUE = {"a": 10, "b": 0, "c": 0, "d": 1, "e": 5}


def ranked_by(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda doc: -scores[doc])  # no ties in these examples


def test_sklearn_ndcg_score_docstring_examples() -> None:
    first = ranked_by({"a": 0.1, "b": 0.2, "c": 0.3, "d": 4, "e": 70})
    second = ranked_by({"a": 0.05, "b": 1.1, "c": 1.0, "d": 0.5, "e": 0.0})
    # the docstring shows the values cut after two digits: "0.69...", "0.49...", "0.35..."
    assert f"{ndcg_at_k(first, SKLEARN_TRUE, 5):.4f}"[:4] == "0.69"
    assert f"{ndcg_at_k(second, SKLEARN_TRUE, 5):.4f}"[:4] == "0.49"
    assert f"{ndcg_at_k(second, SKLEARN_TRUE, 4):.4f}"[:4] == "0.35"
    assert ndcg_at_k(ranked_by(SKLEARN_TRUE), SKLEARN_TRUE, 4) == 1.0
    # and exactly: DCG = 5 + 1/log2(3) + 10/log2(6), IDCG = 10 + 5/log2(3) + 1/2
    exact = (5 + 1 / math.log2(3) + 10 / math.log2(6)) / (10 + 5 / math.log2(3) + 0.5)
    assert ndcg_at_k(first, SKLEARN_TRUE, 5) == pytest.approx(exact, abs=1e-12)


def test_wikipedia_dcg_example() -> None:
    judgments = {"d1": 3, "d2": 2, "d3": 3, "d4": 0, "d5": 1, "d6": 2, "d7": 3, "d8": 2}
    ranking = ["d1", "d2", "d3", "d4", "d5", "d6"]
    assert round(dcg([3, 2, 3, 0, 1, 2], 6), 3) == 6.861
    assert round(dcg(sorted(judgments.values(), reverse=True), 6), 3) == 8.740
    assert round(ndcg_at_k(ranking, judgments, 6), 3) == 0.785


def test_wikipedia_mrr_example() -> None:
    # "cat" -> catten, cati, cats (cats is right); "torus" -> torii right at 2; "virus" at 1
    runs = [
        (["catten", "cati", "cats"], {"cats": 3}),
        (["tori", "torii", "toruses"], {"torii": 3}),
        (["viruses", "virii", "viri"], {"viruses": 3}),
    ]
    assert mean(reciprocal_rank(r, j) for r, j in runs) == pytest.approx(11 / 18)
    assert round(11 / 18, 2) == 0.61


def test_recall_by_hand() -> None:
    judgments = {"a": 3, "b": 2, "c": 1, "d": 0, "e": 3}  # relevant (>= 2): a, b, e
    assert recall_at_k(["a", "c", "d", "b", "x", "e"], judgments, 5) == pytest.approx(2 / 3)
    assert recall_at_k(["a", "c", "d", "b", "x", "e"], judgments, 10) == 1.0
    assert recall_at_k(["c", "d"], judgments, 5) == 0.0  # grade 1 is context, not an answer
    assert recall_at_k(["c"], judgments, 5, min_grade=1) == 0.25


def test_hit_by_hand() -> None:
    judgments = {"a": 3, "b": 2, "c": 1}  # relevant (>= 2): a, b
    assert hit_at_k(["x", "c", "b"], judgments, 3) == 1.0  # one relevant id is enough
    assert hit_at_k(["x", "c", "b"], judgments, 2) == 0.0  # b is third: outside k = 2
    assert hit_at_k(["c"], judgments, 10) == 0.0  # grade 1 is context, not an answer
    assert hit_at_k(["c"], judgments, 10, min_grade=1) == 1.0
    assert hit_at_k([], judgments, 10) == 0.0


def test_reciprocal_rank_skips_grade_one_and_unjudged() -> None:
    judgments = {"a": 1, "b": 2}
    assert reciprocal_rank(["x", "a", "b"], judgments) == pytest.approx(1 / 3)
    assert reciprocal_rank([], judgments) == 0.0


def test_a_query_with_nothing_relevant_has_no_ranking_metric() -> None:
    judgments = {"a": 0, "b": 0}
    assert not is_answerable(judgments) and not is_answerable({})
    for metric in (
        lambda: recall_at_k(["a"], judgments, 5),
        lambda: hit_at_k(["a"], judgments, 5),
        lambda: reciprocal_rank(["a"], judgments),
        lambda: ndcg_at_k(["a"], judgments, 10),
    ):
        with pytest.raises(UndefinedMetricError, match="abstained"):
            metric()
    assert abstained([]) and not abstained(["a"])


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(["a"], {"a": 3}, 0)
    with pytest.raises(ValueError, match="k must be"):
        hit_at_k(["a"], {"a": 3}, 0)
    with pytest.raises(ValueError, match="k must be"):
        dcg([1], True)
    with pytest.raises(ValueError, match="twice"):
        ndcg_at_k(["a", "a"], {"a": 3}, 10)
    with pytest.raises(ValueError, match="no values"):
        mean([])


# -- properties ----------------------------------------------------------------------------------

DOCS = [f"m{i}" for i in range(12)]
judgments_st = st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1).filter(
    is_answerable
)
ranking_st = st.lists(st.sampled_from([*DOCS, "x1", "x2"]), unique=True, max_size=10)


@settings(max_examples=200, deadline=None)
@given(judgments=judgments_st, ranking=ranking_st, k=st.integers(1, 10))
def test_every_metric_lies_between_0_and_1(judgments, ranking, k) -> None:
    for value in (
        recall_at_k(ranking, judgments, k),
        reciprocal_rank(ranking, judgments),
        ndcg_at_k(ranking, judgments, k),
    ):
        assert 0.0 <= value <= 1.0 + 1e-12
    # a hit is exactly "recall above zero", and the first relevant rank is within k
    hit = hit_at_k(ranking, judgments, k)
    assert hit == float(recall_at_k(ranking, judgments, k) > 0)
    assert hit == float(reciprocal_rank(ranking, judgments) >= 1 / k)


@settings(max_examples=200, deadline=None)
@given(judgments=judgments_st, k=st.integers(1, 10))
def test_the_ideal_ranking_scores_one(judgments, k) -> None:
    ideal = sorted(judgments, key=lambda doc: (-judgments[doc], doc))
    assert ndcg_at_k(ideal, judgments, k) == pytest.approx(1.0)
    assert reciprocal_rank(ideal, judgments) == 1.0
    relevant = sum(grade >= 2 for grade in judgments.values())
    if relevant <= k:
        assert recall_at_k(ideal, judgments, k) == 1.0


@settings(max_examples=200, deadline=None)
@given(judgments=judgments_st, ranking=ranking_st, k=st.integers(1, 9))
def test_recall_grows_with_k_and_ignores_order_inside_k(judgments, ranking, k) -> None:
    assert recall_at_k(ranking, judgments, k) <= recall_at_k(ranking, judgments, k + 1)
    shuffled = list(reversed(ranking[:k])) + ranking[k:]
    assert recall_at_k(shuffled, judgments, k) == recall_at_k(ranking, judgments, k)


@settings(max_examples=200, deadline=None)
@given(judgments=judgments_st, ranking=ranking_st.filter(lambda r: len(r) >= 2), data=st.data())
def test_moving_a_better_record_up_never_lowers_ndcg(judgments, ranking, data) -> None:
    i = data.draw(st.integers(0, len(ranking) - 2))
    j = data.draw(st.integers(i + 1, len(ranking) - 1))
    if judgments.get(ranking[j], 0) > judgments.get(ranking[i], 0):
        swapped = list(ranking)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        assert ndcg_at_k(swapped, judgments, 10) >= ndcg_at_k(ranking, judgments, 10) - 1e-12


@settings(max_examples=100, deadline=None)
@given(judgments=judgments_st, ranking=ranking_st)
def test_unjudged_records_appended_at_the_end_change_nothing(judgments, ranking) -> None:
    base = [doc for doc in ranking if doc != "x1"][:9]
    assert ndcg_at_k([*base, "x1"], judgments, 10) == pytest.approx(ndcg_at_k(base, judgments, 10))
    assert reciprocal_rank([*base, "x1"], judgments) == reciprocal_rank(base, judgments)


# -- trec_eval, when it happens to be installed ----------------------------------------------------


def test_agrees_with_trec_eval_on_the_evaluation_set() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="optional cross-check with trec_eval")
    from memorylib.evaluation import evaluate

    report = evaluate()
    qrels = [
        ir_measures.Qrel(o.query_id, doc, grade)
        for o in report.outcomes
        if o.scorer == "coverage" and o.answerable
        for doc, grade in _judgments(o.query_id).items()
    ]
    measures = [ir_measures.nDCG @ 10, ir_measures.R(rel=2) @ 5, ir_measures.RR(rel=2)]
    for scorer in report.scorers:
        mine = [o for o in report.outcomes if o.scorer == scorer.name and o.answerable and o.hits]
        run = [
            ir_measures.ScoredDoc(o.query_id, doc, float(len(o.hits) - rank))
            for o in mine
            for rank, doc in enumerate(o.hits)
        ]
        theirs = {
            (m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc(measures, qrels, run)
        }
        for o in mine:
            assert theirs[(o.query_id, "nDCG@10")] == pytest.approx(o.ndcg_at_10)
            assert theirs[(o.query_id, "R(rel=2)@5")] == pytest.approx(o.recall_at_5)
            assert theirs[(o.query_id, "RR(rel=2)")] == pytest.approx(o.reciprocal_rank)


def _judgments(query_id: str) -> dict[str, int]:
    from memorylib.evaluation import load_eval_queries

    return next(q.judgments for q in load_eval_queries() if q.query_id == query_id)
