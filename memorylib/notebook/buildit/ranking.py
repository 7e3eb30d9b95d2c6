"""Stage 4 build-it (notebook 05): ``stable_rank_recall_candidates``.

Checked against ``memorylib.ranking`` (with the library's scorer, as the exercise's
default ``score``) on the whole hits: rank, memory_id, snippet, scope, provenance and
breakdown, in order. Generated candidate lists are built to tie: a few matched-term
counts, capture times shared by several records, captures after ``as_of`` (all age 0),
and two captures half a second apart whose ISO texts sort the wrong way round
(``...12:00:00.500000Z`` is later than ``...12:00:00Z`` but sorts before it as text).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memorylib.candidates import build_recall_candidates
from memorylib.notebook.buildit.engine import Example, Exercise, Malformed, Mistake
from memorylib.notebook.buildit.fixtures import (
    AS_OF,
    CHAPTER_QUERY,
    RecordSpec,
    build_records,
    chapter_records,
    make_query,
)
from memorylib.notebook.buildit.generate import shrink_sequence
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import RecallCandidate, RecallHit, RecallQuery, RecallScope
from memorylib.scoring import score_recall_candidate
from memorylib.timestamps import epoch_micros

__all__ = ["STABLE_RANK_RECALL_CANDIDATES", "RankCase"]

TERMS = ("cache", "index", "memory", "recall")
HALF_SECOND = 0.5 / 86_400
# days before as_of: shared values make ties; negative ones are after as_of (age 0)
CAPTURES = (1.0, 1.0, 1.0 - HALF_SECOND, 3.0, 40.0, -2.0, -5.0)


@dataclass(frozen=True)
class RankCase:
    query: RecallQuery
    candidates: tuple[RecallCandidate, ...]
    as_of: str = AS_OF
    specs: tuple[RecordSpec, ...] = ()
    terms: int = 0


def _case(terms: int, limit: int, specs: tuple[RecordSpec, ...]) -> RankCase:
    query = make_query(" ".join(TERMS[:terms]), limit=limit)
    found = build_recall_candidates(query, build_records(specs))
    return RankCase(query, found.candidates, AS_OF, specs, terms)


def _generate(rng: random.Random) -> RankCase:
    terms = rng.choice(range(1, len(TERMS) + 1))
    limit = rng.choice((1, 2, 3, 5, 5))
    ids = rng.sample([f"m{n}" for n in range(1, 10)], rng.choice(range(7)))
    specs = tuple(
        RecordSpec(
            memory_id,
            summary=TERMS[: rng.choice(range(1, terms + 1))],
            content=(f"note {memory_id}",),
            captured_days_before=rng.choice(CAPTURES),
        )
        for memory_id in ids
    )
    return _case(terms, limit, specs)


def _shrink(case: RankCase) -> Iterator[RankCase]:
    if not case.terms:
        return
    for specs in shrink_sequence(case.specs):
        yield _case(case.terms, case.query.limit, specs)
    if case.query.limit > 1:
        yield _case(case.terms, case.query.limit - 1, case.specs)
    if case.terms > 1:
        fewer = tuple(
            RecordSpec(
                s.memory_id,
                summary=s.summary[: case.terms - 1],
                content=s.content,
                captured_days_before=s.captured_days_before,
            )
            for s in case.specs
        )
        yield _case(case.terms - 1, case.query.limit, fewer)


# -- comparing ------------------------------------------------------------------------------


def _project(result: Any, case: RankCase) -> Any:
    if isinstance(result, list):
        return Malformed("return a tuple of RecallHit, not a list: tuple(hits)")
    if not isinstance(result, tuple):
        return Malformed(
            f"stable_rank_recall_candidates must return a tuple of RecallHit, not "
            f"{type(result).__name__}"
        )
    for hit in result:
        if not isinstance(hit, RecallHit):
            return Malformed(f"every hit must be a RecallHit, not {type(hit).__name__}")
    return result


def _show(hits: tuple[RecallHit, ...]) -> str:
    if not hits:
        return "no hits ()"
    return ", ".join(
        f"#{hit.rank} {hit.memory_id} ({hit.score_breakdown.total}, {_clip(hit.snippet)})"
        for hit in hits
    )


def _clip(text: str, size: int = 24) -> str:
    return repr(text if len(text) <= size else text[: size - 1] + "…")


def _differences(
    expected: tuple[RecallHit, ...], got: tuple[RecallHit, ...], case: RankCase
) -> list[str]:
    lines = []
    if len(expected) != len(got):
        lines.append(
            f"the contract keeps {len(expected)} hit(s) (limit {case.query.limit}), yours "
            f"{len(got)}"
        )
    for mine, theirs in zip(expected, got, strict=False):
        if mine == theirs:
            continue
        for field in (
            "rank",
            "memory_id",
            "snippet",
            "query_id",
            "scope",
            "provenance",
            "score_breakdown",
        ):
            a, b = getattr(mine, field), getattr(theirs, field)
            if a != b:
                lines.append(f"hit #{mine.rank}: {field} should be {a!r}, yours is {b!r}")
                break
    return lines[:4]


def _show_call(name: str, case: RankCase) -> str:
    rows = []
    for candidate in case.candidates:
        breakdown = score_recall_candidate(case.query, candidate, as_of=case.as_of)
        rows.append(
            f"{candidate.record.memory_id}: matches {len(candidate.matched_terms)} of "
            f"{len(case.query.terms)} term{'' if len(case.query.terms) == 1 else 's'}, captured "
            f"{candidate.record.source.captured_at}, "
            f"total {breakdown.total}, coverage {breakdown.lexical_coverage}"
        )
    listing = "\n".join(rows) if rows else "(no candidates)"
    return (
        f"{name}(query, candidates, as_of={case.as_of!r}) with limit {case.query.limit} and "
        f"{len(case.candidates)} candidate(s), in this (storage) order:\n{listing}"
    )


# -- typical mistakes -----------------------------------------------------------------------------

Key = Callable[[RecallCandidate, Any], Any]


def _variant(
    *,
    keys: Sequence[tuple[Key, bool]] | None = None,
    first_rank: int = 1,
    limit: Callable[[int], int | None] = lambda n: n,
    snippet: Callable[[RecallCandidate], str] = lambda c: c.record.summary,
) -> Any:
    """The contract with one rule broken. ``keys`` are (key, descending) pairs applied as
    stable sorts, most significant first (default: the contract's four keys)."""
    order = (
        keys
        if keys is not None
        else (
            (lambda c, b: b.total, True),
            (lambda c, b: b.lexical_coverage, True),
            (lambda c, b: epoch_micros(c.captured_at), True),
            (lambda c, b: c.record.memory_id, False),
        )
    )

    def rank(
        query: RecallQuery,
        candidates: Sequence[RecallCandidate],
        *,
        as_of: datetime | str,
        score: Any = score_recall_candidate,
    ) -> tuple[RecallHit, ...]:
        scored = [(c, score(query, c, as_of=as_of)) for c in candidates]
        for key, descending in reversed(order):  # least significant first: stable sorts
            scored.sort(key=lambda item, k=key: k(*item), reverse=descending)
        kept = scored[: limit(query.limit)]
        return tuple(
            RecallHit(
                query_id=c.query_id,
                memory_id=c.record.memory_id,
                rank=position,
                snippet=snippet(c),
                scope=RecallScope(c.record.user_scope, c.record.kind),
                provenance=c.record.source,
                score_breakdown=b,
            )
            for position, (c, b) in enumerate(kept, start=first_rank)
        )

    return rank


def _total(c: RecallCandidate, b: Any) -> float:
    return b.total


def _coverage(c: RecallCandidate, b: Any) -> float:
    return b.lexical_coverage


def _time(c: RecallCandidate, b: Any) -> int:
    return epoch_micros(c.captured_at)


def _time_text(c: RecallCandidate, b: Any) -> str:
    return c.record.source.captured_at


def _memory_id(c: RecallCandidate, b: Any) -> str:
    return c.record.memory_id


MISTAKES = (
    Mistake(
        "ties broken by storage order",
        "sorted(..., key=total) keeps tied candidates in the order they were stored. Break "
        "ties explicitly: lexical_coverage DESC, then captured_at DESC, then memory_id ASC.",
        _variant(keys=((_total, True),)),
    ),
    Mistake(
        "only total and memory_id",
        "Between total and memory_id come two more keys: lexical_coverage DESC, then "
        "captured_at DESC (the newer record first).",
        _variant(keys=((_total, True), (_memory_id, False))),
    ),
    Mistake(
        "lexical_coverage not a key",
        "The second key is lexical_coverage DESC: with equal totals, the record that matches "
        "more of the query wins before recency is looked at.",
        _variant(keys=((_total, True), (_time, True), (_memory_id, False))),
    ),
    Mistake(
        "captured_at ascending",
        "captured_at is DESCENDING: on a tie the NEWER record comes first.",
        _variant(keys=((_total, True), (_coverage, True), (_time, False), (_memory_id, False))),
    ),
    Mistake(
        "captured_at compared as text",
        "Compare captured_at as a time (candidate.captured_at, a datetime), not as its ISO "
        "text: '2026-08-01T12:00:00.500000Z' is later than '2026-08-01T12:00:00Z' but sorts "
        "before it.",
        _variant(keys=((_total, True), (_coverage, True), (_time_text, True), (_memory_id, False))),
    ),
    Mistake(
        "memory_id descending",
        "The last key is memory_id ASCENDING ('a' before 'b').",
        _variant(keys=((_total, True), (_coverage, True), (_time, True), (_memory_id, True))),
    ),
    Mistake(
        "lowest total first",
        "The best candidate comes first: total DESCENDING (reverse=True, or sort by -total).",
        _variant(keys=((_total, False), (_coverage, True), (_time, True), (_memory_id, False))),
    ),
    Mistake(
        "ranks start at 0",
        "Ranks start at 1: enumerate(..., start=1).",
        _variant(first_rank=0),
    ),
    Mistake(
        "limit not applied",
        "Keep only the first query.limit hits: sorted_items[: query.limit].",
        _variant(limit=lambda n: None),
    ),
    Mistake(
        "one hit too many",
        "Keep exactly query.limit hits: sorted_items[: query.limit].",
        _variant(limit=lambda n: n + 1),
    ),
    Mistake(
        "snippet is the content",
        "snippet = the record's SUMMARY (record.summary), the short form meant for a prompt.",
        _variant(snippet=lambda c: c.record.content),
    ),
)


# -- worked examples -----------------------------------------------------------------------------


def _examples() -> tuple[Example, ...]:
    layered = make_query(CHAPTER_QUERY)
    chapter = build_recall_candidates(layered, chapter_records()).candidates
    ten = (
        "recall",
        "index",
        "cache",
        "memory",
        "layered",
        "sqlite",
        "wal",
        "jsonl",
        "budget",
        "tokens",
    )

    def case(terms: Sequence[str], limit: int, *specs: RecordSpec) -> RankCase:
        query = make_query(" ".join(terms), limit=limit)
        found = build_recall_candidates(query, build_records(specs))
        return RankCase(query, found.candidates, AS_OF)

    five_seconds = 5 / 86_400
    return (
        Example(
            "the chapter's query: conversation-003 is hit #1 with 0.995161",
            RankCase(layered, chapter, AS_OF),
        ),
        Example(
            "equal totals (captured 5 seconds apart): the newer one ranks first",
            case(
                ("cache",),
                5,
                RecordSpec("a-older", summary=("cache",)),
                RecordSpec("b-newer", summary=("cache",), captured_days_before=1.0 - five_seconds),
            ),
        ),
        Example(
            "a full tie is broken by memory_id, ascending, whatever the storage order",
            case(
                ("cache",),
                5,
                RecordSpec("b-2", summary=("cache",)),
                RecordSpec("a-1", summary=("cache",)),
            ),
        ),
        Example(
            "equal totals 0.575: the higher coverage (6 of 10 terms) beats the newer record",
            case(
                ten,
                5,
                RecordSpec("x-newer", summary=tuple(ten[:5]), captured_days_before=0.0),
                RecordSpec(
                    "y-covers-more", summary=tuple(ten[:6]), captured_days_before=30 * 17 / 13
                ),
            ),
        ),
        Example(
            "limit 2 keeps the best two of four",
            case(
                TERMS[:3],
                2,
                RecordSpec("m1", summary=TERMS[:1]),
                RecordSpec("m2", summary=TERMS[:3]),
                RecordSpec("m3", summary=TERMS[:2]),
                RecordSpec("m4", summary=TERMS[:1], captured_days_before=3.0),
            ),
        ),
        Example("no candidates give no hits", RankCase(layered, (), AS_OF)),
    )


STABLE_RANK_RECALL_CANDIDATES = Exercise(
    function="stable_rank_recall_candidates",
    reference=stable_rank_recall_candidates,
    call=lambda function, case: function(case.query, case.candidates, as_of=case.as_of),
    examples=_examples(),
    generate=_generate,
    shrink=_shrink,
    show_call=_show_call,
    project=_project,
    show=_show,
    differences=_differences,
    mistakes=MISTAKES,
    error_hints=(
        (
            "'<' not supported between instances",
            "Sorting tuples that hold a candidate or a "
            "breakdown compares those objects when the numbers tie: sort with a key that returns "
            "only numbers and strings (e.g. -total, -coverage, -captured_at.timestamp(), "
            "memory_id).",
        ),
        (
            "bad operand type for unary -: 'str'",
            "A string cannot be negated: keep memory_id "
            "as it is in the key (ascending), or sort in two stable passes.",
        ),
        (
            "bad operand type for unary -: 'datetime.datetime'",
            "Negate a number, not a datetime: -candidate.captured_at.timestamp().",
        ),
    ),
    generated=200,
)
