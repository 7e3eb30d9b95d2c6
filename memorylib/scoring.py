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
* ``bm25+recency``: BM25 divided by the query's best BM25 (0..1), weighted with recency
  (not a "hybrid": that word is kept for lexical + vector retrieval).

``min_evidence`` (off by default) drops candidates whose idf-weighted coverage (the
share of the query's idf that they match) is below it: a question whose answer is not in
the history then gets few or no hits (``empty_reason="insufficient_evidence"``).

The policy also carries the analysis (``memorylib.analysis``): the ``analyzer`` that
makes the terms of records and queries, ``query_weighting`` (``"dialogue-turns"``: a
term of a dialogue's older turns weighs ``turn_decay`` per turn less) and ``context``
(neighbour weights by distance, ``candidates.in_context``). Query weights multiply each
term's BM25 (``weight * idf * ...``) and its share of the evidence; coverage counts
terms, as the chapter does. With anything but the chapter's analysis, every breakdown
names the analyzer and explains each matched term (``TermMatch``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime

from .analysis import CHAPTER_ANALYZER, DIALOGUE_TURNS, Analyzer, term_matches
from .candidates import CorpusStats, record_terms
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
    "analysis_parameters",
    "bm25_score",
    "bm25_term_weight",
    "breakdown_parameters",
    "evidence",
    "explained",
    "idf",
    "query_weights",
    "recency_score",
    "score_recall_candidate",
    "weighted_idf",
]

SCORERS = ("coverage", "bm25", "bm25+recency")
VECTOR_MODELS = ("e5-small",)  # embedding models a policy may fuse (memorylib.vectors)
MAX_CONTEXT = 8  # neighbour weights a policy may give (distance 1 .. 8)


@dataclass(frozen=True, slots=True, repr=False)
class ScoringPolicy:
    """The scorer and its numbers: weights of the two parts, the recency window (days),
    BM25's k1 and b, and the evidence a candidate needs to become a hit (0: none); and
    the analysis: the analyzer, the query weighting and the context weights."""

    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    recency_window_days: float = DEFAULT_RECENCY_WINDOW_DAYS
    scorer: str = "coverage"
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    min_evidence: float = 0.0
    analyzer: Analyzer = CHAPTER_ANALYZER
    query_weighting: str | None = None
    turn_decay: float = 0.9
    context: tuple[float, ...] = ()
    vector: str | None = None  # beyond the chapter: an embedding model fused by rank (vectors.py)
    fusion_k: float = 60.0

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
        require(self.analyzer, Analyzer, "analyzer")
        if self.query_weighting not in (None, DIALOGUE_TURNS):
            raise RemoteMemoryValidationError(
                f"query_weighting must be None or {DIALOGUE_TURNS!r}, got {self.query_weighting!r}"
            )
        require_number(self.turn_decay, "turn_decay")
        if not 0 < self.turn_decay <= 1:
            raise RemoteMemoryValidationError("turn_decay must be > 0 and <= 1")
        if not isinstance(self.context, tuple) or len(self.context) > MAX_CONTEXT:
            raise RemoteMemoryValidationError(
                f"context must be a tuple of at most {MAX_CONTEXT} neighbour weights"
            )
        for weight in self.context:
            require_number(weight, "a context weight")
            if not 0 < weight <= 1:
                raise RemoteMemoryValidationError("context weights must be > 0 and <= 1")
        if self.vector is not None and self.vector not in VECTOR_MODELS:
            raise RemoteMemoryValidationError(
                f"vector must be None or one of {', '.join(VECTOR_MODELS)}, got {self.vector!r}"
            )
        require_number(self.fusion_k, "fusion_k")
        if self.fusion_k <= 0:
            raise RemoteMemoryValidationError("fusion_k must be > 0")

    @classmethod
    def bm25(
        cls,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        min_evidence: float = 0.0,
        analyzer: Analyzer = CHAPTER_ANALYZER,
        query_weighting: str | None = None,
        context: tuple[float, ...] = (),
    ) -> ScoringPolicy:
        """BM25 alone: total = BM25 (lexical weight 1, recency weight 0)."""
        return cls(
            1.0,
            0.0,
            DEFAULT_RECENCY_WINDOW_DAYS,
            "bm25",
            k1,
            b,
            min_evidence,
            analyzer=analyzer,
            query_weighting=query_weighting,
            context=context,
        )

    @classmethod
    def bm25_recency(
        cls,
        *,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        recency_weight: float = DEFAULT_RECENCY_WEIGHT,
        recency_window_days: float = DEFAULT_RECENCY_WINDOW_DAYS,
        k1: float = 1.2,
        b: float = 0.75,
        min_evidence: float = 0.0,
        analyzer: Analyzer = CHAPTER_ANALYZER,
        query_weighting: str | None = None,
        context: tuple[float, ...] = (),
    ) -> ScoringPolicy:
        """BM25 normalized to 0..1 per query, weighted with recency (``bm25+recency``)."""
        return cls(
            lexical_weight,
            recency_weight,
            recency_window_days,
            "bm25+recency",
            k1,
            b,
            min_evidence,
            analyzer=analyzer,
            query_weighting=query_weighting,
            context=context,
        )

    def __repr__(self) -> str:  # the chapter's three numbers, then whatever else is set
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)[:3]]
        shown += [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)[3:]
            if getattr(self, f.name) != f.default
        ]
        return f"ScoringPolicy({', '.join(shown)})"

    def lexical(self) -> ScoringPolicy:
        """This policy without its vector part: the lexical ranking a hybrid fuses."""
        return dataclasses.replace(self, vector=None, fusion_k=60.0)

    @property
    def uses_bm25(self) -> bool:
        return self.scorer != "coverage"

    @property
    def chapter_terms(self) -> bool:
        """True when the terms are the chapter's: its analyzer, no weights, no context."""
        return self.analyzer.is_chapter and self.query_weighting is None and not self.context


