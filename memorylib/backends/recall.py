"""Recall with candidates from the database: the same RecallResult as the taught path.

A database backend answers ``indexed_recall`` in three steps:

1. **match** (SQL): for the query's terms, every live (not retracted) conversation
   record that holds at least one of them, grouped by its *level*, the number of
   distinct query terms it holds. The database returns each level's size and only
   its ``limit`` newest records by (captured_at DESC, memory_id ASC), plus the
   searched and retracted counts.
2. **shortlist** (here, pure): records of one level have the same coverage, so
   within a level the contract's order (total, coverage, captured_at DESC,
   memory_id ASC) is just captured_at DESC, memory_id ASC (recency only falls with
   age, and rounding cannot reorder what it cannot separate). The global top
   ``limit`` therefore lies among the ``limit`` newest of each level, and a level is
   skipped once ``limit`` records match enough more terms that recency cannot close
   the gap. What is left is pre-scored with the contract's formula and anything
   below the ``limit``-th best by more than rounding can explain is dropped. (The
   reasoning of ``memorylib.fast.index``'s shortlist, on the database's answer.)
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
from typing import TypeVar

from memorylib.candidates import build_recall_candidates
from memorylib.checks import require
from memorylib.pipeline import empty_reason
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import RecallQuery, RecallResult, StoredMemory
from memorylib.scoring import DEFAULT_POLICY, ScoringPolicy
from memorylib.timestamps import SECONDS_PER_DAY, epoch_micros, parse_timestamp

__all__ = ["ROUNDING_SLACK", "TermMatches", "recall_from_matches", "serves", "shortlist"]

# Scores are rounded to 6 places: two records whose exact totals differ by less than
# twice the largest rounding step (plus float error) may swap, so keep both.
ROUNDING_SLACK = 2e-6

Key = TypeVar("Key", bound=Hashable)


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


def shortlist(
    matches: TermMatches,
    *,
    term_count: int,
    limit: int,
    as_of: datetime,
    policy: ScoringPolicy = DEFAULT_POLICY,
) -> list[Hashable]:
    """Keys of a subset of the matched records that certainly holds the top ``limit``."""
    sizes = {level: size for level, size in matches.level_sizes.items() if size > 0}
    if matches.candidate_records <= limit:
        return [key for level in sizes for key, _ in matches.newest.get(level, ())]
    present = sorted(sizes, reverse=True)  # most matched terms first
    slack = ROUNDING_SLACK + 1e-12 * (policy.lexical_weight + policy.recency_weight)
    step = policy.lexical_weight / term_count  # lexical gain of one more matched term
    margin = policy.recency_weight + slack  # recency adds at most recency_weight
    chosen: list[tuple[Hashable, int, int]] = []
    for level in present:
        beaten_by = sum(sizes[up] for up in present if step * (up - level) >= margin)
        if beaten_by >= limit:  # limit records certainly outrank this level and below
            break
        chosen += [(key, captured, level) for key, captured in matches.newest[level][:limit]]
    if len(chosen) <= limit:
        return [key for key, _, _ in chosen]
    now = epoch_micros(as_of)
    totals = []
    for _, captured, level in chosen:
        age_days = max(0.0, (now - captured) / 1e6 / SECONDS_PER_DAY)
        recency = 1.0 / (1.0 + age_days / policy.recency_window_days)
        coverage = level / term_count
        totals.append(policy.lexical_weight * coverage + policy.recency_weight * recency)
    kth = sorted(totals, reverse=True)[limit - 1]
    return [key for (key, _, _), total in zip(chosen, totals, strict=True) if total >= kth - slack]


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
        shortlist(
            matches, term_count=len(query.terms), limit=query.limit, as_of=moment, policy=policy
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
