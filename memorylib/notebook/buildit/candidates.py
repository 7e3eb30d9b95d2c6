"""Notebook 03: the build-it ``build_recall_candidates``; ``check_quiet_query`` (and cache)."""

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
from memorylib.notebook.messages import joined, said, say
from memorylib.query import extract_terms, normalize_recall_query, normalize_text
from memorylib.records import MemoryKind, RecallCandidate, RecallQuery, StoredMemory
from memorylib.timestamps import parse_timestamp

# the query's words, and record words that test them (plain ones first: hypothesis shrinks
# towards them): other case, fullwidth, punctuation, longer words, Chinese
_QUERY_WORDS = st.sampled_from(("memory", "cache", "recall", "layered", "记忆"))
_RECORD_TEXT = "memory note cache design recall layered Memory CACHE ｍｅｍｏｒｙ memory, (cache)"
_TEXT = fx.words(f"{_RECORD_TEXT} memorylib caches recalled 分层记忆 记".split())
# built once: a strategy made inside a draw is validated again on every draw
_KINDS = st.sampled_from(("conversation", "profile", "retraction"))
_AGES = st.sampled_from((1.0, 2.0, 40.0))
_QUERIES = st.lists(_QUERY_WORDS, min_size=1, max_size=3, unique=True)
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

    def malformed(key: str, value: object = None, field: str = "") -> ex.Malformed:
        return ex.Malformed(say(f"candidates.{key}", kind=type(value).__name__, field=field))

    if not isinstance(result, CandidateSet):
        raise malformed("not_set", result)
    if not isinstance(result.candidates, tuple):
        raise malformed("not_tuple")
    for c in result.candidates:
        if not isinstance(c, RecallCandidate):
            raise malformed("not_candidate", c)
        if not isinstance(c.captured_at, datetime):
            raise malformed("not_datetime", c.captured_at)
        for field in ("searchable_terms", "matched_terms"):
            if not isinstance(getattr(c, field), tuple):
                raise malformed("terms_not_tuple", field=field)
    candidates = tuple(
        {"memory_id": getattr(c.record, "memory_id", repr(c.record)), "query_id": c.query_id}
        | {"holds_the_record": any(c.record is stored for stored in call.args[1])}
        | {k: getattr(c, k) for k in ("searchable_terms", "matched_terms", "captured_at")}
        for c in result.candidates
    )
    found = {k: getattr(result, k) for k in ("query_id", "searched_records", "retracted_records")}
    return found | {"candidates": candidates}


def _show(found: dict[str, Any]) -> str:
    def candidate(c: dict[str, Any]) -> str:
        searchable = ", ".join(c["searchable_terms"][:5])
        searchable += ", …" if len(c["searchable_terms"]) > 5 else ""
        matched = ", ".join(c["matched_terms"]) or say("candidates.show.nothing")
        shown = say("candidates.show.candidate", matched=matched, searchable=searchable, **c)
        return shown + ("" if c["holds_the_record"] else " " + say("candidates.show.copy"))

    listed = joined(map(candidate, found["candidates"]))
    counts = say("candidates.show.counts", count=len(found["candidates"]), **found)
    return counts + (f": {listed}" if listed else "")


def _show_call(name: str, call: ex.Call) -> str:
    query, records = call.args
    shown = dict(name=name, text=query.text, terms=", ".join(query.terms), count=len(records))
    return say("candidates.show.call", records=fx.show_records(records), **shown)


def _mistaken(mistake: str) -> Callable[[RecallQuery, tuple[StoredMemory, ...]], CandidateSet]:
    """The contract with the one rule that ``mistake`` (a key of ``MISTAKES``) breaks."""
    kinds = {  # the kinds searched
        "profiles": (MemoryKind.CONVERSATION, MemoryKind.PROFILE),
        "every_kind": tuple(MemoryKind),
    }.get(mistake, (MemoryKind.CONVERSATION,))

    def build(query: RecallQuery, records: tuple[StoredMemory, ...]) -> CandidateSet:
        for record in records:
            if record.user_scope != query.user_scope and mistake != "no_scope":
                raise RemoteMemoryScopeError(f"{record.memory_id} is another user's")
        hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION}
        hidden = set() if mistake == "retracted_searched" else hidden
        found, searched, retracted = [], 0, 0
        for record in (r for r in records if r.kind in kinds):
            if record.memory_id in hidden:
                retracted += mistake != "retracted_uncounted"
                continue
            searched += 1
            text = record.summary + " " + record.content
            if mistake in ("content_only", "summary_only"):
                text = record.content if mistake == "content_only" else record.summary
            if mistake != "not_normalized":
                text = normalize_text(text)
            terms = extract_terms(text)
            matched = tuple(t for t in terms if t in query.terms)
            if mistake == "substring":
                matched = tuple(t for t in query.terms if t in text)
            if mistake == "all_query_terms" and matched:
                matched = query.terms
            if matched:
                captured = record.source.captured_at
                if mistake != "text_captured":
                    captured = parse_timestamp(captured, "captured_at")
                if mistake == "copy":
                    record = dataclasses.replace(record)
                found.append(RecallCandidate(query.query_id, record, terms, matched, captured))
        if mistake == "sorted":
            found.sort(key=lambda c: c.record.memory_id)
        searched = len(records) if mistake == "searched_all" else searched
        searched = len(found) if mistake == "searched_candidates" else searched
        return CandidateSet(query.query_id, tuple(found), searched, retracted)

    return build