DEFAULT_POLICY = ScoringPolicy()


def recency_score(age_days: float, window_days: float = DEFAULT_RECENCY_WINDOW_DAYS) -> float:
    """1 at age 0, 1/2 at one window, 1/3 at two windows: ``1 / (1 + age/window)``."""
    return 1.0 / (1.0 + age_days / window_days)


def idf(term: str, corpus: CorpusStats) -> float:
    """How rare a term is among the searched records: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return _idf(corpus.documents, corpus.document_frequency.get(term, 0))


@functools.lru_cache(maxsize=1 << 14)
def _idf(documents: int, df: int) -> float:
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def query_weights(query: RecallQuery) -> Mapping[str, float] | None:
    """Each query term's weight when the query's analysis weighs them, else None (all 1)."""
    if query.analysis is None or all(t.weight == 1.0 for t in query.analysis.terms):
        return None
    return {t.term: t.weight for t in query.analysis.terms}


def weighted_idf(term: str, corpus: CorpusStats, weights: Mapping[str, float] | None) -> float:
    """A query term's idf times its query weight (``weights``; None: 1, the idf itself)."""
    return idf(term, corpus) if weights is None else weights.get(term, 1.0) * idf(term, corpus)


def bm25_term_weight(tf: float, length: float, average_length: float, k1: float, b: float) -> float:
    """One matched term's BM25 weight before idf: ``tf * (k1 + 1) / (tf + norm)`` with the
    length norm ``k1 * (1 - b + b * length / average_length)`` (``k1`` if the average is 0)."""
    norm = k1 * (1.0 - b + b * length / average_length) if average_length else k1
    return tf * (k1 + 1.0) / (tf + norm)


def bm25_score(
    candidate: RecallCandidate,
    corpus: CorpusStats,
    policy: ScoringPolicy,
    weights: Mapping[str, float] | None = None,
) -> float:
    """BM25 of the candidate's record for its matched terms (see the module docstring),
    each term's part multiplied by its query weight (``weights``; None: all 1)."""
    if candidate.length:  # counted by the candidate stage
        frequencies, length = candidate.term_frequencies, candidate.length
    else:  # a candidate built by hand: count its record's terms (alone: no context)
        counts = record_terms(candidate.record, policy.analyzer).counts
        frequencies = tuple(counts[term] for term in candidate.matched_terms)
        length = sum(counts.values())
    k1, b, average = policy.bm25_k1, policy.bm25_b, corpus.average_length
    score = 0.0
    for term, tf in zip(candidate.matched_terms, frequencies, strict=True):
        score += weighted_idf(term, corpus, weights) * bm25_term_weight(tf, length, average, k1, b)
    return score


