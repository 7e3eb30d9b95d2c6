"""Stage 3, score: one candidate -> a RecallScoreBreakdown that explains its total.

Contract (the chapter's scorer, ``coverage``, the default):
``coverage = matched / query_terms``; ``age_days = max(0, as_of - captured_at)``;
``recency = 1 / (1 + age_days / window)``; ``total = w_lex * coverage + w_rec * recency``,
with w_lex 0.85, w_rec 0.15 and a 30-day window. Rejects a candidate built for another
query_id. Beyond the chapter, a ``ScoringPolicy`` changes the numbers or the scorer,
and every breakdown reports what was used; its contributions always add up to the total:

* ``coverage``: the lexical part is the share of query terms matched (every term counts
  the same: "the" as much as "retrieval");
* ``bm25``: the lexical part is BM25, ``sum over matched terms of idf * tf * (k1 + 1) /
  (tf + k1 * (1 - b + b * length / average_length))`` with ``idf = ln(1 + (N - df + 0.5)
  / (df + 0.5))`` over the searched records (``CorpusStats``): rare terms weigh more,
  repeated terms more (with diminishing returns), long records less; no recency;
* ``hybrid``: BM25 divided by the query's best BM25 (0..1), weighted with recency.

``min_evidence`` (off by default) drops candidates whose idf-weighted coverage (the
share of the query's idf that they match) is below it: a question whose answer is not in
the history then gets few or no hits (``empty_reason="insufficient_evidence"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from datetime import datetime

from .candidates import CorpusStats, record_term_counts
from .checks import require, require_number
from .errors import RemoteMemoryValidationError
from .records import (
    DEFAULT_LEXICAL_WEIGHT,
    DEFAULT_RECENCY_WEIGHT,
    DEFAULT_RECENCY_WINDOW_DAYS,
    RecallCandidate,
    RecallQuery,
    RecallScoreBreakdown,
)
from .timestamps import age_in_days, parse_timestamp

__all__ = [
    "DEFAULT_POLICY",
    "SCORERS",
    "ScoringPolicy",
    "bm25_score",
    "bm25_term_weight",
    "evidence",
    "idf",
    "recency_score",
    "score_recall_candidate",
]

SCORERS = ("coverage", "bm25", "hybrid")


@dataclass(frozen=True, slots=True, repr=False)
class ScoringPolicy:
    """The scorer and its numbers: weights of the two parts, the recency window (days),
    BM25's k1 and b, and the evidence a candidate needs to become a hit (0: none)."""

    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    recency_window_days: float = DEFAULT_RECENCY_WINDOW_DAYS
    scorer: str = "coverage"
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    min_evidence: float = 0.0

    def __post_init__(self) -> None:
        for name in (
            "lexical_weight",
            "recency_weight",
            "recency_window_days",
            "bm25_k1",
            "bm25_b",
            "min_evidence",
        ):
            require_number(getattr(self, name), name)
        if self.recency_window_days <= 0:
            raise RemoteMemoryValidationError("recency_window_days must be > 0")
        if self.lexical_weight == 0 and self.recency_weight == 0:
            raise RemoteMemoryValidationError("lexical_weight and recency_weight cannot both be 0")
        if self.scorer not in SCORERS:
            raise RemoteMemoryValidationError(
                f"scorer must be one of {', '.join(SCORERS)}, got {self.scorer!r}"
            )
        if self.bm25_b > 1 or self.min_evidence > 1:
            raise RemoteMemoryValidationError("bm25_b and min_evidence must be between 0 and 1")

    @classmethod
    def bm25(cls, *, k1: float = 1.2, b: float = 0.75, min_evidence: float = 0.0) -> ScoringPolicy:
        """BM25 alone: total = BM25 (lexical weight 1, recency weight 0)."""
        return cls(1.0, 0.0, DEFAULT_RECENCY_WINDOW_DAYS, "bm25", k1, b, min_evidence)

    @classmethod
    def hybrid(
        cls,
        *,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        recency_weight: float = DEFAULT_RECENCY_WEIGHT,
        recency_window_days: float = DEFAULT_RECENCY_WINDOW_DAYS,
        k1: float = 1.2,
        b: float = 0.75,
        min_evidence: float = 0.0,
    ) -> ScoringPolicy:
        """BM25 normalized to 0..1 per query, weighted with recency."""
        return cls(
            lexical_weight, recency_weight, recency_window_days, "hybrid", k1, b, min_evidence
        )

    def __repr__(self) -> str:  # the chapter's three numbers, then whatever else is set
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)[:3]]
        shown += [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)[3:]
            if getattr(self, f.name) != f.default
        ]
        return f"ScoringPolicy({', '.join(shown)})"

    @property
    def uses_bm25(self) -> bool:
        return self.scorer != "coverage"


