"""Notebook 10's "Your turn" check, ``check_my_score``: idf-weighted coverage, off screen."""

import functools
from collections.abc import Callable

from hypothesis import strategies as st

from memorylib.candidates import build_recall_candidates, record_term_counts, retracted_ids
from memorylib.datasets import COURSE_AS_OF, COURSE_USERS, course_records
from memorylib.interface import user_scope_for
from memorylib.notebook import exercises as ex
from memorylib.notebook.messages import say
from memorylib.query import normalize_recall_query
from memorylib.records import MemoryKind, RecallScoreBreakdown
from memorylib.scoring import ScoringPolicy, evidence, idf, recency_score
from memorylib.timestamps import age_in_days, parse_timestamp

CHAPTER = ScoringPolicy()
BREAKDOWN_FIELDS = (  # what the check compares, in this order
    *("scorer", "matched_terms", "query_term_count", "lexical_coverage", "lexical_score"),
    *("recency", "lexical_weight", "recency_weight", "recency_window_days"),
    *("lexical_contribution", "recency_contribution", "total"),
)
_MISTAKES = (  # catalogue order; each key's name and hint are mistake.<key> and .<key>.hint
    *("unnamed", "share", "plain", "undivided", "per_term", "chapter"),
    *("window", "unreported", "unweighted"),
)


def _idf_scorer(mistake: str = "") -> Callable[..., RecallScoreBreakdown]:
    """The answer (idf-weighted coverage plus the policy's recency), or a typical wrong one."""

    def score(query, candidate, *, as_of, policy, corpus) -> RecallScoreBreakdown:
        weight = {term: idf(term, corpus) for term in query.terms}
        matched = sum(weight[t] for t in candidate.matched_terms)
        share = len(candidate.matched_terms) / len(query.terms)
        per = {"undivided": 1, "per_term": len(query.terms)}.get(mistake, sum(weight.values()))
        lexical_score = share if mistake == "plain" else matched / per
        used = CHAPTER if mistake == "chapter" else policy
        window = (CHAPTER if mistake == "window" else used).recency_window_days
        recency = recency_score(age_in_days(candidate.captured_at, as_of), window)
        weights = (1, 1) if mistake == "unweighted" else (used.lexical_weight, used.recency_weight)
        lexical_part, recency_part = weights[0] * lexical_score, weights[1] * recency
        told = CHAPTER if mistake == "unreported" else used
        return RecallScoreBreakdown(
            matched_terms=candidate.matched_terms,
            query_term_count=len(query.terms),
            lexical_coverage=round(lexical_score if mistake == "share" else share, 6),
            recency=round(recency, 6),
            lexical_contribution=round(lexical_part, 6),
            recency_contribution=round(recency_part, 6),
            total=round(lexical_part + recency_part, 6),
            lexical_weight=told.lexical_weight,
            recency_weight=told.recency_weight,
            recency_window_days=told.recency_window_days,
            scorer="coverage" if mistake == "unnamed" else "idf_coverage",
            lexical_score=round(lexical_score, 6),
        )

    return score


def _read(result: object, call: ex.Call) -> dict[str, object]:  # the fields, rounded
    if not isinstance(result, RecallScoreBreakdown):
        raise ex.Malformed(say("ranker_exercises.not_a_breakdown", kind=type(result).__name__))
    if result.lexical_score is None:
        raise ex.Malformed(say("ranker_exercises.no_lexical_score"))
    fields = {name: getattr(result, name) for name in BREAKDOWN_FIELDS}
    for name, value in fields.items():
        if isinstance(value, float) and round(value, 6) != value:
            raise ex.Malformed(say("ranker_exercises.unrounded", name=name, value=value))
    return fields


@functools.cache  # the query and its candidate set, on user's course records at as_of
def _found(text: str, user: str, as_of: str) -> tuple:
    scope, qid = user_scope_for(user), "q-10-check"
    query = normalize_recall_query(text, user_scope=scope, limit=10, query_id=qid, issued_at=as_of)
    return query, build_recall_candidates(query, course_records(user))


def _call(text: str, user: str, as_of: str, memory_id: str, policy=CHAPTER) -> ex.Call:
    query, found = _found(text, user, as_of)
    (candidate,) = [c for c in found.candidates if c.record.memory_id == memory_id]
    at = parse_timestamp(as_of, "as_of")
    return ex.Call(query, candidate, as_of=at, policy=policy, corpus=found.corpus)


@functools.cache  # 1-3 distinct words of the conversations no retraction hides: candidates
def _words(user: str) -> st.SearchStrategy[list[str]]:
    records = course_records(user)
    hidden = retracted_ids(records)
    kept = [r for r in records if r.kind is MemoryKind.CONVERSATION and r.memory_id not in hidden]
    vocabulary = sorted({t for r in kept for t in record_term_counts(r)})
    return st.lists(st.sampled_from(vocabulary), min_size=1, max_size=3, unique=True)


@st.composite
def _calls(draw: st.DrawFn) -> ex.Call:
    """A user's own words and "the", another clock and policy, one of the candidates."""
    user = draw(st.sampled_from(COURSE_USERS))
    text = " ".join([*draw(_words(user)), "the"])
    as_of = draw(st.sampled_from((COURSE_AS_OF, "2026-06-01T00:00:00Z", "2026-03-15T12:30:00Z")))
    found = _found(text, user, as_of)[1].candidates
    memory_id = draw(st.sampled_from([c.record.memory_id for c in found]))
    policies = (CHAPTER, ScoringPolicy(0.7, 0.3, 14.0), ScoringPolicy(0.5, 0.5, 90.0))
    return _call(text, user, as_of, memory_id, draw(st.sampled_from(policies)))


def _show_call(name: str, call: ex.Call) -> str:
    (query, candidate), join = call.args, ", ".join
    words = {"terms": join(query.terms), "matched": join(candidate.matched_terms)}
    return say("ranker_exercises.call", name=name, q=query, c=candidate, **words, **call.kwargs)


def _mei(text: str, memory_id: str) -> tuple[str, ex.Call]:
    name = say(f"ranker_exercises.mei.{'en' if text.isascii() else 'zh'}", text=text, id=memory_id)
    return name, _call(text, COURSE_USERS[0], COURSE_AS_OF, memory_id)


MY_SCORE = ex.FunctionExercise(
    function="my_score",
    reference=_idf_scorer(),
    examples=dict(
        [
            _mei("the bigram", "mei-conv-060"),
            _mei("the bigram", "mei-conv-069"),
            _mei("上下文预算", "mei-conv-016"),
        ]
    ),
    cases=_calls(),
    read=_read,
    show=lambda fields: ", ".join(f"{k} {v!r}" for k, v in fields.items() if k != "matched_terms"),
    show_call=_show_call,
    mistakes=ex.mistakes("ranker_exercises.mistake", {k: _idf_scorer(k) for k in _MISTAKES}),
    refuses=(evidence,),  # the library's idf share: calling it is no answer
    generated=40,  # each case runs the candidate stage over a user's records
)


def check_my_score(answer: object) -> ex.CheckResult:
    """Right when ``answer`` returns the idf_coverage breakdown on the named and generated calls."""
    judge = functools.partial(ex.check_function, MY_SCORE)
    return ex.check_value(answer, judge, placeholder=say("ranker_exercises.placeholder"))
