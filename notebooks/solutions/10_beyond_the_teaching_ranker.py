"""Reference solution for notebook 10's "Your turn" (for instructors).

The chapter's coverage counts every query term the same. ``my_score`` keeps the
chapter's breakdown (and the library's fields beyond it) and the contract's recency but weighs each matched term by its idf, so a match on
"bigram" (in 3 of the 69 conversation records recall searches in Mei's history) counts far
more than one on "the" (in 32):

    lexical = sum(idf(t) for t in matched_terms) / sum(idf(t) for t in query.terms)

The same share is what ``ScoringPolicy(min_evidence=...)`` thresholds (``scoring.evidence``),
and BM25 breakdowns report it as ``evidence``.
Evaluate it from a shell too:

    python -m memorylib eval --scorer notebooks/solutions/10_beyond_the_teaching_ranker.py:my_score
"""

from memorylib import RecallScoreBreakdown, recency_score
from memorylib.scoring import idf
from memorylib.timestamps import age_in_days


def my_score(query, candidate, *, as_of, policy, corpus):
    """Score one candidate: idf-weighted coverage plus the contract's recency."""
    weight = {term: idf(term, corpus) for term in query.terms}
    lexical = sum(weight[t] for t in candidate.matched_terms) / sum(weight.values())
    recency = recency_score(age_in_days(candidate.captured_at, as_of), policy.recency_window_days)
    lexical_part = policy.lexical_weight * lexical
    recency_part = policy.recency_weight * recency
    return RecallScoreBreakdown(
        matched_terms=candidate.matched_terms,
        query_term_count=len(query.terms),
        lexical_coverage=round(len(candidate.matched_terms) / len(query.terms), 6),
        recency=round(recency, 6),
        lexical_contribution=round(lexical_part, 6),
        recency_contribution=round(recency_part, 6),
        total=round(lexical_part + recency_part, 6),
        lexical_weight=policy.lexical_weight,
        recency_weight=policy.recency_weight,
        recency_window_days=policy.recency_window_days,
        scorer="idf_coverage",
        lexical_score=round(lexical, 6),
    )
