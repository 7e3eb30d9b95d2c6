"""The views of notebooks 00 and 01 (stored records): pure, typed errors as data, no raw ids."""

from __future__ import annotations

import hashlib
import re
import runpy
from pathlib import Path

import pytest

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryDuplicateError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    seed_teaching_store,
    user_scope_for,
)
from memorylib.notebook.common import chart_fonts
from memorylib.notebook.records_views import (
    EXERCISE_APPENDS,
    SCOPE_EXERCISE,
    attempt,
    capture_lag_chart,
    check_append_predictions,
    check_scope_function,
    exercise_frame,
    exercise_truth,
    file_scan_frame,
    jsonl_line,
    record_card,
    records_frame,
    scope_frame,
    scope_view,
    scope_widget,
    stored_vs_recalled_frame,
    two_paths_diagram,
    user_store,
    wrap_bytes,
)

AS_OF = "2026-08-02T12:00:00Z"
SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "01_stored_records.py"


@pytest.fixture
def chapter(tmp_path: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl", user_id="alice")
    seed_teaching_store(store)
    return store


def late_record(store: RemoteMemoryStore):
    return store.append(
        kind=MemoryKind.CONVERSATION,
        memory_id="memory-42",
        content="Selected SQLite WAL for local persistence.",
        summary="Selected SQLite WAL.",
        source=MemorySource(
            "transcript-42",
            "conversation_transcript",
            "Persistence decision",
            "2026-08-01T12:00:00Z",
        ),
        stored_at="2026-08-02T09:30:00Z",
    )


def test_records_frame_shows_both_clocks(chapter: RemoteMemoryStore) -> None:
    late_record(chapter)
    frame = records_frame(chapter.read_all())
    assert list(frame.columns[:6]) == [
        "memory_id",
        "kind",
        "title",
        "captured_at",
        "stored_at",
        "stored_after_days",
    ]
    assert len(frame) == 8
    assert frame.iloc[0]["kind"] == "profile"
    assert frame.set_index("memory_id").loc["memory-42", "stored_after_days"] == 0.9
    assert (frame["stored_after_days"][:7] == 0).all()  # the seed stores at capture time
    assert "content" in records_frame(chapter.read_all(), include_content=True).columns


def test_records_frame_of_nothing_keeps_its_columns() -> None:
    frame = records_frame([])
    assert frame.empty and "stored_at" in frame.columns


def test_record_card_flattens_the_source(chapter: RemoteMemoryStore) -> None:
    card = record_card(chapter.read_all()[3]).set_index("field")["value"]
    assert card["memory_id"] == "conversation-003"
    assert card["source.captured_at"] == "2026-08-01T12:00:00Z"
    assert card["schema_version"] == "1"


def test_attempt_returns_typed_errors_as_text(chapter: RemoteMemoryStore) -> None:
    assert attempt(lambda: 1 + 1) == "ok: 2"
    message = attempt(lambda: late_record(chapter) and late_record(chapter))
    assert message.startswith("RemoteMemoryDuplicateError: memory_id 'memory-42'")
    with pytest.raises(ZeroDivisionError):  # a bug is not a lesson: it propagates
        attempt(lambda: 1 / 0)


def test_scope_view_and_frame() -> None:
    view = scope_view("  Alice ")
    assert view["key"] == "alice"
    assert view["user_scope"] == user_scope_for("alice")
    assert view["file"] == f"memories-{view['user_scope']}.jsonl"
    assert scope_view("   ")["error"].startswith("RemoteMemoryValidationError")
    assert scope_view(42)["error"].startswith("RemoteMemoryValidationError")
    frame = scope_frame(["alice", "ALICE", "bob"])
    assert frame.loc[0, "user_scope"] == frame.loc[1, "user_scope"] != frame.loc[2, "user_scope"]


def test_jsonl_line_and_file_scan(tmp_path: Path, chapter: RemoteMemoryStore) -> None:
    line = jsonl_line(chapter.path, 4)
    assert line.endswith(b"\n") and b'"memory_id":"conversation-003"' in line
    with pytest.raises(IndexError):
        jsonl_line(chapter.path, 99)
    assert "\n" in wrap_bytes(line, width=60)
    frame = file_scan_frame([chapter.path], ["alice", chapter.user_scope], show=lambda p: p.name)
    row = frame.iloc[0]
    assert row["file"] == "chapter.jsonl" and row["lines"] == 7
    assert not row["contains 'alice'"]
    assert row[f"contains {chapter.user_scope!r}"]


def test_capture_lag_chart(chapter: RemoteMemoryStore) -> None:
    late_record(chapter)
    fig = capture_lag_chart(chapter.read_all())
    ax = fig.axes[0]
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {
        "profile (1)",
        "conversation (7)",
    }
    assert any(t.get_text() == "memory-42" for t in ax.texts)  # few records: labelled
    assert capture_lag_chart([]).axes[0].texts[0].get_text() == "no records"


def test_charts_use_only_installed_fonts() -> None:
    import matplotlib
    from matplotlib import font_manager

    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    with matplotlib.rc_context({"font.family": ["No Such Font Family", "DejaVu Sans"]}):
        with chart_fonts():
            assert matplotlib.rcParams["font.family"] == ["DejaVu Sans"]
        fig = two_paths_diagram()
    families = {f for t in fig.axes[0].texts for f in t.get_fontproperties().get_family()}
    assert families <= installed | set(font_manager.font_family_aliases)


def test_stored_vs_recalled_frame(chapter: RemoteMemoryStore) -> None:
    result = RecallEngine(chapter).recall("layered memory", query_id="q-t", as_of=AS_OF)
    record = next(r for r in chapter.read_all() if r.memory_id == "conversation-003")
    frame = stored_vs_recalled_frame(record, result.hits[0]).set_index("aspect")
    assert frame.loc["rank", "StoredMemory"] == "—"
    assert frame.loc["rank", "RecallHit"] == "rank=1"
    assert "0.995161" in frame.loc["why", "RecallHit"]


TRUTH = {
    "A": None,
    "B": None,
    "C": "RemoteMemoryDuplicateError",
    "D": None,
    "E": "RemoteMemoryValidationError",
    "files": 2,
}


def test_user_store_names_the_file_after_the_scope(tmp_path: Path) -> None:
    store = user_store(tmp_path, "  Alice ")
    assert store.path == tmp_path / "users" / f"memories-{user_scope_for('alice')}.jsonl"
    assert store.user_scope == user_scope_for("alice")


def test_exercise_frame_and_truth() -> None:
    frame = exercise_frame()
    assert list(frame["call"]) == list(EXERCISE_APPENDS) == ["A", "B", "C", "D", "E"]
    assert "user_store(' dana ')" in frame.loc[1, "code"]  # the spaces are visible
    assert exercise_truth() == TRUTH


def test_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_prediction"]
    result = check_append_predictions(answer)
    assert result.is_right and str(result).startswith("✅ All 6 right")


def test_checker_accepts_names_and_written_spellings() -> None:
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
        ({"D": RemoteMemoryDuplicateError}, "unique per store, not across users"),
        ({"D": RemoteMemoryScopeError}, "D: you said 'RemoteMemoryScopeError'"),
        ({"E": None}, "which characters may an id contain"),
        ({"files": 3}, "files: you said 3"),
        ({"files": 5}, "how many different keys"),
        ({"files": "2"}, "files: you said '2'"),
        ({"files": True}, "files: you said True"),
        ({"C": None, "files": 1}, "2 of 6 wrong"),
    ],
)
def test_checker_rejects_wrong_answers_with_a_hint(change: dict, fragment: str) -> None:
    result = check_append_predictions({**TRUTH, **change})
    assert str(result).startswith("❌") and fragment in str(result), str(result)


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        ({**TRUTH, "files": ...}, "⏳", "files"),
        ({"A": None}, "⏳", "B, C, D, E, files"),
        ("2", "❌", "dict"),
    ],
)
def test_checker_placeholder_and_shape(answer: object, start: str, fragment: str) -> None:
    result = str(check_append_predictions(answer))
    assert result.startswith(start) and fragment in result, result


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_scope_function_stretch() -> None:
    reference = runpy.run_path(str(SOLUTION))["my_user_scope"]
    assert check_scope_function(reference).is_right
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


def test_scope_widget() -> None:
    widget = scope_widget("Bob")
    box, shown = widget.children
    assert user_scope_for("bob") in shown.value
    box.value = "  "
    assert "rejected" in shown.value
