"""Notebook 01's checks (stored records): right answers pass, wrong ones get the hint that
names their mistake, and the exercise's facts are what the notebook says they are."""

from __future__ import annotations

import hashlib
import re
import runpy
from datetime import datetime, timedelta
from pathlib import Path

import nbformat
import pytest

from memorylib import (
    MemoryKind,
    MemorySource,
    RemoteMemoryDuplicateError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    StoredMemory,
    user_scope_for,
)
from memorylib.datasets import COURSE_USERS, course_records
from memorylib.notebook.common import Workspace
from memorylib.notebook.records_exercises import (
    BUILT_RECORD,
    EXERCISE_APPENDS,
    SCOPE_EXERCISE,
    check_append_predictions,
    check_built_record,
    check_scope_function,
    exercise_truth,
)
from memorylib.seed import TEACHING_RECORDS
from memorylib.timestamps import format_timestamp

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = runpy.run_path(str(ROOT / "notebooks" / "solutions" / "01_stored_records.py"))
NOTEBOOK = ROOT / "notebooks" / "01_stored_records.ipynb"

TRUTH = {
    "A": None,
    "B": None,
    "C": "RemoteMemoryDuplicateError",
    "D": None,
    "E": "RemoteMemoryValidationError",
    "F": None,
    "files": 2,
}


def _cells_before_your_turn() -> tuple[list, list]:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cut = next(i for i, c in enumerate(nb.cells) if "## Your turn" in c.source)
    return nb.cells[:cut], nb.cells[cut:]


# -- A: predict six appends ----------------------------------------------------------------------


def test_the_six_appends_do_what_the_solution_says() -> None:
    # E is refused before the lock, so Erin gets no file; F's id is letters of another script.
    assert exercise_truth() == TRUTH


def test_the_notebook_shows_the_appends_the_checker_runs() -> None:
    _, your_turn = _cells_before_your_turn()
    rows = re.findall(
        r'^\| ([A-F]) \| `user_store\("([^"]*)"\)\.append\(memory_id="([^"]*)", \.\.\.\)` \|$',
        your_turn[0].source,
        re.M,
    )
    assert {label: (user, memory_id) for label, user, memory_id in rows} == EXERCISE_APPENDS


def test_the_shape_comment_and_the_placeholder_carry_no_values() -> None:
    # Even a value marked "not the answer" gives one away by elimination: the comment over
    # my_prediction names the seven keys with ... only, and so does the not-answered message.
    _, your_turn = _cells_before_your_turn()
    (cell,) = [c for c in your_turn if c.cell_type == "code" and "my_prediction = ..." in c.source]
    comment = " ".join(line for line in cell.source.splitlines() if line.startswith("#"))
    shape = re.search(r"\{.*\}", comment)
    assert shape, comment
    pairs = re.findall(r'"(\w+)":\s*([^,}]+)', shape.group())
    assert [key for key, _ in pairs] == [*EXERCISE_APPENDS, "files"]
    assert {value.strip() for _, value in pairs} == {"..."}
    waiting = str(check_append_predictions(...))
    assert waiting.startswith("⏳") and not re.search(r'"\w+":\s*[^.\s]', waiting), waiting


def test_the_checker_accepts_the_reference_solution() -> None:
    result = check_append_predictions(SOLUTION["my_prediction"])
    assert result.is_right and str(result).startswith("✅ All 7 right")


def test_the_checker_accepts_names_and_written_spellings() -> None:
    answer = {
        **TRUTH,
        "A": "written",
        "B": "no error",
        "D": "None",
        "C": RemoteMemoryDuplicateError,
        "E": " RemoteMemoryValidationError ",
    }
    assert check_append_predictions(answer).is_right


def test_a_chinese_reader_may_answer_in_the_words_the_checker_shows() -> None:
    from .course import in_language

    with in_language("zh"):
        answer = {**TRUTH, "A": "已写入", "B": "没有错误", "C": RemoteMemoryDuplicateError}
        result = check_append_predictions(answer)
        assert result.is_right, str(result)
        assert "已写入" in str(check_append_predictions({**TRUTH, "C": None}))


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"B": RemoteMemoryDuplicateError}, "B: you said 'RemoteMemoryDuplicateError'"),
        ({"C": None}, "C: you said None (written). Hint: which user is 'DANA'"),
        ({"C": RemoteMemoryValidationError}, "C: you said 'RemoteMemoryValidationError'. Hint: "),
        ({"C": RemoteMemoryValidationError}, "be more specific"),
        ({"D": RemoteMemoryDuplicateError}, "unique per store, not across users"),
        ({"D": RemoteMemoryScopeError}, "D: you said 'RemoteMemoryScopeError'"),
        ({"E": None}, "what may it start with"),
        ({"F": RemoteMemoryValidationError}, "a letter or digit of which scripts"),
        ({"files": 3}, "does a rejected append create a file"),
        ({"files": "2"}, "files: you said '2'"),
        ({"files": True}, "files: you said True"),
        ({"C": None, "files": 1}, "2 of 7 wrong"),
    ],
)
def test_the_checker_rejects_wrong_answers_with_a_hint(change: dict, fragment: str) -> None:
    result = check_append_predictions({**TRUTH, **change})
    assert str(result).startswith("❌") and fragment in str(result), str(result)


