"""The store contract on every backend: JSONL, SQLite and PostgreSQL give the same
records, the same errors, the same retraction and the same recall.

Every test takes the ``backend`` fixture (tests/backends_support.py), so it runs three
times; the PostgreSQL run uses a real server and a database of its own. These are the
behaviours of tests/test_store.py and tests/test_pipeline.py that do not depend on
the JSONL file (its lines, its lock, its torn tail); those stay there.
"""

from __future__ import annotations

import multiprocessing
from datetime import UTC, datetime, timedelta

import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryDuplicateError,
    RemoteMemoryValidationError,
    seed_teaching_store,
    user_scope_for,
)
from memorylib.backends import open_store

from .backends_support import Backend
from .conftest import add, source

ENTRY = dict(kind="conversation", content="c", summary="s")


def ids(records) -> list[str]:
    return [r.memory_id for r in records]


# -- records ---------------------------------------------------------------------------------


def test_constructing_a_store_touches_nothing(backend: Backend) -> None:
    before = backend.snapshot()
    backend.open("alice")
    assert backend.snapshot() == before
    if backend.name != "postgresql":
        assert list(backend.root.iterdir()) == []


def test_append_then_read_after_reopening(backend: Backend) -> None:
    store = backend.open("alice")
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
    assert record.content == "Selected SQLite WAL for local persistence."
    assert record.source.captured_at == "2026-08-01T12:00:00Z"
    assert record.stored_at.endswith("Z") and record.stored_at != record.source.captured_at
    assert backend.open("alice").read_all() == [record]


def test_the_same_inputs_give_the_same_records_on_every_backend(backend: Backend) -> None:
    store = backend.open("alice")
    seed_teaching_store(store)
    add(store, "m-1", "第二条 line with 中文 and café", captured_at="2026-07-01T00:00:00+08:00")
    store.retract(
        "m-1",
        reason="wrong",
        source=source("r"),
        retraction_id="r-1",
        stored_at="2026-08-02T00:00:00Z",
    )
    reference = backend.root / "reference.jsonl"
    expected = open_store(f"jsonl:{reference}", user_id="alice")
    seed_teaching_store(expected)
    add(expected, "m-1", "第二条 line with 中文 and café", captured_at="2026-07-01T00:00:00+08:00")
    expected.retract(
        "m-1",
        reason="wrong",
        source=source("r"),
        retraction_id="r-1",
        stored_at="2026-08-02T00:00:00Z",
    )
    assert store.read_all() == expected.read_all()
    assert [r.to_dict() for r in store.read_all()] == [r.to_dict() for r in expected.read_all()]


def test_user_scope_is_a_hash_and_the_raw_id_is_never_stored(backend: Backend) -> None:
    store = backend.open("  Alice.Secret@Example.com ")
    assert store.user_scope == user_scope_for("alice.secret@example.com")
    add(store, "m-1", "text")
    assert "alice.secret" not in repr(backend.snapshot()).lower()


@pytest.mark.parametrize("user_id", ["", "   ", None, b"alice", 7])
def test_bad_user_id_is_rejected(backend: Backend, user_id) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="user_id"):
        open_store(backend.url(), user_id=user_id)


def test_duplicate_memory_id_is_rejected_and_writes_nothing(backend: Backend) -> None:
    store = backend.open("alice")
    add(store, "m-1", "first")
    before = backend.snapshot()
    with pytest.raises(RemoteMemoryDuplicateError, match="memory_id 'm-1' is already stored"):
        add(store, "m-1", "second")
    assert backend.snapshot() == before


def test_duplicate_is_detected_across_store_objects(backend: Backend) -> None:
    add(backend.open("alice"), "m-1", "first")
    with pytest.raises(RemoteMemoryDuplicateError):
        add(backend.open("alice"), "m-1", "again")


