"""Notebook 05: the build-it ``stable_rank_recall_candidates``; ``check_tie_order``."""

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
from memorylib.notebook.buildit import fixtures as fx
from memorylib.notebook.messages import said, say
from memorylib.query import normalize_recall_query
from memorylib.ranking import hit_from, rank_key, stable_rank_recall_candidates
from memorylib.records import MemoryKind, MemorySource, RecallHit, RecallQuery, RecallScope
from memorylib.scoring import score_recall_candidate
from memorylib.timestamps import TEACHING_AS_OF, epoch_micros

TERMS = ("cache", "index", "memory", "recall")
# days before as_of: shared values make ties; negative ones are after as_of (age 0)
CAPTURES = (1.0, 1.0 - 0.5 / 86_400, 3.0, 40.0, -2.0, -5.0)


def _ranked(terms: Sequence[str], limit: int, specs: Sequence[fx.RecordSpec]) -> ex.Call:
    query = fx.make_query(" ".join(terms), limit=limit)
    found = build_recall_candidates(query, fx.build_records(tuple(specs)))
    return ex.Call(query, found.candidates, as_of=TEACHING_AS_OF)


@st.composite
def _calls(draw: st.DrawFn) -> ex.Call:
    terms = draw(st.integers(1, len(TERMS)))
    specs = [
        fx.RecordSpec(memory_id, summary=TERMS[: draw(st.integers(1, terms))],
                   content=(f"note {memory_id}",),
                   captured_days_before=draw(st.sampled_from(CAPTURES)))
        for memory_id in draw(fx.memory_ids(9))[: draw(st.integers(0, 6))]
    ]  # fmt: skip
    return _ranked(TERMS[:terms], draw(st.sampled_from((5, 1, 2, 3))), specs)


def _read(result: Any, call: ex.Call) -> tuple[RecallHit, ...]:
    if isinstance(result, list):
        raise ex.Malformed(say("ranking.read.list"))
    if not isinstance(result, tuple):
        raise ex.Malformed(say("ranking.read.type", kind=type(result).__name__))
    if others := [hit for hit in result if not isinstance(hit, RecallHit)]:
        raise ex.Malformed(say("ranking.read.hit", kind=type(others[0]).__name__))
    return result


def _show(hits: tuple[RecallHit, ...]) -> str:
    clipped = [h.snippet if len(h.snippet) <= 24 else h.snippet[:23] + "…" for h in hits]
    shown = [
        f"#{h.rank} {h.memory_id} ({h.score_breakdown.total}, {c!r})"
        for h, c in zip(hits, clipped, strict=True)
    ]
    return ", ".join(shown) or say("ranking.show.none")


def _show_call(name: str, call: ex.Call) -> str:
    (query, candidates), as_of = call.args, call.kwargs["as_of"]
    n = len(query.terms)
    rows = []
    for c in candidates:
        b = score_recall_candidate(query, c, as_of=as_of)
        values = dict(memory_id=c.record.memory_id, matched=len(c.matched_terms), n=n,
                      captured=c.record.source.captured_at, total=b.total,
                      coverage=b.lexical_coverage)  # fmt: skip
        row = say("ranking.call.row.one", **values) if n == 1 else say("ranking.call.row", **values)
        rows.append(row)
    head = say("ranking.call", name=name, as_of=as_of, limit=query.limit, count=len(candidates))
    return head + "\n" + ("\n".join(rows) or say("ranking.call.none"))


# -- typical mistakes: the contract with one rule broken -------------------------------------------

_KEYS = {
    "total": lambda c, b: b.total,
    "coverage": lambda c, b: b.lexical_coverage,
    "time": lambda c, b: c.captured_at,  # a datetime: the instant (epoch_micros is refused)
    "text": lambda c, b: c.record.source.captured_at,  # captured_at as its ISO text
    "id": lambda c, b: c.record.memory_id,
}


def _variant(
    keys: str = "-total -coverage -time +id", *, first_rank: int = 1, extra: int | None = 0,
    snippet: str = "summary",
) -> Any:  # fmt: skip
    """``keys`` first to last (``-`` DESC); ``extra`` hits past the limit (None: no limit)."""

    def rank(query: RecallQuery, candidates: Sequence[Any], *, as_of: datetime | str,
             score: Any = score_recall_candidate) -> tuple[RecallHit, ...]:  # fmt: skip
        scored = [(c, score(query, c, as_of=as_of)) for c in candidates]
        for key in reversed(keys.split()):  # least significant first: stable sorts
            scored.sort(key=lambda item, k=_KEYS[key[1:]]: k(*item), reverse=key[0] == "-")
        kept = scored if extra is None else scored[: query.limit + extra]
        return tuple(  # built here, not with ranking.hit_from, which a student's body may not call
            RecallHit(c.query_id, c.record.memory_id, n, getattr(c.record, snippet),
                      RecallScope(c.record.user_scope, c.record.kind), c.record.source, b)
            for n, (c, b) in enumerate(kept, start=first_rank)
        )  # fmt: skip

    return rank


MISTAKES = ex.mistakes("ranking.mistake", {
    "storage": _variant("-total"), "two_keys": _variant("-total +id"),
    "no_coverage": _variant("-total -time +id"),
    "time_asc": _variant("-total -coverage +time +id"),
    "time_text": _variant("-total -coverage -text +id"),
    "id_desc": _variant("-total -coverage -time -id"),
    "total_asc": _variant("+total -coverage -time +id"),
    "rank0": _variant(first_rank=0), "no_limit": _variant(extra=None),
    "extra": _variant(extra=1), "content": _variant(snippet="content"),
})  # fmt: skip


