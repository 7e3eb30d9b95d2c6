"""The check of notebook 10's "Your turn" (beyond the teaching ranker), on the exercise engine.

``check_my_score(my_score)``: the student writes **idf-weighted coverage**, a scoring
function with ``score_recall_candidate``'s signature and breakdown contract whose lexical
part weighs each matched term by its idf. ``MY_SCORE`` checks it against a reference on
worked examples from the course corpus (Mei's history), then on generated candidates
(every course user, other clocks and policies), and names the first field that breaks the
contract, with a hint from its catalogue of typical mistakes (plain coverage renamed, the
idf share put in ``lexical_coverage``, divided by the number of terms, the chapter's
policy or window instead of the one given, contributions left unweighted, ...).

The checker lives here, not in the notebook, so no accepted answer is on screen before the
attempt; the notebook's own code (rankings, idf, the benchmark tables, the paired test) is
in its cells.
"""

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
from memorylib.candidates import CandidateSet, record_term_counts, retracted_ids
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

MEI = COURSE_USERS[0]


def _searched(user: str) -> tuple:
    """The records recall searches: conversations that no retraction hides."""
    records = course_records(user)
    hidden = retracted_ids(records)
    return tuple(
        r for r in records if r.kind is MemoryKind.CONVERSATION and r.memory_id not in hidden
    )


# -- the reference and its typical wrong variants ------------------------------------------


def _idf_scorer(
    *,
    name: str = "idf_coverage",
    lexical: str = "idf",
    coverage: str = "share",
    policy_used: bool = True,
    policy_reported: bool = True,
    window_used: bool = True,
    weighted: bool = True,
) -> Callable[..., RecallScoreBreakdown]:
    """The exercise's answer (idf-weighted coverage plus the policy's recency), or, with
    one keyword changed, a typical wrong one (each keyword names the rule it breaks)."""

    def score(query, candidate, *, as_of, policy, corpus) -> RecallScoreBreakdown:
        weight = {term: idf(term, corpus) for term in query.terms}
        matched = sum(weight[t] for t in candidate.matched_terms)
        share = len(candidate.matched_terms) / len(query.terms)
        lexical_score = {
            "idf": matched / sum(weight.values()),
            "coverage": share,
            "matched": matched,
            "per_term": matched / len(query.terms),
        }[lexical]
        chapter = ScoringPolicy()
        used = policy if policy_used else chapter
        window = used.recency_window_days if window_used else chapter.recency_window_days
        recency = recency_score(age_in_days(candidate.captured_at, as_of), window)
        lexical_part = used.lexical_weight * lexical_score if weighted else lexical_score
        recency_part = used.recency_weight * recency if weighted else recency
        reported = used if policy_reported else chapter
        return RecallScoreBreakdown(
            matched_terms=candidate.matched_terms,
            query_term_count=len(query.terms),
            lexical_coverage=round(lexical_score if coverage == "idf" else share, 6),
            recency=round(recency, 6),
            lexical_contribution=round(lexical_part, 6),
            recency_contribution=round(recency_part, 6),
            total=round(lexical_part + recency_part, 6),
            lexical_weight=reported.lexical_weight,
            recency_weight=reported.recency_weight,
            recency_window_days=reported.recency_window_days,
            scorer=name,
            lexical_score=round(lexical_score, 6),
        )

    return score


