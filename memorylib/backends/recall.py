"""Recall with candidates from the database: the same RecallResult as the taught path.

A database backend answers ``indexed_recall`` in three steps:

1. **match** (SQL): for the query's terms, every live (not retracted) conversation
   record that holds at least one of them, grouped by its *level*, the number of
   distinct query terms it holds. The database returns each level's size and only
   its ``limit`` newest records by (captured_at DESC, memory_id ASC), plus the
   searched and retracted counts.
2. **shortlist** (Python, ``fast.shortlist.coverage_shortlist``, the one the JSONL
   index uses): from the levels' sizes and newest records alone, the few records
   that certainly hold the top ``limit``.
3. **rank** (the taught stages): the few shortlisted records are fetched and go
   through ``build_recall_candidates`` and ``stable_rank_recall_candidates`` as taught.

The counts (searched, candidate, retracted) come from the database, so they are
those of the whole store. ``tests/test_store_contract.py`` holds the result equal to
``recall_pipeline(query, store.read_all())`` on random stores of every backend.

This serves the chapter's ``coverage`` scorer (``serves(policy)``); a store answers
any other policy with the taught path over ``read_all()``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memorylib.candidates import build_recall_candidates
from memorylib.checks import require
from memorylib.fast.shortlist import coverage_shortlist
from memorylib.pipeline import empty_reason
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import RecallQuery, RecallResult, StoredMemory
from memorylib.scoring import ScoringPolicy
from memorylib.timestamps import epoch_micros, parse_timestamp

__all__ = ["TermMatches", "recall_from_matches", "serves"]


@dataclass(frozen=True)
class TermMatches:
    """The database's answer to one query (``Key`` identifies a row: its seq).

    ``level_sizes[level]``: how many live conversation records hold exactly ``level``
    distinct query terms; ``newest[level]``: up to ``limit`` of them as
    ``(key, captured_micros)``, first by captured_at DESC, memory_id ASC.
    """

    level_sizes: Mapping[int, int]
    newest: Mapping[int, Sequence[tuple[Hashable, int]]]
    searched_records: int
    retracted_records: int
    candidate_records: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidate_records", sum(self.level_sizes.values()))


def serves(policy: object) -> bool:
    """Whether the database path can answer for ``policy``: the chapter's ``coverage``
    scorer without ``min_evidence``, on the chapter's terms (the terms table holds no
    other analyzer's). BM25 and bm25+recency need every searched record's term
    frequencies and lengths (the terms table keeps neither), so those policies, and any
    bad value, take the taught path, which answers or raises as taught."""
    return (
        isinstance(policy, ScoringPolicy)
        and policy.scorer == "coverage"
        and policy.min_evidence == 0
        and policy.chapter_terms
    )


def recall_from_matches(
    query: RecallQuery,
    *,
    as_of: datetime | str,
    policy: ScoringPolicy,
    match: Callable[[tuple[str, ...], int], TermMatches],
    fetch: Callable[[list[Hashable]], Sequence[StoredMemory]],
) -> RecallResult:
    """``match(terms, limit)`` -> TermMatches; ``fetch(keys)`` -> those records; then the
    taught candidate and rank stages over the shortlist."""
    moment = parse_timestamp(as_of, "as_of")
    policy = require(policy, ScoringPolicy, "policy")
    wanted = tuple(sorted(set(query.terms)))
    matches = match(wanted, query.limit)
    keys = (
        coverage_shortlist(
            matches.level_sizes,
            lambda level: matches.newest.get(level, ()),
            term_count=len(query.terms),
            limit=query.limit,
            now_micros=epoch_micros(moment),
            policy=policy,
        )
        if wanted
        else []
    )
    candidate_set = build_recall_candidates(query, fetch(keys) if keys else ())
    hits = stable_rank_recall_candidates(query, candidate_set, as_of=moment, policy=policy)
    return RecallResult(
        query=query,
        hits=hits,
        searched_records=matches.searched_records,
        candidate_records=matches.candidate_records,
        empty_reason=empty_reason(hits, matches.candidate_records),
        retracted_records=matches.retracted_records,
    )
