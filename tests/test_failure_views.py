"""The views of notebook 07 (failures and recovery): every case typed, every byte kept.

The commit point both ways: a torn last line is invisible to readers (a warning, no
error) and recovered by the next append; a damaged complete line fails closed until
repair quarantines it.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from memorylib import (
    RecallEngine,
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    UncommittedWriteWarning,
    fsck,
    seed_teaching_store,
)
from memorylib.notebook.failure_race import count_lines_with_id, race_for_memory_id
from memorylib.notebook.failure_views import (
    EXERCISE_CALLS,
    attempt,
    build_failure_cases,
    bytes_accounted_for,
    check_error_predictions,
    conversation,
    error_hierarchy_frame,
    exercise_truth,
    failure_case_view,
    failure_frame,
    failure_widget,
    file_fingerprint,
    fsck_frame,
    insert_bad_line,
    observe,
    quarantine_frame,
    race_frame,
    read_only_frame,
    run_cli,
    tear_last_line,
    unlocked_race_frame,
)

AS_OF = "2026-08-02T12:00:00Z"
SOLUTION = (
    Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "07_failures_and_recovery.py"
)


@pytest.fixture
def chapter(tmp_path: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl")
    seed_teaching_store(store)
    return store


def test_attempt_returns_typed_errors_and_lets_bugs_through(chapter: RemoteMemoryStore) -> None:
    assert attempt(lambda: 42) == ("no error", "42")
    error, message = attempt(lambda: conversation(chapter, "conversation-001", "again"))
    assert error == "RemoteMemoryDuplicateError" and "conversation-001" in message
    with pytest.raises(ZeroDivisionError):
        attempt(lambda: 1 / 0)


def test_observe_records_warnings_as_text(chapter: RemoteMemoryStore) -> None:
    tear_last_line(chapter)
    for _ in range(2):  # every time, not once per line of code as Python would show it
        outcome = observe(lambda: len(chapter.read_all()))
        assert (outcome.error, outcome.message) == ("no error", "7")
        (warning,) = outcome.warnings
        assert warning.startswith("UncommittedWriteWarning: chapter.jsonl: line 8 is an uncommit")
    assert outcome.warning_types == "UncommittedWriteWarning"
    assert str(outcome).splitlines()[1].startswith("  warning: UncommittedWriteWarning")


def test_error_hierarchy_frame() -> None:
    frame = error_hierarchy_frame().set_index("error")
    assert frame.loc["RemoteMemoryDuplicateError", "parent"] == "RemoteMemoryValidationError"
    assert frame.loc["RemoteMemoryScopeError", "parent"] == "RemoteMemoryError"
    assert frame.loc["UncommittedWriteWarning", "parent"] == "UserWarning"


def test_every_failure_case_is_typed_and_names_its_field(tmp_path: Path) -> None:
    cases = build_failure_cases(tmp_path / "cases", as_of=AS_OF)
    frame = failure_frame(cases).set_index("case")
    assert frame["message names it"].all()
    expected = {
        "empty query": "RemoteMemoryValidationError",
        "punctuation-only query": "RemoteMemoryValidationError",
        "limit 0": "RemoteMemoryValidationError",
        "limit 11": "RemoteMemoryValidationError",
        "limit True (a bool)": "RemoteMemoryValidationError",
        "limit 2.5 (a float)": "RemoteMemoryValidationError",
        "duplicate memory_id": "RemoteMemoryDuplicateError",
        "captured_at not a timestamp": "RemoteMemoryValidationError",
        "another user reads the file": "RemoteMemoryScopeError",
        "another user appends to it": "RemoteMemoryScopeError",
        "malformed line": "RemoteMemoryCorruptionError",
        "append after a malformed line": "RemoteMemoryCorruptionError",
        "torn last line": "no error",
        "append after a torn line": "no error",
        "no match": "no error",
    }
    assert frame["error"].to_dict() == expected
    assert "empty_reason='no_matching_terms'" in frame.loc["no match", "message"]
    # the torn tail: a warning and no error; the next append recovers it
    warned = frame.loc[frame["warning"] != "", "warning"].to_dict()
    assert warned == {"torn last line": "UncommittedWriteWarning"}
    assert frame.loc["torn last line", "message"].startswith("read 7 records — torn.jsonl: line 8")
    assert frame.loc["append after a torn line", "message"] == (
        "appended conversation-008 as line 8; the 204 torn bytes moved to "
        "torn.jsonl.quarantine.jsonl"
    )


def test_running_the_cases_changes_no_store(tmp_path: Path) -> None:
    cases = build_failure_cases(tmp_path, as_of=AS_OF)
    before = {p.name: file_fingerprint(p) for p in tmp_path.rglob("*") if p.is_file()}
    failure_frame(cases)
    failure_frame(cases)
    after = {p.name: file_fingerprint(p) for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # no store, lock or quarantine file written or added


def test_failure_case_view_and_widget(tmp_path: Path) -> None:
    cases = build_failure_cases(tmp_path, as_of=AS_OF)
    frame = failure_frame(cases)
    stories = {case.name: case.story for case in cases}
    view = failure_case_view(frame, stories, "duplicate memory_id").set_index("field")
    assert view.loc["error", "value"] == "RemoteMemoryDuplicateError"
    assert "identity" in view.loc["why", "value"]
    assert failure_case_view(frame, stories, "no such case").empty
    box = failure_widget(frame, cases)
    dropdown = box.children[0]
    assert list(dropdown.options) == list(frame["case"])
    dropdown.value = "limit 0"  # must not raise
    shown = box.children[1].value
    assert "<table" in shown and "limit" in shown and "RemoteMemoryValidationError" in shown


def test_read_only_frame_proves_recall_writes_nothing(chapter: RemoteMemoryStore) -> None:
    frame = read_only_frame(
        chapter, RecallEngine(chapter), ["layered memory", "?!"], repeats=3, as_of=AS_OF
    )
    assert list(frame["recall calls"]) == [0, 6]
    before, after = frame.iloc[0], frame.iloc[1]
    assert (before["bytes"], before["lines"], before["sha256"]) == (
        after["bytes"],
        after["lines"],
        after["sha256"],
    )
    assert before["lines"] == 7


def test_unlocked_check_then_append_corrupts_the_file(tmp_path: Path) -> None:
    frame = unlocked_race_frame(tmp_path / "unlocked.jsonl")
    assert list(frame["outcome"][:4]) == ["yes", "yes", "written", "written"]
    assert frame["outcome"].iloc[-1].startswith("RemoteMemoryCorruptionError: line 9: duplicate")
    assert count_lines_with_id(tmp_path / "unlocked.jsonl", "conversation-race") == (2, 9)


@pytest.mark.slow
def test_a_real_race_has_exactly_one_winner(chapter: RemoteMemoryStore) -> None:
    report = race_for_memory_id(chapter.path, contenders=3)
    assert report.outcomes == {"RemoteMemoryDuplicateError": 2, "appended (won)": 1}
    assert report.lines_with_id_after == 1
    assert (report.lines_before, report.lines_after) == (7, 8)
    assert report.survivor_wrote_by_a_contender and report.clean_exits == 3
    frame = race_frame(report).set_index("measure")
    assert frame.loc["durable lines with the raced memory_id", "value"] == 1


def test_race_needs_two_contenders(chapter: RemoteMemoryStore) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        race_for_memory_id(chapter.path, contenders=1)


def test_a_torn_tail_is_invisible_then_recovered_by_the_next_append(
    chapter: RemoteMemoryStore,
) -> None:
    size = chapter.path.stat().st_size
    torn = tear_last_line(chapter)
    assert not torn.endswith(b"\n") and chapter.path.stat().st_size == size + len(torn)
    assert chapter.uncommitted_bytes() == len(torn)
    with pytest.warns(UncommittedWriteWarning, match="line 8"):
        assert len(chapter.read_all()) == 7
    report = fsck.check_store_file(chapter.path)
    summary = fsck_frame(report).set_index("field")["value"]
    assert summary["uncommitted tail (torn_tail_bytes)"] == len(torn)
    assert summary["healthy"] is True and summary["problems"] == "none"
    assert quarantine_frame(chapter.path).empty
    original = chapter.path.read_bytes()
    conversation(chapter, "conversation-007", "written again")  # recovers, then appends
    assert chapter.uncommitted_bytes() == 0
    assert [r.memory_id for r in chapter.read_all()][-1] == "conversation-007"
    (entry,) = fsck.read_quarantine(chapter.path)
    assert entry["bytes"] == torn and (entry["line"], entry["byte_offset"]) == (8, size)
    assert bytes_accounted_for(original, chapter.path.read_bytes()[:size], [entry])
    shown = quarantine_frame(chapter.path)
    assert list(shown.columns) == ["line", "byte_offset", "length", "sha256", "reason"]
    row = shown.iloc[0]
    assert (row["line"], row["byte_offset"], row["length"]) == (8, size, len(torn))
    assert row["sha256"] == entry["sha256"][:16] and "uncommitted write" in row["reason"]


def test_a_damaged_middle_line_fails_closed_until_repaired(chapter: RemoteMemoryStore) -> None:
    insert_bad_line(chapter, 3)
    for action in (chapter.read_all, lambda: conversation(chapter, "c-9", "x")):
        error, message = attempt(action)
        assert error == "RemoteMemoryCorruptionError" and message.startswith("line 3:")
    report = fsck.check_store_file(chapter.path)
    assert not report.healthy and [line for line, _ in report.problems] == [3]
    original = chapter.path.read_bytes()
    repaired = fsck.repair_store_file(chapter.path)
    assert repaired.method == "rewrite" and repaired.records_kept == 7
    quarantine = fsck.read_quarantine(chapter.path)
    assert bytes_accounted_for(original, chapter.path.read_bytes(), quarantine)
    assert list(quarantine_frame(chapter.path)["line"]) == [3]
    assert len(chapter.read_all()) == 7
    conversation(chapter, "conversation-007", "written again")
    assert len(chapter.read_all()) == 8


def test_bytes_accounted_for_a_middle_chunk() -> None:
    import base64

    original = b"aaa\nBAD\nccc\n"
    entry = {"byte_offset": 4, "bytes_b64": base64.b64encode(b"BAD\n").decode()}
    assert bytes_accounted_for(original, b"aaa\nccc\n", [entry])
    assert not bytes_accounted_for(original, b"aaa\n", [entry])


def test_run_cli_shows_the_command_its_output_and_what_the_status_means(
    chapter: RemoteMemoryStore,
) -> None:
    tear_last_line(chapter)
    torn = run_cli(["fsck", chapter.path.name], cwd=chapter.path.parent)
    assert torn.exit_status == 0 and torn.stderr == ""
    lines = torn.text.splitlines()
    assert lines[0] == "$ python -m memorylib fsck chapter.jsonl"
    assert "store file: chapter.jsonl (3656 bytes)" in lines
    assert any(line.startswith("uncommitted tail: 204 bytes") for line in lines)
    assert "status: healthy" in lines
    assert lines[-1] == "exit status 0: healthy (an uncommitted tail is not damage)"
    assert str(chapter.path.parent) not in torn.text
    insert_bad_line(chapter, 3)
    damaged = run_cli(["fsck", chapter.path.name], cwd=chapter.path.parent)
    assert damaged.exit_status == 1 and damaged.text.endswith("exit status 1: damage found")
    assert "  line 3: not valid JSON" in damaged.text
    fixed = run_cli(["repair", chapter.path.name], cwd=chapter.path.parent)
    assert fixed.exit_status == 0 and "(rewrite)" in fixed.text
    assert fixed.text.endswith("exit status 0: healthy afterwards")
    missing = run_cli(["fsck", "missing.jsonl"], cwd=chapter.path.parent)
    assert missing.exit_status == 2 and "error: no store file" in missing.text


def test_exercise_truth() -> None:
    assert set(EXERCISE_CALLS) == {"A", "B", "C", "D", "E", "F"}
    assert exercise_truth() == {
        "A": "RemoteMemoryValidationError",
        "B": "RemoteMemoryDuplicateError",
        "C": "RemoteMemoryScopeError",
        "D": None,
        "E": None,  # a torn tail never committed: the next append recovers it
        "F": "RemoteMemoryCorruptionError",  # a committed line that does not parse
    }


def test_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_prediction"]
    result = check_error_predictions(answer)
    assert result.is_right and str(result).startswith("✅ All 6 right")


def test_checker_accepts_names_and_no_error_spellings() -> None:
    answer = {
        "A": "RemoteMemoryValidationError",
        "B": "RemoteMemoryDuplicateError",
        "C": " RemoteMemoryScopeError ",
        "D": "no error",
        "E": "None",
        "F": RemoteMemoryCorruptionError,
    }
    assert check_error_predictions(answer).is_right


RIGHT = {
    "A": RemoteMemoryValidationError,
    "B": RemoteMemoryDuplicateError,
    "C": RemoteMemoryScopeError,
    "D": None,
    "E": None,
    "F": RemoteMemoryCorruptionError,
}


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        (None, "⏳", "Not answered"),
        ({"A": RemoteMemoryValidationError, "B": ...}, "⏳", "B, C, D, E, F"),
        ({**RIGHT, "B": RemoteMemoryValidationError}, "❌", "more specific"),
        ({**RIGHT, "C": RemoteMemoryCorruptionError}, "❌", "whose lines"),
        ({**RIGHT, "D": RemoteMemoryValidationError}, "❌", "explained empty result"),
        # the old answer: a torn tail used to block writers; it is now recovered
        ({**RIGHT, "E": RemoteMemoryCorruptionError}, "❌", "commits at its newline"),
        ({**RIGHT, "E": "RemoteMemoryCorruptionError"}, "❌", "E: you said RemoteMemoryCorr"),
        ({**RIGHT, "F": None}, "❌", "F: you said no error"),
        ({**RIGHT, "E": RemoteMemoryCorruptionError, "F": None}, "❌", "2 of 6 wrong"),
        ({**RIGHT, "A": RemoteMemoryScopeError, "E": RemoteMemoryValidationError}, "❌", "2 of 6"),
        ("RemoteMemoryScopeError", "❌", "dict"),
    ],
)
def test_checker_rejects_wrong_answers(answer: object, start: str, fragment: str) -> None:
    result = check_error_predictions(answer)
    message = str(result)
    assert message.startswith(start) and fragment in message
    assert not result.is_right


def test_duplicate_is_a_validation_error() -> None:
    # The checker's hint for B relies on this relationship.
    assert issubclass(RemoteMemoryDuplicateError, RemoteMemoryValidationError)
    assert not issubclass(RemoteMemoryScopeError, RemoteMemoryValidationError)