BREAKDOWN_FIELDS = (  # what the check compares, in this order
    "scorer",
    "matched_terms",
    "query_term_count",
    "lexical_coverage",
    "lexical_score",
    "recency",
    "lexical_weight",
    "recency_weight",
    "recency_window_days",
    "lexical_contribution",
    "recency_contribution",
    "total",
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
    return ", ".join(
        f"{name} {fields[name]!r}" for name in BREAKDOWN_FIELDS if name != "matched_terms"
    )


@functools.cache
def _words(user: str) -> st.SearchStrategy[list[str]]:
    """1-3 distinct words of ``user``'s searched records (so there are candidates)."""
    vocabulary = sorted({t for r in _searched(user) for t in record_term_counts(r)})
    return st.lists(st.sampled_from(vocabulary), min_size=1, max_size=3, unique=True)


@functools.cache
def _found(text: str, user: str, as_of: str) -> CandidateSet:
    query = normalize_recall_query(
        text, user_scope=user_scope_for(user), limit=10, query_id="q-10-check", issued_at=as_of
    )
    return build_recall_candidates(query, course_records(user))


def _case(text: str, user: str, as_of: str, memory_id: str, policy: ScoringPolicy) -> Call:
    found = _found(text, user, as_of)
    query = normalize_recall_query(
        text, user_scope=user_scope_for(user), limit=10, query_id="q-10-check", issued_at=as_of
    )
    (candidate,) = [c for c in found.candidates if c.record.memory_id == memory_id]
    moment = parse_timestamp(as_of, "as_of")
    return Call(query, candidate, as_of=moment, policy=policy, corpus=found.corpus)


_POLICIES = st.sampled_from(
    (ScoringPolicy(), ScoringPolicy(0.7, 0.3, 14.0), ScoringPolicy(0.5, 0.5, 90.0))
)
_CLOCKS = st.sampled_from((COURSE_AS_OF, "2026-06-01T00:00:00Z", "2026-03-15T12:30:00Z"))


@st.composite
def _calls(draw: st.DrawFn) -> Call:
    """Words of a user's own records (so there are candidates) and "the", another clock
    and policy than the chapter's, one of the candidates."""
    user = draw(st.sampled_from(COURSE_USERS))
    text, as_of = " ".join([*draw(_words(user)), "the"]), draw(_CLOCKS)
    found = _found(text, user, as_of)
    memory_id = draw(st.sampled_from([c.record.memory_id for c in found.candidates]))
    return _case(text, user, as_of, memory_id, draw(_POLICIES))


def _show_call(name: str, call: Call) -> str:
    query, candidate = call.args
    policy = call.kwargs["policy"]
    return (
        f"{name}(query, candidate, as_of, policy, corpus) with query {query.text!r} (terms "
        f"{', '.join(query.terms)}) on {candidate.record.memory_id} (matching "
        f"{', '.join(candidate.matched_terms)}), as_of {call.kwargs['as_of']:%Y-%m-%d %H:%M}, "
        f"policy {policy.lexical_weight:g} / {policy.recency_weight:g}, "
        f"{policy.recency_window_days:g} days"
    )


MY_SCORE = FunctionExercise(
    function="my_score",
    reference=_idf_scorer(),
    examples=(
        Named(
            "Mei's 'the bigram' on mei-conv-060",
            _case("the bigram", MEI, COURSE_AS_OF, "mei-conv-060", ScoringPolicy()),
        ),
        Named(
            "Mei's 'the bigram' on mei-conv-069",
            _case("the bigram", MEI, COURSE_AS_OF, "mei-conv-069", ScoringPolicy()),
        ),
        Named(
            "Mei's Chinese 上下文预算 on mei-conv-016",
            _case("上下文预算", MEI, COURSE_AS_OF, "mei-conv-016", ScoringPolicy()),
        ),
    ),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    mistakes=(
        Mistake(
            "the scorer is not named",
            "Name your scorer: scorer='idf_coverage' (the default, 'coverage', claims to be "
            "the chapter's scorer).",
            _idf_scorer(name="coverage"),
        ),
        Mistake(
            "lexical_coverage holds the idf share",
            "lexical_coverage stays the chapter's share of matched terms (the stable rank's "
            "second key); put your idf share in lexical_score.",
            _idf_scorer(coverage="idf"),
        ),
        Mistake(
            "plain coverage",
            "That is plain coverage: every term weighs the same. Weigh each term by "
            "idf(term, corpus).",
            _idf_scorer(lexical="coverage"),
        ),
        Mistake(
            "the matched idf not divided",
            "Divide the matched terms' idf by the idf of all query terms (a 0..1 share).",
            _idf_scorer(lexical="matched"),
        ),
        Mistake(
            "divided by the number of terms",
            "Divide by the query terms' total idf, not by their number: a rare term must count "
            "more than 'the'.",
            _idf_scorer(lexical="per_term"),
        ),
        Mistake(
            "the chapter's policy, not this one",
            "Use the policy you are given (policy.lexical_weight, policy.recency_weight, "
            "policy.recency_window_days), not the chapter's 0.85 / 0.15 and 30 days.",
            _idf_scorer(policy_used=False),
        ),
        Mistake(
            "a 30-day window",
            "recency = recency_score(age_in_days(candidate.captured_at, as_of), "
            "policy.recency_window_days): the policy's window, not 30.",
            _idf_scorer(window_used=False),
        ),
        Mistake(
            "the policy not reported",
            "Report the weights and window you used: lexical_weight=policy.lexical_weight, "
            "recency_weight=policy.recency_weight, recency_window_days=policy.recency_window_days.",
            _idf_scorer(policy_reported=False),
        ),
        Mistake(
            "contributions not weighted",
            "lexical_contribution = policy.lexical_weight × lexical_score and recency_contribution "
            "= policy.recency_weight × recency; the total is their sum.",
            _idf_scorer(weighted=False),
        ),
    ),
    generated=40,  # each case runs the candidate stage over a user's records
)


def check_my_score(answer: object) -> CheckResult:
    """Build-it check: ``answer(query, candidate, *, as_of, policy, corpus)`` must return
    the idf_coverage breakdown on the named candidates and on generated ones (other users,
    clocks and policies)."""
    return check_value(
        answer,
        lambda function: check_function(MY_SCORE, function),
        placeholder="a scoring function (fill in the body of my_score)",
    )
