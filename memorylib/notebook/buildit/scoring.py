"""Stage 3 exercises (notebook 04): the build-it ``score_recall_candidate``, and the
"Your turn" check (``check_q11_note``): the breakdown, part by part, of a note no store
holds (``Q11_NOTE``) for labelled query q-11, with its working (the matched terms and the
age in days).

The build-it is checked against ``memorylib.scoring`` with its default policy (the
chapter's weights 0.85 / 0.15, with the contract's coverage = matched / query terms and
its recency 1 / (1 + age / 30)) on the seven fields the chapter defines. Floats must be
rounded to 6 places (``_read`` refuses a float with more digits, as not rounded), and are
compared within one unit of the sixth place (the engine's ``within``), so a total that
adds the two rounded contributions is as right as the library's rounded unrounded sum
(0.283333 + 0.133333 = 0.416666 against 0.416667). A body that calls the library's
``score_recall_candidate`` (directly, or through the pipeline or the ranker) is refused.

Generated candidates match 1..n of n query terms (n up to 7) and were captured from 400
days before ``as_of`` to 3 days after it, at whole and fractional days, and stored some
days after they were captured (so ``stored_at`` is never mistaken for the age).
"""

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
from memorylib.notebook.buildit.fixtures import (
    CHAPTER_QUERY,
    RecordSpec,
    build_records,
    chapter_records,
    make_query,
)
from memorylib.notebook.exercises import (
    FLOAT_NOISE,
    Call,
    CheckResult,
    FunctionExercise,
    Malformed,
    Mistake,
    Named,
    check_value,
    grade_labels,
    not_answered,
    right,
    same,
    say,
    wrong,
)
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query, normalize_text
from memorylib.records import (
    DEFAULT_LEXICAL_WEIGHT,
    DEFAULT_RECENCY_WEIGHT,
    DEFAULT_RECENCY_WINDOW_DAYS,
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

__all__ = [
    "FIELDS",
    "Q11_NOTE",
    "Q11_PARTS",
    "Q11_RECORD",
    "SCORE_RECALL_CANDIDATE",
    "chapter_breakdown_fields",
    "check_q11_note",
]

TERMS = ("cache", "index", "layered", "memory", "recall", "sqlite", "wal")
FIELDS = (
    "matched_terms",
    "query_term_count",
    "lexical_coverage",
    "recency",
    "lexical_contribution",
    "recency_contribution",
    "total",
)
FLOATS = FIELDS[2:]


def _scored(terms: int, matched: int, age_days: float, lag_days: float) -> Call:
    """A candidate matching ``matched`` of ``terms`` query terms, captured ``age_days``
    before the teaching clock and stored ``lag_days`` after that."""
    query = make_query(" ".join(TERMS[:terms]))
    spec = RecordSpec(
        "m1", summary=TERMS[:matched], captured_days_before=age_days, stored_lag_days=lag_days
    )
    (candidate,) = build_recall_candidates(query, build_records((spec,))).candidates
    return Call(query, candidate, as_of=TEACHING_AS_OF)


# ages that teach something (0 first: hypothesis shrinks towards it), or any moment to the
# microsecond; negative ages are captures after as_of
_AGES = st.one_of(
    st.sampled_from((0.0, 1.0, 0.5, 1.25, 7.0, 30.0, 45.5, 400.0, -3.0, -0.25)),
    st.floats(0.0, 120.0).map(lambda days: round(days, 6)),
)
_LAGS = st.sampled_from((0.0, 2.5, 10.0))


@st.composite
def _calls(draw: st.DrawFn) -> Call:
    terms = draw(st.integers(1, len(TERMS)))
    matched = draw(st.integers(1, terms))
    return _scored(terms, matched, draw(_AGES), draw(_LAGS))


# -- comparing -------------------------------------------------------------------------------


def chapter_breakdown_fields(breakdown: RecallScoreBreakdown) -> dict[str, Any]:
    """The seven fields the chapter defines, by name."""
    return {name: getattr(breakdown, name) for name in FIELDS}


def _read(result: Any, call: Call) -> dict[str, Any]:
    if not isinstance(result, RecallScoreBreakdown):
        raise Malformed(
            "score_recall_candidate must return a RecallScoreBreakdown(matched_terms, "
            "query_term_count, lexical_coverage, recency, lexical_contribution, "
            f"recency_contribution, total), not {type(result).__name__}"
        )
    fields = chapter_breakdown_fields(result)
    if not isinstance(fields["matched_terms"], tuple):
        raise Malformed("matched_terms must be a tuple of str (the candidate's matched_terms)")
    for name in FLOATS:
        value = fields[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Malformed(f"{name} must be a number, not {type(value).__name__}")
        if abs(round(value, 6) - value) > FLOAT_NOISE:  # 0.283333 + 0.15 is rounded too
            raise Malformed(
                f"{name} {value!r} is not rounded: round every float of the breakdown to "
                "6 places (round(x, 6)), as the contract says"
            )
    return fields


def _show(fields: dict[str, Any]) -> str:
    return (
        f"matched {', '.join(fields['matched_terms']) or 'nothing'} of "
        f"{fields['query_term_count']} term{'' if fields['query_term_count'] == 1 else 's'}: "
        f"coverage {fields['lexical_coverage']!r}, "
        f"recency {fields['recency']!r}, contributions {fields['lexical_contribution']!r} + "
        f"{fields['recency_contribution']!r}, total {fields['total']!r}"
    )


def _show_call(name: str, call: Call) -> str:
    query, candidate = call.args
    as_of = call.kwargs["as_of"]
    record = candidate.record
    age = (
        parse_timestamp(as_of, "as_of") - candidate.captured_at
    ).total_seconds() / SECONDS_PER_DAY
    days = f"{abs(age):g} day{'' if abs(age) == 1 else 's'}"
    when = f"{days} before as_of" if age >= 0 else f"{days} AFTER as_of"
    mismatch = (
        f" (built for query_id {candidate.query_id!r}, the query's is {query.query_id!r})"
        if candidate.query_id != query.query_id
        else ""
    )
    return (
        f"{name}(query, candidate, as_of={as_of!r}) with query terms "
        f"{query.terms} and candidate {record.memory_id}{mismatch} matching "
        f"{candidate.matched_terms}, captured {record.source.captured_at} ({when}), "
        f"stored {record.stored_at}"
    )


# -- typical mistakes ---------------------------------------------------------------------------


def _variant(
    *,
    recency: str = "hyperbola",
    clamp: bool = True,
    whole_days: bool = False,
    stored: bool = False,
    coverage: str = "query",
    weights: tuple[float, float] = (0.85, 0.15),
    rounded: bool = True,
    check_query: bool = True,
    total: str = "sum",
) -> Any:
    """The default scorer with one rule broken (each keyword names the rule)."""

    def score(
        query: RecallQuery, candidate: RecallCandidate, *, as_of: datetime | str
    ) -> RecallScoreBreakdown:
        if check_query and candidate.query_id != query.query_id:
            raise RemoteMemoryValidationError("candidate of another query")
        moment = parse_timestamp(as_of, "as_of")
        captured = (
            parse_timestamp(candidate.record.stored_at, "stored_at")
            if stored
            else candidate.captured_at
        )
        delta = moment - captured
        age = delta.days if whole_days else delta.total_seconds() / SECONDS_PER_DAY
        if clamp:
            age = max(0, age)
        if recency == "exp":
            near = math.exp(-age / 30)
        elif recency == "half-life":
            near = 0.5 ** (age / 30)
        elif recency == "no-window":
            near = 1 / (1 + age)
        else:
            near = 1 / (1 + age / 30)
        matched = len(candidate.matched_terms)
        share = {
            "query": matched / len(query.terms),
            "record": matched / len(candidate.searchable_terms),
            "any": 1.0,
        }[coverage]
        lexical, recent = weights[0] * share, weights[1] * near
        whole = lexical + recent if total == "sum" else share + near
        r = (lambda x: round(x, 6)) if rounded else (lambda x: x)
        return RecallScoreBreakdown(
            matched_terms=candidate.matched_terms,
            query_term_count=len(query.terms),
            lexical_coverage=r(share),
            recency=r(near),
            lexical_contribution=r(lexical),
            recency_contribution=r(recent),
            total=r(whole),
        )

    return score


MISTAKES = (
    Mistake(
        "recency as exponential decay",
        "The contract's recency is a hyperbola, recency = 1 / (1 + age_days / 30), not "
        "exp(-age_days / 30): one day old gives 0.967742.",
        _variant(recency="exp"),
    ),
    Mistake(
        "recency halves every 30 days",
        "1 / (1 + age_days / 30) is also 0.5 at 30 days, but it is not 0.5 ** (age_days / 30): "
        "between and after, the two curves differ (one day old gives 0.967742).",
        _variant(recency="half-life"),
    ),
    Mistake(
        "the 30-day window forgotten",
        "Divide the age by the 30-day window: recency = 1 / (1 + age_days / 30).",
        _variant(recency="no-window"),
    ),
    Mistake(
        "age not clamped at 0",
        "A source captured after as_of is not 'negative days old': age_days = max(0, ...), "
        "so its recency is 1.0, never more.",
        _variant(clamp=False),
    ),
    Mistake(
        "age counted in whole days",
        "timedelta.days drops the hours: use (as_of - captured_at).total_seconds() / 86400 "
        "for a fractional age.",
        _variant(whole_days=True),
    ),
    Mistake(
        "stored_at instead of captured_at",
        "Age is measured from when the source event happened (candidate.captured_at), not "
        "from when the record was stored (stored_at).",
        _variant(stored=True),
    ),
    Mistake(
        "coverage over the record's terms",
        "Coverage is matched / the QUERY's term count (len(query.terms)): how much of the "
        "question the record answers, not how much of the record matched.",
        _variant(coverage="record"),
    ),
    Mistake(
        "coverage is all or nothing",
        "Coverage is a share: len(candidate.matched_terms) / len(query.terms).",
        _variant(coverage="any"),
    ),
    Mistake(
        "weights swapped",
        "The lexical part weighs 0.85 and recency 0.15 (the chapter's weights): "
        "lexical_contribution = 0.85 * coverage.",
        _variant(weights=(0.15, 0.85)),
    ),
    Mistake(
        "total without the weights",
        "total = lexical_contribution + recency_contribution (the weighted parts), not "
        "coverage + recency.",
        _variant(total="raw"),
    ),
    Mistake(
        "not rounded",
        "Round every float of the breakdown to 6 places (round(x, 6)), as the contract says.",
        _variant(rounded=False),
    ),
    Mistake(
        "a candidate of another query accepted",
        "First check candidate.query_id == query.query_id and raise "
        "RemoteMemoryValidationError otherwise: a score belongs to one query.",
        _variant(check_query=False),
    ),
)


# -- worked examples ----------------------------------------------------------------------------


def _examples() -> tuple[Named, ...]:
    layered = make_query(CHAPTER_QUERY)
    (chapter,) = build_recall_candidates(layered, chapter_records()).candidates
    stranger = replace(chapter, query_id="q-someone-else")
    return (
        Named(
            "conversation-003 scores 0.995161 one day after capture (the chapter's numbers)",
            Call(layered, chapter, as_of=TEACHING_AS_OF),
        ),
        Named(
            "1 of 2 terms, 30 days old: coverage 0.5, recency 0.5, total 0.5",
            _scored(2, 1, 30.0, 0.0),
        ),
        Named(
            "captured 2 days after as_of: the age is clamped to 0, recency 1.0",
            _scored(1, 1, -2.0, 0.0),
        ),
        Named(
            "stored 10 days after it was captured: captured_at sets the age",
            _scored(3, 2, 12.0, 10.0),
        ),
        Named(
            "a candidate built for another query is rejected (RemoteMemoryValidationError)",
            Call(layered, stranger, as_of=TEACHING_AS_OF),
        ),
    )


SCORE_RECALL_CANDIDATE = FunctionExercise(
    function="score_recall_candidate",
    reference=score_recall_candidate,
    examples=_examples(),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    mistakes=MISTAKES,
    refuses=(score_recall_candidate,),
    error_hints=(
        (
            "'str' and 'datetime",
            "as_of may arrive as an ISO-8601 str: parse it first with "
            "parse_timestamp(as_of, 'as_of') (it accepts a datetime too).",
        ),
        (
            "'datetime.datetime' and 'str'",
            "as_of may arrive as an ISO-8601 str: parse it "
            "first with parse_timestamp(as_of, 'as_of') (it accepts a datetime too).",
        ),
        ("ZeroDivisionError", "The query has at least one term; divide by len(query.terms)."),
    ),
)


# -- notebook 04's "Your turn": a note that no store holds, scored by hand for q-11 --------------

Q11 = "q-11"  # labelled "stopword_noise": the record a person wants misses the top 5
Q11_RECORD = "mei-conv-056"  # that record (notebook 04 shows its breakdown)
# A status note about a check Mei made on a Friday (stored the next morning). No store of
# the course holds it. It matches 2 of q-11's 7 terms, a count no record the notebook shows
# has for q-11 (they match 3, 4 or 5) or for its 7-term query (4, 6 or 7), so no output of
# the notebook shows its coverage or lexical part, nor (its own timestamps) its age,
# recency, recency part or total. The library could compute them (a student could append
# it to a store and recall); the exercise is to work them out from these facts, and the
# check asks for the working (the matched terms, the age in days) as well as the breakdown.
Q11_NOTE = MappingProxyType(
    {
        "summary": "Recall index green again",
        "content": "Checked on Friday: every shard answers, p95 latency back under 40 ms.",
        "captured_at": "2026-11-27T15:20:00Z",
        "stored_at": "2026-11-28T08:05:00Z",
    }
)
Q11_PARTS = (
    "matched_terms",
    "lexical_coverage",
    "age_days",
    "recency",
    "lexical_contribution",
    "recency_contribution",
    "total",
)


@functools.cache
def _q11() -> tuple[tuple[StoredMemory, ...], RecallQuery, StoredMemory, str]:
    """Mei's records, q-11's query, the note as a record of hers, and q-11's as_of."""
    (labelled,) = [q for q in load_labelled_queries() if q.query_id == Q11]
    records = course_records(labelled.user_id)
    query = normalize_recall_query(
        labelled.text,
        user_scope=records[0].user_scope,
        query_id=labelled.query_id,
        issued_at=labelled.as_of,
    )
    note = new_memory(
        user_scope=query.user_scope,
        kind=MemoryKind.CONVERSATION,
        memory_id="mei-note-q11",
        summary=Q11_NOTE["summary"],
        content=Q11_NOTE["content"],
        source=MemorySource(
            "note-q11", "conversation_transcript", "a status note", Q11_NOTE["captured_at"]
        ),
        stored_at=Q11_NOTE["stored_at"],
    )
    return records, query, note, labelled.as_of


@functools.cache
def _q11_hits() -> tuple[RecallHit, ...]:
    """q-11's five hits under the default policy (the notebook shows them)."""
    records, query, _, as_of = _q11()
    return recall_pipeline(query, records, as_of=as_of).hits


@functools.cache
def _q11_truth() -> dict[str, Any]:
    """The note's parts as the library computes them (the contract's numbers)."""
    _, query, note, as_of = _q11()
    (candidate,) = build_recall_candidates(query, (note,)).candidates
    b = score_recall_candidate(query, candidate, as_of=as_of)
    age = age_in_days(candidate.captured_at, parse_timestamp(as_of, "as_of"))
    return {
        "matched_terms": b.matched_terms,
        "lexical_coverage": b.lexical_coverage,
        "age_days": age,
        "recency": b.recency,
        "lexical_contribution": b.lexical_contribution,
        "recency_contribution": b.recency_contribution,
        "total": b.total,
    }


def _terms(given: object) -> frozenset[str] | None:
    """A tuple, list or set of str as a set of normalized terms (order is not graded)."""
    if isinstance(given, str | bytes) or not isinstance(given, tuple | list | set | frozenset):
        return None
    if not all(isinstance(term, str) for term in given):
        return None
    return frozenset(normalize_text(term) for term in given)


def _close(given: object, expected: Any) -> bool:
    if isinstance(expected, tuple):  # matched_terms
        return _terms(given) == frozenset(expected)
    return isinstance(given, int | float) and not isinstance(given, bool) and same(expected, given)


def _q11_hints(given: dict[str, object]) -> dict[str, str]:
    """One hint per part, aimed at the mistake the given value matches (each part is also
    read against the student's own earlier parts: a recency right for a wrong age says so)."""
    records, query, note, as_of = _q11()
    truth = _q11_truth()
    moment = parse_timestamp(as_of, "as_of")
    captured = parse_timestamp(Q11_NOTE["captured_at"], "captured_at")
    stored = parse_timestamp(Q11_NOTE["stored_at"], "stored_at")
    age = truth["age_days"]
    terms = len(query.terms)
    note_terms = searchable_terms(note)
    matched = sum(term in note_terms for term in query.terms)
    w_lex, w_rec = DEFAULT_LEXICAL_WEIGHT, DEFAULT_RECENCY_WEIGHT
    window = DEFAULT_RECENCY_WINDOW_DAYS

    def number(name: str) -> float | None:
        value = given.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) else None

    theirs = _terms(given.get("matched_terms"))

    def terms_hint() -> str:
        if theirs is None:
            return "a tuple of str: the query terms the note holds."
        strangers = sorted(theirs - set(query.terms))
        if strangers:
            return f"{', '.join(map(repr, strangers))}: not among q-11's {terms} terms."
        absent = sorted(theirs - set(note_terms))
        if absent:
            return f"{', '.join(map(repr, absent))}: not among the note's terms (printed above)."
        return (
            "a query term the note holds is missing: go through q-11's terms one by one "
            "('what', 'is', 'the' and 'of' too)."
        )

    def near(value: float | None, expected: float) -> bool:
        return value is not None and same(round(expected, 6), round(value, 6))

    def coverage_hint(value: float | None) -> str:
        if (
            theirs is not None
            and len(theirs) != matched
            and theirs <= set(query.terms)
            and near(value, len(theirs) / terms)
        ):
            return "right for your matched_terms; fix them and this follows."
        if any(near(value, matched / counted) for counted in range(matched, terms)):
            return (
                f"not every query term was counted: q-11 has {terms} terms, 'what', 'is', "
                "'the' and 'of' included; coverage = matched terms / all of them."
            )
        if near(value, matched / len(note_terms)):
            return "coverage is over the QUERY's terms, not the note's: matched / len(query.terms)."
        if any(near(value, m / terms) for m in range(terms + 1) if m != matched):
            return (
                f"count the matches again: which of q-11's {terms} terms are among the note's "
                "terms (its summary and content)?"
            )
        return "coverage = matched terms / the query's term count."

    days = (moment - captured).total_seconds() / SECONDS_PER_DAY

    def age_hint(value: float | None) -> str:
        if near(value, math.floor(days)):
            return (
                "the age has a fraction: (as_of - captured_at).total_seconds() / 86400, not "
                "whole days (.days drops the hours)."
            )
        if near(value, (moment - stored).total_seconds() / SECONDS_PER_DAY):
            return (
                "the age counts from captured_at (when Mei checked), not from stored_at (when "
                "the store wrote the note)."
            )
        if near(value, -days):
            return "the age is as_of - captured_at, not captured_at - as_of."
        if near(value, days * 24) or near(value, days * SECONDS_PER_DAY):
            return "give the age in days: divide the seconds by 86400."
        if value is not None and abs(value - days) < 0.01:
            return (
                "close: keep 6 decimal places (each number must be within one unit of the "
                "6th place)."
            )
        return "age_days = (as_of - captured_at).total_seconds() / 86400."

    def recency_hint(value: float | None, their_age: float | None) -> str:
        if (
            their_age is not None
            and not near(their_age, age)
            and near(value, 1 / (1 + max(0.0, their_age) / window))
        ):
            return "right for your age_days; fix the age first and it follows."
        if near(value, math.exp(-age / window)):
            return "recency is not exp(-age_days / 30): it is 1 / (1 + age_days / 30)."
        if near(value, 0.5 ** (age / window)):
            return "recency does not halve every 30 days: it is 1 / (1 + age_days / 30)."
        if near(value, 1 / (1 + age)):
            return "divide the age by the 30-day window: recency = 1 / (1 + age_days / 30)."
        if near(value, 1 / (1 + math.floor(days) / window)):
            return "that recency uses whole days: keep the age's fraction."
        if near(value, 1.0):
            return "recency is not 1: it decays with age as 1 / (1 + age_days / 30)."
        return "recency = 1 / (1 + age_days / 30)."

    def contribution_hint(
        value: float | None, part: str, theirs: float | None, weight: float, other: float
    ) -> str:
        if theirs is not None and not near(theirs, truth[part]) and near(value, weight * theirs):
            return f"right for your {part}; fix it and this follows."
        if near(value, other * truth[part]):
            return f"the weights are swapped: lexical takes {w_lex:g}, recency {w_rec:g}."
        if near(value, truth[part]):
            return f"weight it: {weight:g} × {part}."
        return f"{weight:g} × {part}."

    lexical, recent = number("lexical_contribution"), number("recency_contribution")

    def total_hint(value: float | None) -> str:
        if lexical is not None and recent is not None and near(value, lexical + recent):
            return "that adds your two contributions: fix the wrong one and this follows."
        if near(value, truth["lexical_coverage"] + truth["recency"]):
            return f"weight the parts: {w_lex:g} × coverage + {w_rec:g} × recency."
        if near(value, w_rec * truth["lexical_coverage"] + w_lex * truth["recency"]):
            return f"the weights are swapped: lexical takes {w_lex:g}, recency {w_rec:g}."
        if near(value, truth["lexical_contribution"]) or near(value, truth["recency_contribution"]):
            return "that is one contribution: the total adds both."
        shown = {h.memory_id: h.score_breakdown.total for h in _q11_hits()}
        for c in build_recall_candidates(query, records).candidates:
            if c.record.memory_id == Q11_RECORD:
                shown[Q11_RECORD] = score_recall_candidate(query, c, as_of=as_of).total
        for memory_id, shown_total in shown.items():
            if near(value, shown_total):
                return f"that is the total of {memory_id} (shown above): compute the note's own."
        return "total = lexical_contribution + recency_contribution."

    hints = {
        "matched_terms": terms_hint(),
        "lexical_coverage": coverage_hint(number("lexical_coverage")),
        "age_days": age_hint(number("age_days")),
        "recency": recency_hint(number("recency"), number("age_days")),
        "lexical_contribution": contribution_hint(
            lexical, "lexical_coverage", number("lexical_coverage"), w_lex, w_rec
        ),
        "recency_contribution": contribution_hint(
            recent, "recency", number("recency"), w_rec, w_lex
        ),
        "total": total_hint(number("total")),
    }
    return {
        name: hint
        if name == "matched_terms" or number(name) is not None
        else f"a number (a float). {hint}"
        for name, hint in hints.items()
    }


def check_q11_note(answer: object) -> CheckResult:
    """Notebook 04's "Your turn": ``answer`` maps each of ``Q11_PARTS`` to the note's value
    for q-11 under the default policy: its matched terms (a tuple, list or set of str, in
    any order), then numbers, each within one unit of the sixth place (the engine's
    ``within``). Wrong parts get one line each, with the hint of the mistake the value
    matches; parts left out (or still ``...``) are not answered yet, and what is given so
    far is graded."""

    def judge(answer: object) -> CheckResult:
        described = f"a dict with the keys {list(Q11_PARTS)}"
        if not isinstance(answer, Mapping):
            return wrong(say("type", described=described, kind=type(answer).__name__))
        unknown = [key for key in answer if key not in Q11_PARTS]
        if unknown:
            return wrong(f"Unknown key(s) {unknown}: the keys are {list(Q11_PARTS)}.")
        given = {k: answer[k] for k in Q11_PARTS if k in answer and answer[k] is not Ellipsis}
        missing = [k for k in Q11_PARTS if k not in given]
        if not given:
            return not_answered(say("labels.missing", labels=", ".join(missing)))
        truth = {k: v for k, v in _q11_truth().items() if k in given}
        graded = grade_labels(truth, given, _q11_hints(given), same=_close)
        if graded is not None:
            later = [say("labels.missing", labels=", ".join(missing))] if missing else []
            return wrong(graded.message, (*graded.details, *later))
        if missing:
            return not_answered(
                f"{say('labels.missing', labels=', '.join(missing))} Right so far: "
                f"{', '.join(given)}."
            )
        t = _q11_truth()
        hits = _q11_hits()
        above = sum(hit.score_breakdown.total > t["total"] for hit in hits)
        if above < len(hits):
            where = f"Among q-11's {len(hits)} hits, the note would rank {above + 1}."
        else:
            records, query, _, as_of = _q11()
            candidates = build_recall_candidates(query, records).candidates
            higher = sum(
                score_recall_candidate(query, c, as_of=as_of).total > t["total"] for c in candidates
            )
            where = (
                f"{higher} of q-11's {len(candidates)} candidates score higher, so the note "
                f"would not be among its {len(hits)} hits (the last of them scores "
                f"{hits[-1].score_breakdown.total:.6f})."
            )
        return right(
            f"Right: {len(t['matched_terms'])} of {len(_q11()[1].terms)} terms "
            f"({', '.join(t['matched_terms'])}), "
            f"coverage {t['lexical_coverage']:.6f}, {t['age_days']:.6f} days old, "
            f"recency {t['recency']:.6f}; {DEFAULT_LEXICAL_WEIGHT:g} × "
            f"{t['lexical_coverage']:.6f} + {DEFAULT_RECENCY_WEIGHT:g} × {t['recency']:.6f} = "
            f"{t['total']:.6f}. {where}"
        )

    return check_value(answer, judge, placeholder="a dict of the seven parts (see the comment)")
