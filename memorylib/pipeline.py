"""The taught path: candidate -> score -> stable rank over records already in memory.

``recall_pipeline`` is what ``RecallEngine(strategy="teaching")`` runs after
``store.read_all()``; the indexed path (``memorylib.fast``) must return exactly the
same ``RecallResult``, and the property tests hold it to that.

Beyond the chapter, a policy's analysis: ``prepare_query`` gives the query the terms of
the policy's analyzer (``analysis.analyze_query``) unless it already has them; the
engine calls it with the raw text, whose lines are a dialogue's turns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from .analysis import analyze_query, query_parameters
from .candidates import build_recall_candidates
from .checks import require
from .query import extract_terms
from .ranking import ScoreFunction, stable_rank_recall_candidates
from .records import (
    INSUFFICIENT_EVIDENCE,
    NO_MATCHING_TERMS,
    RecallQuery,
    RecallResult,
    StoredMemory,
)
from .scoring import DEFAULT_POLICY, ScoringPolicy, score_recall_candidate
from .timestamps import parse_timestamp

__all__ = ["empty_reason", "prepare_query", "recall_pipeline"]


def prepare_query(
    query: RecallQuery, policy: ScoringPolicy, text: str | None = None
) -> RecallQuery:
    """``query`` with the terms of ``policy``'s analysis: unchanged for the chapter's (or
    when it was analyzed so already), else analyzed (``text``: the raw query text)."""
    query = require(query, RecallQuery, "query")
    if not isinstance(policy, ScoringPolicy):
        return query  # the stage that needs it says what is wrong
    if policy.chapter_terms:
        if query.analysis is None:
            return query
        return dataclasses.replace(query, terms=extract_terms(query.normalized_text), analysis=None)
    wanted = query_parameters(policy.analyzer, policy.query_weighting, policy.turn_decay)
    done = query.analysis
    if text is None and done and (done.analyzer, done.parameters) == (policy.analyzer.name, wanted):
        return query  # analyzed for this policy already (by the engine, from its raw text)
    return analyze_query(
        query,
        policy.analyzer,
        query_weighting=policy.query_weighting,
        turn_decay=policy.turn_decay,
        text=text,
    )


def empty_reason(hits: tuple, candidate_records: int) -> str | None:
    """None with hits; else no candidate at all, or candidates that lacked evidence."""
    if hits:
        return None
    return INSUFFICIENT_EVIDENCE if candidate_records else NO_MATCHING_TERMS


def recall_pipeline(
    query: RecallQuery,
    records: Iterable[StoredMemory],
    *,
    as_of: datetime | str,
    policy: ScoringPolicy = DEFAULT_POLICY,
    score: ScoreFunction = score_recall_candidate,
) -> RecallResult:
    """Candidates of ``records``, scored at ``as_of``, stably ranked, with their counts."""
    moment = parse_timestamp(as_of, "as_of")
    query = prepare_query(query, policy)
    candidate_set = build_recall_candidates(
        query, records, analyzer=policy.analyzer, context=policy.context
    )
    hits = stable_rank_recall_candidates(
        query, candidate_set, as_of=moment, policy=policy, score=score
    )
    return RecallResult(
        query=query,
        hits=hits,
        searched_records=candidate_set.searched_records,
        candidate_records=candidate_set.candidate_records,
        empty_reason=empty_reason(hits, candidate_set.candidate_records),
        retracted_records=candidate_set.retracted_records,
    )