def evidence(
    query: RecallQuery,
    candidate: RecallCandidate,
    corpus: CorpusStats,
    weights: Mapping[str, float] | None = None,
) -> float:
    """The share of the query's idf the candidate matches (1.0: every term); with query
    weights (``weights``, or else the query's own), of its weighted idf."""
    weights = query_weights(query) if weights is None else weights
    total = sum(weighted_idf(term, corpus, weights) for term in query.terms)
    matched = sum(weighted_idf(term, corpus, weights) for term in candidate.matched_terms)
    return matched / total if total else 0.0


def analysis_parameters(policy: ScoringPolicy) -> tuple[tuple[str, str], ...]:
    """The policy's analysis as text: the analyzer's steps, the weighting, the context."""
    found = policy.analyzer.parameters()
    if policy.query_weighting is not None:
        found += (
            ("query_weighting", policy.query_weighting),
            ("turn_decay", f"{policy.turn_decay:g}"),
        )
    if policy.context:
        found += (("context", " ".join(f"{w:g}" for w in policy.context)),)
    return found


def breakdown_parameters(
    policy: ScoringPolicy, corpus: CorpusStats | None
) -> tuple[tuple[str, float], ...]:
    """A breakdown's ``parameters``: the policy's BM25 constants and the corpus's counts."""
    found: list[tuple[str, float]] = []
    if policy.uses_bm25 and corpus is not None:
        found += [
            ("k1", float(policy.bm25_k1)),
            ("b", float(policy.bm25_b)),
            ("documents", float(corpus.documents)),
            ("average_length", round(corpus.average_length, 6)),
        ]
        if policy.scorer == "bm25+recency":
            found.append(("best_bm25", round(corpus.best_bm25 or 0.0, 6)))
    if policy.min_evidence:
        found.append(("min_evidence", float(policy.min_evidence)))
    return tuple(found)


def explained(
    breakdown: RecallScoreBreakdown,
    query: RecallQuery,
    candidate: RecallCandidate,
    policy: ScoringPolicy,
) -> RecallScoreBreakdown:
    """``breakdown`` with the policy's analysis explained (unchanged for the chapter's)."""
    if policy.chapter_terms:
        return breakdown
    return dataclasses.replace(
        breakdown,
        analyzer=policy.analyzer.name,
        analysis_parameters=analysis_parameters(policy),
        term_matches=term_matches(query, candidate),
    )


def score_recall_candidate(
    query: RecallQuery,
    candidate: RecallCandidate,
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
    corpus: CorpusStats | None = None,
    explain: bool = True,
) -> RecallScoreBreakdown:
    """Score one candidate. Pure; floats rounded to 6 places. BM25 scorers and a
    ``min_evidence`` need the ``corpus`` the candidate stage counted. ``explain=False``
    leaves out the analysis's explanation (``explained`` adds it: the ranking stage
    explains only the hits it keeps)."""
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
    weights = query_weights(query)
    raw = bm25_score(candidate, corpus, policy, weights) if policy.uses_bm25 else None
    if policy.scorer == "coverage":
        lexical = coverage
    elif policy.scorer == "bm25":
        lexical = raw
    else:  # bm25+recency: BM25 as a share of the query's best
        best = corpus.best_bm25 if corpus.best_bm25 is not None else raw
        lexical = raw / best if best else 0.0
    lexical_part = policy.lexical_weight * lexical
    recency_part = policy.recency_weight * recency
    share = (
        evidence(query, candidate, corpus, weights)
        if corpus is not None and (policy.uses_bm25 or policy.min_evidence)
        else None
    )
    breakdown = RecallScoreBreakdown(
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
        parameters=breakdown_parameters(policy, corpus),
    )
    return explained(breakdown, query, candidate, policy) if explain else breakdown
