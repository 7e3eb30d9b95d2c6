"""Stage 3 exercises (notebook 04): the build-it ``score_recall_candidate`` (checked against
``memorylib.scoring``'s default policy on the chapter's seven fields, floats rounded to 6
places and compared within one unit of the sixth, so rounded contributions added up pass
too), and the "Your turn" ``check_q11_note``: the breakdown of a note no store holds, for q-11.
Generated candidates match 1..n of n <= 7 query terms, were captured from 400 days before
``as_of`` to 3 days after it, and stored some days later (``stored_at`` is not the age)."""

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
from memorylib.notebook.buildit.fixtures import (
    CHAPTER_QUERY,
    RecordSpec,
    build_records,
    chapter_records,
    make_query,
)
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query, normalize_text
from memorylib.records import (
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallHit,
    RecallQuery,
    RecallScoreBreakdown,
    StoredMemory,
)
from memorylib.scoring import score_recall_candidate
from memorylib.timestamps import SECONDS_PER_DAY, TEACHING_AS_OF, age_in_days, parse_timestamp

__all__ = ["FIELDS", "Q11_NOTE", "Q11_PARTS", "Q11_RECORD", "SCORE_RECALL_CANDIDATE"]
__all__ += ["chapter_breakdown_fields", "check_q11_note"]

TERMS = ("cache", "index", "layered", "memory", "recall", "sqlite", "wal")
FIELDS = ("matched_terms", "query_term_count", "lexical_coverage", "recency")
FIELDS += ("lexical_contribution", "recency_contribution", "total")
FLOATS = FIELDS[2:]


def _scored(terms: int, matched: int, age_days: float, lag_days: float) -> ex.Call:
    """A candidate matching ``matched`` of ``terms`` query terms, captured ``age_days``
    before the teaching clock and stored ``lag_days`` after that."""
    query = make_query(" ".join(TERMS[:terms]))
    spec = RecordSpec(
        "m1", summary=TERMS[:matched], captured_days_before=age_days, stored_lag_days=lag_days
    )
    (candidate,) = build_recall_candidates(query, build_records((spec,))).candidates
    return ex.Call(query, candidate, as_of=TEACHING_AS_OF)


