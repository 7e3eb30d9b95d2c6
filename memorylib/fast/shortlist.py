"""The coverage shortlist: the few matched records that certainly hold the top ``limit``.

For the chapter's ``coverage`` scorer, a record's total is ``w_lex * level / terms + w_rec
* recency``, where its *level* is how many distinct query terms it holds. Records of
one level share their coverage, so within a level the contract's order (total,
coverage, captured_at DESC, memory_id ASC) is just captured_at DESC, memory_id ASC:
recency only falls with age, and rounding cannot reorder what it cannot separate.
Hence:

* the global top ``limit`` lies among the ``limit`` newest records of each level;
* a level (and every level below it) is skipped once ``limit`` records hold so many
  more terms that all the recency a record can get (``w_rec``) cannot close the gap;
* what is left is pre-scored with the contract's formula (``scoring.recency_score``),
  and a record below the ``limit``-th best by more than rounding can explain
  (``ROUNDING_SLACK``) is dropped.

The taught ``stable_rank_recall_candidates`` then scores and orders the few kept.

Both indexed paths use it: the JSONL index (``fast.index``, levels from its posting
lists) and the databases (``backends.recall``, levels from SQL). It lives in ``fast``
because it exists only for speed (the taught path scores every candidate), and
``backends`` sits above ``fast`` in the layers, so both may import it. It is plain
Python, no numpy: the database path needs no arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from memorylib.scoring import ScoringPolicy, recency_score
from memorylib.timestamps import SECONDS_PER_DAY

__all__ = ["ROUNDING_SLACK", "coverage_shortlist"]

# Scores are rounded to 6 places: two records whose exact totals differ by less than
# twice the largest rounding step (plus float error) may swap, so both are kept.
ROUNDING_SLACK = 2e-6

Key = TypeVar("Key", bound=Hashable)


def coverage_shortlist(
    level_sizes: Mapping[int, int],
    newest: Callable[[int], Sequence[tuple[Key, int]]],
    *,
    term_count: int,
    limit: int,
    now_micros: int,
    policy: ScoringPolicy,
) -> list[Key]:
    """Keys of a subset of the matched records that certainly holds the top ``limit``.

    ``level_sizes[level]``: how many matched records hold ``level`` distinct query
    terms; ``newest(level)``: at least ``min(limit, size)`` of them as ``(key,
    captured_micros)``, first by captured_at DESC, memory_id ASC (asked only for the
    levels that can reach the top); ``term_count``: the query's terms, repeats counted.
    """
    sizes = {level: size for level, size in level_sizes.items() if size > 0}
    present = sorted(sizes, reverse=True)  # most matched terms first
    if sum(sizes.values()) <= limit:
        return [key for level in present for key, _ in newest(level)]
    slack = ROUNDING_SLACK + 1e-12 * (policy.lexical_weight + policy.recency_weight)
    step = policy.lexical_weight / term_count  # lexical gain of one more matched term
    margin = policy.recency_weight + slack  # recency adds at most recency_weight
    chosen: list[tuple[Key, int, int]] = []
    for level in present:
        beaten_by = sum(sizes[up] for up in present if step * (up - level) >= margin)
        if beaten_by >= limit:  # limit records certainly outrank this level and below
            break
        chosen += [(key, captured, level) for key, captured in newest(level)[:limit]]
    if len(chosen) <= limit:
        return [key for key, _, _ in chosen]
    totals = []
    for _, captured, level in chosen:
        # = timestamps.age_in_days, on the exact microseconds
        age_days = max(0.0, (now_micros - captured) / 1e6 / SECONDS_PER_DAY)
        recency = recency_score(age_days, policy.recency_window_days)
        totals.append(
            policy.lexical_weight * (level / term_count) + policy.recency_weight * recency
        )
    kth = sorted(totals, reverse=True)[limit - 1]
    return [key for (key, _, _), total in zip(chosen, totals, strict=True) if total >= kth - slack]
