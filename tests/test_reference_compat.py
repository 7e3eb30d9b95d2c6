"""What code written against the chapter's reference module relies on, held here.

``memorylib.s12`` gives the reference module's names to memorylib's objects. These
tests hold the behaviours such code depends on: the messages name what the reference's
name (a caller matching on them keeps working), the error family (every memorylib
error is a RuntimeError), the tool JSON's keys, and the shim itself (its names exist,
are the library's objects, and nothing is created when it is imported).
``read_all``'s list and ``active_records`` are store contract, tested on every backend
in tests/test_store_contract.py.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memorylib
from memorylib import (
    ConfigurationError,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryUnavailableError,
    RemoteMemoryValidationError,
    StoredMemory,
    build_recall_candidates,
    normalize_recall_query,
    recall_history,
    runtime_client,
    s12,
)
from memorylib.timestamps import TEACHING_AS_OF, format_timestamp

from .backends_support import Backend
from .conftest import add, source

ROOT = Path(__file__).resolve().parents[1]


# -- messages: ours, containing the reference's phrase -------------------------------------


@pytest.mark.parametrize(
    ("text", "phrase"),
    [("   ", "recall query must not be empty"), ("!!! ?", "no searchable terms")],
)
def test_rejected_queries_say_it_the_reference_way(store, text: str, phrase: str) -> None:
    with pytest.raises(RemoteMemoryValidationError, match=phrase) as info:
        RecallEngine(store).recall(text, as_of=TEACHING_AS_OF)
    assert "query text" in str(info.value)  # still naming the argument at fault


def test_another_users_records_belong_to_another_user_scope(tmp_path: Path) -> None:
    alice = RemoteMemoryStore(tmp_path / "alice.jsonl", user_id="alice")
    bob = RemoteMemoryStore(tmp_path / "bob.jsonl", user_id="bob")
    record = add(alice, "private-1", "alice's layered memory notes")
    bob.path.write_bytes(alice.path.read_bytes())
    with pytest.raises(RemoteMemoryScopeError, match=r"line 1: .*belongs to another user scope"):
        bob.read_all()
    query = normalize_recall_query(
        "layered memory", user_scope=bob.user_scope, issued_at=TEACHING_AS_OF
    )
    with pytest.raises(RemoteMemoryScopeError, match="belongs to another user scope"):
        build_recall_candidates(query, [record])


def test_refused_retractions_and_appends_say_it_the_reference_way(backend: Backend) -> None:
    store = backend.open()
    add(store, "m-1", "a decision")
    retraction = store.retract("m-1", reason="reversed", source=source("review"))
    before = backend.snapshot()
    with pytest.raises(RemoteMemoryValidationError, match="unknown memory_id") as unknown:
        store.retract("missing-1", reason="r", source=source())
    assert "is not in the store" in str(unknown.value)
    with pytest.raises(RemoteMemoryValidationError, match="retraction record"):
        store.retract(retraction.memory_id, reason="r", source=source())
    with pytest.raises(RemoteMemoryValidationError, match="use retract"):
        store.append(kind=MemoryKind.RETRACTION, content="c", summary="s", source=source())
    assert backend.snapshot() == before  # every refusal wrote nothing


@pytest.mark.parametrize(
    "change",
    [{"kind": "retraction"}, {"retracts": "m-0"}],
    ids=["retraction without retracts", "conversation with retracts"],
)
def test_inconsistent_retraction_fields_are_corruption(change: dict[str, str]) -> None:
    stored = StoredMemory(
        memory_id="m-1",
        user_scope="0123456789abcdef",
        kind=MemoryKind.CONVERSATION,
        content="c",
        summary="s",
        source=source(),
        stored_at=TEACHING_AS_OF,
    )
    with pytest.raises(RemoteMemoryCorruptionError, match="inconsistent") as info:
        StoredMemory.from_dict({**stored.to_dict(), **change})
    assert "'m-1'" in str(info.value)


# -- the error family ------------------------------------------------------------------------


def test_every_memorylib_error_is_a_runtime_error_and_bad_input_also_a_value_error() -> None:
    for error in (
        RemoteMemoryError,
        RemoteMemoryValidationError,
        RemoteMemoryDuplicateError,
        RemoteMemoryScopeError,
        RemoteMemoryCorruptionError,
        RemoteMemoryUnavailableError,
        ConfigurationError,
    ):
        assert issubclass(error, RuntimeError), error
    assert issubclass(RemoteMemoryValidationError, ValueError)
    assert issubclass(RemoteMemoryDuplicateError, ValueError)
    for not_bad_input in (RemoteMemoryScopeError, RemoteMemoryCorruptionError, ConfigurationError):
        assert not issubclass(not_bad_input, ValueError), not_bad_input


def test_a_missing_model_id_is_caught_as_a_runtime_error(monkeypatch) -> None:
    monkeypatch.delenv("MODEL_ID", raising=False)
    with pytest.raises(RuntimeError, match="MODEL_ID is not set") as info:
        runtime_client()
    assert isinstance(info.value, ConfigurationError)


def test_a_malformed_captured_at_is_bad_input_not_corruption(store) -> None:
    """The reference raises its corruption error here; nothing was read or written, so
    memorylib keeps calling it what it is (README, Compatibility)."""
    bad = MemorySource("transcript-1", "conversation_transcript", "t", "yesterday")
    with pytest.raises(RemoteMemoryValidationError, match=r"source\.captured_at") as info:
        store.append(kind="conversation", content="c", summary="s", source=bad)
    assert not isinstance(info.value, RemoteMemoryCorruptionError)
    assert not store.path.exists()
    assert store.read_all() == []


# -- the tool's JSON -----------------------------------------------------------------------------


def test_recall_json_has_the_chapters_keys_plus_retracted_records(store) -> None:
    add(store, "m-1", "layered memory design")
    add(store, "m-2", "layered memory, written by mistake")
    store.retract("m-2", reason="wrong", source=source("review"))
    payload = json.loads(
        recall_history(
            "layered memory", engine=RecallEngine(store), as_of=TEACHING_AS_OF, query_id="q"
        )
    )
    assert set(payload) == {
        "query",
        "hits",
        "searched_records",
        "candidate_records",
        "retracted_records",
        "empty_reason",
    }
    assert payload["query"]["issued_at"] == TEACHING_AS_OF  # the moment recall scored against
    assert payload["retracted_records"] == 1
    assert [hit["memory_id"] for hit in payload["hits"]] == ["m-1"]


# -- the shim ------------------------------------------------------------------------------------


def test_the_shims_names_are_the_librarys_objects() -> None:
    for name in s12.__all__:
        assert hasattr(s12, name), name
    library_names = set(s12.__all__) & set(memorylib.__all__)
    assert len(library_names) >= 25
    for name in library_names:
        assert getattr(s12, name) is getattr(memorylib, name), name
    assert s12._iso is format_timestamp
    assert s12._scope_id is memorylib.user_scope_for
    assert s12.os is os
    assert s12.MAX_RECALL_LIMIT == 10
    assert s12.MAX_RECORD_CHARS == 20_000
    policy = memorylib.DEFAULT_POLICY
    assert policy.lexical_weight == s12.LEXICAL_WEIGHT
    assert policy.recency_weight == s12.RECENCY_WEIGHT
    assert policy.recency_window_days == s12.RECENCY_WINDOW_DAYS


def test_the_reference_timestamp_helper_formats_as_the_reference_does() -> None:
    assert s12._iso(datetime(2026, 8, 1, 12, tzinfo=UTC)) == "2026-08-01T12:00:00Z"
    assert s12._iso(datetime(2026, 8, 1, 12)) == "2026-08-01T12:00:00Z"  # naive: UTC


def test_the_shim_only_re_exports_and_renames() -> None:
    """No function, class or logic of its own: a name over memorylib's, or a None."""
    tree = ast.parse((ROOT / "memorylib" / "s12.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        assert isinstance(node, ast.Assign | ast.AnnAssign), ast.dump(node)[:80]
        value = node.value
        assert isinstance(value, ast.Name | ast.List) or (
            isinstance(value, ast.Constant) and value.value is None
        ), ast.dump(node)[:80]
        if isinstance(value, ast.List):  # __all__
            assert all(isinstance(item, ast.Constant) for item in value.elts)


def test_star_import_carries_every_public_name_and_os() -> None:
    namespace: dict[str, object] = {}
    exec("from memorylib.s12 import *", namespace)
    assert set(s12.__all__) <= namespace.keys()
    assert namespace["os"] is os and namespace["RemoteMemoryStore"] is RemoteMemoryStore


def test_importing_the_shim_creates_nothing_and_reads_no_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code = (
        "from memorylib import s12; "
        "print([s12.client, s12.MODEL, s12.DEFAULT_STORE, s12.DEFAULT_RECALL, s12.SYSTEM])"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "WORKBUDDY_HOME": str(home),
        "MODEL_ID": "a-model-that-import-must-not-read",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[None, None, None, None, None]"
    assert not home.exists()


def test_patching_os_write_through_the_shim_reaches_the_store(store, monkeypatch) -> None:
    """The reference suite pauses a writer by patching ``s12.os.write``: memorylib's one
    append goes through ``os.write``, so such a patch sees it."""
    seen: list[bytes] = []
    real_write = s12.os.write

    def spying_write(fd: int, data: bytes) -> int:
        seen.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(s12.os, "write", spying_write)
    add(store, "m-1", "one line")
    assert len(seen) == 1 and seen[0].endswith(b"\n") and b'"memory_id":"m-1"' in seen[0]
