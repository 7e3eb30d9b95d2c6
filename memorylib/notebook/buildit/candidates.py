"""Stage 2 exercises (notebook 03): the build-it ``build_recall_candidates``, and the
"Your turn" checks ``check_quiet_query`` (and its optional stretch ``check_cache_query``).

Checked against ``memorylib.candidates`` on what the chapter's contract fixes: which
records are candidates and in what order, the stored record itself (not a copy), the
searchable and matched terms, ``captured_at`` as a datetime, ``searched_records`` and
``retracted_records``. (The counts the BM25 scorers need, ``term_frequencies``,
``length`` and ``corpus``, are beyond the chapter and not checked.)

Generated stores hold a few conversations, profiles and retractions whose text uses the
query's words in other cases, in fullwidth, with punctuation, as parts of longer words
("memorylib") and in Chinese, so normalizing, term matching and the kinds all matter.

"Your turn" asks for a rewrite of ``QUIET_QUESTION`` (a question the notebook never runs)
that keeps ``QUIET_TARGET`` a candidate among at most ``QUIET_MAX_CANDIDATES`` in Mei's
store, with at least two of its terms in the target: one lucky word is not a rewrite. The
optional stretch asks the same of ``CACHE_TARGET`` in Chinese, counting only the shared
terms that are words of that record (``CACHE_WORDS``): a bigram that straddles two words
(件一 in 文件一追加) is rare by accident, not a word someone would ask with.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from memorylib.candidates import CandidateSet, build_recall_candidates
from memorylib.datasets import COURSE_AS_OF, COURSE_USERS, course_records
from memorylib.errors import RemoteMemoryError, RemoteMemoryScopeError
from memorylib.interface import user_scope_for
from memorylib.notebook.buildit.fixtures import (
    CHAPTER_QUERY,
    RecordSpec,
    build_records,
    chapter_records,
    make_query,
    memory_ids,
    show_records,
    words,
)
from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Malformed,
    Mistake,
    Named,
    check_value,
    right,
    wrong,
)
from memorylib.query import extract_terms, normalize_recall_query, normalize_text
from memorylib.records import MemoryKind, RecallCandidate, RecallQuery, StoredMemory
from memorylib.timestamps import parse_timestamp

__all__ = [
    "BUILD_RECALL_CANDIDATES",
    "CACHE_TARGET",
    "CACHE_WORDS",
    "QUIET_QUESTION",
    "QUIET_TARGET",
    "check_cache_query",
    "check_quiet_query",
]

# Query words, and the record words that test them (plain ones first: hypothesis shrinks
# towards them): other case, fullwidth, punctuation, longer words that contain them, Chinese.
QUERY_WORDS = ("memory", "cache", "recall", "layered", "记忆")
RECORD_WORDS = (
    "memory",
    "note",
    "cache",
    "design",
    "recall",
    "layered",
    "Memory",
    "CACHE",
    "ｍｅｍｏｒｙ",
    "memory,",
    "(cache)",
    "memorylib",
    "caches",
    "recalled",
    "分层记忆",
    "记",
)


# built once: a strategy made inside a draw is validated again on every draw
_KINDS = st.sampled_from(("conversation", "profile", "retraction"))
_TEXT = words(RECORD_WORDS)
_AGES = st.sampled_from((1.0, 2.0, 40.0))
_QUERIES = st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=3, unique=True)
_IDS = memory_ids(9)
_SIZES = st.integers(0, 5)


@st.composite
def _calls(draw: st.DrawFn) -> Call:
    """A query of 1-3 words over 0-5 records: conversations, profiles and retractions."""
    specs: list[RecordSpec] = []
    for memory_id in draw(_IDS)[: draw(_SIZES)]:
        kind = draw(_KINDS)
        conversations = [s.memory_id for s in specs if s.kind == "conversation"]
        if kind == "retraction" and conversations:
            specs.append(RecordSpec(memory_id, kind, retracts=draw(st.sampled_from(conversations))))
            continue
        kind = "profile" if kind == "profile" else "conversation"
        specs.append(
            RecordSpec(memory_id, kind, draw(_TEXT), draw(_TEXT), captured_days_before=draw(_AGES))
        )
    query = " ".join(draw(_QUERIES))
    return Call(make_query(query), build_records(tuple(specs)))


# -- comparing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    memory_id: str
    query_id: str
    holds_the_record: bool
    searchable_terms: tuple[str, ...]
    matched_terms: tuple[str, ...]
    captured_at: datetime


@dataclass(frozen=True)
class _Found:
    query_id: str
    searched_records: int
    retracted_records: int
    candidates: tuple[_Candidate, ...]


def _read(result: Any, call: Call) -> _Found:
    if not isinstance(result, CandidateSet):
        raise Malformed(
            "build_recall_candidates must return a CandidateSet(query_id, candidates, "
            f"searched_records, retracted_records), not {type(result).__name__}"
        )
    if not isinstance(result.candidates, tuple):
        raise Malformed("CandidateSet.candidates must be a tuple of RecallCandidate")
    found = []
    for candidate in result.candidates:
        if not isinstance(candidate, RecallCandidate):
            raise Malformed(
                f"every candidate must be a RecallCandidate, not {type(candidate).__name__}"
            )
        if not isinstance(candidate.captured_at, datetime):
            raise Malformed(
                "RecallCandidate.captured_at must be a datetime, not "
                f"{type(candidate.captured_at).__name__}: parse the record's "
                "source.captured_at with parse_timestamp(..., 'captured_at')"
            )
        for field in ("searchable_terms", "matched_terms"):
            if not isinstance(getattr(candidate, field), tuple):
                raise Malformed(f"RecallCandidate.{field} must be a tuple of str")
        record = candidate.record
        found.append(
            _Candidate(
                memory_id=getattr(record, "memory_id", repr(record)),
                query_id=candidate.query_id,
                holds_the_record=any(record is stored for stored in call.args[1]),
                searchable_terms=candidate.searchable_terms,
                matched_terms=candidate.matched_terms,
                captured_at=candidate.captured_at,
            )
        )
    return _Found(result.query_id, result.searched_records, result.retracted_records, tuple(found))


def _show(found: _Found) -> str:
    listed = "; ".join(
        f"{c.memory_id} matching {', '.join(c.matched_terms) or 'nothing'} (searchable: "
        f"{', '.join(c.searchable_terms[:5])}{', …' if len(c.searchable_terms) > 5 else ''})"
        + ("" if c.holds_the_record else " (holding a copy of the record)")
        for c in found.candidates
    )
    return (
        f"searched_records={found.searched_records}, retracted_records="
        f"{found.retracted_records}, {len(found.candidates)} candidate(s)"
        + (f": {listed}" if listed else "")
    )


def _show_call(name: str, call: Call) -> str:
    query, records = call.args
    return (
        f"{name}(query, records) with query {query.text!r} (terms {', '.join(query.terms)}) "
        f"and {len(records)} record(s):\n{show_records(records)}"
    )


# -- typical mistakes ---------------------------------------------------------------------------


def _variant(
    *,
    kinds: tuple[MemoryKind, ...] = (MemoryKind.CONVERSATION,),
    hide_retracted: bool = True,
    text: Callable[[StoredMemory], str] = lambda r: r.summary + " " + r.content,
    normalize: bool = True,
    substring: bool = False,
    searched: str = "searched",
    count_retracted: bool = True,
    matched_all: bool = False,
    copy: bool = False,
    captured_as_text: bool = False,
    check_scope: bool = True,
    by_id: bool = False,
) -> Callable[[RecallQuery, tuple[StoredMemory, ...]], CandidateSet]:
    """The contract with one rule broken (each keyword names the rule)."""

    def build(query: RecallQuery, records: tuple[StoredMemory, ...]) -> CandidateSet:
        records = tuple(records)
        if check_scope:
            for record in records:
                if record.user_scope != query.user_scope:
                    raise RemoteMemoryScopeError(f"{record.memory_id} is another user's")
        hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION}
        found, seen, retracted = [], 0, 0
        for record in records:
            if record.kind not in kinds:
                continue
            if hide_retracted and record.memory_id in hidden:
                retracted += 1
                continue
            seen += 1
            raw = text(record)
            terms = extract_terms(normalize_text(raw) if normalize else raw)
            if substring:
                folded = normalize_text(raw)
                matched = tuple(t for t in query.terms if t in folded)
            else:
                matched = tuple(t for t in terms if t in query.terms)
            if matched:
                found.append(
                    RecallCandidate(
                        query_id=query.query_id,
                        record=dataclasses.replace(record) if copy else record,
                        searchable_terms=terms,
                        matched_terms=query.terms if matched_all else matched,
                        captured_at=record.source.captured_at  # type: ignore[arg-type]
                        if captured_as_text
                        else parse_timestamp(record.source.captured_at, "captured_at"),
                    )
                )
        if by_id:
            found.sort(key=lambda c: c.record.memory_id)
        count = {"searched": seen, "all": len(records), "candidates": len(found)}[searched]
        return CandidateSet(
            query.query_id, tuple(found), count, retracted if count_retracted else 0
        )

    return build


CONVERSATION_AND_PROFILE = (MemoryKind.CONVERSATION, MemoryKind.PROFILE)
MISTAKES = (
    Mistake(
        "profiles searched",
        "Only CONVERSATION records take part in recall: a profile is injected at session "
        "start, never a candidate (skip every other kind before counting it as searched).",
        _variant(kinds=CONVERSATION_AND_PROFILE),
    ),
    Mistake(
        "every kind searched",
        "Only CONVERSATION records are searched: skip profiles and retraction records.",
        _variant(kinds=tuple(MemoryKind)),
    ),
    Mistake(
        "retracted records still searched",
        "A conversation named by a RETRACTION in the records is hidden: collect the ids "
        "that retractions name (record.retracts), skip those records and count them in "
        "retracted_records.",
        _variant(hide_retracted=False),
    ),
    Mistake(
        "substring matching instead of terms",
        "Match TERMS, not substrings: 'memory' in 'memorylib' is True, but memorylib is "
        "another term. Compare the query's terms with the record's terms.",
        _variant(substring=True),
    ),
    Mistake(
        "record text not normalized",
        "Normalize the record's text before cutting its terms (normalize_text, then "
        "extract_terms), exactly as the query was: 'Memory' must give the term 'memory'.",
        _variant(normalize=False),
    ),
    Mistake(
        "only the content searched",
        "Searchable terms come from summary + ' ' + content: the summary counts too.",
        _variant(text=lambda r: r.content),
    ),
    Mistake(
        "only the summary searched",
        "Searchable terms come from summary + ' ' + content: the content counts too.",
        _variant(text=lambda r: r.summary),
    ),
    Mistake(
        "searched_records counts every record",
        "searched_records counts the conversation records examined (not profiles, not "
        "retractions, not retracted records).",
        _variant(searched="all"),
    ),
    Mistake(
        "searched_records counts the candidates",
        "searched_records counts every conversation record examined, matched or not; "
        "len(candidates) is candidate_records.",
        _variant(searched="candidates"),
    ),
    Mistake(
        "retracted records not counted",
        "Count the conversations a retraction hides in retracted_records (CandidateSet's "
        "fourth field).",
        _variant(count_retracted=False),
    ),
    Mistake(
        "matched_terms lists every query term",
        "matched_terms are the query terms the record HAS (sorted), not all of the query's.",
        _variant(matched_all=True),
    ),
    Mistake(
        "the candidate holds a copy",
        "A candidate holds the stored record itself (record=record), never a copy or a "
        "changed version.",
        _variant(copy=True),
    ),
    Mistake(
        "captured_at left as text",
        "RecallCandidate.captured_at is a datetime: parse_timestamp(record.source."
        "captured_at, 'captured_at').",
        _variant(captured_as_text=True),
    ),
    Mistake(
        "no user_scope check",
        "Check every record's user_scope against the query's first, and raise "
        "RemoteMemoryScopeError on another user's record: recall must never read across users.",
        _variant(check_scope=False),
    ),
    Mistake(
        "candidates sorted by memory_id",
        "Keep the candidates in the order the records came: ranking, not this stage, "
        "decides the order.",
        _variant(by_id=True),
    ),
)


# -- worked examples --------------------------------------------------------------------------

_OTHER = user_scope_for("someone-else")


def _examples() -> tuple[Named, ...]:
    chapter = chapter_records()
    layered = make_query(CHAPTER_QUERY)
    stranger = build_records((RecordSpec("other-001", summary=("layered", "memory")),), _OTHER)
    retract = build_records(
        (RecordSpec("retraction-001", "retraction", retracts="conversation-003"),)
    )
    specs = (
        RecordSpec("m1", summary=("memorylib", "release")),
        RecordSpec("m2", summary=("Decision",), content=("MEMORY,", "layered")),
    )
    unordered = (RecordSpec("m9", summary=("cache",)), RecordSpec("m1", content=("cache",)))
    return (
        Named(
            "the chapter's query '  LAYERED   Memory  ' searches 6 records and finds "
            "conversation-003",
            Call(layered, chapter),
        ),
        Named(
            "the profile is never searched: 'backend engineer' (its words) finds nothing",
            Call(make_query("backend engineer"), chapter),
        ),
        Named(
            "a record of another user is rejected with RemoteMemoryScopeError",
            Call(layered, chapter + stranger),
        ),
        Named("a retracted conversation is not searched", Call(layered, chapter + retract)),
        Named(
            "terms, not substrings: 'memorylib' is not 'memory', 'MEMORY,' is",
            Call(make_query("memory"), build_records(specs)),
        ),
        Named(
            "candidates keep the records' order (m9 was stored before m1)",
            Call(make_query("cache"), build_records(unordered)),
        ),
    )


BUILD_RECALL_CANDIDATES = FunctionExercise(
    function="build_recall_candidates",
    reference=build_recall_candidates,
    examples=_examples(),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    mistakes=MISTAKES,
    refuses=(build_recall_candidates,),
    error_hints=(
        (
            "required positional argument",
            "RecallCandidate(query_id, record, searchable_terms, "
            "matched_terms, captured_at); CandidateSet(query_id, candidates, searched_records, "
            "retracted_records).",
        ),
    ),
)


# -- "Your turn": a quieter query ---------------------------------------------------------------

QUIET_QUESTION = "how did we make the lock file work on windows"
QUIET_TARGET = "mei-conv-067"  # "The store's lock file now works on Windows too."
QUIET_MAX_CANDIDATES = 5
CACHE_TARGET = "mei-conv-035"  # the optional stretch: the result-cache record, in Chinese
CACHE_MAX_CANDIDATES = 2
# The two-character Chinese words of mei-conv-035, cut by hand from its summary ("召回结果按
# query 和 store 版本缓存，文件一追加缓存就失效。") and its content: the stretch counts these
# among the shared terms, never a bigram across two words (果按, 本缓, 件一, 一追, 加缓, ...).
CACHE_WORDS = frozenset(
    {"召回", "结果", "版本", "缓存", "文件", "追加", "失效"}  # in its summary
    | {"为了", "减少", "重复", "查询", "变化", "自动", "需要"}  # in its content only
)


def check_quiet_query(answer: object) -> CheckResult:
    """A rewrite of ``QUIET_QUESTION``: ``QUIET_TARGET`` stays a candidate in Mei's store,
    among at most ``QUIET_MAX_CANDIDATES``, and shares at least two terms with the query."""
    return _check_query(
        answer, QUIET_TARGET, QUIET_MAX_CANDIDATES, 2, "your rewritten query (a str)"
    )


def check_cache_query(answer: object) -> CheckResult:
    """The optional stretch: ``CACHE_TARGET`` among at most ``CACHE_MAX_CANDIDATES``,
    sharing at least two of ``CACHE_WORDS`` (the record's own Chinese words) with the query."""
    return _check_query(
        answer, CACHE_TARGET, CACHE_MAX_CANDIDATES, 2, "your query (a str)", words=CACHE_WORDS
    )


def _check_query(
    answer: object,
    target: str,
    max_candidates: int,
    min_shared: int,
    placeholder: str,
    *,
    words: frozenset[str] | None = None,
) -> CheckResult:
    def judge(text: str) -> CheckResult:
        records = course_records(COURSE_USERS[0])  # built once, then cached
        try:
            query = normalize_recall_query(
                text,
                user_scope=records[0].user_scope,
                query_id="q-03-check",
                issued_at=COURSE_AS_OF,
            )
        except RemoteMemoryError as error:
            return wrong(f"Stage 1 rejects that query: {type(error).__name__}: {error}")
        found = build_recall_candidates(query, records)
        shared = {c.record.memory_id: c.matched_terms for c in found.candidates}.get(target)
        if shared is None:
            return wrong(
                f"Not yet: {target} is no longer a candidate, so no later stage can rank it. "
                "Keep words its summary or content holds (whole terms, not parts of words)."
            )
        held = [t for t in shared if words is None or t in words]  # the terms that count
        if words is not None and len(held) < min_shared:
            return wrong(
                f"Not yet: {target} shares {' | '.join(shared)} with your query; of these, its "
                f"Chinese words: {' | '.join(held) or 'none'}. Keep at least {min_shared} of its "
                "Chinese words: two characters that straddle two words (件一 in 文件 | 一 | 追加) "
                "are not a word, they are rare by accident."
            )
        if len(shared) < min_shared:
            return wrong(
                f"Not yet: {target} shares only {' | '.join(shared)} with your query. One word "
                "is a lucky guess, not a rewritten question: keep at least two words the record "
                "holds, and drop the ones that many records share."
            )
        if found.candidate_records > max_candidates:
            per_term = Counter(t for c in found.candidates for t in c.matched_terms)
            busiest = sorted(per_term.items(), key=lambda item: (-item[1], item[0]))[:3]
            noisy = ", ".join(f"{term!r} ({n})" for term, n in busiest)
            return wrong(
                f"Not yet: {found.candidate_records} candidates (at most {max_candidates} "
                f"wanted). The terms that bring in the most records: {noisy}."
            )
        return right(
            f"Right: {found.candidate_records} candidate(s) of {found.searched_records} "
            f"searched, and {target} is one of them (it shares {' | '.join(shared)})."
        )

    return check_value(
        answer, judge, placeholder=placeholder, kind=str, described="a str (a query)"
    )
