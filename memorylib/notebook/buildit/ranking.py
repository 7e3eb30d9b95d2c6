"""Stage 4 exercises (notebook 05): the build-it ``stable_rank_recall_candidates``, compared
with ``memorylib.ranking`` on every field of every hit, in order (``buildit.check_ranking``
runs a cell's function as 06c does, its cell alone), and the "Your turn" ``check_tie_order``.
Generated candidates are built to tie: shared capture times, captures after ``as_of`` (age 0),
and two captures half a second apart whose ISO texts sort the wrong way round."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from memorylib.candidates import build_recall_candidates
from memorylib.datasets import COURSE_AS_OF
from memorylib.interface import new_memory, user_scope_for
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit.fixtures import (
    CHAPTER_QUERY,
    RecordSpec,
    build_records,
    chapter_records,
    make_query,
    memory_ids,
)
from memorylib.query import normalize_recall_query
from memorylib.ranking import hit_from, rank_key, stable_rank_recall_candidates
from memorylib.records import (
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallHit,
    RecallQuery,
    RecallScope,
    StoredMemory,
)
from memorylib.scoring import score_recall_candidate
from memorylib.timestamps import TEACHING_AS_OF, epoch_micros

__all__ = ["ALONE_HINT", "STABLE_RANK_RECALL_CANDIDATES", "check_tie_order", "tie_exercise"]

TERMS = ("cache", "index", "memory", "recall")
# days before as_of: shared values make ties; negative ones are after as_of (age 0)
CAPTURES = (1.0, 1.0 - 0.5 / 86_400, 3.0, 40.0, -2.0, -5.0)


def _ranked(terms: Sequence[str], limit: int, specs: Sequence[RecordSpec]) -> ex.Call:
    query = make_query(" ".join(terms), limit=limit)
    found = build_recall_candidates(query, build_records(tuple(specs)))
    return ex.Call(query, found.candidates, as_of=TEACHING_AS_OF)


@st.composite
def _calls(draw: st.DrawFn) -> ex.Call:
    terms = draw(st.integers(1, len(TERMS)))
    specs = [
        RecordSpec(
            memory_id,
            summary=TERMS[: draw(st.integers(1, terms))],
            content=(f"note {memory_id}",),
            captured_days_before=draw(st.sampled_from(CAPTURES)),
        )
        for memory_id in draw(memory_ids(9))[: draw(st.integers(0, 6))]
    ]
    return _ranked(TERMS[:terms], draw(st.sampled_from((5, 1, 2, 3))), specs)


def _read(result: Any, call: ex.Call) -> tuple[RecallHit, ...]:
    if isinstance(result, list):
        raise ex.Malformed("return a tuple of RecallHit, not a list: tuple(hits)")
    if not isinstance(result, tuple):
        raise ex.Malformed(
            "stable_rank_recall_candidates must return a tuple of RecallHit, not "
            f"{type(result).__name__}"
        )
    for hit in result:
        if not isinstance(hit, RecallHit):
            raise ex.Malformed(f"every hit must be a RecallHit, not {type(hit).__name__}")
    return result


def _show(hits: tuple[RecallHit, ...]) -> str:
    def clip(text: str, size: int = 24) -> str:
        return repr(text if len(text) <= size else text[: size - 1] + "…")

    shown = (
        f"#{h.rank} {h.memory_id} ({h.score_breakdown.total}, {clip(h.snippet)})" for h in hits
    )
    return ", ".join(shown) or "no hits ()"


def _show_call(name: str, call: ex.Call) -> str:
    (query, candidates), as_of = call.args, call.kwargs["as_of"]
    n = len(query.terms)
    rows = []
    for c in candidates:
        b = score_recall_candidate(query, c, as_of=as_of)
        rows.append(
            f"{c.record.memory_id}: matches {len(c.matched_terms)} of {n} term{'s' * (n != 1)}, "
            f"captured {c.record.source.captured_at}, total {b.total}, coverage "
            f"{b.lexical_coverage}"
        )
    return (
        f"{name}(query, candidates, as_of={as_of!r}) with limit {query.limit} and "
        f"{len(candidates)} candidate(s), in this (storage) order:\n"
        + ("\n".join(rows) or "(no candidates)")
    )


# -- typical mistakes: the contract with one rule broken -------------------------------------------

_KEYS = {
    "total": lambda c, b: b.total,
    "coverage": lambda c, b: b.lexical_coverage,
    "time": lambda c, b: epoch_micros(c.captured_at),
    "text": lambda c, b: c.record.source.captured_at,  # captured_at as its ISO text
    "id": lambda c, b: c.record.memory_id,
}


def _variant(
    keys: str = "-total -coverage -time +id", *, first_rank: int = 1, extra: int | None = 0,
    snippet: str = "summary",
) -> Any:  # fmt: skip
    """``keys`` most significant first, ``-`` DESC and ``+`` ASC, applied as stable sorts;
    ``extra`` hits past the limit (None: no limit); ``snippet`` the record field shown."""

    def rank(query: RecallQuery, candidates: Sequence[RecallCandidate], *, as_of: datetime | str,
             score: Any = score_recall_candidate) -> tuple[RecallHit, ...]:  # fmt: skip
        scored = [(c, score(query, c, as_of=as_of)) for c in candidates]
        for key in reversed(keys.split()):  # least significant first: stable sorts
            scored.sort(key=lambda item, k=_KEYS[key[1:]]: k(*item), reverse=key[0] == "-")
        kept = scored if extra is None else scored[: query.limit + extra]
        ranked = enumerate(kept, start=first_rank)
        return tuple(  # built here, not with ranking.hit_from, which a student's body may not call
            RecallHit(c.query_id, c.record.memory_id, n, getattr(c.record, snippet),
                      RecallScope(c.record.user_scope, c.record.kind), c.record.source, b)
            for n, (c, b) in ranked
        )  # fmt: skip

    return rank


# fmt: off
MISTAKES = (
    ex.Mistake("ties broken by storage order",
        "sorted(..., key=total) keeps tied candidates in the order they were stored. Break "
        "ties explicitly: lexical_coverage DESC, then captured_at DESC, then memory_id ASC.",
        _variant("-total")),
    ex.Mistake("only total and memory_id",
        "Between total and memory_id come two more keys: lexical_coverage DESC, then "
        "captured_at DESC (the newer record first).", _variant("-total +id")),
    ex.Mistake("lexical_coverage not a key",
        "The second key is lexical_coverage DESC: with equal totals, the record that matches "
        "more of the query wins before recency is looked at.", _variant("-total -time +id")),
    ex.Mistake("captured_at ascending",
        "captured_at is DESCENDING: on a tie the NEWER record comes first.",
        _variant("-total -coverage +time +id")),
    ex.Mistake("captured_at compared as text",
        "Compare captured_at as a time (candidate.captured_at, a datetime), not as its ISO "
        "text: '2026-08-01T12:00:00.500000Z' is later than '2026-08-01T12:00:00Z' but sorts "
        "before it.", _variant("-total -coverage -text +id")),
    ex.Mistake("memory_id descending",
        "The last key is memory_id ASCENDING ('a' before 'b').",
        _variant("-total -coverage -time -id")),
    ex.Mistake("lowest total first",
        "The best candidate comes first: total DESCENDING (reverse=True, or sort by -total).",
        _variant("+total -coverage -time +id")),
    ex.Mistake("ranks start at 0", "Ranks start at 1: enumerate(..., start=1).",
        _variant(first_rank=0)),
    ex.Mistake("limit not applied",
        "Keep only the first query.limit hits: sorted_items[: query.limit].",
        _variant(extra=None)),
    ex.Mistake("one hit too many", "Keep exactly query.limit hits: sorted_items[: query.limit].",
        _variant(extra=1)),
    ex.Mistake("snippet is the content",
        "snippet = the record's SUMMARY (record.summary), the short form meant for a prompt.",
        _variant(snippet="content")),
)
# fmt: on


def _examples() -> tuple[ex.Named, ...]:
    layered = make_query(CHAPTER_QUERY)
    chapter = build_recall_candidates(layered, chapter_records()).candidates
    ten = ("recall", "index", "cache", "memory", "layered", "sqlite", "wal", "jsonl", "budget")
    ten += ("tokens",)

    def one(memory_id: str, terms: Sequence[str] = ("cache",), days: float = 1.0) -> RecordSpec:
        return RecordSpec(memory_id, summary=tuple(terms), captured_days_before=days)

    # fmt: off
    return (
        ex.Named("the chapter's query: conversation-003 is hit #1 with 0.995161",
                 ex.Call(layered, chapter, as_of=TEACHING_AS_OF)),
        ex.Named("captured one second apart, equal totals at 6 places: the newer one ranks first",
                 _ranked(("cache",), 5, (one("a-older"), one("b-newer", days=1.0 - 1 / 86_400)))),
        ex.Named("a full tie is broken by memory_id, ascending, whatever the storage order",
                 _ranked(("cache",), 5, (one("b-2"), one("a-1")))),
        ex.Named("equal totals 0.575: the higher coverage (6 of 10 terms) beats the newer record",
                 _ranked(ten, 5, (one("x-newer", ten[:5], 0.0),
                                  one("y-covers-more", ten[:6], 30 * 17 / 13)))),
        ex.Named("limit 2 keeps the best two of four: hits ranked 1 and 2, the summary as snippet",
                 _ranked(TERMS[:3], 2, (one("m1", TERMS[:1]), one("m2", TERMS[:3]),
                                        one("m3", TERMS[:2]), one("m4", TERMS[:1], 3.0)))),
        ex.Named("no candidates give no hits", ex.Call(layered, (), as_of=TEACHING_AS_OF)),
    )
    # fmt: on


ALONE_HINT = (
    "Notebook 06c runs this cell alone, as saved, with nothing else of notebook 05: define "
    "or import in this cell everything your function uses (a key like four_keys, and "
    "epoch_micros from memorylib.timestamps if it uses that)."
)

# fmt: off
STABLE_RANK_RECALL_CANDIDATES = ex.FunctionExercise(
    "stable_rank_recall_candidates", stable_rank_recall_candidates, _examples(), _calls(), _read,
    _show, _show_call, MISTAKES,
    # the stage, and its two helpers: the key and the hit (a body made of them is the library)
    refuses=(stable_rank_recall_candidates, rank_key, hit_from),
    error_hints=(
        ("NameError", ALONE_HINT),
        ("'<' not supported between instances",
         "Sorting tuples that hold a candidate or a breakdown compares those objects when the "
         "numbers tie: sort with a key that returns only numbers and strings (e.g. -total, "
         "-coverage, -captured_at.timestamp(), memory_id)."),
        ("bad operand type for unary -: 'str'",
         "A string cannot be negated: keep memory_id as it is in the key (ascending), or sort in "
         "two stable passes."),
        ("bad operand type for unary -: 'datetime.datetime'",
         "Negate a number, not a datetime: -candidate.captured_at.timestamp()."),
    ),
)
# fmt: on


# -- notebook 05's "Your turn": six rows in stable-rank order, by hand ----------------------------

TIE_QUERY = "harbor recall latency budget review notes"  # six terms
# Stored in this order on purpose: the answer must not depend on it. Every key decides
# once: note-d has the highest total; note-f (6 of 6, 510 days old) ties note-e (5 of 6,
# captured at as_of) at 0.858333, and coverage puts note-f first; note-a, note-b and
# note-c tie at 0.820951 (note-c is 5 seconds fresher, a difference that rounding to 6
# places removes), so captured_at puts note-c first and memory_id note-a before note-b.
TIE_ROWS: tuple[tuple[str, str, str], ...] = (
    ("note-b", "harbor recall latency budget review of the drafts", "2026-11-20T10:00:00Z"),
    ("note-e", "recall latency budget review notes, first pass", "2026-11-30T09:00:00Z"),
    ("note-d", "harbor recall latency budget: review notes agreed", "2026-09-01T08:00:00Z"),
    ("note-a", "harbor recall latency budget review, second reader", "2026-11-20T10:00:00Z"),
    ("note-f", "review notes on the harbor recall latency budget", "2025-07-08T09:00:00Z"),
    ("note-c", "notes from the harbor recall latency review", "2026-11-20T10:00:05Z"),
)
KEY_NAMES = ("total", "lexical_coverage", "captured_at", "memory_id")
# fmt: off
_KEY_HINTS = {
    "total": "a row with a higher total belongs there: key 1 is total, descending.",
    "lexical_coverage": "two rows tie on total there: key 2 decides before any time is looked "
                        "at, the higher lexical_coverage first.",
    "captured_at": "rows tie on total and lexical_coverage there: key 3 decides, the later "
                   "captured_at first (read the seconds).",
    "memory_id": "rows tie on the first three keys there: key 4 decides, the smaller memory_id "
                 "first.",
}
# fmt: on


@functools.cache
def tie_exercise() -> tuple[RecallQuery, tuple[StoredMemory, ...]]:
    """The exercise's query (limit 6, a fixed query_id, issued at ``COURSE_AS_OF``) and its
    six conversation records, in storage order."""
    scope = user_scope_for("exercise-user")
    records = tuple(
        new_memory(
            user_scope=scope,
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content=text,
            summary=text,
            stored_at=when,
            source=MemorySource(f"transcript-{memory_id}", "conversation_transcript", text, when),
        )
        for memory_id, text, when in TIE_ROWS
    )
    query = normalize_recall_query(
        TIE_QUERY, user_scope=scope, limit=6, query_id="tie-exercise", issued_at=COURSE_AS_OF
    )
    return query, records


def _tie_keys() -> dict[str, tuple[float, float, int, str]]:
    """memory_id -> the library's sort key (``ranking.rank_key``)."""
    query, records = tie_exercise()
    return {
        c.record.memory_id: rank_key(score_recall_candidate(query, c, as_of=COURSE_AS_OF), c)
        for c in build_recall_candidates(query, records).candidates
    }


