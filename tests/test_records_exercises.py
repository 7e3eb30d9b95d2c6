"""Notebook 01's checks (stored records): right answers pass, wrong ones get the hint that
names their mistake, and the exercise's facts are what the notebook says they are."""

from __future__ import annotations

import hashlib
import re
import runpy
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
from memorylib.notebook.records_exercises import (
    BUILT_RECORD,
    EXERCISE_APPENDS,
    SCOPE_EXERCISE,
    check_append_predictions,
    check_built_record,
    check_scope_function,
    exercise_truth,
)

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
        ({"F": RemoteMemoryValidationError}, "letters of which scripts"),
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


def append_call(store: RemoteMemoryStore, **changes) -> StoredMemory:
    source = changes.pop("source", None) or MemorySource(
        "call-0715",
        "conversation_transcript",
        "tools review",
        changes.pop("captured_at", "2026-07-16T01:10:00Z"),
    )
    fields = dict(
        kind=MemoryKind.CONVERSATION,
        content="Kept the shell tool behind a confirmation.",
        summary="Shell tool stays behind a confirmation.",
        source=source,
        stored_at="2026-07-16T01:22:00Z",
    )
    return store.append(**{**fields, **changes})


def test_the_reference_record_passes(omar: RemoteMemoryStore) -> None:
    record = SOLUTION["my_record_in"](omar)
    result = check_built_record(record, omar)
    assert result.is_right, str(result)
    assert record.source.captured_at == BUILT_RECORD["captured_at"]  # the offset, converted


def test_the_record_given_in_utc_passes_too(omar: RemoteMemoryStore) -> None:
    assert check_built_record(append_call(omar), omar).is_right


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"captured_at": "2026-07-15T18:10:00Z"}, "local time of the call, in UTC-7, not UTC"),
        ({"captured_at": "2026-07-15T18:10:00+07:00"}, "seven hours behind UTC"),
        ({"captured_at": "2026-07-16T01:22:00Z"}, "when the call happened, not when"),
        ({"captured_at": "2026-07-16T02:10:00Z"}, "18:10 on 15 July 2026, in UTC-7"),
        ({"stored_at": "2026-07-16T01:10:00Z"}, "two clocks, two values"),
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
    record = append_call(omar, captured_at="2026-07-16T01:22:00Z", stored_at="2026-07-16T01:10:00Z")
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
        source=MemorySource("call-0715", "conversation_transcript", "t", "2026-07-16T01:10:00Z"),
        stored_at="2026-07-16T01:22:00Z",
    )
    assert "building a StoredMemory stores nothing" in str(check_built_record(built, omar))


def test_the_checker_placeholder_and_types(omar: RemoteMemoryStore) -> None:
    assert str(check_built_record(..., omar)).startswith("⏳ Not answered yet")
    assert "must be the StoredMemory" in str(check_built_record("2026-07-16T01:10:00Z", omar))
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


def test_scope_function_stretch_catches_what_only_generated_ids_show() -> None:
    # Right on every named example, wrong on a trailing newline (only generated ids have one).
    def almost(user_id: str) -> str:
        return digest(user_id.strip(" \t").casefold())[:16]

    named = [example.call.args[0] for example in SCOPE_EXERCISE.examples]
    assert all(almost(u) == user_scope_for(u) for u in named)
    result = check_scope_function(almost)
    assert not result.is_right and result.counterexample.stage == "generated"
    # shrunk to the smallest: one character and the newline
    assert re.search(r"almost\('.\\n'\)$", result.counterexample.example)


def test_validation_error_is_the_duplicate_errors_parent() -> None:
    # The "be more specific" hint of exercise A rests on this hierarchy.
    assert issubclass(RemoteMemoryDuplicateError, RemoteMemoryValidationError)