# ages that teach something (0 first: hypothesis shrinks towards it), or any moment to the
# microsecond; negative ages are captures after as_of
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
        raise ex.Malformed(
            f"score_recall_candidate must return a RecallScoreBreakdown({', '.join(FIELDS)}), "
            f"not {type(result).__name__}"
        )
    fields = chapter_breakdown_fields(result)
    if not isinstance(fields["matched_terms"], tuple):
        raise ex.Malformed("matched_terms must be a tuple of str (the candidate's matched_terms)")
    for name in FLOATS:
        value = fields[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ex.Malformed(f"{name} must be a number, not {type(value).__name__}")
        if abs(round(value, 6) - value) > ex.FLOAT_NOISE:  # 0.283333 + 0.15 is rounded too
            raise ex.Malformed(
                f"{name} {value!r} is not rounded: round every float of the breakdown to "
                "6 places (round(x, 6)), as the contract says"
            )
    return fields


def _show_call(name: str, call: ex.Call) -> str:
    (query, candidate), as_of = call.args, call.kwargs["as_of"]
    record = candidate.record
    age = (parse_timestamp(as_of, "as_of") - candidate.captured_at).total_seconds()
    days = f"{abs(age) / SECONDS_PER_DAY:g} day{'s' * (abs(age) != SECONDS_PER_DAY)}"
    mismatch = (
        f" (built for query_id {candidate.query_id!r}, the query's is {query.query_id!r})"
        if candidate.query_id != query.query_id
        else ""
    )
    return (
        f"{name}(query, candidate, as_of={as_of!r}) with query terms {query.terms} and "
        f"candidate {record.memory_id}{mismatch} matching {candidate.matched_terms}, captured "
        f"{record.source.captured_at} ({days} {'before' if age >= 0 else 'AFTER'} as_of), "
        f"stored {record.stored_at}"
    )


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
    def score(query: RecallQuery, candidate: RecallCandidate, *,
              as_of: datetime | str) -> RecallScoreBreakdown:  # fmt: skip
        if check_query and candidate.query_id != query.query_id:
            raise RemoteMemoryValidationError("candidate of another query")
        record = candidate.record
        captured = parse_timestamp(record.stored_at, "s") if stored else candidate.captured_at
        delta = parse_timestamp(as_of, "as_of") - captured
        age = delta.days if whole_days else delta.total_seconds() / SECONDS_PER_DAY
        near = _RECENCY[recency](max(0, age) if clamp else age)
        matched = len(candidate.matched_terms)
        terms = {"query": len(query.terms), "record": len(candidate.searchable_terms)}
        share = matched / terms[coverage] if coverage in terms else 1.0
        lexical, recent = weights[0] * share, weights[1] * near
        r = (lambda x: round(x, 6)) if rounded else (lambda x: x)
        whole = lexical + recent if total == "sum" else share + near
        parts = (r(share), r(near), r(lexical), r(recent), r(whole))
        return RecallScoreBreakdown(candidate.matched_terms, len(query.terms), *parts)

    return score


# fmt: off
MISTAKES = (
    ex.Mistake("recency as exponential decay",
        "The contract's recency is a hyperbola, recency = 1 / (1 + age_days / 30), not "
        "exp(-age_days / 30): one day old gives 0.967742.", _variant("exp")),
    ex.Mistake("recency halves every 30 days",
        "1 / (1 + age_days / 30) is also 0.5 at 30 days, but it is not 0.5 ** (age_days / "
        "30): between and after, the two curves differ (one day old gives 0.967742).",
        _variant("half-life")),
    ex.Mistake("the 30-day window forgotten",
        "Divide the age by the 30-day window: recency = 1 / (1 + age_days / 30).",
        _variant("no-window")),
    ex.Mistake("age not clamped at 0",
        "A source captured after as_of is not 'negative days old': age_days = max(0, ...), "
        "so its recency is 1.0, never more.", _variant(clamp=False)),
    ex.Mistake("age counted in whole days",
        "timedelta.days drops the hours: use (as_of - captured_at).total_seconds() / 86400 "
        "for a fractional age.", _variant(whole_days=True)),
    ex.Mistake("stored_at instead of captured_at",
        "Age is measured from when the source event happened (candidate.captured_at), not "
        "from when the record was stored (stored_at).", _variant(stored=True)),
    ex.Mistake("coverage over the record's terms",
        "Coverage is matched / the QUERY's term count (len(query.terms)): how much of the "
        "question the record answers, not how much of the record matched.",
        _variant(coverage="record")),
    ex.Mistake("coverage is all or nothing",
        "Coverage is a share: len(candidate.matched_terms) / len(query.terms).",
        _variant(coverage="any")),
    ex.Mistake("weights swapped",
        "The lexical part weighs 0.85 and recency 0.15 (the chapter's weights): "
        "lexical_contribution = 0.85 * coverage.", _variant(weights=(0.15, 0.85))),
    ex.Mistake("total without the weights",
        "total = lexical_contribution + recency_contribution (the weighted parts), not "
        "coverage + recency.", _variant(total="raw")),
    ex.Mistake("not rounded",
        "Round every float of the breakdown to 6 places (round(x, 6)), as the contract says.",
        _variant(rounded=False)),
    ex.Mistake("a candidate of another query accepted",
        "First check candidate.query_id == query.query_id and raise "
        "RemoteMemoryValidationError otherwise: a score belongs to one query.",
        _variant(check_query=False)),
)
# fmt: on


def _examples() -> tuple[ex.Named, ...]:
    layered = make_query(CHAPTER_QUERY)
    (chapter,) = build_recall_candidates(layered, chapter_records()).candidates
    stranger = replace(chapter, query_id="q-someone-else")
    # fmt: off
    return (
        ex.Named("conversation-003 scores 0.995161 one day after capture (the chapter's numbers)",
            ex.Call(layered, chapter, as_of=TEACHING_AS_OF)),
        ex.Named("1 of 2 terms, 30 days old: coverage 0.5, recency 0.5, total 0.5",
            _scored(2, 1, 30.0, 0.0)),
        ex.Named("captured 2 days after as_of: the age is clamped to 0, recency 1.0",
            _scored(1, 1, -2.0, 0.0)),
        ex.Named("stored 10 days after it was captured: captured_at sets the age",
            _scored(3, 2, 12.0, 10.0)),
        ex.Named("a candidate built for another query is rejected (RemoteMemoryValidationError)",
            ex.Call(layered, stranger, as_of=TEACHING_AS_OF)),
    )
    # fmt: on


_AS_OF_STR = (
    "as_of may arrive as an ISO-8601 str: parse it first with parse_timestamp(as_of, 'as_of') "
    "(it accepts a datetime too)."
)
SCORE_RECALL_CANDIDATE = ex.FunctionExercise(
    "score_recall_candidate", score_recall_candidate, _examples(), _calls(), _read,
    show_call=_show_call, mistakes=MISTAKES, refuses=(score_recall_candidate,),
    error_hints=(
        ("'str' and 'datetime", _AS_OF_STR),
        ("'datetime.datetime' and 'str'", _AS_OF_STR),
        ("ZeroDivisionError", "The query has at least one term; divide by len(query.terms)."),
    ),
)  # fmt: skip


# -- notebook 04's "Your turn": a note that no store holds, scored by hand for q-11 --------------

Q11 = "q-11"  # labelled "stopword_noise": the record a person wants misses the top 5
Q11_RECORD = "mei-conv-056"  # that record (notebook 04 shows its breakdown)
# A status note about a check Mei made on a Friday (stored the next morning), in no store of
# the course. It matches 2 of q-11's 7 terms, a count no record the notebook shows has for
# q-11 (3, 4 or 5) or its other 7-term query (4, 6 or 7), so no output shows its coverage or
# lexical part, nor (its own timestamps) its age, recency, recency part or total. The check
# asks for the working (the matched terms, the age in days) as well as the breakdown.
Q11_NOTE = MappingProxyType(
    {
        "summary": "Recall index green again",
        "content": "Checked on Friday: every shard answers, p95 latency back under 40 ms.",
        "captured_at": "2026-11-27T15:20:00Z",
        "stored_at": "2026-11-28T08:05:00Z",
    }
)
Q11_PARTS = ("matched_terms", "lexical_coverage", "age_days", *FLOATS[1:])


@functools.cache
def _q11() -> tuple[tuple[StoredMemory, ...], RecallQuery, StoredMemory, str]:
    """Mei's records, q-11's query, the note as a record of hers, and q-11's as_of."""
    (labelled,) = [q for q in load_labelled_queries() if q.query_id == Q11]
    records = course_records(labelled.user_id)
    query = normalize_recall_query(
        labelled.text, user_scope=records[0].user_scope, query_id=Q11, issued_at=labelled.as_of
    )
    source = MemorySource("note-q11", "conversation_transcript", "a status note",
                          Q11_NOTE["captured_at"])  # fmt: skip
    note = new_memory(user_scope=query.user_scope, kind=MemoryKind.CONVERSATION,
                      memory_id="mei-note-q11", summary=Q11_NOTE["summary"],
                      content=Q11_NOTE["content"], source=source,
                      stored_at=Q11_NOTE["stored_at"])  # fmt: skip
    return records, query, note, labelled.as_of


@functools.cache
def _q11_scores() -> tuple[tuple[RecallHit, ...], dict[str, float]]:
    """q-11's five hits (the notebook shows them), and every candidate's total."""
    records, query, _, as_of = _q11()
    totals = {
        c.record.memory_id: score_recall_candidate(query, c, as_of=as_of).total
        for c in build_recall_candidates(query, records).candidates
    }
    return recall_pipeline(query, records, as_of=as_of).hits, totals


@functools.cache
def _q11_truth() -> dict[str, Any]:
    """The note's parts as the library computes them (the contract's numbers)."""
    _, query, note, as_of = _q11()
    (candidate,) = build_recall_candidates(query, (note,)).candidates
    b = chapter_breakdown_fields(score_recall_candidate(query, candidate, as_of=as_of))
    b["age_days"] = age_in_days(candidate.captured_at, parse_timestamp(as_of, "as_of"))
    return {name: b[name] for name in Q11_PARTS}


def _terms(given: object) -> frozenset[str] | None:
    """A tuple, list or set of str as a set of normalized terms (order is not graded)."""
    if isinstance(given, tuple | list | set | frozenset) and all(isinstance(t, str) for t in given):
        return frozenset(normalize_text(term) for term in given)
    return None


def _close(given: object, expected: Any) -> bool:
    if isinstance(expected, tuple):  # matched_terms
        return _terms(given) == frozenset(expected)
    return (
        isinstance(given, int | float) and not isinstance(given, bool) and ex.same(expected, given)
    )


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _q11_hints(given: dict[str, object]) -> dict[str, str]:
    """One hint per part: the first (wrong value, hint) pair of the part whose value the given
    one matches, else the part's rule. Each part is also read against the student's own
    earlier parts: a recency right for their wrong age says so."""
    _, query, note, as_of = _q11()
    t = _q11_truth()
    moment = parse_timestamp(as_of, "as_of")
    days, stored = ((moment - parse_timestamp(Q11_NOTE[k], k)).total_seconds() / SECONDS_PER_DAY
                    for k in ("captured_at", "stored_at"))  # fmt: skip
    n, note_terms, matched = len(query.terms), searchable_terms(note), len(t["matched_terms"])
    age, cov, rec, floor = t["age_days"], t["lexical_coverage"], t["recency"], math.floor(days)
    v = {name: _number(given.get(name)) for name in Q11_PARTS[1:]}
    theirs = _terms(given.get("matched_terms"))

    def mine(part: str) -> bool:  # a number of the student's own, and a wrong one
        return v[part] is not None and not _near(v[part], t[part])

    hints = {}
    if theirs is None:
        hints["matched_terms"] = "a tuple of str: the query terms the note holds."
    elif strangers := sorted(theirs - set(query.terms)):
        hints["matched_terms"] = f"{', '.join(map(repr, strangers))}: not among q-11's {n} terms."
    elif absent := sorted(theirs - set(note_terms)):
        hints["matched_terms"] = (
            f"{', '.join(map(repr, absent))}: not among the note's terms (printed above)."
        )
    else:
        hints["matched_terms"] = (
            "a query term the note holds is missing: go through q-11's terms one by one "
            "('what', 'is', 'the' and 'of' too)."
        )
    swapped = "the weights are swapped: lexical takes 0.85, recency 0.15."
    stops = "'what', 'is', 'the' and 'of' included; coverage = matched terms / all of them."
    yours = theirs is not None and len(theirs) != matched and theirs <= set(query.terms)
    lex, recent = v["lexical_contribution"], v["recency_contribution"]
    hits, totals = _q11_scores()  # the totals the notebook shows: the five hits', then 056's
    shown = [
        *((h.memory_id, h.score_breakdown.total) for h in hits),
        (Q11_RECORD, totals[Q11_RECORD]),
    ]
    # fmt: off
    wrongs: dict[str, list[tuple[object, str]]] = {
        "lexical_coverage": [
            (len(theirs) / n if yours else None,
             "right for your matched_terms; fix them and this follows."),
            ([matched / k for k in range(matched, n)],
             f"not every query term was counted: q-11 has {n} terms, {stops}"),
            (matched / len(note_terms),
             "coverage is over the QUERY's terms, not the note's: matched / len(query.terms)."),
            ([m / n for m in range(n + 1) if m != matched],
             f"count the matches again: which of q-11's {n} terms are among the note's terms "
             "(its summary and content)?"),
            (None, "coverage = matched terms / the query's term count."),
        ],
        "age_days": [
            (floor, "the age has a fraction: (as_of - captured_at).total_seconds() / 86400, not "
                    "whole days (.days drops the hours)."),
            (stored, "the age counts from captured_at (when Mei checked), not from stored_at "
                     "(when the store wrote the note)."),
            (-days, "the age is as_of - captured_at, not captured_at - as_of."),
            ([days * 24, days * SECONDS_PER_DAY],
             "give the age in days: divide the seconds by 86400."),
            (v["age_days"] if v["age_days"] is not None and abs(v["age_days"] - days) < 0.01
             else None, "close: keep 6 decimal places (each number must be within one unit of "
                        "the 6th place)."),
            (None, "age_days = (as_of - captured_at).total_seconds() / 86400."),
        ],
        "recency": [
            (1 / (1 + max(0.0, v["age_days"]) / 30) if mine("age_days") else None,
             "right for your age_days; fix the age first and it follows."),
            (math.exp(-age / 30),
             "recency is not exp(-age_days / 30): it is 1 / (1 + age_days / 30)."),
            (0.5 ** (age / 30),
             "recency does not halve every 30 days: it is 1 / (1 + age_days / 30)."),
            (1 / (1 + age),
             "divide the age by the 30-day window: recency = 1 / (1 + age_days / 30)."),
            (1 / (1 + floor / 30), "that recency uses whole days: keep the age's fraction."),
            (1.0, "recency is not 1: it decays with age as 1 / (1 + age_days / 30)."),
            (None, "recency = 1 / (1 + age_days / 30)."),
        ],
        "lexical_contribution": [
            (0.85 * v["lexical_coverage"] if mine("lexical_coverage") else None,
             "right for your lexical_coverage; fix it and this follows."),
            (0.15 * cov, swapped),
            (cov, "weight it: 0.85 × lexical_coverage."),
            (None, "0.85 × lexical_coverage."),
        ],
        "recency_contribution": [
            (0.15 * v["recency"] if mine("recency") else None,
             "right for your recency; fix it and this follows."),
            (0.85 * rec, swapped),
            (rec, "weight it: 0.15 × recency."),
            (None, "0.15 × recency."),
        ],
        "total": [
            (lex + recent if lex is not None and recent is not None else None,
             "that adds your two contributions: fix the wrong one and this follows."),
            (cov + rec, "weight the parts: 0.85 × coverage + 0.15 × recency."),
            (0.15 * cov + 0.85 * rec, swapped),
            ([t["lexical_contribution"], t["recency_contribution"]],
             "that is one contribution: the total adds both."),
            *((total, f"that is the total of {memory_id} (shown above): compute the note's own.")
              for memory_id, total in shown),
            (None, "total = lexical_contribution + recency_contribution."),
        ],
    }
    # fmt: on
    for part, pairs in wrongs.items():
        hint = next((h for w, h in pairs if _near(v[part], w)), pairs[-1][1])
        hints[part] = hint if v[part] is not None else f"a number (a float). {hint}"
    return hints


def _near(value: float | None, bad: object) -> bool:
    """The given value is (one of) the wrong value(s), both rounded to 6 places."""
    options = bad if isinstance(bad, list) else [bad]
    return value is not None and any(
        w is not None and ex.same(round(w, 6), round(value, 6)) for w in options
    )


def check_q11_note(answer: object) -> ex.CheckResult:
    """Notebook 04's "Your turn": ``answer`` maps each of ``Q11_PARTS`` to the note's value
    for q-11 under the default policy: its matched terms (a tuple, list or set of str, in
    any order), then numbers, each within one unit of the sixth place. Wrong parts get one
    line each, with the hint of the mistake the value matches; parts left out (or still
    ``...``) are not answered yet, and what is given so far is graded."""

    def judge(answer: object) -> ex.CheckResult:
        described = f"a dict with the keys {list(Q11_PARTS)}"
        if not isinstance(answer, Mapping):
            return ex.wrong(ex.say("type", described=described, kind=type(answer).__name__))
        unknown = [key for key in answer if key not in Q11_PARTS]
        if unknown:
            return ex.wrong(f"Unknown key(s) {unknown}: the keys are {list(Q11_PARTS)}.")
        given = {k: answer[k] for k in Q11_PARTS if k in answer and answer[k] is not Ellipsis}
        missing = ex.say("labels.missing", labels=", ".join(k for k in Q11_PARTS if k not in given))
        if not given:
            return ex.not_answered(missing)
        truth = {k: v for k, v in _q11_truth().items() if k in given}
        graded = ex.grade_labels(truth, given, _q11_hints(given), same=_close)
        complete = len(given) == len(Q11_PARTS)
        if graded is not None:
            return ex.wrong(graded.message, (*graded.details, *([] if complete else [missing])))
        if not complete:
            return ex.not_answered(f"{missing} Right so far: {', '.join(given)}.")
        t, (hits, totals) = _q11_truth(), _q11_scores()
        above = sum(hit.score_breakdown.total > t["total"] for hit in hits)
        higher = sum(total > t["total"] for total in totals.values())
        where = (
            f"Among q-11's {len(hits)} hits, the note would rank {above + 1}."
            if above < len(hits)
            else f"{higher} of q-11's {len(totals)} candidates score higher, so the note would "
            f"not be among its {len(hits)} hits (the last of them scores "
            f"{hits[-1].score_breakdown.total:.6f})."
        )
        return ex.right(
            f"Right: {len(t['matched_terms'])} of {len(_q11()[1].terms)} terms "
            f"({', '.join(t['matched_terms'])}), coverage {t['lexical_coverage']:.6f}, "
            f"{t['age_days']:.6f} days old, recency {t['recency']:.6f}; 0.85 × "
            f"{t['lexical_coverage']:.6f} + 0.15 × {t['recency']:.6f} = {t['total']:.6f}. {where}"
        )

    return ex.check_value(answer, judge, placeholder="a dict of the seven parts (see the comment)")
