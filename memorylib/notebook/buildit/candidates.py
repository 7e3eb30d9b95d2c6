"""Stage 2 exercises (notebook 03): the build-it ``build_recall_candidates``, checked against
``memorylib.candidates`` on what the chapter's contract fixes (which records, in what order,
the stored record itself, the terms, ``captured_at`` as a datetime, the counts; not the BM25
counts), and the "Your turn" ``check_quiet_query`` (its stretch: ``check_cache_query``): a
rewrite that keeps the target a candidate among few, through at least two of its terms (the
stretch: two of ``CACHE_WORDS``, never a bigram that straddles two words, 件一 in 文件一追加).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from memorylib.candidates import CandidateSet, build_recall_candidates
from memorylib.datasets import COURSE_AS_OF, COURSE_USERS, course_records
from memorylib.errors import RemoteMemoryError, RemoteMemoryScopeError
from memorylib.interface import user_scope_for
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit import fixtures as fx
from memorylib.notebook.buildit.normalize import catalogue, named
from memorylib.query import extract_terms, normalize_recall_query, normalize_text
from memorylib.records import MemoryKind, RecallCandidate, RecallQuery, StoredMemory
from memorylib.timestamps import parse_timestamp

__all__ = ["BUILD_RECALL_CANDIDATES", "CACHE_TARGET", "CACHE_WORDS", "QUIET_QUESTION"]
__all__ += ["QUIET_TARGET", "check_cache_query", "check_quiet_query"]

# the query's words, and record words that test them (plain ones first: hypothesis shrinks
# towards them): other case, fullwidth, punctuation, longer words, Chinese
QUERY_WORDS = ("memory", "cache", "recall", "layered", "记忆")
_RECORD_TEXT = "memory note cache design recall layered Memory CACHE ｍｅｍｏｒｙ memory, (cache)"
RECORD_WORDS = tuple(f"{_RECORD_TEXT} memorylib caches recalled 分层记忆 记".split())
# built once: a strategy made inside a draw is validated again on every draw
_KINDS = st.sampled_from(("conversation", "profile", "retraction"))
_TEXT, _AGES = fx.words(RECORD_WORDS), st.sampled_from((1.0, 2.0, 40.0))
_QUERIES = st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=3, unique=True)
_IDS, _SIZES = fx.memory_ids(9), st.integers(0, 5)


@st.composite
def _calls(draw: st.DrawFn) -> ex.Call:
    """A query of 1-3 words over 0-5 records: conversations, profiles and retractions."""
    specs: list[fx.RecordSpec] = []
    for memory_id in draw(_IDS)[: draw(_SIZES)]:
        kind = draw(_KINDS)
        conversations = [s.memory_id for s in specs if s.kind == "conversation"]
        if kind == "retraction" and conversations:
            hidden = draw(st.sampled_from(conversations))
            specs.append(fx.RecordSpec(memory_id, kind, retracts=hidden))
        else:
            kind = "profile" if kind == "profile" else "conversation"
            texts = draw(_TEXT), draw(_TEXT)
            specs.append(fx.RecordSpec(memory_id, kind, *texts, captured_days_before=draw(_AGES)))
    return ex.Call(fx.make_query(" ".join(draw(_QUERIES))), fx.build_records(tuple(specs)))


def _read(result: Any, call: ex.Call) -> dict[str, Any]:
    """What the contract fixes of a CandidateSet (each candidate: does it hold the record?)."""
    if not isinstance(result, CandidateSet):
        raise ex.Malformed(
            "build_recall_candidates must return a CandidateSet(query_id, candidates, "
            f"searched_records, retracted_records), not {type(result).__name__}"
        )
    if not isinstance(result.candidates, tuple):
        raise ex.Malformed("CandidateSet.candidates must be a tuple of RecallCandidate")
    for c in result.candidates:
        if not isinstance(c, RecallCandidate):
            raise ex.Malformed(f"every candidate must be a RecallCandidate, not {type(c).__name__}")
        if not isinstance(c.captured_at, datetime):
            raise ex.Malformed(
                "RecallCandidate.captured_at must be a datetime, not "
                f"{type(c.captured_at).__name__}: parse the record's source.captured_at with "
                "parse_timestamp(..., 'captured_at')"
            )
        for field in ("searchable_terms", "matched_terms"):
            if not isinstance(getattr(c, field), tuple):
                raise ex.Malformed(f"RecallCandidate.{field} must be a tuple of str")
    candidates = tuple(
        {"memory_id": getattr(c.record, "memory_id", repr(c.record)), "query_id": c.query_id}
        | {"holds_the_record": any(c.record is stored for stored in call.args[1])}
        | {k: getattr(c, k) for k in ("searchable_terms", "matched_terms", "captured_at")}
        for c in result.candidates
    )
    found = {k: getattr(result, k) for k in ("query_id", "searched_records", "retracted_records")}
    return found | {"candidates": candidates}


def _show(found: dict[str, Any]) -> str:
    listed = "; ".join(
        f"{c['memory_id']} matching {', '.join(c['matched_terms']) or 'nothing'} (searchable: "
        f"{', '.join(c['searchable_terms'][:5])}{', …' if len(c['searchable_terms']) > 5 else ''})"
        + ("" if c["holds_the_record"] else " (holding a copy of the record)")
        for c in found["candidates"]
    )
    return (
        f"searched_records={found['searched_records']}, retracted_records="
        f"{found['retracted_records']}, {len(found['candidates'])} candidate(s)"
        + (f": {listed}" if listed else "")
    )


def _show_call(name: str, call: ex.Call) -> str:
    query, records = call.args
    return (
        f"{name}(query, records) with query {query.text!r} (terms {', '.join(query.terms)}) "
        f"and {len(records)} record(s):\n{fx.show_records(records)}"
    )


def _mistaken(mistake: str) -> Callable[[RecallQuery, tuple[StoredMemory, ...]], CandidateSet]:
    """The contract with the one rule that ``mistake`` (a name in the catalogue) breaks."""
    kinds = {  # the kinds searched
        "profiles searched": (MemoryKind.CONVERSATION, MemoryKind.PROFILE),
        "every kind searched": tuple(MemoryKind),
    }.get(mistake, (MemoryKind.CONVERSATION,))

    def build(query: RecallQuery, records: tuple[StoredMemory, ...]) -> CandidateSet:
        for record in records:
            if record.user_scope != query.user_scope and mistake != "no user_scope check":
                raise RemoteMemoryScopeError(f"{record.memory_id} is another user's")
        hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION}
        hidden = set() if mistake == "retracted records still searched" else hidden
        found, searched, retracted = [], 0, 0
        for record in (r for r in records if r.kind in kinds):
            if record.memory_id in hidden:
                retracted += mistake != "retracted records not counted"
                continue
            searched += 1
            text = record.summary + " " + record.content
            if mistake.startswith("only the "):  # only the content, or the summary, searched
                text = record.content if "content" in mistake else record.summary
            if mistake != "record text not normalized":
                text = normalize_text(text)
            terms = extract_terms(text)
            matched = tuple(t for t in terms if t in query.terms)
            if mistake == "substring matching instead of terms":
                matched = tuple(t for t in query.terms if t in text)
            if mistake == "matched_terms lists every query term" and matched:
                matched = query.terms
            if matched:
                captured = record.source.captured_at
                if mistake != "captured_at left as text":
                    captured = parse_timestamp(captured, "captured_at")
                if mistake == "the candidate holds a copy":
                    record = dataclasses.replace(record)
                found.append(RecallCandidate(query.query_id, record, terms, matched, captured))
        if mistake == "candidates sorted by memory_id":
            found.sort(key=lambda c: c.record.memory_id)
        searched = len(records) if mistake == "searched_records counts every record" else searched
        searched = len(found) if mistake == "searched_records counts the candidates" else searched
        return CandidateSet(query.query_id, tuple(found), searched, retracted)

    return build


# the worked examples' calls: (query, records)
_CHAPTER, _LAYERED, _SPEC = fx.chapter_records(), fx.make_query(fx.CHAPTER_QUERY), fx.RecordSpec
_BACKEND = fx.make_query("backend engineer"), _CHAPTER
_STRANGER = _SPEC("other-001", summary=("layered", "memory"))
_OTHER = _LAYERED, _CHAPTER + fx.build_records((_STRANGER,), user_scope_for("someone-else"))
_RETRACTION = _SPEC("retraction-001", "retraction", retracts="conversation-003")
_RETRACTED = _LAYERED, _CHAPTER + fx.build_records((_RETRACTION,))
_M1 = _SPEC("m1", summary=("memorylib", "release"))
_M2 = _SPEC("m2", summary=("Decision",), content=("MEMORY,", "layered"))
_TERMS = fx.make_query("memory"), fx.build_records((_M1, _M2))
_M9 = _SPEC("m9", summary=("cache",))
_ORDER = fx.make_query("cache"), fx.build_records((_M9, _SPEC("m1", content=("cache",))))
EXAMPLES = {  # a name a student recognises: the call's arguments
    "the chapter's query '  LAYERED   Memory  ' searches 6 records and finds conversation-003": (
        _LAYERED,
        _CHAPTER,
    ),
    "the profile is never searched: 'backend engineer' (its words) finds nothing": _BACKEND,
    "a record of another user is rejected with RemoteMemoryScopeError": _OTHER,
    "a retracted conversation is not searched": _RETRACTED,
    "terms, not substrings: 'memorylib' is not 'memory', 'MEMORY,' is": _TERMS,
    "candidates keep the records' order (m9 was stored before m1)": _ORDER,
}
BUILD_RECALL_CANDIDATES = ex.FunctionExercise(
    function="build_recall_candidates",
    reference=build_recall_candidates,
    examples=named(EXAMPLES),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    refuses=(build_recall_candidates,),
    error_hints=(
        (
            "required positional argument",
            "RecallCandidate(query_id, record, searchable_terms, matched_terms, captured_at); "
            "CandidateSet(query_id, candidates, searched_records, retracted_records).",
        ),
    ),
    mistakes=catalogue(
        """\
