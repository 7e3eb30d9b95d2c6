"""Stage 3 exercises (notebook 04): the build-it ``score_recall_candidate``, and the
"Your turn" check of q-11's total (``check_q11_total``).

The build-it is checked against ``memorylib.scoring`` with its default policy (the
chapter's weights 0.85 / 0.15, with the contract's coverage = matched / query terms and
its recency 1 / (1 + age / 30)) on the seven fields the chapter defines. Floats must be
rounded to 6 places, and are compared within the engine's ``TOLERANCE`` (adding two
rounded contributions is as right as rounding their sum).

Generated candidates match 1..n of n query terms (n up to 7) and were captured from 400
days before ``as_of`` to 3 days after it, at whole and fractional days, and stored some
days after they were captured (so ``stored_at`` is never mistaken for the age).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from memorylib.candidates import build_recall_candidates
from memorylib.datasets import course_records, load_labelled_queries
from memorylib.errors import RemoteMemoryValidationError
from memorylib.notebook.buildit.fixtures import (
    CHAPTER_QUERY,
    RecordSpec,
    build_records,
    chapter_records,
    make_query,
)
from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Malformed,
    Mistake,
    Named,
    check_value,
    expect_number,
    right,
    same,
    wrong,
)
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query
from memorylib.records import RecallCandidate, RecallQuery, RecallScoreBreakdown, StoredMemory
from memorylib.scoring import score_recall_candidate
from memorylib.seed import TEACHING_AS_OF
from memorylib.timestamps import SECONDS_PER_DAY, age_in_days, parse_timestamp

__all__ = [
    "FIELDS",
    "Q11_RECORD",
    "SCORE_RECALL_CANDIDATE",
    "chapter_breakdown_fields",
    "check_q11_total",
    "q11_inputs",
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
        if round(value, 6) != value:
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


# -- notebook 04's "Your turn": q-11's total for mei-conv-056, by hand ---------------------------

Q11 = "q-11"  # labelled "stopword_noise": the record a person wants misses the top 5
Q11_RECORD = "mei-conv-056"


@functools.cache
def _q11() -> tuple[tuple[StoredMemory, ...], RecallQuery, RecallCandidate, str]:
    (labelled,) = [q for q in load_labelled_queries() if q.query_id == Q11]
    records = course_records(labelled.user_id)
    query = normalize_recall_query(
        labelled.text,
        user_scope=records[0].user_scope,
        query_id=labelled.query_id,
        issued_at=labelled.as_of,
    )
    candidates = build_recall_candidates(query, records).candidates
    (candidate,) = [c for c in candidates if c.record.memory_id == Q11_RECORD]
    return records, query, candidate, labelled.as_of


def q11_inputs() -> tuple[RecallQuery, RecallCandidate, str]:
    """q-11's query (its own query_id and as_of), mei-conv-056's candidate, and the as_of."""
    _, query, candidate, as_of = _q11()
    return query, candidate, as_of


def _q11_mistakes() -> tuple[tuple[float, str], ...]:
    """(the total a typical mistake gives, its hint)."""
    records, query, candidate, as_of = _q11()
    b = score_recall_candidate(query, candidate, as_of=as_of)
    age = age_in_days(candidate.captured_at, parse_timestamp(as_of, "as_of"))
    matched, terms = len(candidate.matched_terms), len(query.terms)
    w_lex, w_rec, window = b.lexical_weight, b.recency_weight, b.recency_window_days

    def total(coverage: float = matched / terms, recency: float = b.recency) -> float:
        return w_lex * coverage + w_rec * recency

    uncounted = (
        "not every query term was counted: 'what', 'is', 'the' and 'of' are terms too, and "
        "coverage = the matched terms / all the query's terms."
    )
    fifth = recall_pipeline(query, records, as_of=as_of).hits[-1]
    return (
        (b.lexical_contribution, "that is only the lexical contribution: add the recency part."),
        (b.recency_contribution, "that is only the recency contribution: add the lexical part."),
        (b.lexical_coverage, "that is the coverage: weight it and add the recency part."),
        (b.recency, "that is the recency: weight both parts and add them."),
        (
            w_rec * b.lexical_coverage + w_lex * b.recency,
            "the weights are swapped: lexical takes 0.85, recency 0.15.",
        ),
        (b.lexical_coverage + b.recency, "weight the parts: 0.85 × coverage + 0.15 × recency."),
        (total(recency=1.0), "recency is not 1: it decays with age as 1 / (1 + age_days / 30)."),
        *(
            (total(coverage=matched / counted), uncounted)
            for counted in range(matched, terms)  # 3/3 .. 3/6: some terms not counted
        ),
        (
            total(recency=1 / (1 + math.floor(age) / window)),
            "age_days has a fraction: (as_of - captured_at).total_seconds() / 86400, not whole "
            "days (.days drops the hours).",
        ),
        (
            total(recency=math.exp(-age / window)),
            "recency is not exp(-age_days / 30): it is 1 / (1 + age_days / 30).",
        ),
        (
            total(recency=0.5 ** (age / window)),
            "recency does not halve every 30 days: it is 1 / (1 + age_days / 30).",
        ),
        (
            total(recency=1 / (1 + age)),
            "divide the age by the 30-day window: recency = 1 / (1 + age_days / 30).",
        ),
        (
            fifth.score_breakdown.total,
            f"that is the total of the fifth hit, {fifth.memory_id}: compute {Q11_RECORD}'s own.",
        ),
    )


def check_q11_total(answer: object) -> CheckResult:
    """Notebook 04's "Your turn": is ``answer`` mei-conv-056's total for q-11 (within the
    engine's ``TOLERANCE``)? Right, wrong with the hint of the mistake the number matches
    (a part of the formula, swapped weights, a term not counted, whole days, another
    curve, the fifth hit's total), or not answered yet for the ``...`` placeholder."""
    query, candidate, as_of = q11_inputs()
    b = score_recall_candidate(query, candidate, as_of=as_of)

    def judge(answer: object) -> CheckResult:
        value = expect_number(answer)
        if same(b.total, value):
            return right(
                f"Right: {b.lexical_weight:g} × {b.lexical_coverage:.6f} + "
                f"{b.recency_weight:g} × {b.recency:.6f} = {b.total:.6f}."
            )
        for mistaken, hint in _q11_mistakes():
            if same(round(mistaken, 6), round(value, 6)):
                return wrong(f"Not quite: {hint}")
        return wrong(
            "Not quite. coverage = matched / query terms; recency = 1 / (1 + age_days / 30); "
            "total = 0.85 × coverage + 0.15 × recency."
        )

    return check_value(answer, judge, placeholder="your total (a float)")
