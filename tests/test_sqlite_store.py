"""What only the SQLite backend has: its files, its owner check, damaged rows, the
append-only triggers, a locked database. (The shared contract is test_store_contract.py.)"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from memorylib import (
    RemoteMemoryCorruptionError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryUnavailableError,
    RemoteMemoryValidationError,
)
from memorylib.backends import SQLiteMemoryStore

from .conftest import add


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("bad", [None, 3, b"m.db", "", "   ", ".", "..", "a\0b", Path("")])
def test_a_bad_path_is_refused_as_the_jsonl_store_refuses_it(bad: object) -> None:
    with pytest.raises(RemoteMemoryValidationError, match=r"^path ") as jsonl:
        RemoteMemoryStore(bad)  # type: ignore[arg-type]
    with pytest.raises(RemoteMemoryValidationError) as sqlite:
        SQLiteMemoryStore(bad)  # type: ignore[arg-type]
    assert str(sqlite.value) == str(jsonl.value)


def test_files_are_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = SQLiteMemoryStore(tmp_path / "a" / "b" / "m.db", user_id="alice")
        add(store, "m-1", "text")
    finally:
        os.umask(old)
    folder = tmp_path / "a" / "b"
    assert mode(tmp_path / "a") == mode(folder) == 0o700
    files = sorted(p.name for p in folder.iterdir())
    assert files[0] == "m.db" and set(files) <= {"m.db", "m.db-wal", "m.db-shm"}
    assert {mode(folder / name) for name in files} == {0o600}
    assert b"alice" not in b"".join((folder / name).read_bytes() for name in files)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_a_file_of_another_os_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    add(SQLiteMemoryStore(path, user_id="alice"), "m-1", "text")
    os.chown(path, 65534, 65534)
    store = SQLiteMemoryStore(path, user_id="alice")
    for call in (store.read_all, lambda: add(store, "m-2", "more")):
        with pytest.raises(RemoteMemoryScopeError, match="another OS user"):
            call()


def test_bad_paths_and_files(tmp_path: Path) -> None:
    for bad in ("", "  ", ".", b"m.db", None):
        with pytest.raises(RemoteMemoryValidationError, match="path"):
            SQLiteMemoryStore(bad, user_id="alice")  # type: ignore[arg-type]
    (tmp_path / "folder.db").mkdir()
    with pytest.raises(RemoteMemoryValidationError, match="directory"):
        add(SQLiteMemoryStore(tmp_path / "folder.db", user_id="alice"), "m-1", "x")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    junk.chmod(0o600)
    with pytest.raises(RemoteMemoryCorruptionError, match=r"junk\.db"):
        SQLiteMemoryStore(junk, user_id="alice").read_all()


def _tamper(path: Path, sql: str) -> None:
    with sqlite3.connect(path) as conn:  # another tool, bypassing the triggers
        conn.execute("DROP TRIGGER memories_no_update")
        conn.execute(sql)


def test_damaged_rows_fail_closed_naming_the_row(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SQLiteMemoryStore(path, user_id="alice")
    add(store, "m-1", "first")
    add(store, "m-2", "second")
    _tamper(path, "UPDATE memories SET record = '{not json' WHERE memory_id = 'm-2'")
    with pytest.raises(RemoteMemoryCorruptionError, match="row 2: not valid JSON"):
        SQLiteMemoryStore(path, user_id="alice").read_all()


def test_a_record_of_another_scope_in_this_scope_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    add(SQLiteMemoryStore(path, user_id="alice"), "m-1", "alice's")
    add(SQLiteMemoryStore(path, user_id="bob"), "b-1", "bob's")
    with sqlite3.connect(path) as conn:
        alice_scope = conn.execute("SELECT user_scope FROM memories WHERE seq = 1").fetchone()[0]
    _tamper(path, f"UPDATE memories SET user_scope = '{alice_scope}' WHERE memory_id = 'b-1'")
    with pytest.raises(
        RemoteMemoryScopeError, match="row 2: record 'b-1' belongs to another user scope"
    ):
        SQLiteMemoryStore(path, user_id="alice").read_all()


def test_rows_are_never_updated_or_deleted(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    add(SQLiteMemoryStore(path, user_id="alice"), "m-1", "text")
    with sqlite3.connect(path) as conn:
        for sql in ("UPDATE memories SET record = '{}'", "DELETE FROM memories"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(sql)


def test_a_database_locked_past_the_timeout_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SQLiteMemoryStore(path, user_id="alice", timeout=0.2)
    add(store, "m-0", "before")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(RemoteMemoryUnavailableError, match="locked"):
            add(store, "m-1", "blocked")
        assert [r.memory_id for r in store.read_all()] == ["m-0"]  # readers are not blocked
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    add(store, "m-1", "after")
    assert [r.memory_id for r in store.read_all()] == ["m-0", "m-1"]