DEFAULT_POLICY = ScoringPolicy()


def recency_score(age_days: float, window_days: float = DEFAULT_RECENCY_WINDOW_DAYS) -> float:
    """1 at age 0, 1/2 at one window, 1/3 at two windows: ``1 / (1 + age/window)``."""
    return 1.0 / (1.0 + age_days / window_days)


def idf(term: str, corpus: CorpusStats) -> float:
    """How rare a term is among the searched records: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    df = corpus.document_frequency.get(term, 0)
    return math.log(1.0 + (corpus.documents - df + 0.5) / (df + 0.5))


def bm25_term_weight(tf: float, length: float, average_length: float, k1: float, b: float) -> float:
    """One matched term's BM25 weight before idf: ``tf * (k1 + 1) / (tf + norm)`` with the
    length norm ``k1 * (1 - b + b * length / average_length)`` (``k1`` if the average is 0)."""
    norm = k1 * (1.0 - b + b * length / average_length) if average_length else k1
    return tf * (k1 + 1.0) / (tf + norm)


def bm25_score(candidate: RecallCandidate, corpus: CorpusStats, policy: ScoringPolicy) -> float:
    """BM25 of the candidate's record for its matched terms (see the module docstring)."""
    if candidate.length:  # counted by the candidate stage
        frequencies, length = candidate.term_frequencies, candidate.length
    else:  # a candidate built by hand: count its record's terms
        counts = record_term_counts(candidate.record)
        frequencies = tuple(counts[term] for term in candidate.matched_terms)
        length = sum(counts.values())
    k1, b, average = policy.bm25_k1, policy.bm25_b, corpus.average_length
    score = 0.0
    for term, tf in zip(candidate.matched_terms, frequencies, strict=True):
        score += idf(term, corpus) * bm25_term_weight(tf, length, average, k1, b)
    return score


def evidence(query: RecallQuery, candidate: RecallCandidate, corpus: CorpusStats) -> float:
    """The share of the query's idf the candidate matches (1.0: every term)."""
    total = sum(idf(term, corpus) for term in query.terms)
    return sum(idf(term, corpus) for term in candidate.matched_terms) / total if total else 0.0


def _parameters(policy: ScoringPolicy, corpus: CorpusStats | None) -> tuple[tuple[str, float], ...]:
    found: list[tuple[str, float]] = []
    if policy.uses_bm25 and corpus is not None:
        found += [
            ("k1", float(policy.bm25_k1)),
            ("b", float(policy.bm25_b)),
            ("documents", float(corpus.documents)),
            ("average_length", round(corpus.average_length, 6)),
        ]
        if policy.scorer == "hybrid":
            found.append(("best_bm25", round(corpus.best_bm25 or 0.0, 6)))
    if policy.min_evidence:
        found.append(("min_evidence", float(policy.min_evidence)))
    return tuple(found)


def score_recall_candidate(
    query: RecallQuery,
    candidate: RecallCandidate,
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
    corpus: CorpusStats | None = None,
) -> RecallScoreBreakdown:
    """Score one candidate. Pure; floats rounded to 6 places. BM25 scorers and a
    ``min_evidence`` need the ``corpus`` the candidate stage counted."""
    query = require(query, RecallQuery, "query")
    candidate = require(candidate, RecallCandidate, "candidate")
    if candidate.query_id != query.query_id:
        raise RemoteMemoryValidationError(
            f"candidate.query_id {candidate.query_id!r} does not match query_id {query.query_id!r}"
        )
    policy = require(policy, ScoringPolicy, "policy")
    if policy.uses_bm25 or policy.min_evidence:
        corpus = require(corpus, CorpusStats, "corpus")
    moment = parse_timestamp(as_of, "as_of")
    coverage = len(candidate.matched_terms) / len(query.terms)
    recency = recency_score(age_in_days(candidate.captured_at, moment), policy.recency_window_days)
    raw = bm25_score(candidate, corpus, policy) if policy.uses_bm25 else None
    if policy.scorer == "coverage":
        lexical = coverage
    elif policy.scorer == "bm25":
        lexical = raw
    else:  # hybrid: BM25 as a share of the query's best
        best = corpus.best_bm25 if corpus.best_bm25 is not None else raw
        lexical = raw / best if best else 0.0
    lexical_part = policy.lexical_weight * lexical
    recency_part = policy.recency_weight * recency
    share = (
        evidence(query, candidate, corpus)
        if corpus is not None and (policy.uses_bm25 or policy.min_evidence)
        else None
    )
    return RecallScoreBreakdown(
        matched_terms=candidate.matched_terms,
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
        parameters=_parameters(policy, corpus),
    )