def _examples() -> dict[str, ex.Call]:
    layered = fx.make_query(fx.CHAPTER_QUERY)
    chapter = build_recall_candidates(layered, fx.chapter_records()).candidates
    ten = ("recall", "index", "cache", "memory", "layered", "sqlite", "wal", "jsonl", "budget")
    ten += ("tokens",)

    def one(memory_id: str, terms: Sequence[str] = ("cache",), days: float = 1.0) -> fx.RecordSpec:
        return fx.RecordSpec(memory_id, summary=tuple(terms), captured_days_before=days)

    # fmt: off
    return ex.named("ranking.example", {
        "chapter": ex.Call(layered, chapter, as_of=TEACHING_AS_OF),
        "second": _ranked(("cache",), 5, (one("a-older"), one("b-newer", days=1.0 - 1 / 86_400))),
        "full_tie": _ranked(("cache",), 5, (one("b-2"), one("a-1"))),
        "coverage": _ranked(ten, 5, (one("x-newer", ten[:5], 0.0),
                                     one("y-covers-more", ten[:6], 30 * 17 / 13))),
        "limit": _ranked(TERMS[:3], 2, (one("m1", TERMS[:1]), one("m2", TERMS[:3]),
                                        one("m3", TERMS[:2]), one("m4", TERMS[:1], 3.0))),
        "none": ex.Call(layered, (), as_of=TEACHING_AS_OF),
    })
    # fmt: on


ALONE_HINT = said("ranking.alone")
STABLE_RANK_RECALL_CANDIDATES = ex.FunctionExercise(
    "stable_rank_recall_candidates", stable_rank_recall_candidates, _examples(), _calls(), _read,
    _show, _show_call, MISTAKES,
    # the stage and its two helpers (a body made of them is the library), and section 1's key 3:
    # the student writes captured_at DESC from the datetime
    refuses=(stable_rank_recall_candidates, rank_key, hit_from, epoch_micros),
    error_hints=(
        ("NameError", ALONE_HINT),
        ("'<' not supported between instances", said("ranking.error.compare")),
        ("bad operand type for unary -: 'str'", said("ranking.error.negate_id")),
        ("bad operand type for unary -: 'datetime.datetime'", said("ranking.error.negate_time")),
    ),
)  # fmt: skip


# -- notebook 05's "Your turn": six rows in stable-rank order, by hand ----------------------------

TIE_QUERY = "harbor recall latency budget review notes"  # six terms
# In storage order. Each key decides once: note-d has the top total; note-f (6 of 6, 510 days
# old) ties note-e (5 of 6, fresh) at 0.858333, coverage decides; note-a, b and c tie at 0.820951
# (c is 5 s fresher, which rounding removes): captured_at puts c first, memory_id a before b.
TIE_ROWS: tuple[tuple[str, str, str], ...] = (
    ("note-b", "harbor recall latency budget review of the drafts", "2026-11-20T10:00:00Z"),
    ("note-e", "recall latency budget review notes, first pass", "2026-11-30T09:00:00Z"),
    ("note-d", "harbor recall latency budget: review notes agreed", "2026-09-01T08:00:00Z"),
    ("note-a", "harbor recall latency budget review, second reader", "2026-11-20T10:00:00Z"),
    ("note-f", "review notes on the harbor recall latency budget", "2025-07-08T09:00:00Z"),
    ("note-c", "notes from the harbor recall latency review", "2026-11-20T10:00:05Z"),
)


@functools.cache
def tie_exercise() -> tuple[RecallQuery, tuple[Any, ...]]:
    """The exercise's query (limit 6) and its six conversation records, in storage order."""
    scope = user_scope_for("exercise-user")
    records = tuple(
        new_memory(user_scope=scope, kind=MemoryKind.CONVERSATION, memory_id=memory_id,
                   content=text, summary=text, stored_at=when,
                   source=MemorySource(f"transcript-{memory_id}", "conversation_transcript",
                                       text, when))
        for memory_id, text, when in TIE_ROWS
    )  # fmt: skip
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
    """05's "Your turn": the six memory_ids in stable-rank order; else the first wrong place."""
    keys = _tie_keys()  # in storage order: each of the six records is a candidate
    correct = tuple(sorted(keys, key=keys.__getitem__))

    def judge(answer: object) -> ex.CheckResult:
        given = tuple(map(str, ex.expect_sequence(answer, say("ranking.tie.described"), item=str)))
        if given == correct:
            return ex.right(say("ranking.tie.right", order=" > ".join(correct)))
        if sorted(given) != sorted(correct):
            return ex.wrong(say("ranking.tie.once", ids=", ".join(sorted(correct))))
        if list(given) == sorted(keys, key=lambda m: keys[m][0]):
            return ex.wrong(say("ranking.tie.naive"))
        place = next(n for n, (g, c) in enumerate(zip(given, correct, strict=True)) if g != c)
        yours, due = keys[given[place]], keys[correct[place]]
        key = next(n for n, (a, b) in enumerate(zip(yours, due, strict=True)) if a != b)
        hint = say(f"ranking.tie.key{key + 1}")
        return ex.wrong(say("ranking.tie.place", place=place + 1, hint=hint))

    return ex.check_value(answer, judge, placeholder=say("ranking.tie.placeholder"))
