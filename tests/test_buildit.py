"""Build-it exercises: per stage, the reference solution passes, typical wrong solutions are
caught with their hint and a smallest counterexample, a raising solution gets a readable
message, and a check says the same thing every time. Then the capstone pipeline."""

from __future__ import annotations

import ast
import dataclasses
import html
import json
import linecache
import math
import re
import runpy
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any
from xml.sax.saxutils import escape

import pytest

from memorylib import (
    CandidateSet,
    MemoryKind,
    RecallCandidate,
    RecallHit,
    RecallScope,
    RecallScoreBreakdown,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
    extract_terms,
    normalize_text,
    recall_pipeline,
    render_recall_context,
    score_recall_candidate,
    stable_rank_recall_candidates,
)
from memorylib.datasets import course_records, load_labelled_queries
from memorylib.interface import user_scope_for
from memorylib.notebook import buildit
from memorylib.notebook.buildit.fixtures import CHAPTER_SCOPE, chapter_records
from memorylib.notebook.exercises import CheckResult, Verdict, check_function
from memorylib.query import term_occurrences
from memorylib.ranking import hit_from, rank_key
from memorylib.timestamps import TEACHING_AS_OF, parse_timestamp

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "notebooks" / "solutions"
NFKC = lambda text: unicodedata.normalize("NFKC", text)  # noqa: E731


def solution(notebook: str) -> dict[str, Any]:
    return runpy.run_path(str(SOLUTIONS / f"{notebook}_buildit.py"))


SOLVED = {
    **solution("02_normalize"),
    **solution("03_candidates"),
    **solution("04_scoring"),
    **solution("05_stable_rank"),
    **solution("06_render"),
}
CHECKS: dict[str, Callable[[Any], CheckResult]] = {
    "normalize_text": lambda f: buildit.check_normalize(f, SOLVED["my_extract_terms"]),
    "extract_terms": lambda f: buildit.check_normalize(SOLVED["my_normalize_text"], f),
    "build_recall_candidates": buildit.check_candidates,
    "score_recall_candidate": buildit.check_scoring,
    "stable_rank_recall_candidates": buildit.check_ranking,
    "render_recall_context": buildit.check_render,
}


def assert_caught(result: CheckResult, mistake: object) -> None:
    """WRONG, naming the mistake, with a counterexample in plain words (no traceback)."""
    assert result.verdict is Verdict.WRONG, result.text
    assert str(mistake) in result.message, result.text
    assert result.counterexample is not None
    assert "Traceback" not in result.text
    assert result.counterexample.expected != result.counterexample.got


# -- stage 1: normalize_text and extract_terms ---------------------------------------------------


def fold(text: str) -> str:
    return " ".join(text.split())


def norm_lower(text: str) -> str:
    return fold(NFKC(NFKC(text).lower()))


def norm_no_nfkc(text: str) -> str:
    return fold(text.casefold())


def norm_spaces_only(text: str) -> str:
    return re.sub(" +", " ", NFKC(NFKC(text).casefold())).strip(" ")


def norm_nfkc_once(text: str) -> str:
    return fold(NFKC(text).casefold())


def terms_repeats(normalized: str) -> tuple[str, ...]:
    return tuple(sorted(term_occurrences(normalized)))  # every occurrence, repeats kept


def terms_chinese_whole(normalized: str) -> tuple[str, ...]:
    runs = re.findall(r"[\u4e00-\u9fff]+|[^\W\u4e00-\u9fff]+", normalized)
    return tuple(sorted(set(runs)))


def terms_pairs(normalized: str) -> tuple[str, ...]:
    found = set()
    for run in re.findall(r"[\u4e00-\u9fff]+|[^\W\u4e00-\u9fff]+", normalized):
        if "\u4e00" <= run[0] <= "\u9fff" and len(run) > 1:
            found.update(run[i : i + 2] for i in range(0, len(run), 2))
        else:
            found.add(run)
    return tuple(sorted(found))


