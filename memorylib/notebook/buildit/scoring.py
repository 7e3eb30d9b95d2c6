"""Notebook 04: the build-it ``score_recall_candidate``; ``check_q11_note``."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from hypothesis import strategies as st

from memorylib.candidates import build_recall_candidates, searchable_terms
from memorylib.datasets import course_records, load_labelled_queries
from memorylib.errors import RemoteMemoryValidationError
from memorylib.interface import new_memory
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit import fixtures as fx
from memorylib.notebook.messages import said, say
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query, normalize_text
from memorylib.records import MemoryKind, MemorySource, RecallScoreBreakdown
from memorylib.scoring import score_recall_candidate
from memorylib.timestamps import SECONDS_PER_DAY, TEACHING_AS_OF, age_in_days, parse_timestamp

TERMS = ("cache", "index", "layered", "memory", "recall", "sqlite", "wal")
FIELDS = ("matched_terms", "query_term_count", "lexical_coverage", "recency")
FIELDS += ("lexical_contribution", "recency_contribution", "total")
FLOATS = FIELDS[2:]


def _scored(terms: int, matched: int, age_days: float, lag_days: float) -> ex.Call:
    """A candidate matching ``matched`` of ``terms`` terms, ``age_days`` old, stored later."""
    query = fx.make_query(" ".join(TERMS[:terms]))
    spec = fx.RecordSpec("m1", summary=TERMS[:matched], captured_days_before=age_days,
                      stored_lag_days=lag_days)  # fmt: skip
    (candidate,) = build_recall_candidates(query, fx.build_records((spec,))).candidates
    return ex.Call(query, candidate, as_of=TEACHING_AS_OF)


# ages that teach (0 first: shrinking goes there), or any to the µs; < 0: captured after as_of
_AGES = st.one_of(
    st.sampled_from((0.0, 1.0, 0.5, 1.25, 7.0, 30.0, 45.5, 400.0, -3.0, -0.25)),
    st.floats(0.0, 120.0).map(lambda days: round(days, 6)),
)


@st.composite
def _calls(draw: st.DrawFn) -> ex.Call:
    terms = draw(st.integers(1, len(TERMS)))
    lag = draw(st.sampled_from((0.0, 2.5, 10.0)))
    return _scored(terms, draw(st.integers(1, terms)), draw(_AGES), lag)


def chapter_breakdown_fields(breakdown: RecallScoreBreakdown) -> dict[str, Any]:
    """The seven fields the chapter defines, by name."""
    return {name: getattr(breakdown, name) for name in FIELDS}


def _read(result: Any, call: ex.Call) -> dict[str, Any]:
    if not isinstance(result, RecallScoreBreakdown):
        kind = type(result).__name__
        raise ex.Malformed(say("scoring.read.type", fields=", ".join(FIELDS), kind=kind))
    fields = chapter_breakdown_fields(result)
    if not isinstance(fields["matched_terms"], tuple):
        raise ex.Malformed(say("scoring.read.terms"))
    for name in FLOATS:
        value = fields[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ex.Malformed(say("scoring.read.number", name=name, kind=type(value).__name__))
        if abs(round(value, 6) - value) > ex.FLOAT_NOISE:  # 0.283333 + 0.15 is rounded too
            raise ex.Malformed(say("scoring.read.rounded", name=name, value=value))
    return fields


def _show_call(name: str, call: ex.Call) -> str:
    (query, candidate), as_of = call.args, call.kwargs["as_of"]
    record = candidate.record
    age = (parse_timestamp(as_of, "as_of") - candidate.captured_at).total_seconds()
    days = abs(age) / SECONDS_PER_DAY
    other = dict(candidate=candidate.query_id, query=query.query_id)
    return say(
        "scoring.call", name=name, as_of=as_of, terms=query.terms, memory_id=record.memory_id,
        mismatch=" " + say("scoring.call.mismatch", **other) if len(set(other.values())) > 1
        else "", matched=candidate.matched_terms, captured=record.source.captured_at,
        days=say("scoring.call.day", days=days) if abs(age) == SECONDS_PER_DAY
        else say("scoring.call.days", days=days),
        side=say("scoring.call.before") if age >= 0 else say("scoring.call.after"),
        stored=record.stored_at,
    )  # fmt: skip


# -- typical mistakes: the default scorer with one rule broken (each keyword names the rule) ----

_RECENCY = {
    "hyperbola": lambda age: 1 / (1 + age / 30),
    "exp": lambda age: math.exp(-age / 30),
    "half-life": lambda age: 0.5 ** (age / 30),
    "no-window": lambda age: 1 / (1 + age),
}


def _variant(
    recency: str = "hyperbola", *, clamp: bool = True, whole_days: bool = False,
    stored: bool = False, coverage: str = "query", weights: tuple[float, float] = (0.85, 0.15),
    rounded: bool = True, check_query: bool = True, total: str = "sum",
) -> Any:  # fmt: skip
    def score(query: Any, candidate: Any, *, as_of: datetime | str) -> RecallScoreBreakdown:
        if check_query and candidate.query_id != query.query_id:
            raise RemoteMemoryValidationError("candidate of another query")
        record = candidate.record
        captured = parse_timestamp(record.stored_at, "s") if stored else candidate.captured_at
        delta = parse_timestamp(as_of, "as_of") - captured
        age = delta.days if whole_days else delta.total_seconds() / SECONDS_PER_DAY
        near = _RECENCY[recency](max(0, age) if clamp else age)
        terms = {"query": len(query.terms), "record": len(candidate.searchable_terms)}
        share = len(candidate.matched_terms) / terms[coverage] if coverage in terms else 1.0
        lexical, recent = weights[0] * share, weights[1] * near
        r = (lambda x: round(x, 6)) if rounded else (lambda x: x)
        whole = lexical + recent if total == "sum" else share + near
        parts = (r(share), r(near), r(lexical), r(recent), r(whole))
        return RecallScoreBreakdown(candidate.matched_terms, len(query.terms), *parts)

    return score


MISTAKES = ex.mistakes("scoring.mistake", {
    "exp": _variant("exp"), "half_life": _variant("half-life"), "window": _variant("no-window"),
    "clamp": _variant(clamp=False), "whole_days": _variant(whole_days=True),
    "stored": _variant(stored=True), "coverage_record": _variant(coverage="record"),
    "coverage_any": _variant(coverage="any"), "weights": _variant(weights=(0.15, 0.85)),
    "total": _variant(total="raw"), "rounded": _variant(rounded=False),
    "query": _variant(check_query=False),
})  # fmt: skip


def _examples() -> dict[str, ex.Call]:
    layered = fx.make_query(fx.CHAPTER_QUERY)
    (chapter,) = build_recall_candidates(layered, fx.chapter_records()).candidates
    stranger = replace(chapter, query_id="q-someone-else")
    return ex.named("scoring.example", {
        "chapter": ex.Call(layered, chapter, as_of=TEACHING_AS_OF),
        "half": _scored(2, 1, 30.0, 0.0),
        "clamped": _scored(1, 1, -2.0, 0.0),
        "stored": _scored(3, 2, 12.0, 10.0),
        "stranger": ex.Call(layered, stranger, as_of=TEACHING_AS_OF),
    })  # fmt: skip


SCORE_RECALL_CANDIDATE = ex.FunctionExercise(
    "score_recall_candidate", score_recall_candidate, _examples(), _calls(), _read,
    show_call=_show_call, mistakes=MISTAKES, refuses=(score_recall_candidate,),
    error_hints=(
        ("'str' and 'datetime", said("scoring.error.as_of")),
        ("'datetime.datetime' and 'str'", said("scoring.error.as_of")),
        ("ZeroDivisionError", said("scoring.error.zero")),
    ),
)  # fmt: skip


# -- notebook 04's "Your turn": a note that no store holds, scored by hand for q-11 --------------

Q11 = "q-11"  # labelled "stopword_noise": the record a person wants misses the top 5
Q11_RECORD = "mei-conv-056"  # that record (notebook 04 shows its breakdown)
# In no store: 2 of q-11's 7 terms, a count no record the notebook shows has for q-11 (3-5) or
# its other 7-term query (4, 6, 7), and timestamps of its own: no output shows a part of it.
Q11_NOTE = MappingProxyType({
    "summary": "Recall index green again",
    "content": "Checked on Friday: every shard answers, p95 latency back under 40 ms.",
    "captured_at": "2026-11-27T15:20:00Z", "stored_at": "2026-11-28T08:05:00Z",
})  # fmt: skip
Q11_PARTS = ("matched_terms", "lexical_coverage", "age_days", *FLOATS[1:])


@functools.cache
def _q11() -> tuple[Any, ...]:
    """Records, query, note, as_of, hits, every candidate's total, the note's parts (q-11's)."""
    # fmt: off
    (labelled,) = [q for q in load_labelled_queries() if q.query_id == Q11]
    records, as_of, note = course_records(labelled.user_id), labelled.as_of, Q11_NOTE
    query = normalize_recall_query(labelled.text, user_scope=records[0].user_scope, query_id=Q11,
                                   issued_at=as_of)
    source = MemorySource("note-q11", "conversation_transcript", "a status note",
                          note["captured_at"])
    note = new_memory(user_scope=query.user_scope, kind=MemoryKind.CONVERSATION,
                      memory_id="mei-note-q11", summary=note["summary"], content=note["content"],
                      source=source, stored_at=note["stored_at"])
    totals = {c.record.memory_id: score_recall_candidate(query, c, as_of=as_of).total
              for c in build_recall_candidates(query, records).candidates}
    (candidate,) = build_recall_candidates(query, (note,)).candidates
    b = chapter_breakdown_fields(score_recall_candidate(query, candidate, as_of=as_of))
    b["age_days"] = age_in_days(candidate.captured_at, parse_timestamp(as_of, "as_of"))
    hits = recall_pipeline(query, records, as_of=as_of).hits
    return records, query, note, as_of, hits, totals, {name: b[name] for name in Q11_PARTS}
    # fmt: on


def _terms(given: object) -> frozenset[str] | None:
    """A tuple, list or set of str as a set of normalized terms (order is not graded)."""
    if isinstance(given, tuple | list | set | frozenset) and all(isinstance(t, str) for t in given):
        return frozenset(normalize_text(term) for term in given)
    return None


def _number(x: object) -> float | None:
    ok = isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None  # type: ignore[arg-type]


def _close(given: object, expected: Any) -> bool:
    if isinstance(expected, tuple):  # matched_terms
        return _terms(given) == frozenset(expected)
    return _number(given) is not None and ex.same(expected, given)


def _near(value: float | None, bad: object) -> bool:
    """The given value is (one of) the wrong value(s), both rounded to 6 places."""
    options = bad if isinstance(bad, list) else [bad]
    return value is not None and any(
        w is not None and ex.same(round(w, 6), round(value, 6)) for w in options
    )


def _q11_hints(given: dict[str, object]) -> dict[str, str]:
    """Per part, the hint of the first wrong value the given one matches, else the rule."""
    _, query, note, as_of, hits, totals, t = _q11()
    moment = parse_timestamp(as_of, "as_of")
    days, stored = ((moment - parse_timestamp(Q11_NOTE[k], k)).total_seconds() / SECONDS_PER_DAY
                    for k in ("captured_at", "stored_at"))  # fmt: skip
    n, note_terms, matched = len(query.terms), searchable_terms(note), len(t["matched_terms"])
    age, cov, rec, floor = t["age_days"], t["lexical_coverage"], t["recency"], math.floor(days)
    v = {name: _number(given.get(name)) for name in Q11_PARTS[1:]}
    theirs = _terms(given.get("matched_terms"))

    def h(key: str, **values: Any) -> str:
        return say(f"scoring.q11.{key}", n=n, **values)

    def mine(part: str) -> bool:  # a number of the student's own, and a wrong one
        return v[part] is not None and not _near(v[part], t[part])

    if theirs is None:
        hints = {"matched_terms": h("terms.type")}
    elif strangers := sorted(theirs - set(query.terms)):
        hints = {"matched_terms": h("terms.stranger", terms=", ".join(map(repr, strangers)))}
    elif absent := sorted(theirs - set(note_terms)):
        hints = {"matched_terms": h("terms.absent", terms=", ".join(map(repr, absent)))}
    else:
        hints = {"matched_terms": h("terms.missing")}
    yours = theirs is not None and len(theirs) != matched and theirs <= set(query.terms)
    lex, recent = v["lexical_contribution"], v["recency_contribution"]
    # the totals the notebook shows: the five hits', then 056's
    shown = [
        *((x.memory_id, x.score_breakdown.total) for x in hits),
        (Q11_RECORD, totals[Q11_RECORD]),
    ]
    # fmt: off
    wrongs: dict[str, list[tuple[object, str]]] = {
        "lexical_coverage": [
            (len(theirs) / n if yours else None, h("yours.terms")),
            ([matched / k for k in range(matched, n)], h("coverage.uncounted")),
            (matched / len(note_terms), h("coverage.note")),
            ([m / n for m in range(n + 1) if m != matched], h("coverage.count")),
            (None, h("coverage")),
        ],
        "age_days": [
            (floor, h("age.whole")), (stored, h("age.stored")), (-days, h("age.sign")),
            ([days * 24, days * SECONDS_PER_DAY], h("age.unit")),
            (v["age_days"] if v["age_days"] is not None and abs(v["age_days"] - days) < 0.01
             else None, h("age.close")),
            (None, h("age")),
        ],
        "recency": [
            (1 / (1 + max(0.0, v["age_days"]) / 30) if mine("age_days") else None,
             h("recency.yours")),
            (math.exp(-age / 30), h("recency.exp")), (0.5 ** (age / 30), h("recency.halves")),
            (1 / (1 + age), h("recency.window")), (1 / (1 + floor / 30), h("recency.whole")),
            (1.0, h("recency.one")), (None, h("recency")),
        ],
        "lexical_contribution": [
            (0.85 * v["lexical_coverage"] if mine("lexical_coverage") else None,
             h("yours", part="lexical_coverage")),
            (0.15 * cov, h("swapped")), (cov, h("lexical.raw")), (None, h("lexical")),
        ],
        "recency_contribution": [
            (0.15 * v["recency"] if mine("recency") else None, h("yours", part="recency")),
            (0.85 * rec, h("swapped")), (rec, h("recent.raw")), (None, h("recent")),
        ],
        "total": [
            (lex + recent if lex is not None and recent is not None else None, h("total.yours")),
            (cov + rec, h("total.raw")), (0.15 * cov + 0.85 * rec, h("swapped")),
            ([t["lexical_contribution"], t["recency_contribution"]], h("total.one")),
            *((total, h("total.copied", memory_id=memory_id)) for memory_id, total in shown),
            (None, h("total")),
        ],
    }
    # fmt: on
    for part, pairs in wrongs.items():
        hint = next((hint for w, hint in pairs if _near(v[part], w)), pairs[-1][1])
        hints[part] = hint if v[part] is not None else h("number", hint=hint)
    return hints


def check_q11_note(answer: object) -> ex.CheckResult:
    """04's "Your turn": each of ``Q11_PARTS`` -> the note's value; graded as given so far."""

    def judge(answer: object) -> ex.CheckResult:
        keys = list(Q11_PARTS)
        if not isinstance(answer, Mapping):
            described = say("scoring.q11.described", keys=keys)
            return ex.wrong(ex.say("type", described=described, kind=type(answer).__name__))
        if unknown := [key for key in answer if key not in Q11_PARTS]:
            return ex.wrong(say("scoring.q11.unknown", unknown=unknown, keys=keys))
        given = {k: answer[k] for k in Q11_PARTS if k in answer and answer[k] is not Ellipsis}
        missing = ex.say("labels.missing", labels=", ".join(k for k in Q11_PARTS if k not in given))
        if not given:
            return ex.not_answered(missing)
        _, query, _, _, hits, totals, t = _q11()
        graded = ex.grade_labels({k: t[k] for k in given}, given, _q11_hints(given), same=_close)
        complete = len(given) == len(Q11_PARTS)
        if graded is not None:
            return ex.wrong(graded.message, (*graded.details, *([] if complete else [missing])))
        if not complete:
            return ex.not_answered(
                say("scoring.q11.so_far", missing=missing, given=", ".join(given))
            )
        above = sum(hit.score_breakdown.total > t["total"] for hit in hits)
        where = (
            say("scoring.q11.rank", hits=len(hits), rank=above + 1)
            if above < len(hits)
            else say("scoring.q11.out", higher=sum(s > t["total"] for s in totals.values()),
                     candidates=len(totals), hits=len(hits), last=hits[-1].score_breakdown.total)
        )  # fmt: skip
        return ex.right(say(
            "scoring.q11.right", matched=len(t["matched_terms"]), n=len(query.terms),
            terms=", ".join(t["matched_terms"]), coverage=t["lexical_coverage"],
            age=t["age_days"], recency=t["recency"], total=t["total"], where=where,
        ))  # fmt: skip

    return ex.check_value(answer, judge, placeholder=say("scoring.q11.placeholder"))