def test_only_a_parent_class_is_told_to_be_more_specific() -> None:
    # A wrong class that is not a parent of the right one gets the label's own hint.
    result = str(check_append_predictions({**TRUTH, "C": RemoteMemoryScopeError}))
    assert "be more specific" not in result and "which user is 'DANA'" in result


@pytest.mark.parametrize(
    "guess",
    [
        {label: None for label in TRUTH} | {"files": 6},  # everything is written
        {label: "RemoteMemoryValidationError" for label in TRUTH} | {"files": 0},
        {label: "RemoteMemoryDuplicateError" for label in TRUTH} | {"files": 1},
    ],
)
def test_a_blanket_guess_fails(guess: dict) -> None:
    assert not check_append_predictions(guess).is_right


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        ({**TRUTH, "files": ...}, "⏳", "files"),
        ({"A": None}, "⏳", "B, C, D, E, F, files"),
        ("2", "❌", "dict"),
    ],
)
def test_the_checker_placeholder_and_shape(answer: object, start: str, fragment: str) -> None:
    result = str(check_append_predictions(answer))
    assert result.startswith(start) and fragment in result, result


# -- B: build and append the record of a call ----------------------------------------------------


@pytest.fixture
def omar(tmp_path: Path) -> RemoteMemoryStore:
    return RemoteMemoryStore(tmp_path / "omar.jsonl", user_id="omar.haddad@northwind.example")


CAPTURED, STORED = BUILT_RECORD["captured_at"], BUILT_RECORD["stored_at"]


def append_call(store: RemoteMemoryStore, **changes) -> StoredMemory:
    source = changes.pop("source", None) or MemorySource(
        "call-0715",
        changes.pop("source_type", "conversation_transcript"),
        "tools review",
        changes.pop("captured_at", CAPTURED),
    )
    fields = dict(
        kind=MemoryKind.CONVERSATION,
        content="Kept the shell tool behind a confirmation.",
        summary="Shell tool stays behind a confirmation.",
        source=source,
        stored_at=STORED,
    )
    return store.append(**{**fields, **changes})


def test_the_reference_record_passes(omar: RemoteMemoryStore) -> None:
    record = SOLUTION["my_record_in"](omar)
    result = check_built_record(record, omar)
    assert result.is_right, str(result)
    assert record.source.captured_at == BUILT_RECORD["captured_at"]  # the offset, converted


def test_the_record_given_in_utc_passes_too(omar: RemoteMemoryStore) -> None:
    result = check_built_record(append_call(omar), omar)
    assert result.is_right and "6 h 53 min later" in str(result), str(result)


def test_the_exercise_states_its_facts_and_the_checker_uses_them() -> None:
    # The task gives the source's id and type and both clocks in words; the checker's
    # truth is those words converted (18:10 in UTC-7 is 01:10 UTC the next day).
    _, your_turn = _cells_before_your_turn()
    task = next(c.source for c in your_turn if "**B. Store a call" in c.source)
    words = " ".join(task.replace("*", "").split())
    for fact in (
        "18:10 on 15 July 2026, his local time, UTC-7",
        '`"call-0715"`',
        '`"conversation_transcript"`',
        "08:03 on 16 July 2026, UTC",
    ):
        assert fact in words, fact
    assert BUILT_RECORD == {
        "source_id": "call-0715",
        "source_type": "conversation_transcript",
        "captured_at": "2026-07-16T01:10:00Z",
        "stored_at": "2026-07-16T08:03:00Z",
    }


def test_no_lag_shown_before_the_exercise_gives_captured_at() -> None:
    # Section 2 shows the lags of the teaching seed (0), of memory-42 and of the course
    # corpus (184 records at 12 minutes): none of them, taken from the exercise's stored_at,
    # gives its captured_at, so the time-zone conversion cannot be skipped.
    clocks = [(r["stored_at"], r["source"].captured_at) for r in TEACHING_RECORDS]
    clocks += [(r.stored_at, r.source.captured_at) for u in COURSE_USERS for r in course_records(u)]
    parse = datetime.fromisoformat
    shown = {parse(stored) - parse(captured) for stored, captured in clocks}
    shown.add(timedelta(hours=21, minutes=30))  # memory-42
    assert timedelta(minutes=12) in shown and timedelta(0) in shown
    stored = datetime.fromisoformat(STORED)
    assert all(format_timestamp(stored - lag) != CAPTURED for lag in shown)