def test_generated_memory_id(backend: Backend) -> None:
    record = backend.open().append(kind="conversation", content="c", summary="s", source=source())
    assert record.memory_id.startswith("conversation-")


@pytest.mark.parametrize(
    "field, kwargs",
    [
        ("content", {"content": None}),
        ("content", {"content": b"bytes"}),
        ("content", {"content": "   "}),
        ("content", {"content": "x" * 20_001}),
        ("summary", {"summary": ""}),
        ("content", {"content": "nul\x00byte"}),
        ("source", {"source": {"source_id": "x"}}),
        ("source.title", {"source": MemorySource("s", "t", None, "2026-08-01T00:00:00Z")}),
        ("source.captured_at", {"source": MemorySource("s", "t", "t", "yesterday")}),
        ("memory_id", {"memory_id": "has space"}),
        ("memory_id", {"memory_id": "<hit>"}),
        ("kind", {"kind": "fact"}),
        ("retract", {"kind": MemoryKind.RETRACTION}),
        ("stored_at", {"stored_at": "not a time"}),
    ],
)
def test_bad_append_input_names_the_field_and_writes_nothing(backend, field, kwargs) -> None:
    store = backend.open()
    add(store, "m-0", "existing")
    before = backend.snapshot()
    args = dict(
        kind=MemoryKind.CONVERSATION, content="c", summary="s", source=source(), memory_id="m-1"
    )
    args.update(kwargs)
    with pytest.raises(RemoteMemoryValidationError, match=field):
        store.append(**args)
    assert backend.snapshot() == before


def test_content_and_summary_limits_are_inclusive(backend: Backend) -> None:
    record = backend.open().append(
        kind="conversation",
        content="x" * 20_000,
        summary="y" * 2_000,
        source=source(),
        memory_id="big",
    )
    assert backend.open().read_all() == [record]


def test_naive_datetimes_are_taken_as_utc(backend: Backend) -> None:
    record = backend.open().append(
        kind="conversation",
        content="c",
        summary="s",
        memory_id="m-1",
        source=MemorySource("s", "t", "t", datetime(2026, 8, 1, 12)),  # type: ignore[arg-type]
        stored_at=datetime(2026, 8, 2, 0, 0, 0, 500, tzinfo=UTC),
    )
    assert record.source.captured_at == "2026-08-01T12:00:00Z"
    assert record.stored_at == "2026-08-02T00:00:00.000500Z"


def test_an_empty_store_reads_empty(backend: Backend) -> None:
    store = backend.open()
    assert store.read_all() == []
    assert store.latest_profile() is None
    result = RecallEngine(store).recall("anything", as_of=TEACHING_AS_OF)
    assert (result.hits, result.searched_records, result.candidate_records) == ((), 0, 0)


def test_store_order_is_insertion_order(backend: Backend) -> None:
    store = backend.open()
    wanted = [f"m-{i}" for i in (5, 1, 9, 3, 7)]
    for day, memory_id in enumerate(wanted, start=1):
        add(store, memory_id, "text", captured_at=f"2026-07-0{day}T00:00:00Z")
    assert ids(store.read_all()) == wanted


def test_users_are_isolated(backend: Backend) -> None:
    alice, bob = backend.open("alice"), backend.open("bob")
    add(alice, "m-1", "alice's secret layered memory")
    add(bob, "m-1", "bob's own m-1")  # the same id is free in another scope
    assert [r.content for r in alice.read_all()] == ["alice's secret layered memory"]
    assert [r.content for r in bob.read_all()] == ["bob's own m-1"]
    assert RecallEngine(bob).recall("secret", as_of=TEACHING_AS_OF).hits == ()
    assert RecallEngine(bob, strategy="teaching").recall("secret", as_of=TEACHING_AS_OF).hits == ()
    with pytest.raises(RemoteMemoryValidationError, match="not in the store"):
        bob.retract("m-2", reason="r", source=source())


