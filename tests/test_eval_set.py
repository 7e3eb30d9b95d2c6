"""The graded evaluation set ``data/eval_queries.json``: schema, judgments and balance.

The file is data written by hand (see the section in ``data/README.md``). These tests
only read it with ``json``/``pathlib`` and check it against the corpus as loaded by
``memorylib.datasets.load_course_entries()``; no ranker is run, so no result of any
ranker can make them pass or fail. Every check is a function returning a list of
problems, so the last tests can break a copy of the file on purpose and make sure
each kind of mistake is caught.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memorylib.datasets import load_course_entries

DATA = Path(__file__).resolve().parent.parent / "data"
EVAL_FILE = DATA / "eval_queries.json"
LABELLED_FILE = DATA / "labelled_queries.json"

USERS = (
    "mei.lin@northwind.example",
    "omar.haddad@northwind.example",
    "sam.ortiz@northwind.example",
    "wen.zhao@northwind.example",
)
CATEGORIES = (
    "exact_match",
    "paraphrase",
    "inflection",
    "stale_vs_fresh",
    "stopword_heavy",
    "no_relevant",
    "chinese",
    "mixed",
    "multi_record",
)
LANGUAGES = ("en", "zh", "mixed")
SPLITS = ("dev", "heldout")
QUERY_KEYS = (
    "query_id",
    "user_id",
    "text",
    "as_of",
    "language",
    "category",
    "teaches",
    "split",
    "judgments",
    "rationale",
)
MIN_QUERIES = 80
MIN_PER_CATEGORY = {
    "paraphrase": 8,
    "inflection": 8,
    "stale_vs_fresh": 8,
    "stopword_heavy": 8,
    "no_relevant": 8,
}
MIN_PER_LANGUAGE = {"zh": 15, "mixed": 10}
MIN_PER_USER = 10
HELDOUT_SHARE = (0.25, 0.35)

ENTRIES = {entry.memory_id: entry for entry in load_course_entries()}
RETRACTED = {entry.retracts for entry in ENTRIES.values() if entry.retracts is not None}
LABELLED = json.loads(LABELLED_FILE.read_text(encoding="utf-8"))

Doc = dict[str, Any]
Problems = list[str]


def load() -> Doc:
    return json.loads(EVAL_FILE.read_text(encoding="utf-8"))


def queries(doc: Doc) -> list[dict[str, Any]]:
    items = doc.get("queries")
    return [q for q in items if isinstance(q, dict)] if isinstance(items, list) else []


def script_language(text: str) -> str:
    """The query-language rule: Han and Latin letters -> mixed; Han only -> zh; else en."""
    han = any("\u4e00" <= c <= "\u9fff" for c in text)
    latin = any(c.isascii() and c.isalpha() for c in text)
    if han and latin:
        return "mixed"
    return "zh" if han else "en"


def is_utc_timestamp(value: object) -> bool:
    """``YYYY-MM-DDTHH:MM:SSZ`` (the corpus's canonical form), checked by hand."""
    if not isinstance(value, str) or len(value) != 20:
        return False
    fixed = {4: "-", 7: "-", 10: "T", 13: ":", 16: ":", 19: "Z"}
    return all(
        value[i] == fixed[i] if i in fixed else value[i].isdigit() for i in range(len(value))
    )


# -- checks: each returns a list of problems ----------------------------------------------


def check_top_level(doc: Doc) -> Problems:
    problems = []
    if set(doc) != {"schema", "grades", "queries"}:
        problems.append(f"top-level keys are {sorted(doc)}")
    if doc.get("schema") != 1:
        problems.append(f"schema is {doc.get('schema')!r}, expected 1")
    grades = doc.get("grades")
    if not isinstance(grades, dict) or set(grades) != {"0", "1", "2", "3"}:
        problems.append("grades must describe exactly the grades '0' to '3'")
    elif not all(isinstance(v, str) and v.strip() for v in grades.values()):
        problems.append("every grade needs a non-empty description")
    items = doc.get("queries")
    if not isinstance(items, list) or not all(isinstance(q, dict) for q in items):
        problems.append("queries must be a list of objects")
    return problems


def check_fields(doc: Doc) -> Problems:
    problems = []
    for q in queries(doc):
        qid = q.get("query_id")
        if tuple(q) != QUERY_KEYS:
            problems.append(f"{qid}: keys {list(q)} differ from {list(QUERY_KEYS)}")
            continue
        if q["user_id"] not in USERS:
            problems.append(f"{qid}: unknown user {q['user_id']!r}")
        text = q["text"]
        if not isinstance(text, str) or not text.strip() or text != text.strip():
            problems.append(f"{qid}: text must be a non-empty string without outer spaces")
        if not is_utc_timestamp(q["as_of"]):
            problems.append(f"{qid}: as_of {q['as_of']!r} is not YYYY-MM-DDTHH:MM:SSZ")
        if q["language"] not in LANGUAGES:
            problems.append(f"{qid}: language {q['language']!r}")
        elif isinstance(text, str) and q["language"] != script_language(text):
            problems.append(
                f"{qid}: language {q['language']!r}, but the text is {script_language(text)!r}"
            )
        if q["category"] not in CATEGORIES:
            problems.append(f"{qid}: category {q['category']!r}")
        if q["split"] not in SPLITS:
            problems.append(f"{qid}: split {q['split']!r}")
        rationale = q["rationale"]
        if (
            not isinstance(rationale, str)
            or not rationale.strip()
            or len(rationale.splitlines()) != 1
        ):
            problems.append(f"{qid}: rationale must be one non-empty line")
    return problems


def check_ids(doc: Doc) -> Problems:
    problems = []
    ids = [q.get("query_id") for q in queries(doc)]
    if len(ids) < MIN_QUERIES:
        problems.append(f"{len(ids)} queries, expected at least {MIN_QUERIES}")
    duplicates = sorted(str(i) for i, n in Counter(ids).items() if n > 1)
    if duplicates:
        problems.append(f"duplicate query ids {duplicates}")
    folded = {q["query_id"] for q in LABELLED}
    new = [i for i in ids if i not in folded]
    expected = [f"e-{n:03d}" for n in range(1, len(new) + 1)]
    if new != expected:
        problems.append("new queries must be numbered e-001, e-002, ... in file order")
    return problems


def check_judgments(doc: Doc) -> Problems:
    problems = []
    for q in queries(doc):
        qid, judgments = q.get("query_id"), q.get("judgments")
        if not isinstance(judgments, dict):
            problems.append(f"{qid}: judgments must be an object")
            continue
        for memory_id, grade in judgments.items():
            entry = ENTRIES.get(memory_id)
            if entry is None:
                problems.append(f"{qid}: {memory_id} is not in the corpus")
                continue
            if entry.user_id != q.get("user_id"):
                problems.append(f"{qid}: {memory_id} belongs to {entry.user_id}")
            if entry.kind.value != "conversation":
                problems.append(f"{qid}: {memory_id} is a {entry.kind.value}, not a conversation")
            if type(grade) is not int or not 0 <= grade <= 3:
                problems.append(f"{qid}: {memory_id} has grade {grade!r}, expected 0..3")
                continue
            if grade > 0 and memory_id in RETRACTED:
                problems.append(f"{qid}: {memory_id} is retracted but graded {grade}")
            as_of = q.get("as_of")
            if grade > 0 and isinstance(as_of, str) and entry.source.captured_at > as_of:
                problems.append(f"{qid}: {memory_id} was captured after as_of but graded {grade}")
    return problems


def check_relevance(doc: Doc) -> Problems:
    problems = []
    for q in queries(doc):
        judgments = q.get("judgments")
        if not isinstance(judgments, dict):
            continue
        grades = [g for g in judgments.values() if type(g) is int]
        top = max(grades, default=0)
        if q.get("category") == "no_relevant" and top >= 1:
            problems.append(f"{q.get('query_id')}: a no_relevant query grades a record {top}")
        if q.get("category") != "no_relevant" and top < 2:
            problems.append(f"{q.get('query_id')}: no record graded 2 or 3")
    return problems


def check_folded(doc: Doc) -> Problems:
    problems = []
    by_id = {q.get("query_id"): q for q in queries(doc)}
    for labelled in LABELLED:
        qid = labelled["query_id"]
        q = by_id.get(qid)
        if q is None:
            problems.append(f"{qid} from labelled_queries.json is missing")
            continue
        for key in ("user_id", "text", "as_of", "teaches"):
            if q.get(key) != labelled[key]:
                problems.append(f"{qid}: {key} {q.get(key)!r} != {labelled[key]!r}")
        judgments = q.get("judgments") if isinstance(q.get("judgments"), dict) else {}
        for memory_id in labelled["relevant"]:
            grade = judgments.get(memory_id)
            if type(grade) is not int or grade < 1:
                problems.append(f"{qid}: labelled relevant {memory_id} is graded {grade!r}")
    folded = {labelled["query_id"] for labelled in LABELLED}
    for q in queries(doc):
        if q.get("query_id") not in folded and q.get("teaches") is not None:
            problems.append(f"{q.get('query_id')}: only folded queries carry 'teaches'")
    return problems


def check_balance(doc: Doc) -> Problems:
    problems = []
    items = queries(doc)
    categories = Counter(q.get("category") for q in items)
    for category, minimum in MIN_PER_CATEGORY.items():
        if categories[category] < minimum:
            problems.append(f"{categories[category]} {category} queries, expected {minimum}+")
    languages = Counter(q.get("language") for q in items)
    for language, minimum in MIN_PER_LANGUAGE.items():
        if languages[language] < minimum:
            problems.append(f"{languages[language]} {language} queries, expected {minimum}+")
    users = Counter(q.get("user_id") for q in items)
    for user in USERS:
        if users[user] < MIN_PER_USER:
            problems.append(f"{users[user]} queries for {user}, expected {MIN_PER_USER}+")
    return problems


def check_split(doc: Doc) -> Problems:
    problems = []
    items = queries(doc)
    if not items:
        return ["no queries"]
    heldout = [q for q in items if q.get("split") == "heldout"]
    share = len(heldout) / len(items)
    low, high = HELDOUT_SHARE
    if not low <= share <= high:
        problems.append(f"heldout share {share:.1%} is outside {low:.0%}..{high:.0%}")
    for key, values in (("category", CATEGORIES), ("language", LANGUAGES)):
        for value in values:
            group = [q for q in items if q.get(key) == value]
            splits = {q.get("split") for q in group}
            if group and splits != set(SPLITS):
                problems.append(f"{key} {value}: splits {sorted(map(str, splits))}, need both")
    return problems


CHECKS: tuple[Callable[[Doc], Problems], ...] = (
    check_top_level,
    check_fields,
    check_ids,
    check_judgments,
    check_relevance,
    check_folded,
    check_balance,
    check_split,
)


def all_problems(doc: Doc) -> Problems:
    return [problem for check in CHECKS for problem in check(doc)]


# -- the file as committed ----------------------------------------------------------------


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_eval_set(check: Callable[[Doc], Problems]) -> None:
    problems = check(load())
    assert not problems, "\n".join(problems)


def test_labelled_queries_file_is_unchanged_in_shape() -> None:
    """The eval set folds labelled_queries.json in; it must not replace it."""
    assert [q["query_id"] for q in LABELLED] == [f"q-{n:02d}" for n in range(1, 37)]


# -- the checks catch a broken file --------------------------------------------------------


def _query(doc: Doc, qid: str) -> dict[str, Any]:
    return next(q for q in doc["queries"] if q["query_id"] == qid)


def _first(doc: Doc, category: str) -> dict[str, Any]:
    return next(q for q in doc["queries"] if q["category"] == category)


def _truncate(doc: Doc) -> None:
    del doc["queries"][MIN_QUERIES - 1 :]


def _duplicate_id(doc: Doc) -> None:
    doc["queries"][-1]["query_id"] = doc["queries"][-2]["query_id"]


def _unknown_record(doc: Doc) -> None:
    _query(doc, "q-01")["judgments"]["mei-conv-999"] = 1


def _other_users_record(doc: Doc) -> None:
    _query(doc, "q-01")["judgments"]["omar-conv-007"] = 1


def _profile_judged(doc: Doc) -> None:
    _query(doc, "q-01")["judgments"]["mei-prof-01"] = 1


def _retracted_graded(doc: Doc) -> None:
    _query(doc, "q-30")["judgments"]["mei-conv-041"] = 2


def _future_record_graded(doc: Doc) -> None:
    _query(doc, "q-09")["judgments"]["omar-conv-042"] = 3


def _grade_out_of_range(doc: Doc) -> None:
    _query(doc, "q-01")["judgments"]["mei-conv-001"] = 4


def _nothing_answers(doc: Doc) -> None:
    q = _first(doc, "paraphrase")
    q["judgments"] = {memory_id: min(grade, 1) for memory_id, grade in q["judgments"].items()}


def _no_relevant_with_hit(doc: Doc) -> None:
    q = _first(doc, "no_relevant")
    user_prefix = q["user_id"].split(".")[0]
    q["judgments"][f"{user_prefix}-conv-001"] = 1


def _folded_relevant_dropped(doc: Doc) -> None:
    del _query(doc, "q-06")["judgments"]["mei-conv-039"]


def _folded_text_changed(doc: Doc) -> None:
    _query(doc, "q-15")["text"] = "summarize transcript"


def _folded_missing(doc: Doc) -> None:
    doc["queries"] = [q for q in doc["queries"] if q["query_id"] != "q-36"]


def _all_dev(doc: Doc) -> None:
    for q in doc["queries"]:
        q["split"] = "dev"


def _two_line_rationale(doc: Doc) -> None:
    doc["queries"][-1]["rationale"] += "\nand a second line"


def _wrong_language(doc: Doc) -> None:
    _query(doc, "q-35")["language"] = "en"


def _too_few_chinese(doc: Doc) -> None:
    for q in doc["queries"]:
        if q["language"] == "zh":
            q["language"] = "mixed"
            q["text"] += " x"


def _unknown_category(doc: Doc) -> None:
    doc["queries"][-1]["category"] = "semantic"


def _extra_field(doc: Doc) -> None:
    doc["queries"][0]["expect"] = "top1"


BREAKS: dict[str, tuple[Callable[[Doc], None], Callable[[Doc], Problems]]] = {
    "fewer than 80 queries": (_truncate, check_ids),
    "duplicate query id": (_duplicate_id, check_ids),
    "unknown memory id": (_unknown_record, check_judgments),
    "another user's record": (_other_users_record, check_judgments),
    "a profile judged": (_profile_judged, check_judgments),
    "a retracted record graded": (_retracted_graded, check_judgments),
    "a record from after as_of graded": (_future_record_graded, check_judgments),
    "grade 4": (_grade_out_of_range, check_judgments),
    "no grade 2 or 3": (_nothing_answers, check_relevance),
    "no_relevant with a hit": (_no_relevant_with_hit, check_relevance),
    "folded relevant id dropped": (_folded_relevant_dropped, check_folded),
    "folded text changed": (_folded_text_changed, check_folded),
    "folded query missing": (_folded_missing, check_folded),
    "no heldout split": (_all_dev, check_split),
    "two-line rationale": (_two_line_rationale, check_fields),
    "language does not fit the text": (_wrong_language, check_fields),
    "too few Chinese queries": (_too_few_chinese, check_balance),
    "unknown category": (_unknown_category, check_fields),
    "extra field": (_extra_field, check_fields),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_checks_catch_a_broken_copy(name: str) -> None:
    breaker, check = BREAKS[name]
    doc = load()
    assert not check(doc)
    breaker(doc)
    assert check(doc), f"{check.__name__} did not notice: {name}"