def check_tie_order(answer: object) -> ex.CheckResult:
    """Notebook 05's "Your turn": the six memory_ids in the stable rank's order, best first.

    Right; wrong with a hint naming the first place that is wrong and the key that decides
    it there (the four keys in order), or the storage-order sort, or ids missing or
    repeated; or not answered yet for the ``...`` placeholder.
    """
    query, records = tie_exercise()
    found = build_recall_candidates(query, records)
    correct = tuple(
        h.memory_id for h in stable_rank_recall_candidates(query, found, as_of=COURSE_AS_OF)
    )

    def judge(answer: object) -> ex.CheckResult:
        given = tuple(map(str, ex.expect_sequence(answer, "a list of memory_ids", item=str)))
        if given == correct:
            return ex.right(
                f"Right: {' > '.join(correct)}. Each key decided once: total, then "
                "lexical_coverage (note-f over note-e), captured_at (note-c, 5 seconds later; "
                "its total ties only because totals are rounded to 6 places), memory_id."
            )
        if sorted(given) != sorted(correct):
            return ex.wrong(f"Use each of these ids exactly once: {', '.join(sorted(correct))}.")
        keys = _tie_keys()
        if list(given) == sorted((r.memory_id for r in records), key=lambda m: keys[m][0]):
            return ex.wrong(
                "That is sorted(..., key=total): tied rows kept the storage order. Break ties "
                "with lexical_coverage DESC, then captured_at DESC, then memory_id ASC."
            )
        place = next(n for n, (g, c) in enumerate(zip(given, correct, strict=True)) if g != c)
        yours, due = keys[given[place]], keys[correct[place]]
        key = next(n for n, (a, b) in enumerate(zip(yours, due, strict=True)) if a != b)
        return ex.wrong(f"Not quite at place {place + 1}: {_KEY_HINTS[KEY_NAMES[key]]}")

    return ex.check_value(answer, judge, placeholder="a list of the six memory_ids, best first")
