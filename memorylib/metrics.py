"""Ranking metrics with graded relevance: recall@k, hit@k, reciprocal rank, nDCG@k, abstention.

Standard library only, about a hundred lines a student can read. One query is scored from
its ``ranking`` (memory ids, best first, as recall returned them) and its ``judgments``
(memory_id -> grade 0..3; an unlisted id counts as grade 0):

* **relevant** means grade >= ``RELEVANT_GRADE`` = 2 ("answers the query, fully or in
  part"; grade 1 is context without an answer). trec_eval spells this ``-l 2``.
* ``recall_at_k`` = relevant ids among the first k / all relevant ids of the query.
* ``hit_at_k`` = 1 when at least one relevant id is among the first k, else 0 (the mean
  over queries is the share of questions that got anything useful at all).
* ``reciprocal_rank`` = 1 / the rank of the first relevant id, 0 when none was returned
  (the mean over queries is MRR). The ranking is never longer than recall's limit (10),
  so this is reciprocal rank cut at 10.
* ``ndcg_at_k`` = DCG@k / IDCG@k with DCG@k = sum over ranks i = 1..k of
  gain(grade_i) / log2(i + 1). **gain = grade** (linear: 0, 1, 2, 3), the convention of
  trec_eval's ``ndcg_cut`` and scikit-learn's ``ndcg_score``, so a reader can reproduce
  every number with either. The exponential gain 2^grade - 1 (0, 1, 3, 7) would make a
  superseded record (2) worth 3/7 of the current one (3) instead of 2/3; our grades are
  coarse hand judgments, not clicks, and a factor of two between two grades would claim a
  precision the judging never had. IDCG@k ranks **every** judged grade of the query, not
  only the returned ones, so a ranker cannot score 1.0 by returning one good record.
* A query with **no relevant record** (the eval set's ``no_relevant`` category) has no
  recall, reciprocal rank or nDCG: IDCG is 0 and any number would be a convention
  (trec_eval skips such queries, scikit-learn returns 0). These functions raise
  ``UndefinedMetricError`` for it, so it can never count as 0 or 1 by accident. Such a
  query is scored by ``abstained`` instead: did recall return nothing at all?

Why not a library: ``ir-measures`` over ``pytrec-eval-terrier`` (trec_eval's C code) has
wheels for CPython 3.11 on Linux, macOS and Windows and installs cleanly, but it declares
SciPy (about 145 MB installed, never imported by it) for four formulas that fit on this
page; and trec_eval re-sorts a run by score, breaking ties by document id, so our stable
rank would have to be fed in as fake scores. The tests pin these functions to published
worked examples instead (scikit-learn's ``ndcg_score`` docstring, Wikipedia's DCG and MRR
examples) plus properties; see tests/test_metrics.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "RELEVANT_GRADE",
    "UndefinedMetricError",
    "abstained",
    "dcg",
    "hit_at_k",
    "is_answerable",
    "mean",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
]

RELEVANT_GRADE = 2

Judgments = Mapping[str, int]


class UndefinedMetricError(ValueError):
    """The metric has no value for this query: it has no relevant record."""


def _relevant(judgments: Judgments, min_grade: int) -> set[str]:
    return {memory_id for memory_id, grade in judgments.items() if grade >= min_grade}


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    return k


def is_answerable(judgments: Judgments, *, min_grade: int = RELEVANT_GRADE) -> bool:
    """True when at least one record is relevant (grade >= ``min_grade``)."""
    return bool(_relevant(judgments, min_grade))


def _require_relevant(judgments: Judgments, min_grade: int, metric: str) -> set[str]:
    relevant = _relevant(judgments, min_grade)
    if not relevant:
        raise UndefinedMetricError(
            f"{metric} is undefined for a query without a record of grade >= {min_grade}; "
            "score it with abstained() instead"
        )
    return relevant


def recall_at_k(
    ranking: Sequence[str], judgments: Judgments, k: int, *, min_grade: int = RELEVANT_GRADE
) -> float:
    """Share of the query's relevant records that are among the first ``k`` of ``ranking``."""
    relevant = _require_relevant(judgments, min_grade, "recall")
    found = relevant.intersection(ranking[: _check_k(k)])
    return len(found) / len(relevant)


def hit_at_k(
    ranking: Sequence[str], judgments: Judgments, k: int, *, min_grade: int = RELEVANT_GRADE
) -> float:
    """1.0 when any of the query's relevant records is among the first ``k``, else 0.0."""
    relevant = _require_relevant(judgments, min_grade, "hit")
    return 1.0 if relevant.intersection(ranking[: _check_k(k)]) else 0.0


def reciprocal_rank(
    ranking: Sequence[str], judgments: Judgments, *, min_grade: int = RELEVANT_GRADE
) -> float:
    """1 / rank of the first relevant record in ``ranking`` (ranks start at 1); 0 if none."""
    relevant = _require_relevant(judgments, min_grade, "reciprocal rank")
    for rank, memory_id in enumerate(ranking, start=1):
        if memory_id in relevant:
            return 1.0 / rank
    return 0.0


def dcg(gains: Iterable[float], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` gains: sum of gain_i / log2(i + 1)."""
    k = _check_k(k)
    total = 0.0
    for rank, gain in enumerate(gains, start=1):
        if rank > k:
            break
        total += gain / math.log2(rank + 1)
    return total


def ndcg_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """DCG@k of ``ranking`` (gain = grade) divided by the DCG@k of the ideal ranking of
    every judged grade. Raises ``UndefinedMetricError`` when no record is relevant."""
    _require_relevant(judgments, RELEVANT_GRADE, "nDCG")
    if len(set(ranking)) != len(ranking):
        raise ValueError("ranking lists a memory_id twice")
    ideal = dcg(sorted(judgments.values(), reverse=True), k)
    return dcg((judgments.get(memory_id, 0) for memory_id in ranking), k) / ideal


def abstained(ranking: Sequence[str]) -> bool:
    """The measure for a query with nothing relevant: recall returned no hit at all."""
    return len(ranking) == 0


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; raises ``ValueError`` on no values (an empty split is a mistake)."""
    items = list(values)
    if not items:
        raise ValueError("mean of no values")
    return math.fsum(items) / len(items)