def test_latest_profile_is_newest_by_captured_at_then_id(backend: Backend) -> None:
    store = backend.open()
    add(store, "profile-b", "old", "2026-07-01T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-c", "newest", "2026-07-20T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-a", "same time, smaller id", "2026-07-20T00:00:00Z", MemoryKind.PROFILE)
    add(store, "conv-1", "a conversation", "2026-07-30T00:00:00Z")
    assert store.latest_profile().memory_id == "profile-c"


# -- append_many ---------------------------------------------------------------------------


def test_append_many_is_all_or_nothing(backend: Backend) -> None:
    store = backend.open()
    add(store, "m-0", "existing")
    before = backend.snapshot()
    with pytest.raises(RemoteMemoryDuplicateError, match="'m-0'"):
        store.append_many(
            [
                {**ENTRY, "memory_id": "m-1", "source": source()},
                {**ENTRY, "memory_id": "m-0", "source": source()},
            ]
        )
    with pytest.raises(RemoteMemoryDuplicateError, match="'m-2'"):
        store.append_many(
            [
                {**ENTRY, "memory_id": "m-2", "source": source()},
                {**ENTRY, "memory_id": "m-2", "source": source()},
            ]
        )
    with pytest.raises(RemoteMemoryValidationError, match=r"entries\[1\]: summary"):
        store.append_many(
            [
                {**ENTRY, "memory_id": "m-3", "source": source()},
                {**ENTRY, "summary": "", "source": source()},
            ]
        )
    assert backend.snapshot() == before
    batch = store.append_many(
        [{**ENTRY, "memory_id": f"b-{i}", "source": source()} for i in range(3)]
    )
    assert store.read_all() == [store.read_all()[0], *batch]
    assert store.append_many([]) == ()


# -- retraction ----------------------------------------------------------------------------


def test_retract_hides_the_target_but_keeps_the_audit_trail(backend: Backend) -> None:
    store = backend.open()
    add(store, "m-1", "wrong decision")
    retraction = store.retract(
        "m-1", reason="Decision reversed", source=source("review"), retraction_id="r-1"
    )
    assert retraction.kind is MemoryKind.RETRACTION and retraction.retracts == "m-1"
    assert ids(store.read_all()) == ["m-1", "r-1"]
    again = store.retract("m-1", reason="again", source=source("review"), retraction_id="r-2")
    assert again == retraction
    assert len(backend.open().read_all()) == 2


def test_retract_rejects_unknown_targets_and_retractions(backend: Backend) -> None:
    store = backend.open()
    add(store, "m-1", "x")
    add(store, "m-2", "y")
    store.retract("m-1", reason="r", source=source(), retraction_id="r-1")
    before = backend.snapshot()
    with pytest.raises(RemoteMemoryValidationError, match="not in the store"):
        store.retract("nope", reason="r", source=source())
    with pytest.raises(RemoteMemoryValidationError, match="cannot be retracted"):
        store.retract("r-1", reason="r", source=source())
    with pytest.raises(RemoteMemoryValidationError, match="reason"):
        store.retract("m-2", reason="", source=source())
    with pytest.raises(RemoteMemoryDuplicateError, match="retraction_id 'm-1'"):
        store.retract("m-2", reason="r", source=source(), retraction_id="m-1")
    assert backend.snapshot() == before


def test_read_all_is_a_fresh_list_that_changes_nothing_when_changed(backend: Backend) -> None:
    store = backend.open()
    assert store.read_all() == []  # an empty store, before anything exists
    add(store, "m-1", "kept")
    first = store.read_all()
    assert isinstance(first, list) and ids(first) == ["m-1"]
    first.clear()  # the caller's copy: the store, and the next read, are unaffected
    assert ids(store.read_all()) == ["m-1"]
    assert store.read_all() is not store.read_all()