profiles searched: Only CONVERSATION records take part in recall: a profile is injected at session
  start, never a candidate (skip every other kind before counting it as searched).
every kind searched: Only CONVERSATION records are searched: skip profiles and retraction records.
retracted records still searched: A conversation named by a RETRACTION in the records is hidden:
  collect the ids that retractions name (record.retracts), skip those records and count them in
  retracted_records.
substring matching instead of terms: Match TERMS, not substrings: 'memory' in 'memorylib' is True,
  but memorylib is another term. Compare the query's terms with the record's terms.
record text not normalized: Normalize the record's text before cutting its terms (normalize_text,
  then extract_terms), exactly as the query was: 'Memory' must give the term 'memory'.
only the content searched: Searchable terms come from summary + ' ' + content: the summary counts
  too.
only the summary searched: Searchable terms come from summary + ' ' + content: the content counts
  too.
searched_records counts every record: searched_records counts the conversation records examined
  (not profiles, not retractions, not retracted records).
searched_records counts the candidates: searched_records counts every conversation record
  examined, matched or not; len(candidates) is candidate_records.
retracted records not counted: Count the conversations a retraction hides in retracted_records
  (CandidateSet's fourth field).
matched_terms lists every query term: matched_terms are the query terms the record HAS (sorted),
  not all of the query's.
the candidate holds a copy: A candidate holds the stored record itself (record=record), never a
  copy or a changed version.
captured_at left as text: RecallCandidate.captured_at is a datetime:
  parse_timestamp(record.source.captured_at, 'captured_at').
no user_scope check: Check every record's user_scope against the query's first, and raise
  RemoteMemoryScopeError on another user's record: recall must never read across users.
candidates sorted by memory_id: Keep the candidates in the order the records came: ranking, not
  this stage, decides the order.""",
        _mistaken,
    ),
)

# -- "Your turn": a quieter query ---------------------------------------------------------------

QUIET_QUESTION = "how did we make the lock file work on windows"
QUIET_TARGET = "mei-conv-067"  # "The store's lock file now works on Windows too."
CACHE_TARGET = "mei-conv-035"  # the optional stretch: the result-cache record, in Chinese
# The two-character Chinese words of mei-conv-035, cut by hand from its summary ("召回结果按
# query 和 store 版本缓存，文件一追加缓存就失效。") and its content: the stretch counts these
# among the shared terms, never a bigram across two words (果按, 本缓, 件一, 一追, 加缓, ...).
CACHE_WORDS = frozenset(
    {"召回", "结果", "版本", "缓存", "文件", "追加", "失效"}  # in its summary
    | {"为了", "减少", "重复", "查询", "变化", "自动", "需要"}  # in its content only
)


def check_quiet_query(answer: object) -> ex.CheckResult:
    """A rewrite of ``QUIET_QUESTION``: ``QUIET_TARGET`` stays a candidate in Mei's store,
    among at most 5, and shares at least two terms with the query."""
    return _check_query(answer, QUIET_TARGET, 5, "your rewritten query (a str)")


def check_cache_query(answer: object) -> ex.CheckResult:
    """The optional stretch: ``CACHE_TARGET`` among at most 2, sharing at least two of
    ``CACHE_WORDS`` (the record's own Chinese words) with the query."""
    return _check_query(answer, CACHE_TARGET, 2, "your query (a str)", CACHE_WORDS)


def _check_query(
    answer: object, target: str, most: int, placeholder: str, words: frozenset[str] | None = None
) -> ex.CheckResult:
    def judge(text: str) -> ex.CheckResult:
        records = course_records(COURSE_USERS[0])  # built once, then cached
        scope, at = records[0].user_scope, COURSE_AS_OF  # a query of Mei's, at the course's clock
        try:
            query = normalize_recall_query(
                text, user_scope=scope, query_id="q-03-check", issued_at=at
            )
        except RemoteMemoryError as error:
            return ex.wrong(f"Stage 1 rejects that query: {type(error).__name__}: {error}")
        found = build_recall_candidates(query, records)
        shared = {c.record.memory_id: c.matched_terms for c in found.candidates}.get(target)
        if shared is None:
            return ex.wrong(
                f"Not yet: {target} is no longer a candidate, so no later stage can rank it. "
                "Keep words its summary or content holds (whole terms, not parts of words)."
            )
        held = [t for t in shared if words is None or t in words]  # the terms that count
        if words is not None and len(held) < 2:
            return ex.wrong(
                f"Not yet: {target} shares {' | '.join(shared)} with your query; of these, its "
                f"Chinese words: {' | '.join(held) or 'none'}. Keep at least 2 of its Chinese "
                "words: two characters that straddle two words (件一 in 文件 | 一 | 追加) are not "
                "a word, they are rare by accident."
            )
        if len(shared) < 2:
            return ex.wrong(
                f"Not yet: {target} shares only {' | '.join(shared)} with your query. One word "
                "is a lucky guess, not a rewritten question: keep at least two words the record "
                "holds, and drop the ones that many records share."
            )
        if found.candidate_records > most:
            per_term = Counter(t for c in found.candidates for t in c.matched_terms)
            busiest = sorted(per_term.items(), key=lambda item: (-item[1], item[0]))[:3]
            noisy = ", ".join(f"{term!r} ({n})" for term, n in busiest)
            return ex.wrong(
                f"Not yet: {found.candidate_records} candidates (at most {most} wanted). The "
                f"terms that bring in the most records: {noisy}."
            )
        return ex.right(
            f"Right: {found.candidate_records} candidate(s) of {found.searched_records} "
            f"searched, and {target} is one of them (it shares {' | '.join(shared)})."
        )

    return ex.check_value(
        answer, judge, placeholder=placeholder, kind=str, described="a str (a query)"
    )
