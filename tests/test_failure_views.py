"""The self-check of notebook 07 (failures and recovery): six predictions, none on screen.

The notebook's tables, races and recoveries are written in its cells and compared by
nbval; what is tested here is the checker the notebook relies on: what each call really
raises, that the reference solution passes and plausible wrong answers fail with their
hint, and that no call of the exercise runs, or is shown, before the exercise.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest

from memorylib import (
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryFailedClosedError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
    RemoteMemoryWriteError,
)
from memorylib.notebook.failure_views import check_error_predictions, exercise_truth

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "07_failures_and_recovery.ipynb"
SOLUTION = ROOT / "notebooks" / "solutions" / "07_failures_and_recovery.py"
# label -> the call as the notebook's table shows it; the checker runs these (exercise_truth)
EXERCISE_CALLS: dict[str, str] = {
    "A": 'engine.recall("layered memory", limit="5")',
    "B": 'engine.recall("?! layered !?")',
    "C": 'RemoteMemoryStore(store.path, user_id="  Local-User ").read_all()',
    "D": 'store.append(memory_id="conversation-006", ...)',
    "E": "store.read_all()",
    "F": 'RemoteMemoryStore(new_path).append(memory_id="c-1", ...)',
}
TRUTH = {
    "A": "RemoteMemoryValidationError",  # "5" is a str: the type is checked before the range
    "B": None,  # punctuation around a word: "layered" is a searchable term
    "C": None,  # strip + casefold: the same user, the same scope
    "D": "RemoteMemoryDuplicateError",  # the torn tail is recovered, then the id is checked
    "E": "RemoteMemoryCorruptionError",  # a terminated line is committed, wherever it is
    "F": "RemoteMemoryWriteError",  # a failed step is cut back; only a failed cut fails closed
}
RIGHT = {
    "A": RemoteMemoryValidationError,
    "B": None,
    "C": None,
    "D": RemoteMemoryDuplicateError,
    "E": RemoteMemoryCorruptionError,
    "F": RemoteMemoryWriteError,
}


def test_exercise_truth() -> None:
    assert set(EXERCISE_CALLS) == set(TRUTH)
    assert exercise_truth() == TRUTH


def test_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_prediction"]
    assert answer == RIGHT
    result = check_error_predictions(answer)
    assert result.is_right and str(result).startswith("✅ All 6 right")


def test_checker_accepts_names_and_no_error_spellings() -> None:
    answer = {
        "A": " RemoteMemoryValidationError ",
        "B": "no error",
        "C": "None",
        "D": "RemoteMemoryDuplicateError",
        "E": RemoteMemoryCorruptionError,
        "F": "RemoteMemoryWriteError",
    }
    assert check_error_predictions(answer).is_right


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        (None, "⏳", "Not answered"),
        ({"A": RemoteMemoryValidationError, "B": ...}, "⏳", "B, C, D, E, F"),
        # "5" is between 1 and 10, but it is not an int
        ({**RIGHT, "A": None}, "❌", "what type is '5'"),
        # punctuation is not refused when a word survives
        ({**RIGHT, "B": RemoteMemoryValidationError}, "❌", "Does this one have a word"),
        # another spelling of the same user id is the same user
        ({**RIGHT, "C": RemoteMemoryScopeError}, "❌", "strip() and casefold()"),
        # the torn tail is recovered first, but the duplicate is still a duplicate
        ({**RIGHT, "D": None}, "❌", "Is conversation-006 new"),
        # a parent of the class raised is right by generality only: be more specific
        ({**RIGHT, "D": RemoteMemoryValidationError}, "❌", "D: you said RemoteMemoryValidation"),
        ({**RIGHT, "D": "RemoteMemoryValidationError"}, "❌", "be more specific"),
        ({**RIGHT, "A": ValueError}, "❌", "A: you said ValueError. Hint: be more specific"),
        # a complete last line is committed: not a torn tail
        ({**RIGHT, "E": None}, "❌", "wherever its line is"),
        # a failed fsync is cut back; it does not fail closed
        ({**RIGHT, "F": RemoteMemoryFailedClosedError}, "❌", "Only a failed cut back"),
        ({**RIGHT, "F": None}, "❌", "F: you said no error"),
        ({**RIGHT, "E": None, "F": None}, "❌", "2 of 6 wrong"),
        # "no error" everywhere is right by accident on B and C only
        (dict.fromkeys(RIGHT), "❌", "4 of 6 wrong"),
        ("RemoteMemoryScopeError", "❌", "dict"),
    ],
)
def test_checker_rejects_wrong_answers(answer: object, start: str, fragment: str) -> None:
    result = check_error_predictions(answer)
    message = str(result)
    assert message.startswith(start) and fragment in message, message
    assert not result.is_right


def test_the_catch_all_everywhere_fails_and_tells_nothing_about_which_calls_raise() -> None:
    for catch_all in (RemoteMemoryError, "RemoteMemoryError", Exception):
        result = check_error_predictions(dict.fromkeys(RIGHT, catch_all))
        message = str(result)
        assert not result.is_right and "6 of 6 wrong" in message, message
        lines = [line for line in message.splitlines() if "you said" in line]
        assert len(lines) == 6 and all("is above every memorylib error" in x for x in lines)
        assert "more specific" not in message  # the same words for B and C (no error) as for A


def test_a_sibling_is_wrong_without_the_more_specific_hint() -> None:
    message = str(check_error_predictions({**RIGHT, "E": RemoteMemoryScopeError}))
    assert message.startswith("❌") and "more specific" not in message, message


def test_the_notebook_placeholder_names_no_outcome() -> None:
    before, _ = _cells_before_the_exercise()
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    answer_cell = cells[len(before) + 1]
    assert "my_prediction =" in answer_cell.source
    # no class, no name, no None in the placeholder: only the keys, each still `...`
    for outcome in ("RemoteMemory", "Error", "None", "no error"):
        assert outcome not in answer_cell.source, outcome
    namespace: dict[str, object] = {}
    exec(answer_cell.source, namespace)
    result = check_error_predictions(namespace["my_prediction"])
    assert str(result).startswith("⏳ Not answered yet for A, B, C, D, E, F"), str(result)


def _cells_before_the_exercise() -> tuple[list, nbformat.NotebookNode]:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    cut = next(i for i, c in enumerate(cells) if "## Your turn" in c.source)
    return cells[:cut], cells[cut]


def _shown(cell) -> str:
    parts = [cell.source]
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts += [v for k, v in output.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


# What makes each call new: none of it may appear before the exercise. (E is
# `store.read_all()` on a store whose LAST line is complete but not JSON: the notebook damages
# line 3 of 7 only, and reads torn last lines that have no newline. F's step, the fsync of a new
# file's directory, is a row of section 4's table whose outcome is left to the exercise; above
# it, that fsync never fails.)
NEW = {
    "A": ['limit="5"'],
    "B": ["?! layered !?"],
    "C": ["Local-User"],
    "D": ['append(memory_id="conversation-006"'],
    "F": ['"c-1"', "new_path"],
}


def test_no_call_of_the_exercise_is_run_or_shown_before_it() -> None:
    before, your_turn = _cells_before_the_exercise()
    shown = "\n".join(_shown(cell) for cell in before)
    for label, call in EXERCISE_CALLS.items():
        assert f"`{call}`" in your_turn.source, f"{label}: the notebook shows another call"
        for fragment in NEW.get(label, []):
            assert fragment in call, (label, fragment)
            assert fragment not in shown, f"{label}: {fragment!r} is on screen before the exercise"


def test_the_critical_section_sketch_writes_what_store_append_writes(tmp_path: Path) -> None:
    """Section 4's `append_critical_section`, run from the notebook's own cell: the same bytes
    as `store.append`, a duplicate refused, and a failed write cut back, as the real store."""
    import ast
    import dataclasses
    import errno
    import os
    from unittest import mock

    from memorylib import MemoryKind, MemorySource, RemoteMemoryStore, files, seed_teaching_store
    from memorylib.store import encode_line

    (cell,) = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.id == "e8c13ca2"]
    body = ast.parse(cell.source).body
    (sketch,) = [n for n in body if getattr(n, "name", "") == "append_critical_section"]
    namespace = {"errno": errno, "os": os, "files": files, "encode_line": encode_line}
    namespace["RemoteMemoryDuplicateError"] = RemoteMemoryDuplicateError
    namespace["RemoteMemoryWriteError"] = RemoteMemoryWriteError
    exec(compile(ast.Module([sketch], []), str(NOTEBOOK), "exec"), namespace)
    append_critical_section = namespace["append_critical_section"]

    real, hand = (RemoteMemoryStore(tmp_path / f"{name}.jsonl") for name in ("real", "hand"))
    for store in (real, hand):
        seed_teaching_store(store)
    source = MemorySource("t-7", "conversation_transcript", "note", "2026-08-02T10:00:00+02:00")
    for memory_id in ("conversation-007", "笔记-8"):
        record = real.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content="Sharded   the store.",
            summary="Sharded.",
            source=source,
            stored_at="2026-08-02T10:00:00Z",
        )
        append_critical_section(hand, record)
        assert hand.path.read_bytes() == real.path.read_bytes()
    before = hand.path.read_bytes()
    with pytest.raises(RemoteMemoryDuplicateError):
        append_critical_section(hand, record)
    other = dataclasses.replace(record, memory_id="conversation-009")
    full = OSError(errno.ENOSPC, "No space left on device")
    with mock.patch.object(os, "write", side_effect=full), pytest.raises(RemoteMemoryWriteError):
        append_critical_section(hand, other)
    assert hand.path.read_bytes() == before  # cut back: nothing stored