def test_the_answer_cell_can_be_run_again_after_a_wrong_attempt() -> None:
    # A wrong first attempt leaves its record; run again with the same memory_id, the cell
    # must start from a new, empty store, so the fixed call is not refused as a duplicate.
    _, your_turn = _cells_before_your_turn()
    (cell,) = [c for c in your_turn if c.cell_type == "code" and "my_record = ..." in c.source]
    ws = Workspace()
    try:
        namespace = {"ws": ws, "RemoteMemoryStore": RemoteMemoryStore, "append_call": append_call}
        first = (  # the solution's memory_id, local time written as UTC
            "append_call(omar_store, memory_id='tools-review-0715', "
            "captured_at='2026-07-15T18:10:00Z')"
        )
        exec(cell.source.replace("my_record = ...", f"my_record = {first}"), namespace)
        assert not check_built_record(namespace["my_record"], namespace["omar_store"]).is_right
        namespace["solution"] = SOLUTION["my_record_in"]
        exec(cell.source.replace("my_record = ...", "my_record = solution(omar_store)"), namespace)
        assert check_built_record(namespace["my_record"], namespace["omar_store"]).is_right
    finally:
        ws.cleanup()


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"captured_at": "2026-07-15T18:10:00Z"}, "local time of the call, in UTC-7, not UTC"),
        ({"captured_at": "2026-07-15T18:10:00+07:00"}, "seven hours behind UTC"),
        ({"captured_at": STORED}, "when the call happened, not when"),
        ({"captured_at": "2026-07-16T07:51:00Z"}, "the sync job's 12 minutes do not apply"),
        ({"captured_at": "2026-07-16T02:10:00Z"}, "18:10 on 15 July 2026, in UTC-7"),
        ({"stored_at": CAPTURED}, "two clocks, two values"),
        ({"stored_at": "2026-07-16T01:22:00Z"}, "08:03 UTC on 16 July"),
        ({"source_type": "call"}, "source_type 'call'"),
        ({"stored_at": None}, "left out, it is the moment you ran the cell"),
        ({"kind": MemoryKind.PROFILE}, "a conversation, not profile"),
        (
            {"source": MemorySource("omar", "transcript", "t", "2026-07-16T01:10:00Z")},
            "source_id 'omar'",
        ),
    ],
)
def test_a_wrong_field_gets_its_hint(omar: RemoteMemoryStore, changes: dict, fragment: str) -> None:
    result = check_built_record(append_call(omar, **changes), omar)
    assert not result.is_right and fragment in str(result), str(result)


def test_swapped_clocks_get_both_hints(omar: RemoteMemoryStore) -> None:
    record = append_call(omar, captured_at=STORED, stored_at=CAPTURED)
    result = str(check_built_record(record, omar))
    assert "2 field(s) to fix" in result and "two clocks" in result


def test_a_record_that_was_never_appended_fails(omar: RemoteMemoryStore, tmp_path: Path) -> None:
    elsewhere = RemoteMemoryStore(tmp_path / "other.jsonl", user_id="omar.haddad@northwind.example")
    record = append_call(elsewhere)  # right fields, wrong store
    assert "is not in omar.jsonl" in str(check_built_record(record, omar))
    built = StoredMemory(
        memory_id="call",
        user_scope=omar.user_scope,
        kind=MemoryKind.CONVERSATION,
        content="x",
        summary="x",
        source=MemorySource("call-0715", "conversation_transcript", "t", CAPTURED),
        stored_at=STORED,
    )
    assert "building a StoredMemory stores nothing" in str(check_built_record(built, omar))


def test_the_checker_placeholder_and_types(omar: RemoteMemoryStore) -> None:
    assert str(check_built_record(..., omar)).startswith("⏳ Not answered yet")
    assert "must be the StoredMemory" in str(check_built_record(CAPTURED, omar))
    assert "Pass the store" in str(check_built_record(append_call(omar), None))


def test_no_accepted_timestamp_is_on_screen_before_the_exercise() -> None:
    before, _ = _cells_before_your_turn()
    shown = "\n".join(c.source + "".join(str(o) for o in c.get("outputs", [])) for c in before)
    for value in (BUILT_RECORD["captured_at"], BUILT_RECORD["stored_at"], "2026-07-15T18:10"):
        assert value[:16] not in shown, value