def test_active_records_leave_out_retractions_and_their_targets(backend: Backend) -> None:
    store = backend.open()
    assert store.active_records() == []
    add(store, "profile-1", "old profile", "2026-07-01T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-2", "wrong profile", "2026-07-02T00:00:00Z", MemoryKind.PROFILE)
    add(store, "m-1", "wrong decision")
    add(store, "m-2", "right decision")
    assert ids(store.active_records()) == ids(store.read_all())  # nothing retracted yet
    store.retract("m-1", reason="reversed", source=source("review"), retraction_id="r-1")
    store.retract("profile-2", reason="wrong account", source=source("review"), retraction_id="r-2")
    active = store.active_records()
    assert isinstance(active, list)
    # storage order; profiles stay; no retraction record and no retracted target
    assert ids(active) == ["profile-1", "m-2"]
    assert ids(store.read_all()) == ["profile-1", "profile-2", "m-1", "m-2", "r-1", "r-2"]
    assert ids(backend.open().active_records()) == ["profile-1", "m-2"]  # after reopening
    # what recall searches: the conversation records among them
    result = RecallEngine(store).recall("decision", as_of=TEACHING_AS_OF)
    assert [hit.memory_id for hit in result.hits] == ["m-2"]
    assert result.searched_records == 1 and result.retracted_records == 1


def test_retracted_profile_is_not_selected(backend: Backend) -> None:
    store = backend.open()
    add(store, "profile-1", "old", "2026-07-01T00:00:00Z", MemoryKind.PROFILE)
    add(store, "profile-2", "new but wrong", "2026-07-02T00:00:00Z", MemoryKind.PROFILE)
    store.retract("profile-2", reason="imported from the wrong account", source=source())
    assert store.latest_profile().memory_id == "profile-1"


# -- recall (test_pipeline.py's engine behaviours) ---------------------------------------------


@pytest.mark.parametrize("strategy", ["teaching", "indexed"])
def test_chapter_example_on_every_backend(backend: Backend, strategy: str) -> None:
    store = backend.open("local-user")
    seed_teaching_store(store)
    result = RecallEngine(store, strategy=strategy).recall(
        "  LAYERED   Memory  ", limit=5, query_id="query-1", as_of=TEACHING_AS_OF
    )
    assert (result.searched_records, result.candidate_records) == (6, 1)
    (hit,) = result.hits
    assert hit.memory_id == "conversation-003" and hit.provenance.title == "layered memory design"
    assert hit.snippet == "Separated workspace, user and remote memory boundaries."
    assert hit.score_breakdown.total == 0.995161
    assert store.latest_profile().memory_id == "profile-001"


@pytest.mark.parametrize("strategy", ["teaching", "indexed"])
def test_profiles_never_appear_and_no_match_keeps_counts(backend: Backend, strategy: str) -> None:
    store = backend.open("local-user")
    seed_teaching_store(store)
    engine = RecallEngine(store, strategy=strategy)
    result = engine.recall("runnable python examples", as_of=TEACHING_AS_OF)
    assert (result.hits, result.searched_records, result.candidate_records) == ((), 6, 0)
    assert result.empty_reason == "no_matching_terms"
    result = engine.recall("engineer memory", as_of=TEACHING_AS_OF)
    assert all(h.scope.memory_kind is MemoryKind.CONVERSATION for h in result.hits)


@pytest.mark.parametrize("strategy", ["teaching", "indexed"])
def test_recall_leaves_the_store_unchanged(backend: Backend, strategy: str) -> None:
    store = backend.open("local-user")
    seed_teaching_store(store)
    before = backend.snapshot()
    engine = RecallEngine(store, strategy=strategy)
    for text in ["layered memory", "SQLite WAL", "上下文预算", "nothing matches zzz"] * 3:
        engine.recall(text, as_of=TEACHING_AS_OF)
    assert backend.snapshot() == before