MISTAKES = (  # in the catalogue's order: among mistakes alike, the first wins
    *("profiles", "every_kind", "retracted_searched", "substring", "not_normalized"),
    *("content_only", "summary_only", "searched_all", "searched_candidates"),
    *("retracted_uncounted", "all_query_terms", "copy", "text_captured", "no_scope", "sorted"),
)
_CHAPTER, _LAYERED, _SPEC = fx.chapter_records(), fx.make_query(fx.CHAPTER_QUERY), fx.RecordSpec
_STRANGER = fx.build_records(
    (_SPEC("other-001", summary=("layered", "memory")),), user_scope_for("someone-else")
)
_RETRACTION = fx.build_records(
    (_SPEC("retraction-001", "retraction", retracts="conversation-003"),)
)
_M1, _M9 = _SPEC("m1", summary=("memorylib", "release")), _SPEC("m9", summary=("cache",))
_M2 = _SPEC("m2", summary=("Decision",), content=("MEMORY,", "layered"))
_EXAMPLES = {  # the calls: (query, records)
    "chapter": (_LAYERED, _CHAPTER),
    "profile": (fx.make_query("backend engineer"), _CHAPTER),
    "stranger": (_LAYERED, _CHAPTER + _STRANGER),
    "retracted": (_LAYERED, _CHAPTER + _RETRACTION),
    "terms": (fx.make_query("memory"), fx.build_records((_M1, _M2))),
    "order": (fx.make_query("cache"), fx.build_records((_M9, _SPEC("m1", content=("cache",))))),
}  # fmt: skip
BUILD_RECALL_CANDIDATES = ex.FunctionExercise(
    function="build_recall_candidates",
    reference=build_recall_candidates,
    examples=ex.named("candidates.example", _EXAMPLES),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    refuses=(build_recall_candidates,),
    error_hints=(("required positional argument", said("candidates.error.arguments")),),
    mistakes=ex.mistakes("candidates.mistake", {k: _mistaken(k) for k in MISTAKES}),
)

QUIET_QUESTION = "how did we make the lock file work on windows"  # the "Your turn"'s
QUIET_TARGET = "mei-conv-067"  # "The store's lock file now works on Windows too."
CACHE_TARGET = "mei-conv-035"  # the optional stretch: the result-cache record, in Chinese
# mei-conv-035's two-character Chinese words, cut by hand from its summary (召回结果按 query 和
# store 版本缓存，文件一追加缓存就失效。) and content; never a bigram across two words (件一).
CACHE_WORDS = frozenset(
    {"召回", "结果", "版本", "缓存", "文件", "追加", "失效"}  # in its summary
    | {"为了", "减少", "重复", "查询", "变化", "自动", "需要"}  # in its content only
)


def check_quiet_query(answer: object) -> ex.CheckResult:
    """``QUIET_TARGET`` stays a candidate among at most 5, sharing two terms with the query."""
    return _check_query(answer, QUIET_TARGET, 5, say("candidates.quiet.placeholder"))


def check_cache_query(answer: object) -> ex.CheckResult:
    """``CACHE_TARGET`` among at most 2, sharing two of ``CACHE_WORDS`` with the query."""
    return _check_query(answer, CACHE_TARGET, 2, say("candidates.cache.placeholder"), CACHE_WORDS)


def _check_query(
    answer: object, target: str, most: int, placeholder: str, words: frozenset[str] | None = None
) -> ex.CheckResult:
    def judge(text: str) -> ex.CheckResult:
        records = course_records(COURSE_USERS[0])  # Mei's, built once, at the course's clock
        scope, at = records[0].user_scope, COURSE_AS_OF
        try:
            query = normalize_recall_query(
                text, user_scope=scope, query_id="q-03-check", issued_at=at
            )
        except RemoteMemoryError as e:
            return ex.wrong(say("candidates.query.rejected", error=type(e).__name__, message=e))
        found = build_recall_candidates(query, records)
        shared = {c.record.memory_id: c.matched_terms for c in found.candidates}.get(target)
        if shared is None:
            return ex.wrong(say("candidates.query.lost", target=target))
        held = [t for t in shared if words is None or t in words]  # the terms that count
        said = dict(target=target, shared=" | ".join(shared))
        if words is not None and len(held) < 2:
            held_words = " | ".join(held) or say("candidates.query.none")
            return ex.wrong(say("candidates.query.straddles", held=held_words, **said))
        if len(shared) < 2:
            return ex.wrong(say("candidates.query.one_word", **said))
        if (count := found.candidate_records) > most:
            per_term = Counter(t for c in found.candidates for t in c.matched_terms)
            busiest = sorted(per_term.items(), key=lambda item: (-item[1], item[0]))[:3]
            noisy = ", ".join(f"{term!r} ({n})" for term, n in busiest)
            return ex.wrong(say("candidates.query.too_many", count=count, most=most, noisy=noisy))
        searched = found.searched_records
        return ex.right(say("candidates.query.right", count=count, searched=searched, **said))

    described = say("candidates.query.described")
    return ex.check_value(answer, judge, placeholder=placeholder, kind=str, described=described)