# -- optional stretch: write user_scope_for yourself ---------------------------------------------


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_scope_function_stretch() -> None:
    assert check_scope_function(SOLUTION["my_user_scope"]).is_right
    assert str(check_scope_function(...)).startswith("⏳")
    assert "Pass the function itself" in str(check_scope_function("2bd806c97f0e00af"))
    lowered = check_scope_function(lambda u: digest(u.strip().lower())[:16])
    assert lowered.counterexample is not None
    assert lowered.counterexample.example.startswith("'Straße'")
    assert "lower() instead of casefold()" in lowered.message
    unstripped = check_scope_function(lambda u: digest(u.casefold())[:16])
    assert unstripped.counterexample.example.startswith("'  Alice '")
    assert "not stripped" in unstripped.message
    whole = check_scope_function(lambda u: digest(u.strip().casefold()))
    assert whole.counterexample.stage == "named" and "the whole digest" in whole.message

    def crashes(user_id: str) -> str:
        raise RuntimeError("boom")

    assert "raised RuntimeError: boom" in str(check_scope_function(crashes))


def test_scope_function_stretch_refuses_a_function_that_delegates_to_the_library() -> None:
    # Each agrees with user_scope_for on every id, because it is user_scope_for underneath.
    for delegating in (
        user_scope_for,
        lambda u: user_scope_for(u),
        lambda u: RemoteMemoryStore("never-written.jsonl", user_id=u).user_scope,
    ):
        result = check_scope_function(delegating)
        assert not result.is_right
        assert "calls the library's user_scope_for" in str(result), str(result)


def test_scope_function_stretch_catches_what_only_generated_ids_show() -> None:
    # Right on every named example, wrong on a trailing newline (only generated ids have one).
    def almost(user_id: str) -> str:
        return digest(user_id.strip(" \t").casefold())[:16]

    named = [call.args[0] for call in SCOPE_EXERCISE.examples.values()]
    assert all(almost(u) == user_scope_for(u) for u in named)
    result = check_scope_function(almost)
    assert not result.is_right and result.counterexample.stage == "generated"
    # shrunk to the smallest: one character and the newline
    assert re.search(r"almost\('.\\n'\)$", result.counterexample.example)


def test_validation_error_is_the_duplicate_errors_parent() -> None:
    # The "be more specific" hint of exercise A rests on this hierarchy.
    assert issubclass(RemoteMemoryDuplicateError, RemoteMemoryValidationError)


# -- the append's critical section on screen (section 3) is the library's ------------------------


def _notebook_function(cell_id: str, name: str, namespace: dict) -> object:
    """Define the function ``name`` of the notebook cell ``cell_id`` (only its def) in
    ``namespace``, as the notebook's set-up cell would."""
    import ast

    (cell,) = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.get("id") == cell_id]
    (definition,) = [
        node
        for node in ast.parse(cell.source).body
        if isinstance(node, ast.FunctionDef) and node.name == name
    ]
    exec(compile(ast.Module([definition], []), str(NOTEBOOK), "exec"), namespace)
    return namespace[name]


def test_the_critical_section_on_screen_writes_what_store_append_writes(tmp_path: Path) -> None:
    import json
    import os

    import filelock

    namespace = {"json": json, "os": os, "filelock": filelock}
    namespace["RemoteMemoryDuplicateError"] = RemoteMemoryDuplicateError
    append_line = _notebook_function("1ab2b0ba", "append_line", namespace)
    by_store = RemoteMemoryStore(tmp_path / "store.jsonl", user_id="Dana")
    by_hand = tmp_path / "hand.jsonl"
    # same lock file: store.append and append_line exclude each other (the notebook's 3rd cell)
    assert str(by_store.lock_path) == f"{by_store.path}.lock"
    cases = [  # a run of spaces, another script, a fraction of a second, a UTC offset
        ("m-1", "Selected   SQLite WAL.", "2026-08-01T20:00:00+08:00"),
        ("笔记-2", '上下文预算 «quoted» "text"', "2026-08-01T12:00:00.5Z"),
        ("m:3", "tabs\tand\nnewlines", "2026-07-15T18:10:00-07:00"),
    ]
    for memory_id, text, captured_at in cases:
        record = by_store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content=text,
            summary=text[:10],
            source=MemorySource("t-1", "conversation_transcript", "title", captured_at),
            stored_at="2026-08-02T09:30:00Z",
        )
        append_line(by_hand, record)
        assert by_hand.read_bytes() == by_store.path.read_bytes()
    before = by_hand.read_bytes()
    with pytest.raises(RemoteMemoryDuplicateError):
        append_line(by_hand, record)  # the duplicate writes nothing
    assert by_hand.read_bytes() == before
    assert RemoteMemoryStore(by_hand, user_id="Dana").read_all() == by_store.read_all()
