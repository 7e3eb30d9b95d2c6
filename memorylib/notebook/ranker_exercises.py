"""Notebook 10's "Your turn" check, ``check_my_score``: the student's idf-weighted coverage
against a reference, on worked examples from Mei's history and on generated candidates (every
course user, other clocks and policies), each typical mistake named with its hint."""

from __future__ import annotations

import functools
from collections.abc import Callable

from hypothesis import strategies as st

from memorylib import (
    RecallScoreBreakdown,
    ScoringPolicy,
    build_recall_candidates,
    normalize_recall_query,
    recency_score,
    user_scope_for,
)
from memorylib.candidates import record_term_counts, retracted_ids
from memorylib.datasets import COURSE_AS_OF, COURSE_USERS, course_records
from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Malformed,
    Mistake,
    Named,
    check_function,
    check_value,
)
from memorylib.records import MemoryKind
from memorylib.scoring import idf
from memorylib.timestamps import age_in_days, parse_timestamp

__all__ = ["BREAKDOWN_FIELDS", "MY_SCORE", "check_my_score"]

CHAPTER = ScoringPolicy()


def _idf_scorer(name="idf_coverage", lexical="idf", **broken: bool) -> Callable[..., object]:
    """The answer (idf-weighted coverage plus the policy's recency), or a typical wrong one:
    ``name`` or ``lexical`` changed, or one rule of ``broken`` set False."""
    rule = {"share": True, "policy": True, "window": True, "reported": True, "weighted": True}
    rule |= broken

    def score(query, candidate, *, as_of, policy, corpus) -> RecallScoreBreakdown:
        weight = {term: idf(term, corpus) for term in query.terms}
        matched = sum(weight[t] for t in candidate.matched_terms)
        share = len(candidate.matched_terms) / len(query.terms)
        per = {"idf": sum(weight.values()), "matched": 1, "per_term": len(query.terms)}
        lexical_score = share if lexical == "coverage" else matched / per[lexical]
        used = policy if rule["policy"] else CHAPTER
        window = (used if rule["window"] else CHAPTER).recency_window_days
        recency = recency_score(age_in_days(candidate.captured_at, as_of), window)
        lexical_part = used.lexical_weight * lexical_score if rule["weighted"] else lexical_score
        recency_part = used.recency_weight * recency if rule["weighted"] else recency
        told = used if rule["reported"] else CHAPTER
        return RecallScoreBreakdown(
            matched_terms=candidate.matched_terms,
            query_term_count=len(query.terms),
            lexical_coverage=round(share if rule["share"] else lexical_score, 6),
            recency=round(recency, 6),
            lexical_contribution=round(lexical_part, 6),
            recency_contribution=round(recency_part, 6),
            total=round(lexical_part + recency_part, 6),
            lexical_weight=told.lexical_weight,
            recency_weight=told.recency_weight,
            recency_window_days=told.recency_window_days,
            scorer=name,
            lexical_score=round(lexical_score, 6),
        )

    return score


BREAKDOWN_FIELDS = (  # what the check compares, in this order
    *("scorer", "matched_terms", "query_term_count", "lexical_coverage", "lexical_score"),
    *("recency", "lexical_weight", "recency_weight", "recency_window_days"),
    *("lexical_contribution", "recency_contribution", "total"),
)


def _read(result: object, call: Call) -> dict[str, object]:
    if not isinstance(result, RecallScoreBreakdown):
        raise Malformed(
            f"return a RecallScoreBreakdown, not {type(result).__name__}: the ranking stage "
            "reads its total, coverage and the rest"
        )
    if result.lexical_score is None:
        raise Malformed(
            "lexical_score is None: set it to the idf-weighted share you computed (it is what "
            "lexical_contribution weighs)"
        )
    fields = {name: getattr(result, name) for name in BREAKDOWN_FIELDS}
    for name, value in fields.items():
        if isinstance(value, float) and round(value, 6) != value:
            raise Malformed(f"{name} {value!r} is not rounded: round every float to 6 places")
    return fields


def _show(fields: dict[str, object]) -> str:
    return ", ".join(f"{k} {v!r}" for k, v in fields.items() if k != "matched_terms")


@functools.cache
def _found(text: str, user: str, as_of: str) -> tuple:
    """The query and its candidate set, on ``user``'s course records at ``as_of``."""
    query = normalize_recall_query(
        text, user_scope=user_scope_for(user), limit=10, query_id="q-10-check", issued_at=as_of
    )
    return query, build_recall_candidates(query, course_records(user))


def _call(text: str, user: str, as_of: str, memory_id: str, policy=CHAPTER) -> Call:
    query, found = _found(text, user, as_of)
    (candidate,) = [c for c in found.candidates if c.record.memory_id == memory_id]
    at = parse_timestamp(as_of, "as_of")
    return Call(query, candidate, as_of=at, policy=policy, corpus=found.corpus)