def test_retracted_conversation_leaves_recall(backend: Backend) -> None:
    store = backend.open()
    add(store, "c-1", "layered memory design")
    add(store, "c-2", "layered cake")
    store.retract("c-1", reason="wrong", source=MemorySource("s", "t", "t", TEACHING_AS_OF))
    for strategy in ("teaching", "indexed"):
        result = RecallEngine(store, strategy=strategy).recall(
            "layered memory", as_of=TEACHING_AS_OF
        )
        assert ids(result.hits) == ["c-2"]
        assert (result.retracted_records, result.searched_records) == (1, 1)


def test_indexed_and_teaching_results_are_equal_field_for_field(backend: Backend) -> None:
    store = backend.open()
    seed_teaching_store(store)
    for i in range(40):
        add(
            store,
            f"x-{i:02d}",
            f"layered memory note {i % 7} 分层记忆 {'wal' * (i % 3)}",
            captured_at=f"2026-07-{1 + i % 28:02d}T{i % 24:02d}:00:00Z",
        )
    store.retract("x-03", reason="wrong", source=source())
    for text in ["layered memory", "分层记忆 note", "note 3 wal", "walwal", "zzz"]:
        for limit in (1, 3, 10):
            args = dict(limit=limit, query_id="q", as_of=TEACHING_AS_OF)
            teaching = RecallEngine(store, strategy="teaching").recall(text, **args)
            assert RecallEngine(store).recall(text, **args) == teaching


def test_store_scope_is_the_query_scope_and_defaults_follow(backend: Backend) -> None:
    store = backend.open("carol")
    add(store, "c-1", "memory")
    result = RecallEngine(store).recall("memory")
    assert result.query.user_scope == store.user_scope
    issued = datetime.fromisoformat(result.query.issued_at)
    assert abs(datetime.now(UTC) - issued) < timedelta(minutes=1)


# -- real processes racing -------------------------------------------------------------------


def _race_append(url: str, barrier, results) -> None:
    store = open_store(url, user_id="alice")
    barrier.wait(timeout=60)
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
    except Exception as exc:  # reported, so the test shows it
        results.put(f"{type(exc).__name__}: {exc}")


def _race_retract(url: str, index: int, barrier, results) -> None:
    store = open_store(url, user_id="alice")
    barrier.wait(timeout=60)
    try:
        record = store.retract(
            "target",
            reason=f"by {index}",
            retraction_id=f"r-{index}",
            source=MemorySource("s", "t", "t", "2026-08-01T00:00:00Z"),
        )
        results.put(record.memory_id)
    except Exception as exc:
        results.put(f"{type(exc).__name__}: {exc}")


def _race(target, args_of, workers: int) -> list[str]:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [
        ctx.Process(target=target, args=(*args_of(i), barrier, results)) for i in range(workers)
    ]
    for proc in procs:
        proc.start()
    try:
        outcomes = [results.get(timeout=90) for _ in procs]
    finally:
        for proc in procs:
            proc.join(timeout=60)
            if proc.is_alive():
                proc.kill()
    assert [proc.exitcode for proc in procs] == [0] * workers
    return outcomes


@pytest.mark.slow
def test_processes_racing_one_memory_id_one_winner(backend: Backend) -> None:
    backend.provision("alice")
    url = backend.url("alice")
    outcomes = _race(_race_append, lambda i: (url,), workers=6)
    assert sorted(outcomes) == ["duplicate"] * 5 + ["won"]
    assert ids(backend.open("alice").read_all()) == ["contested"]


@pytest.mark.slow
def test_processes_racing_to_retract_one_target_store_one_retraction(backend: Backend) -> None:
    store = backend.open("alice")
    add(store, "target", "to be retracted")
    url = backend.url("alice")
    outcomes = _race(_race_retract, lambda i: (url, i), workers=5)
    records = store.read_all()
    (retraction,) = [r for r in records if r.kind is MemoryKind.RETRACTION]
    assert outcomes == [retraction.memory_id] * 5  # every caller is told the same retraction
    assert ids(records) == ["target", retraction.memory_id]
