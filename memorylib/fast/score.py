"""``score_recall_candidate`` for the few candidates of one query, its sums done once.

The taught scorer works one candidate at a time, so for each it finds the query's term
weights again, every query term's weighted idf again (the evidence's denominator) and,
for another analysis than the chapter's, a table of the query's terms to explain the
matched ones. A dialogue question holds dozens of terms, and that is most of a query's
time once the index has shortlisted its ten records. ``QueryScorer`` is the same
function for one (query, policy, corpus): those per-query values are computed once, with
the taught functions (``scoring.query_weights``, ``scoring.weighted_idf``,
``scoring.analysis_parameters``), and each candidate's numbers follow the taught
operations in the taught order (``scoring.bm25_term_weight``, ``scoring.recency_score``,
the same sums, the same rounding), so every float is the reference's.

The breakdown's ``parameters`` depend on the policy and corpus only: the reference's
``scoring.breakdown_parameters`` makes them once. A call for anything else than the
query, policy and corpus it was made for, one the reference would refuse for want of a
corpus, or a candidate built by hand (no length counted), goes to the reference.
``tests/test_fast_equivalence.py`` holds it equal to the reference on random candidates.
"""

from __future__ import annotations

from datetime import datetime

from memorylib.candidates import CorpusStats
from memorylib.explanation import TermMatch
from memorylib.records import RecallCandidate, RecallQuery, RecallScoreBreakdown
from memorylib.scoring import (
    ScoringPolicy,
    analysis_parameters,
    bm25_term_weight,
    breakdown_parameters,
    query_weights,
    recency_score,
    score_recall_candidate,
    weighted_idf,
)
from memorylib.timestamps import age_in_days, parse_timestamp

__all__ = ["QueryScorer"]


class QueryScorer:
    """``score_recall_candidate`` (same signature) for candidates of one query."""

    def __init__(
        self, query: RecallQuery, policy: ScoringPolicy, corpus: CorpusStats | None
    ) -> None:
        self.query, self.policy, self.corpus = query, policy, corpus
        self.weights = query_weights(query)
        self.counted = corpus is not None and (policy.uses_bm25 or policy.min_evidence)
        self._idf: dict[str, float] = {}
        # = the evidence's denominator: the same terms summed in the same order
        self.query_idf = sum(self.idf(term) for term in query.terms) if self.counted else 0.0
        self.parameters = breakdown_parameters(policy, corpus)  # = every breakdown's
        self.explains = not policy.chapter_terms
        if self.explains:
            self.analysis = analysis_parameters(policy)
            self.told_of = (
                {t.term: t for t in query.analysis.terms} if query.analysis is not None else {}
            )

    def idf(self, term: str) -> float:
        """``weighted_idf(term, corpus, weights)``, once per term."""
        found = self._idf.get(term)
        if found is None:
            found = self._idf[term] = weighted_idf(term, self.corpus, self.weights)
        return found

    def __call__(
        self,
        query: RecallQuery,
        candidate: RecallCandidate,
        *,
        as_of: datetime | str,
        policy: ScoringPolicy,
        corpus: CorpusStats | None = None,
        explain: bool = True,
    ) -> RecallScoreBreakdown:
        mine = query is self.query and policy is self.policy and corpus is self.corpus
        if (
            not mine
            or (corpus is None and (policy.uses_bm25 or policy.min_evidence))
            or not isinstance(candidate, RecallCandidate)
            or candidate.query_id != query.query_id
            or (policy.uses_bm25 and not candidate.length)
        ):
            return score_recall_candidate(
                query, candidate, as_of=as_of, policy=policy, corpus=corpus, explain=explain
            )
        moment = parse_timestamp(as_of, "as_of")
        matched = candidate.matched_terms
        coverage = len(matched) / len(query.terms)
        age = age_in_days(candidate.captured_at, moment)
        recency = recency_score(age, policy.recency_window_days)
        raw = None
        if policy.uses_bm25:  # = scoring.bm25_score on the counted frequencies and length
            length, average = candidate.length, corpus.average_length
            k1, b = policy.bm25_k1, policy.bm25_b
            raw = 0.0
            for term, tf in zip(matched, candidate.term_frequencies, strict=True):
                raw += self.idf(term) * bm25_term_weight(tf, length, average, k1, b)
        if policy.scorer == "coverage":
            lexical = coverage
        elif policy.scorer == "bm25":
            lexical = raw
        else:
            best = corpus.best_bm25 if corpus.best_bm25 is not None else raw
            lexical = raw / best if best else 0.0
        lexical_part = policy.lexical_weight * lexical
        recency_part = policy.recency_weight * recency
        share = None
        if self.counted:  # = scoring.evidence
            total = self.query_idf
            share = sum(self.idf(term) for term in matched) / total if total else 0.0
        explanation = {}
        if explain and self.explains:  # = scoring.explained, the query's table made once
            explanation = {
                "analyzer": policy.analyzer.name,
                "analysis_parameters": self.analysis,
                "term_matches": self._term_matches(candidate),
            }
        return RecallScoreBreakdown(
            matched_terms=matched,
            query_term_count=len(query.terms),
            lexical_coverage=round(coverage, 6),
            recency=round(recency, 6),
            lexical_contribution=round(lexical_part, 6),
            recency_contribution=round(recency_part, 6),
            total=round(lexical_part + recency_part, 6),
            lexical_weight=float(policy.lexical_weight),
            recency_weight=float(policy.recency_weight),
            recency_window_days=float(policy.recency_window_days),
            scorer=policy.scorer,
            lexical_score=None if policy.scorer == "coverage" else round(lexical, 6),
            bm25=None if raw is None else round(raw, 6),
            evidence=None if share is None else round(share, 6),
            parameters=self.parameters,
            **explanation,
        )

    def _term_matches(self, candidate: RecallCandidate) -> tuple[TermMatch, ...]:
        """= ``analysis.term_matches(query, candidate)``."""
        matched = candidate.matched_terms
        frequencies = candidate.term_frequencies or (0,) * len(matched)
        sources = candidate.term_sources or ((),) * len(matched)
        found = []
        for term, tf, where in zip(matched, frequencies, sources, strict=True):
            told = self.told_of.get(term)
            found.append(
                TermMatch(
                    term=term,
                    words=told.words if told else (),
                    steps=told.steps if told else (),
                    weight=told.weight if told else 1.0,
                    frequency=round(float(tf), 6),
                    found_in=where,
                )
            )
        return tuple(found)