def terms_ascii(normalized: str) -> tuple[str, ...]:
    found = set(re.findall(r"[a-z0-9_]+", normalized))
    for run in re.findall(r"[\u4e00-\u9fff]+", normalized):
        found.update([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return tuple(sorted(found))


def terms_list(normalized: str) -> list[str]:
    return sorted(SOLVED["my_extract_terms"](normalized))


def terms_raises(normalized: str) -> tuple[str, ...]:
    words = normalized.split(" ")
    third = words[2]  # an IndexError on a text of fewer than three words
    return (third,)


# -- stage 2: build_recall_candidates -----------------------------------------------------------


def candidates_like(
    *,
    kinds=(MemoryKind.CONVERSATION,),
    hide=True,
    normalize=True,
    substring=False,
    copy=False,
    text_time=False,
    scope=True,
    count_all=False,
):
    def build(query, records):
        if scope:
            for r in records:
                if r.user_scope != query.user_scope:
                    raise RemoteMemoryScopeError("another user's record")
        hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION} if hide else set()
        found, searched, retracted = [], 0, 0
        for r in records:
            if r.kind not in kinds:
                continue
            if r.memory_id in hidden:
                retracted += 1
                continue
            searched += 1
            raw = r.summary + " " + r.content
            text = normalize_text(raw) if normalize else raw
            terms = extract_terms(text)
            if substring:
                matched = tuple(t for t in query.terms if t in text)
            else:
                matched = tuple(t for t in terms if t in query.terms)
            if matched:
                found.append(
                    RecallCandidate(
                        query.query_id,
                        dataclasses.replace(r) if copy else r,
                        terms,
                        matched,
                        r.source.captured_at
                        if text_time
                        else parse_timestamp(r.source.captured_at, "captured_at"),
                    )
                )
        return CandidateSet(
            query.query_id, tuple(found), len(records) if count_all else searched, retracted
        )

    return build


def candidates_raises(query, records):
    return CandidateSet(query.query_id, (), records[0].retracts.upper())  # None: AttributeError


# -- stage 3: score_recall_candidate ---------------------------------------------------------


def scorer_like(
    *,
    decay="hyperbola",
    clamp=True,
    whole_days=False,
    stored=False,
    check=True,
    rounded=True,
    over_record=False,
    add_rounded=False,
):
    def score(query, candidate, *, as_of):
        if check and candidate.query_id != query.query_id:
            raise RemoteMemoryValidationError("another query's candidate")
        now = parse_timestamp(as_of, "as_of")
        then = parse_timestamp(candidate.record.stored_at, "s") if stored else candidate.captured_at
        age = (now - then).days if whole_days else (now - then).total_seconds() / 86_400
        age = max(0, age) if clamp else age
        recency = math.exp(-age / 30) if decay == "exp" else 1 / (1 + age / 30)
        base = len(candidate.searchable_terms) if over_record else len(query.terms)
        coverage = len(candidate.matched_terms) / base
        r = (lambda x: round(x, 6)) if rounded else (lambda x: x)
        lexical, recent = r(0.85 * coverage), r(0.15 * recency)
        return RecallScoreBreakdown(
            candidate.matched_terms,
            len(query.terms),
            r(coverage),
            r(recency),
            lexical,
            recent,
            lexical + recent if add_rounded else r(0.85 * coverage + 0.15 * recency),
        )

    return score


def scorer_delegates(query, candidate, *, as_of):
    return score_recall_candidate(query, candidate, as_of=as_of)


def scorer_through_the_ranker(query, candidate, *, as_of):
    if candidate.query_id != query.query_id:
        raise RemoteMemoryValidationError("another query's candidate")
    only = CandidateSet(query.query_id, (candidate,), 1)
    (hit,) = stable_rank_recall_candidates(query, only, as_of=as_of)
    return hit.score_breakdown


def scorer_raises(query, candidate, *, as_of):
    age = as_of - candidate.captured_at  # as_of is a str: TypeError
    return age


# -- stage 4: stable_rank_recall_candidates -----------------------------------------------------


def ranker_like(*, key=None, first=1, limit=True, snippet="summary", as_list=False):
    def rank(query, candidates, *, as_of, score=score_recall_candidate):
        scored = [(score(query, c, as_of=as_of), c) for c in candidates]

        def default(p):
            return (
                -p[0].total,
                -p[0].lexical_coverage,
                -p[1].captured_at.timestamp(),
                p[1].record.memory_id,
            )

        scored.sort(key=key or default)
        kept = scored[: query.limit] if limit else scored
        hits = [
            RecallHit(
                c.query_id,
                c.record.memory_id,
                n,
                getattr(c.record, snippet),
                RecallScope(c.record.user_scope, c.record.kind),
                c.record.source,
                b,
            )
            for n, (b, c) in enumerate(kept, start=first)
        ]
        return hits if as_list else tuple(hits)

    return rank


def ranker_raises(query, candidates, *, as_of, score=score_recall_candidate):
    scored = [(score(query, c, as_of=as_of), c) for c in candidates]
    scored.sort(key=lambda p: (-p[0].total, -p[1].captured_at))  # -datetime: TypeError
    return tuple(scored)


# -- stage 5: render_recall_context -------------------------------------------------------------


def renderer_like(
    *,
    attr=lambda v: html.escape(v, quote=True),
    text=html.escape,
    wrapper=False,
    number=lambda v: f"{v:.6f}",
    from_zero=False,
):
    def render(result):
        if not result.hits and not wrapper:
            return ""
        q = result.query
        out = [
            f'<recalled_context query_id="{attr(q.query_id)}" '
            f'normalized_query="{attr(q.normalized_text)}" user_scope="{attr(q.user_scope)}">'
        ]
        for n, h in enumerate(result.hits):
            b, p = h.score_breakdown, h.provenance
            nums = " ".join(
                f'{k}="{number(getattr(b, k))}"'
                for k in (
                    "total",
                    "lexical_coverage",
                    "recency",
                    "lexical_contribution",
                    "recency_contribution",
                )
            )
            out += [
                f'<hit rank="{n if from_zero else h.rank}" memory_id="{attr(h.memory_id)}" '
                f'user_scope="{attr(h.scope.user_scope)}" '
                f'memory_kind="{h.scope.memory_kind.value}">',
                f"<score {nums}/>",
                f'<provenance source_id="{attr(p.source_id)}" source_type="{attr(p.source_type)}" '
                f'captured_at="{attr(p.captured_at)}"/>',
                f"<snippet>{text(h.snippet)}</snippet></hit>",
            ]
        out.append("</recalled_context>")
        return "\n".join(out)

    return render


def renderer_raises(result):
    return f'<score total="{result.hits[0].score_breakdown.total!s:.6f}"/>'  # str: ValueError


def same(value: str) -> str:
    return value


# -- the table of wrong solutions: (function, wrong solution, the mistake it must be named) --------

WRONG: list[tuple[str, Callable[..., Any], str]] = [
    ("normalize_text", norm_lower, "lower() instead of casefold()"),
    ("normalize_text", norm_no_nfkc, "no NFKC"),
    ("normalize_text", norm_spaces_only, "only spaces folded"),
    ("normalize_text", norm_nfkc_once, "NFKC only before casefold"),
    ("extract_terms", terms_repeats, "sorted but not unique"),
    ("extract_terms", terms_chinese_whole, "a Chinese run kept whole"),
    ("extract_terms", terms_pairs, "bigrams that do not overlap"),
    ("extract_terms", terms_ascii, "only ASCII letters make words"),
    ("extract_terms", terms_list, "must return a tuple, not a list"),
    ("build_recall_candidates", candidates_like(kinds=tuple(MemoryKind)), "every kind searched"),
    (
        "build_recall_candidates",
        candidates_like(kinds=(MemoryKind.CONVERSATION, MemoryKind.PROFILE)),
        "profiles searched",
    ),
    ("build_recall_candidates", candidates_like(hide=False), "retracted records still searched"),
    ("build_recall_candidates", candidates_like(substring=True), "substring matching"),
    ("build_recall_candidates", candidates_like(normalize=False), "record text not normalized"),
    ("build_recall_candidates", candidates_like(copy=True), "the candidate holds a copy"),
    ("build_recall_candidates", candidates_like(text_time=True), "captured_at left as text"),
    ("build_recall_candidates", candidates_like(scope=False), "no user_scope check"),
    (
        "build_recall_candidates",
        candidates_like(count_all=True),
        "searched_records counts every record",
    ),
    ("score_recall_candidate", scorer_like(decay="exp"), "recency as exponential decay"),
    ("score_recall_candidate", scorer_like(clamp=False), "age not clamped at 0"),
    ("score_recall_candidate", scorer_like(whole_days=True), "age counted in whole days"),
    ("score_recall_candidate", scorer_like(stored=True), "stored_at instead of captured_at"),
    ("score_recall_candidate", scorer_like(check=False), "a candidate of another query accepted"),
    ("score_recall_candidate", scorer_like(rounded=False), "not rounded"),
    ("score_recall_candidate", scorer_like(over_record=True), "coverage over the record's terms"),
    (
        "stable_rank_recall_candidates",
        ranker_like(key=lambda p: -p[0].total),
        "ties broken by storage order",
    ),
    ("stable_rank_recall_candidates", ranker_like(first=0), "ranks start at 0"),
    ("stable_rank_recall_candidates", ranker_like(limit=False), "limit not applied"),
    (
        "stable_rank_recall_candidates",
        ranker_like(
            key=lambda p: (
                -p[0].total,
                -p[0].lexical_coverage,
                tuple(-ord(ch) for ch in p[1].record.source.captured_at),
                p[1].record.memory_id,
            )
        ),
        "captured_at compared as text",
    ),
    (
        "stable_rank_recall_candidates",
        ranker_like(
            key=lambda p: (
                -p[0].total,
                -p[0].lexical_coverage,
                p[1].captured_at.timestamp(),
                p[1].record.memory_id,
            )
        ),
        "captured_at ascending",
    ),
    ("stable_rank_recall_candidates", ranker_like(snippet="content"), "snippet is the content"),
    ("stable_rank_recall_candidates", ranker_like(as_list=True), "not a list"),
    ("render_recall_context", renderer_like(attr=same, text=same), "nothing escaped"),
    ("render_recall_context", renderer_like(attr=escape), "attribute quotes not escaped"),
    ("render_recall_context", renderer_like(wrapper=True), "an empty result rendered as an empty"),
    ("render_recall_context", renderer_like(number=str), "scores not written with 6 decimals"),
    ("render_recall_context", renderer_like(from_zero=True), "ranks renumbered from 0"),
]

RAISING: list[tuple[str, Callable[..., Any], str, str]] = [
    ("extract_terms", terms_raises, "IndexError: list index out of range", "third = words[2]"),
    ("build_recall_candidates", candidates_raises, "AttributeError", "records[0].retracts.upper()"),
    ("score_recall_candidate", scorer_raises, "TypeError", "age = as_of - candidate.captured_at"),
    ("stable_rank_recall_candidates", ranker_raises, "TypeError", "-p[1].captured_at"),
    ("render_recall_context", renderer_raises, "ValueError", "return f'<score total="),
]

REFERENCE_SOLUTIONS = {
    "normalize_text": SOLVED["my_normalize_text"],
    "extract_terms": SOLVED["my_extract_terms"],
    "build_recall_candidates": SOLVED["my_build_recall_candidates"],
    "score_recall_candidate": SOLVED["my_score_recall_candidate"],
    "stable_rank_recall_candidates": SOLVED["my_stable_rank_recall_candidates"],
    "render_recall_context": SOLVED["my_render_recall_context"],
}


@pytest.mark.parametrize("function", list(CHECKS))
def test_the_reference_solution_passes(function: str) -> None:
    result = CHECKS[function](REFERENCE_SOLUTIONS[function])
    assert result.verdict is Verdict.RIGHT, result.text
    assert "worked examples" in result.message and "generated inputs" in result.message


@pytest.mark.parametrize("function", list(CHECKS))
def test_the_library_itself_passes_unless_the_exercise_refuses_it(function: str) -> None:
    exercise = buildit.EXERCISES[function]
    result = CHECKS[function](exercise.reference)
    if exercise.reference in exercise.refuses:  # a body that is the library is no answer
        assert "calls the library's" in result.message
    else:
        assert result.is_right, result.text


def test_a_scorer_adding_its_rounded_contributions_is_right() -> None:
    # 0.283333 + 0.15 is 0.43333299999999997: rounded, within float noise, and a total one
    # unit off the library's rounded sum in the sixth place is as right (notebook 04 says so)
    assert buildit.check_scoring(scorer_like(add_rounded=True)).is_right


@pytest.mark.parametrize("student", [scorer_delegates, scorer_through_the_ranker])
def test_a_scorer_that_calls_the_librarys_is_refused(student) -> None:
    result = buildit.check_scoring(student)
    assert result.verdict is Verdict.WRONG
    assert f"{student.__name__} calls the library's score_recall_candidate" in result.message


def ranker_through_the_librarys_helpers(query, candidates, *, as_of, score=score_recall_candidate):
    scored = sorted(
        ((score(query, c, as_of=as_of), c) for c in candidates), key=lambda bc: rank_key(*bc)
    )
    return tuple(hit_from(c, b, n) for n, (b, c) in enumerate(scored[: query.limit], start=1))


def ranker_through_the_pipeline(query, candidates, *, as_of, score=score_recall_candidate):
    records = [c.record for c in candidates]
    return recall_pipeline(query, records, as_of=as_of).hits


@pytest.mark.parametrize(
    ("student", "refused"),
    [
        (ranker_through_the_librarys_helpers, "rank_key"),
        (ranker_through_the_pipeline, "stable_rank_recall_candidates"),
    ],
)
def test_a_ranker_made_of_the_librarys_code_is_refused(student, refused) -> None:
    # notebook 05 shows rank_key in section 1, and its build-it says both are refused
    result = buildit.check_ranking(student)
    assert result.verdict is Verdict.WRONG
    assert f"{student.__name__} calls the library's {refused}" in result.message


@pytest.mark.parametrize(
    ("function", "student", "mistake"), WRONG, ids=[f"{f}-{m[:30]}" for f, _, m in WRONG]
)
def test_a_typical_wrong_solution_is_caught_with_its_hint(function, student, mistake) -> None:
    assert_caught(CHECKS[function](student), mistake)


MISTAKES = [
    (name, mistake) for name, exercise in buildit.EXERCISES.items() for mistake in exercise.mistakes
]


@pytest.mark.parametrize(
    ("function", "mistake"), MISTAKES, ids=[f"{f}-{str(m.name)[:30]}" for f, m in MISTAKES]
)
def test_every_known_mistake_is_caught_and_named_as_itself(function, mistake) -> None:
    # each wrong variant, run as if a student wrote it: no look-alike takes its name
    result = check_function(buildit.EXERCISES[function], mistake.variant, name="variant")
    assert_caught(result, mistake.name)


def test_every_stage_catches_at_least_three_typical_mistakes() -> None:
    per_function: dict[str, int] = {}
    for function, _, _ in WRONG:
        per_function[function] = per_function.get(function, 0) + 1
    assert all(per_function[name] >= 3 for name in CHECKS), per_function


@pytest.mark.parametrize(
    ("function", "student", "error", "line"), RAISING, ids=[r[0] for r in RAISING]
)
def test_a_raising_solution_gets_a_readable_message(function, student, error, line) -> None:
    result = CHECKS[function](student)
    assert result.verdict is Verdict.WRONG
    assert error in result.message
    assert "Traceback" not in result.text and "File " not in result.text
    (where,) = [d for d in result.details if d.startswith("where: line ")]
    assert line in where and (student.__name__ in where or "<lambda>" in where)
    assert result.counterexample is not None
    assert result.counterexample.got.startswith("raised ")
    assert student.__name__ in result.counterexample.example  # the input, shown as a call


def test_hints_for_errors_students_often_hit() -> None:
    result = buildit.check_scoring(scorer_raises)
    assert "parse_timestamp(as_of, 'as_of')" in result.message
    assert "-candidate.captured_at.timestamp()" in buildit.check_ranking(ranker_raises).message


# a key like notebook 05's section 1, key 3 written from the datetime (the check refuses
# section 1's epoch_micros), and a build-it cell that sorts with it (as a student may)
KEY_CELL = """
def four_keys(scored):
    candidate, b = scored
    return (-b.total, -b.lexical_coverage, -candidate.captured_at.timestamp(),
            candidate.record.memory_id)
"""
RANK_CELL = """from memorylib import RecallHit, RecallScope, score_recall_candidate
{key}

def my_stable_rank_recall_candidates(query, candidates, *, as_of, score=score_recall_candidate):
    scored = sorted(((c, score(query, c, as_of=as_of)) for c in candidates), key=four_keys)
    return tuple(
        RecallHit(c.query_id, c.record.memory_id, n, c.record.summary,
                  RecallScope(c.record.user_scope, c.record.kind), c.record.source, b)
        for n, (c, b) in enumerate(scored[: query.limit], start=1)
    )
{tail}"""


def run_cell(namespace: dict[str, Any], source: str, name: str) -> None:
    """Run ``source`` the way the kernel runs a cell: its text in linecache (no mtime)."""
    filename = f"/tmp/ipykernel_test/{name}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def test_a_build_it_cell_that_needs_another_cells_name_fails_as_in_06c() -> None:
    notebook: dict[str, Any] = {"__name__": "__main__"}
    run_cell(notebook, KEY_CELL, "key-cell")
    run_cell(notebook, RANK_CELL.format(key="", tail=""), "rank-cell")
    mine = notebook["my_stable_rank_recall_candidates"]
    call = next(iter(buildit.EXERCISES["stable_rank_recall_candidates"].examples.values()))
    assert call(mine)  # it works beside section 1's four_keys...
    result = buildit.check_ranking(mine)  # ...but its cell alone does not define four_keys
    assert result.verdict is Verdict.WRONG
    assert "NameError: name 'four_keys' is not defined" in result.message
    assert "Notebook 06c runs this cell alone" in result.message
    (where,) = [d for d in result.details if d.startswith("where: line ")]
    assert "key=four_keys" in where
    # the same cell with the key (and its import) inside it passes, also when it holds its
    # own check, which is not run again from inside the check
    tail = (
        "from memorylib.notebook import buildit\n"
        "INNER = buildit.check_ranking(my_stable_rank_recall_candidates)\n"
    )
    alone: dict[str, Any] = {"__name__": "__main__"}
    run_cell(alone, RANK_CELL.format(key=KEY_CELL, tail=tail), "whole-cell")
    assert alone["INNER"].is_right
    assert buildit.check_ranking(alone["my_stable_rank_recall_candidates"]).is_right


def test_section_1s_key_copied_with_epoch_micros_is_refused() -> None:
    # notebook 05 shows four_keys (key 3 as epoch_micros); its build-it asks for key 3 written
    # from the datetime, so the copied key is refused
    copied = "from memorylib.timestamps import epoch_micros\n" + KEY_CELL.replace(
        "-candidate.captured_at.timestamp()", "-epoch_micros(candidate.captured_at)"
    )
    cell: dict[str, Any] = {"__name__": "__main__"}
    run_cell(cell, RANK_CELL.format(key=copied, tail=""), "copied-cell")
    result = buildit.check_ranking(cell["my_stable_rank_recall_candidates"])
    assert result.verdict is Verdict.WRONG
    assert "calls the library's epoch_micros" in result.message


def test_a_build_it_cell_that_raises_when_run_alone_is_reported() -> None:
    notebook: dict[str, Any] = {"__name__": "__main__", "KEY": None}
    source = "KEY = KEY or 1  # reads a name of another cell at run time\n" + RANK_CELL.format(
        key=KEY_CELL, tail=""
    )
    run_cell(notebook, source, "raising-cell")
    result = buildit.check_ranking(notebook["my_stable_rank_recall_candidates"])
    assert result.verdict is Verdict.WRONG
    assert result.message.startswith("Your build-it cell raised NameError: name 'KEY'")
    assert "line 1" in result.message


@pytest.mark.parametrize("function", list(CHECKS))
def test_not_written_yet_is_not_answered(function: str) -> None:
    def template(*args: object, **kwargs: object) -> object:
        raise NotImplementedError("write the body")

    result = CHECKS[function](template)
    assert result.verdict is Verdict.NOT_ANSWERED
    assert "still raises NotImplementedError" in result.message
    assert CHECKS[function](...).verdict is Verdict.NOT_ANSWERED


def test_the_smallest_counterexample_is_found_and_shown_in_plain_words() -> None:
    # NFKC once: only 'ǰ' (casefold decomposes it) tells it apart; shrinking reaches 'ǰ' alone
    result = buildit.check_normalize(norm_nfkc_once, SOLVED["my_extract_terms"])
    example = result.counterexample
    assert example is not None and example.stage == "generated"
    assert example.example.endswith("norm_nfkc_once('ǰ')")
    assert example.got == "'j\\u030c'"  # the combining mark spelled out
    # captured_at as text: two tied candidates half a second apart, nothing more
    rank = buildit.check_ranking(WRONG[28][1]).counterexample
    assert rank is not None and rank.stage == "generated"
    assert rank.example.count("captured 2026-08-01T12:00:00") == 2
    assert "2 candidate(s)" in rank.example


def test_a_check_is_deterministic() -> None:
    # the generated cases come from a fixed seed: the same function gets the same words
    first = buildit.check_scoring(scorer_like(whole_days=True))
    assert first.counterexample is not None and first.counterexample.stage == "generated"
    assert buildit.check_scoring(scorer_like(whole_days=True)).text == first.text


def test_the_result_renders_as_text_and_html() -> None:
    result = buildit.check_render(renderer_like(attr=escape))
    assert result.text.splitlines()[0].startswith("❌ Not yet — attribute quotes not escaped.")
    root = ET.fromstring(result._repr_html_())
    assert root.get("data-verdict") == "wrong"
    cells = [td.findtext("code") for td in root.iter("td")]
    assert len(cells) == 3 and "trusted" in cells[2]  # the forged attribute, escaped as text


# -- the closed reference -----------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["normalize", "candidate", "score", "stable rank", "render"])
def test_the_reference_source_is_the_real_code_and_closed(stage: str) -> None:
    shown = buildit.reference_source(stage)
    markup = shown._repr_html_()
    root = ET.fromstring(markup)
    assert root.tag == "details" and "open" not in root.attrib
    assert root.findtext("pre") == shown.source
    main = shown.functions[-1]
    assert f"def {main}(" in shown.source
    assert "def " not in str(shown)  # the text form names it, shows no code
    assert "/work/" not in markup and "/home/" not in markup


@pytest.mark.parametrize(
    ("stage", "named"),
    [
        # normalize_text calls fold_whitespace (memorylib/checks.py), is_cjk reads CJK_FIRST
        ("normalize", "fold_whitespace from memorylib/checks.py; CJK_FIRST, CJK_LAST"),
        # render_recall_context calls require (and its helpers), escape_xml reads XML_ILLEGAL
        # and the two entity tables of memorylib/render.py
        (
            "render",
            "XML_ILLEGAL, type_name, _a, require from memorylib/checks.py; "
            "_TEXT_ENTITIES, _ATTRIBUTE_ENTITIES",
        ),
    ],
)
def test_the_reference_shows_everything_of_memorylib_it_reads(stage: str, named: str) -> None:
    # a reader of the closed reference must not meet a function or a constant it cannot see
    from typing import TypeVar

    from memorylib.notebook.buildit.reference import REFERENCE_FUNCTIONS, REFERENCE_READS

    module = REFERENCE_FUNCTIONS[stage][0]
    namespaces = [vars(module)] + [vars(where) for where, _ in REFERENCE_READS[stage]]
    shown = buildit.reference_source(stage)
    tree = ast.parse(shown.source)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    defined |= {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    unseen = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in defined:
            found = [space[node.id] for space in namespaces if node.id in space]
            if not found or isinstance(found[0], (type, ModuleType, TypeVar)):
                continue  # a builtin, a class, a module (unicodedata, re) or a type variable
            value = found[0]
            if not callable(value) or value.__module__.startswith("memorylib"):
                unseen.add(node.id)  # a constant, or a function of memorylib
    assert unseen == set()
    assert f"# {module.__name__.replace('.', '/')}.py\n" in shown.source
    assert "# memorylib/checks.py\n" in shown.source
    assert f"and what they read: {named} (" in str(shown)


def test_the_stable_rank_reference_shows_everything_of_memorylib_its_functions_read() -> None:
    # stable_rank_recall_candidates reads require, parse_timestamp, DEFAULT_POLICY,
    # score_recall_candidate, bm25_score, ScoreFunction; rank_key reads epoch_micros: each
    # is in the closed reference, so a reader meets no name of memorylib it cannot see
    import inspect

    from memorylib import ranking

    shown = buildit.reference_source("stable rank")
    tree = ast.parse(shown.source)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    defined |= {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    module_level = {
        target.id
        for node in ast.parse(inspect.getsource(ranking)).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    unseen = set()
    for name in shown.functions:
        for node in ast.walk(ast.parse(inspect.getsource(getattr(ranking, name)))):
            if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
                continue
            value = vars(ranking).get(node.id)
            if node.id in defined or value is None or isinstance(value, (type, ModuleType)):
                continue  # shown, a builtin, a class or a module (dataclasses)
            function = inspect.isfunction(value) and value.__module__.startswith("memorylib")
            constant = node.id in module_level or type(value).__module__.startswith("memorylib")
            if function or constant:
                unseen.add(node.id)
    assert unseen == set()
    assert "# memorylib/timestamps.py\n_EPOCH = " in shown.source
    assert "def epoch_micros(" in shown.source and "DEFAULT_POLICY = " in shown.source
    assert "score_recall_candidate from memorylib/scoring.py" in str(shown)


def test_an_unknown_stage_is_refused() -> None:
    with pytest.raises(ValueError, match="stage must be one of"):
        buildit.reference_source("rank")


# -- the capstone: your pipeline ------------------------------------------------------------------

MINE = {name: REFERENCE_SOLUTIONS[name] for name in REFERENCE_SOLUTIONS}


def test_the_reference_pipeline_is_the_library() -> None:
    from memorylib.notebook.buildit.fixtures import make_query
    from memorylib.pipeline import recall_pipeline

    run = buildit.Pipeline.reference().recall(
        "  LAYERED   Memory  ",
        chapter_records(),
        user_scope=CHAPTER_SCOPE,
        as_of=TEACHING_AS_OF,
        query_id="query-1",
    )
    query = make_query("  LAYERED   Memory  ", query_id="query-1")
    expected = recall_pipeline(query, chapter_records(), as_of=TEACHING_AS_OF)
    assert run.result == expected
    assert run.context == render_recall_context(expected)


def test_the_solutions_as_one_pipeline_reproduce_the_chapter_example() -> None:
    pipeline = buildit.Pipeline.from_functions(**MINE)
    assert pipeline.yours == tuple(MINE)
    assert [choice.why for choice in pipeline.choices.values()] == ["yours"] * len(MINE)
    comparison = pipeline.compare(
        "  LAYERED   Memory  ",
        chapter_records(),
        user_scope=CHAPTER_SCOPE,
        as_of=TEACHING_AS_OF,
        query_id="query-1",
    )
    run = comparison.yours
    assert run.error is None and comparison.difference is None
    assert run.result is not None
    assert (run.result.searched_records, run.result.candidate_records) == (6, 1)
    (hit,) = run.result.hits
    assert (hit.memory_id, hit.rank, hit.score_breakdown.total) == ("conversation-003", 1, 0.995161)
    assert run.context is not None
    assert 'total="0.995161"' in run.context and "<snippet>Separated workspace" in run.context


def test_the_solutions_agree_with_the_reference_on_the_whole_corpus() -> None:
    corpus = buildit.compare_on_corpus(buildit.Pipeline.from_functions(**MINE))
    assert len(corpus.frame) == 36 and corpus.differences.empty
    assert corpus.summary.startswith("36 labelled queries of 4 users: 36 give the same result")


def test_a_scorer_adding_its_rounded_parts_gives_the_librarys_pipeline() -> None:
    # a total one unit off in the sixth place is not a different hit, nor a different render
    pipeline = buildit.Pipeline.from_functions(
        **{**MINE, "score_recall_candidate": scorer_like(add_rounded=True)}
    )
    unit_off = rendered_differently = 0
    for labelled in load_labelled_queries():
        comparison = pipeline.compare(
            labelled.text,
            course_records(labelled.user_id),
            user_scope=user_scope_for(labelled.user_id),
            as_of=labelled.as_of,
            query_id=labelled.query_id,
        )
        assert comparison.difference is None, (labelled.query_id, comparison.difference)
        pairs = zip(comparison.reference.result.hits, comparison.yours.result.hits, strict=True)
        unit_off += sum(a.score_breakdown.total != b.score_breakdown.total for a, b in pairs)
        rendered_differently += comparison.reference.context != comparison.yours.context
    assert unit_off and rendered_differently  # the case arises on the corpus


def test_a_skipped_stage_runs_the_reference() -> None:
    def template(*args: object, **kwargs: object) -> object:
        raise NotImplementedError

    pipeline = buildit.Pipeline.from_functions(**{**MINE, "score_recall_candidate": template})
    scorer, render = (
        pipeline.choices["score_recall_candidate"],
        pipeline.choices["render_recall_context"],
    )
    assert not scorer.yours and "NotImplementedError" in scorer.why
    assert scorer.function is scorer.slot.reference
    assert render.yours and render.function is MINE["render_recall_context"]


def test_a_wrong_stage_shows_where_the_pipelines_first_differ() -> None:
    pipeline = buildit.Pipeline.from_functions(
        **{**MINE, "score_recall_candidate": scorer_like(decay="exp")}
    )
    comparison = pipeline.compare(
        "  LAYERED   Memory  ", chapter_records(), user_scope=CHAPTER_SCOPE, as_of=TEACHING_AS_OF
    )
    assert comparison.difference == ("score", "conversation-003: total 0.995161 vs yours 0.995082")
    corpus = buildit.compare_on_corpus(pipeline)
    assert not corpus.differences.empty
    assert set(corpus.differences["first difference"]) <= {"score", "stable rank"}
    assert "First difference at: score" in corpus.summary


def test_a_raising_stage_stops_the_run_with_a_readable_error() -> None:
    pipeline = buildit.Pipeline.from_functions(
        **{**MINE, "stable_rank_recall_candidates": ranker_raises}
    )
    run = pipeline.recall(
        "layered memory", chapter_records(), user_scope=CHAPTER_SCOPE, as_of=TEACHING_AS_OF
    )
    assert run.failed_stage == "stable rank"
    assert run.error is not None and run.error.startswith("my_stable_rank_recall_candidates")
    assert "TypeError" in run.error and "-p[1].captured_at" in run.error


def _notebook_with(path: Path, target: Path, source: str | None) -> None:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if source is not None:
        (cell,) = [c for c in nb.cells if c.cell_type == "code" and "# build-it:" in c.source[:40]]
        cell.source = source
    nbformat.write(nb, target)


def test_the_pipeline_reads_the_build_it_cells_of_saved_notebooks(tmp_path: Path) -> None:
    notebooks = ROOT / "notebooks"
    for slot_notebook in dict.fromkeys(slot.notebook for slot in buildit.SLOTS):
        stem = slot_notebook.removesuffix(".ipynb")
        source = (SOLUTIONS / f"{stem}_buildit.py").read_text(encoding="utf-8")
        cell = source[source.index("# build-it:") :]  # the solution file without its docstring
        _notebook_with(notebooks / slot_notebook, tmp_path / slot_notebook, cell)
    pipeline = buildit.Pipeline.from_notebooks(tmp_path)
    assert pipeline.yours == tuple(MINE)
    comparison = pipeline.compare(
        "  LAYERED   Memory  ", chapter_records(), user_scope=CHAPTER_SCOPE, as_of=TEACHING_AS_OF
    )
    assert comparison.difference is None and comparison.yours.hit_ids == ("conversation-003",)


def test_the_committed_notebooks_give_the_all_reference_pipeline() -> None:
    pipeline = buildit.Pipeline.from_notebooks(ROOT / "notebooks")
    assert pipeline.yours == ()
    whys = {choice.why for choice in pipeline.choices.values()}
    assert whys == {"not written yet (raises NotImplementedError)"}


def test_a_broken_cell_or_missing_notebook_falls_back_to_the_reference(tmp_path: Path) -> None:
    notebooks = ROOT / "notebooks"
    _notebook_with(
        notebooks / "02_normalize.ipynb",
        tmp_path / "02_normalize.ipynb",
        "# build-it: normalize\ndef my_normalize_text(text):\n    return text +\n",
    )
    found, notes = buildit.load_buildit_cells(tmp_path)
    assert found == {}
    assert notes["normalize_text"].startswith("its cell in 02_normalize.ipynb raised SyntaxError")
    assert "could not be read" in notes["build_recall_candidates"]
    pipeline = buildit.Pipeline.from_notebooks(tmp_path)
    assert pipeline.yours == ()


# -- the cells in the notebooks ------------------------------------------------------------------

STAGE_NOTEBOOKS = {
    "02_normalize": ("normalize", ("normalize_text", "extract_terms")),
    "03_candidates": ("candidate", ("build_recall_candidates",)),
    "04_scoring": ("score", ("score_recall_candidate",)),
    "05_stable_rank": ("stable rank", ("stable_rank_recall_candidates",)),
    "06_render": ("render", ("render_recall_context",)),
}


def _cells(notebook: str) -> list[Any]:
    import nbformat

    return nbformat.read(ROOT / "notebooks" / f"{notebook}.ipynb", as_version=4).cells


@pytest.mark.parametrize("notebook", list(STAGE_NOTEBOOKS))
def test_each_stage_notebook_holds_template_check_then_closed_reference(notebook: str) -> None:
    import inspect

    stage, functions = STAGE_NOTEBOOKS[notebook]
    cells = _cells(notebook)
    code = [c for c in cells if c.cell_type == "code"]
    (template,) = [c for c in code if c.source.startswith(f"# build-it: {stage} (")]
    position = cells.index(template)
    check, reference = cells[position + 1], cells[position + 3]
    assert "buildit.check_" in check.source
    if notebook in ("03_candidates", "04_scoring", "05_stable_rank", "06_render"):
        assert "SHOW_REFERENCE" in reference.source  # shown only once the check passes
    if "SHOW_REFERENCE" in reference.source:
        assert f'display(buildit.reference_source("{stage}"))' in reference.source
        saved = json.dumps([output for output in reference.get("outputs", [])])
        assert "<details" not in saved and "def " not in saved  # nothing of it on screen
    else:
        assert reference.source == f'buildit.reference_source("{stage}")'
    # the template: the contract's signature and docstring, an unfilled body
    namespace: dict[str, Any] = {}
    exec(compile(template.source, "<template>", "exec"), namespace)
    for name in functions:
        mine, library = namespace[f"my_{name}"], buildit.EXERCISES[name].reference
        library_parameters = list(inspect.signature(library).parameters)
        beyond = ("policy", "corpus", "analyzer", "context", "explain")  # keyword-only extras
        wanted = [p for p in library_parameters if p not in beyond]
        assert list(inspect.signature(mine).parameters) == wanted, name
        assert mine.__doc__ and library.__doc__.split(".")[0] in mine.__doc__  # its first sentence
        with pytest.raises(NotImplementedError):
            next(iter(buildit.EXERCISES[name].examples.values()))(mine)
