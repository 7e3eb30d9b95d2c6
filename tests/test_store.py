"""The store: durable sourced records, duplicate rejection, scope, corruption, retraction."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    UncommittedWriteWarning,
    user_scope_for,
)
from memorylib.files import read_quarantine

from .conftest import add, source


def test_constructing_a_store_touches_no_file(tmp_path: Path) -> None:
    RemoteMemoryStore(tmp_path / "sub" / "m.jsonl", user_id="alice")
    assert list(tmp_path.iterdir()) == []


def test_append_then_read_after_restart(store, store_path) -> None:
    record = store.append(
        kind=MemoryKind.CONVERSATION,
        memory_id="memory-42",
        content="Selected   SQLite WAL\nfor local persistence.",
        summary="Selected SQLite WAL.",
        source=MemorySource(
            "transcript-42",
            "conversation_transcript",
            "Persistence decision",
            "2026-08-01T14:00:00+02:00",
        ),
    )
    assert record.content == "Selected SQLite WAL for local persistence."  # whitespace folded
    assert record.source.captured_at == "2026-08-01T12:00:00Z"  # re-emitted as UTC Z
    assert record.stored_at.endswith("Z") and record.stored_at != record.source.captured_at
    reopened = RemoteMemoryStore(store_path, user_id="alice")
    assert reopened.read_all() == [record]


def test_each_record_is_one_json_line_with_user_scope(store, store_path) -> None:
    add(store, "m-1", "first")
    add(store, "m-2", "第二条 line")
    lines = store_path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    payloads = [json.loads(line) for line in lines[:-1]]
    assert [p["memory_id"] for p in payloads] == ["m-1", "m-2"]
    assert {p["user_scope"] for p in payloads} == {user_scope_for("alice")}
    assert "第二条" in store_path.read_text(encoding="utf-8")


def test_user_scope_is_a_hash_and_the_raw_id_never_reaches_disk(tmp_path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="  Alice.Secret@Example.com ")
    assert store.user_scope == user_scope_for("alice.secret@example.com")
    assert len(store.user_scope) == 16 and int(store.user_scope, 16) >= 0
    add(store, "m-1", "text")
    for path in tmp_path.iterdir():
        assert b"alice.secret" not in path.read_bytes().lower()


@pytest.mark.parametrize("user_id", ["", "   ", None, b"alice", 7])
def test_bad_user_id_is_rejected(tmp_path, user_id) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="user_id"):
        RemoteMemoryStore(tmp_path / "m.jsonl", user_id=user_id)


def test_duplicate_memory_id_is_rejected_and_writes_nothing(store, store_path) -> None:
    add(store, "m-1", "first")
    before = store_path.read_bytes()
    with pytest.raises(RemoteMemoryDuplicateError, match="m-1"):
        add(store, "m-1", "second")
    assert store_path.read_bytes() == before


def test_duplicate_is_detected_across_store_objects(store, store_path) -> None:
    add(store, "m-1", "first")
    other = RemoteMemoryStore(store_path, user_id="alice")
    with pytest.raises(RemoteMemoryDuplicateError):
        add(other, "m-1", "again")


def test_generated_memory_id(store) -> None:
    record = store.append(kind="conversation", content="c", summary="s", source=source())
    assert record.memory_id.startswith("conversation-")


@pytest.mark.parametrize(
    "field, kwargs",
    [
        ("content", {"content": None}),
        ("content", {"content": b"bytes"}),
        ("content", {"content": 42}),
        ("content", {"content": "   "}),
        ("content", {"content": "x" * 20_001}),
        ("summary", {"summary": ""}),
        ("summary", {"summary": "x" * 2_001}),
        ("content", {"content": "nul\x00byte"}),
        ("source", {"source": {"source_id": "x"}}),
        ("source.source_id", {"source": MemorySource("", "t", "t", "2026-08-01T00:00:00Z")}),
        ("source.title", {"source": MemorySource("s", "t", None, "2026-08-01T00:00:00Z")}),
        ("source.captured_at", {"source": MemorySource("s", "t", "t", "yesterday")}),
        ("source.captured_at", {"source": MemorySource("s", "t", "t", 1722513600)}),
        ("memory_id", {"memory_id": "has space"}),
        ("memory_id", {"memory_id": "<hit>"}),
        ("memory_id", {"memory_id": 5}),
        ("kind", {"kind": "fact"}),
        ("kind", {"kind": None}),
        ("retract", {"kind": MemoryKind.RETRACTION}),
        ("stored_at", {"stored_at": "not a time"}),
    ],
)
def test_bad_append_input_names_the_field_and_writes_nothing(
    store, store_path, field, kwargs
) -> None:
    add(store, "m-0", "existing")
    before = store_path.read_bytes()
    args = dict(
        kind=MemoryKind.CONVERSATION, content="c", summary="s", source=source(), memory_id="m-1"
    )
    args.update(kwargs)
    with pytest.raises(RemoteMemoryValidationError, match=field):
        store.append(**args)
    assert store_path.read_bytes() == before


def test_content_and_summary_limits_are_inclusive(store) -> None:
    record = store.append(
        kind="conversation",
        content="x" * 20_000,
        summary="y" * 2_000,
        source=source(),
        memory_id="big",
    )
    assert len(record.content) == 20_000


def test_naive_datetimes_are_taken_as_utc(store) -> None:
    record = store.append(
        kind="conversation",
        content="c",
        summary="s",
        memory_id="m-1",
        source=MemorySource("s", "t", "t", datetime(2026, 8, 1, 12)),  # type: ignore[arg-type]
        stored_at=datetime(2026, 8, 2, 0, 0, 0, 500, tzinfo=UTC),
    )
    assert record.source.captured_at == "2026-08-01T12:00:00Z"
    assert record.stored_at == "2026-08-02T00:00:00.000500Z"


def test_read_all_of_a_missing_file_is_empty(store) -> None:
    assert store.read_all() == []
    assert store.latest_profile() is None


def test_record_of_another_user_scope_is_rejected_on_read(store_path) -> None:
    add(RemoteMemoryStore(store_path, user_id="alice"), "m-1", "alice's secret")
    bob = RemoteMemoryStore(store_path, user_id="bob")
    with pytest.raises(RemoteMemoryScopeError, match="line 1"):
        bob.read_all()
    with pytest.raises(RemoteMemoryScopeError):
        add(bob, "m-2", "bob writes into alice's file")


@pytest.mark.parametrize(
    "bad_line, message",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"memory_id": "x"}', "missing"),
        (b"\xff\xfe", "not valid JSON"),
        (b"", "not valid JSON"),
    ],
)
def test_malformed_line_raises_corruption_naming_the_line(
    store, store_path, bad_line, message
) -> None:
    add(store, "m-1", "good")
    with store_path.open("ab") as handle:
        handle.write(bad_line + b"\n")
    add_line = 2
    with pytest.raises(RemoteMemoryCorruptionError, match=f"line {add_line}.*{message}"):
        RemoteMemoryStore(store_path, user_id="alice").read_all()


def test_an_unterminated_last_line_is_an_uncommitted_write_readers_do_not_see(
    store, store_path
) -> None:
    add(store, "m-1", "good")
    torn = b'{"schema_version": 1, "memory_id": "m-2", "us'
    with store_path.open("ab") as handle:
        handle.write(torn)
    before = store_path.read_bytes()
    with pytest.warns(UncommittedWriteWarning, match="line 2 is an uncommitted write") as read:
        records = store.read_all()
    assert [r.memory_id for r in records] == ["m-1"]
    with pytest.warns(UncommittedWriteWarning) as recalled:  # the index's reader (fast.log)
        result = RecallEngine(store).recall("good", as_of=TEACHING_AS_OF, query_id="q")
    assert [h.memory_id for h in result.hits] == ["m-1"]
    # one warning, one text, whichever reader saw the tail: it names the quarantine file
    (said,) = {str(w.message) for w in [*read, *recalled]}
    assert said.endswith(f"moves an interrupted one to {store_path.name}.quarantine.jsonl")
    assert store.uncommitted_bytes() == len(torn)
    assert store_path.read_bytes() == before  # reading never writes, not even to recover


def test_the_next_writer_quarantines_the_uncommitted_tail_then_appends(store, store_path) -> None:
    add(store, "m-1", "good")
    torn = b'{"schema_version": 1, "memory_id": "m-2", "us'
    with store_path.open("ab") as handle:
        handle.write(torn)
    committed = store_path.read_bytes()[: -len(torn)]
    writer = RemoteMemoryStore(store_path, user_id="alice")  # another writer object
    add(writer, "m-3", "after the crash")
    assert [r.memory_id for r in store.read_all()] == ["m-1", "m-3"]
    assert store_path.read_bytes().startswith(committed)  # committed bytes untouched
    (entry,) = read_quarantine(store_path)
    assert entry["bytes"] == torn and entry["byte_offset"] == len(committed)
    assert entry["line"] == 2 and entry["sha256"] == hashlib.sha256(torn).hexdigest()
    assert "uncommitted write" in entry["reason"]
    quarantine = store_path.with_name(store_path.name + ".quarantine.jsonl")
    assert oct(quarantine.stat().st_mode)[-3:] == "600"
    add(writer, "m-4", "again")  # nothing left to recover: no second quarantine entry
    assert len(read_quarantine(store_path)) == 1


def test_a_damaged_committed_line_still_fails_closed_naming_it(store, store_path) -> None:
    add(store, "m-1", "good")
    with store_path.open("ab") as handle:
        handle.write(b'{"schema_version": 1, "memory_id": "m-2", "us\n')  # terminated: damage
    add_line = 2
    before = store_path.read_bytes()
    with pytest.raises(RemoteMemoryCorruptionError, match=f"line {add_line}: not valid JSON"):
        store.read_all()
    with pytest.raises(RemoteMemoryCorruptionError, match=f"line {add_line}"):
        add(RemoteMemoryStore(store_path, user_id="alice"), "m-3", "after the damage")
    assert store_path.read_bytes() == before


def test_duplicate_id_inside_the_file_is_corruption(store, store_path) -> None:
    add(store, "m-1", "good")
    line = store_path.read_bytes()
    store_path.write_bytes(line + line)
    with pytest.raises(RemoteMemoryCorruptionError, match="line 2: duplicate memory_id 'm-1'"):
        RemoteMemoryStore(store_path, user_id="alice").read_all()


def test_latest_profile_is_newest_by_captured_at_then_id(store) -> None:
    add(store, "profile-b", "old", "2026-07-01T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-c", "newest", "2026-07-20T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-a", "same time, smaller id", "2026-07-20T00:00:00Z", MemoryKind.PROFILE)
    add(store, "conv-1", "a conversation", "2026-07-30T00:00:00Z")
    assert store.latest_profile().memory_id == "profile-c"


# -- retraction (beyond the chapter) ---------------------------------------------------


def test_retract_hides_the_target_but_keeps_the_audit_trail(store) -> None:
    add(store, "m-1", "wrong decision")
    retraction = store.retract(
        "m-1", reason="Decision reversed", source=source("review"), retraction_id="r-1"
    )
    assert retraction.kind is MemoryKind.RETRACTION and retraction.retracts == "m-1"
    assert [r.memory_id for r in store.read_all()] == ["m-1", "r-1"]
    again = store.retract("m-1", reason="again", source=source("review"), retraction_id="r-2")
    assert again == retraction  # idempotent: nothing new written
    assert len(store.read_all()) == 2


def test_retract_rejects_unknown_targets_and_retractions(store) -> None:
    add(store, "m-1", "x")
    store.retract("m-1", reason="r", source=source(), retraction_id="r-1")
    with pytest.raises(RemoteMemoryValidationError, match="not in the store"):
        store.retract("nope", reason="r", source=source())
    with pytest.raises(RemoteMemoryValidationError, match="cannot be retracted"):
        store.retract("r-1", reason="r", source=source())
    with pytest.raises(RemoteMemoryValidationError, match="reason"):
        store.retract("m-1", reason="", source=source())


def test_retracted_profile_is_not_selected(store) -> None:
    add(store, "profile-1", "old", "2026-07-01T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-2", "new but wrong", "2026-07-02T00:00:00Z", MemoryKind.PROFILE)
    store.retract("profile-2", reason="imported from the wrong account", source=source())
    assert store.latest_profile().memory_id == "profile-1"


# -- a real race of processes on one memory_id ------------------------------------------


def _race_worker(path: str, barrier, results) -> None:
    store = RemoteMemoryStore(path, user_id="alice")
    barrier.wait()
    try:
        store.append(
            kind="conversation",
            memory_id="contested",
            content="c",
            summary="s",
            source=MemorySource("s", "t", "t", "2026-08-01T00:00:00Z"),
        )
        results.put("won")
    except RemoteMemoryDuplicateError:
        results.put("duplicate")


def test_processes_racing_one_memory_id_one_winner_one_line(store_path) -> None:
    ctx = multiprocessing.get_context("spawn")
    workers = 6
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [
        ctx.Process(target=_race_worker, args=(str(store_path), barrier, results))
        for _ in range(workers)
    ]
    for proc in procs:
        proc.start()
    outcomes = sorted(results.get(timeout=60) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert outcomes == ["duplicate"] * (workers - 1) + ["won"]
    assert store_path.read_bytes().count(b"\n") == 1
    assert [r.memory_id for r in RemoteMemoryStore(store_path, user_id="alice").read_all()] == [
        "contested"
    ]