@functools.cache
def _words(user: str) -> st.SearchStrategy[list[str]]:
    """1-3 distinct words of the conversations no retraction hides (so there are candidates)."""
    records = course_records(user)
    hidden = retracted_ids(records)
    searched = [r for r in records if r.kind is MemoryKind.CONVERSATION]
    vocabulary = {t for r in searched if r.memory_id not in hidden for t in record_term_counts(r)}
    return st.lists(st.sampled_from(sorted(vocabulary)), min_size=1, max_size=3, unique=True)


@st.composite
def _calls(draw: st.DrawFn) -> Call:
    """A user's own words and "the", another clock and policy, one of the candidates."""
    user = draw(st.sampled_from(COURSE_USERS))
    text = " ".join([*draw(_words(user)), "the"])
    as_of = draw(st.sampled_from((COURSE_AS_OF, "2026-06-01T00:00:00Z", "2026-03-15T12:30:00Z")))
    found = _found(text, user, as_of)[1]
    memory_id = draw(st.sampled_from([c.record.memory_id for c in found.candidates]))
    policies = (CHAPTER, ScoringPolicy(0.7, 0.3, 14.0), ScoringPolicy(0.5, 0.5, 90.0))
    return _call(text, user, as_of, memory_id, draw(st.sampled_from(policies)))


def _show_call(name: str, call: Call) -> str:
    (query, candidate), policy = call.args, call.kwargs["policy"]
    return (
        f"{name}(query, candidate, as_of, policy, corpus) with query {query.text!r} (terms "
        f"{', '.join(query.terms)}) on {candidate.record.memory_id} (matching "
        f"{', '.join(candidate.matched_terms)}), as_of {call.kwargs['as_of']:%Y-%m-%d %H:%M}, "
        f"policy {policy.lexical_weight:g} / {policy.recency_weight:g}, "
        f"{policy.recency_window_days:g} days"
    )


def _mei(text: str, memory_id: str) -> Named:
    name = f"Mei's {text!r}" if text.isascii() else f"Mei's Chinese {text}"
    return Named(f"{name} on {memory_id}", _call(text, COURSE_USERS[0], COURSE_AS_OF, memory_id))


# The catalogue: each typical mistake, the keywords that make _idf_scorer commit it, its hint.
_VARIANTS = {
    "the scorer is not named": {"name": "coverage"},
    "lexical_coverage holds the idf share": {"share": False},
    "plain coverage": {"lexical": "coverage"},
    "the matched idf not divided": {"lexical": "matched"},
    "divided by the number of terms": {"lexical": "per_term"},
    "the chapter's policy, not this one": {"policy": False},
    "a 30-day window": {"window": False},
    "the policy not reported": {"reported": False},
    "contributions not weighted": {"weighted": False},
}
_HINTS = {
    "the scorer is not named": "Name your scorer: scorer='idf_coverage' (the default, "
    "'coverage', claims to be the chapter's scorer).",
    "lexical_coverage holds the idf share": "lexical_coverage stays the chapter's share of "
    "matched terms (the stable rank's second key); put your idf share in lexical_score.",
    "plain coverage": "That is plain coverage: every term weighs the same. Weigh each term by "
    "idf(term, corpus).",
    "the matched idf not divided": "Divide the matched terms' idf by the idf of all query "
    "terms (a 0..1 share).",
    "divided by the number of terms": "Divide by the query terms' total idf, not by their "
    "number: a rare term must count more than 'the'.",
    "the chapter's policy, not this one": "Use the policy you are given (policy.lexical_weight, "
    "policy.recency_weight, policy.recency_window_days), not the chapter's 0.85 / 0.15 and 30 "
    "days.",
    "a 30-day window": "recency = recency_score(age_in_days(candidate.captured_at, as_of), "
    "policy.recency_window_days): the policy's window, not 30.",
    "the policy not reported": "Report the weights and window you used: "
    "lexical_weight=policy.lexical_weight, recency_weight=policy.recency_weight, "
    "recency_window_days=policy.recency_window_days.",
    "contributions not weighted": "lexical_contribution = policy.lexical_weight × "
    "lexical_score and recency_contribution = policy.recency_weight × recency; the total is "
    "their sum.",
}

MY_SCORE = FunctionExercise(
    function="my_score",
    reference=_idf_scorer(),
    examples=(
        _mei("the bigram", "mei-conv-060"),
        _mei("the bigram", "mei-conv-069"),
        _mei("上下文预算", "mei-conv-016"),
    ),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    mistakes=tuple(Mistake(n, hint, _idf_scorer(**_VARIANTS[n])) for n, hint in _HINTS.items()),
    generated=40,  # each case runs the candidate stage over a user's records
)


def check_my_score(answer: object) -> CheckResult:
    """Build-it check: ``answer(query, candidate, *, as_of, policy, corpus)`` must return
    the idf_coverage breakdown on the named candidates and on generated ones."""
    return check_value(
        answer,
        lambda function: check_function(MY_SCORE, function),
        placeholder="a scoring function (fill in the body of my_score)",
    )
