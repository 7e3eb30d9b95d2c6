"""Isolation: owner-only files, no raw user id on disk, a shared path fails closed.

* store, lock and quarantine files are 0o600 and created directories 0o700, even
  under a permissive umask;
* the raw user id never reaches a file or a file name (only its scope hash does);
* a second user_id on the same store file gets RemoteMemoryScopeError on read AND on
  append, and nothing is written; so does a file owned by another OS uid.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memorylib import (
    RecallEngine,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    build_system_prompt,
    default_runtime,
    reset_runtime,
    user_scope_for,
)
from memorylib.fsck import check_store_file, quarantine_path_for, repair_store_file

from ._reliability import read_bytes, record_figures, src

RAW_USER_ID = "  Alice.Secret-User@Example.COM  "
OTHER_UID = 4242
_figures: dict[str, int] = {}


@pytest.fixture(scope="module", autouse=True)
def _publish_figures():
    yield
    record_figures("isolation", **_figures)


@contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def fill(store: RemoteMemoryStore, n: int = 3) -> None:
    for i in range(n):
        store.append(
            kind="conversation",
            memory_id=f"m-{i}",
            content=f"layered memory {i}",
            summary=f"summary {i}",
            source=src(i),
        )
    store.append(kind="profile", memory_id="p-1", content="profile", summary="p", source=src("p"))


@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_files_are_owner_only_and_directories_0700(tmp_path: Path, mask: int) -> None:
    path = tmp_path / "a" / "b" / "c" / "store.jsonl"
    with umask(mask):
        store = RemoteMemoryStore(path, user_id="perm-user")
        fill(store)
        for directory in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"):
            assert mode(directory) == 0o700, directory
        assert mode(path) == 0o600
        assert mode(store.lock_path) == 0o600
        path.write_bytes(path.read_bytes() + b"torn")  # a torn tail: repair by truncation
        repair_store_file(path)
        assert mode(quarantine_path_for(path)) == 0o600
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(lines[0] + b"garbage\n" + b"".join(lines[1:]))
        path.chmod(0o600)
        assert repair_store_file(path).method == "rewrite"  # temp file + os.replace
        assert mode(path) == 0o600
        assert mode(quarantine_path_for(path)) == 0o600
        assert sorted(p.name for p in path.parent.iterdir()) == [
            "store.jsonl",
            "store.jsonl.lock",
            "store.jsonl.quarantine.jsonl",
        ]  # no temp file left behind
    _figures["permission_checks"] = _figures.get("permission_checks", 0) + 9


def test_the_default_runtime_home_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "wb" / "home"
    monkeypatch.setenv("WORKBUDDY_HOME", str(home))
    monkeypatch.setenv("WORKBUDDY_USER_ID", RAW_USER_ID)
    reset_runtime()
    try:
        with umask(0o000):
            runtime = default_runtime()
        assert runtime.store.read_all()
        for directory in (tmp_path / "wb", home, home / "remote-memory"):
            assert mode(directory) == 0o700, directory
        for file in (home / "remote-memory").iterdir():
            assert mode(file) == 0o600, file
    finally:
        reset_runtime()


def _raw_forms(user_id: str) -> set[bytes]:
    forms = {user_id, user_id.strip(), user_id.strip().casefold(), user_id.strip().lower()}
    out = set()
    for form in forms:
        out.add(form.encode())
        out.add(json.dumps(form)[1:-1].encode())
    out.add(b"Alice.Secret")
    out.add(b"secret-user")
    return out


def test_no_raw_user_id_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RemoteMemoryStore(tmp_path / "s" / "store.jsonl", user_id=RAW_USER_ID)
    fill(store)
    store.retract("m-0", reason="retracted", source=src("r"))
    store.path.write_bytes(store.path.read_bytes() + b'{"torn')
    repair_store_file(store.path)  # the quarantine too
    monkeypatch.setenv("WORKBUDDY_HOME", str(tmp_path / "runtime"))
    monkeypatch.setenv("WORKBUDDY_USER_ID", RAW_USER_ID)
    reset_runtime()
    try:
        runtime = default_runtime()
        RecallEngine(runtime.store).recall("layered memory")
    finally:
        reset_runtime()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 5
    forbidden = _raw_forms(RAW_USER_ID)
    for file in files:
        data = file.read_bytes()
        name = str(file.relative_to(tmp_path)).encode()
        for form in forbidden:
            assert form not in data, f"raw user id in {file.name}"
            assert form.lower() not in name.lower(), f"raw user id in the name {file.name}"
    assert user_scope_for(RAW_USER_ID).encode() in store.path.read_bytes()
    _figures["files_grepped_for_raw_user_id"] = len(files)
    _figures["raw_user_id_occurrences"] = 0


def test_a_second_user_on_the_same_file_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    alice = RemoteMemoryStore(path, user_id="alice")
    fill(alice)
    same_alice = RemoteMemoryStore(path, user_id="  ALICE ")  # strip + casefold: same user
    assert len(same_alice.read_all()) == 4
    before = path.read_bytes()
    bob = RemoteMemoryStore(path, user_id="bob")
    attempts = {
        "read_all": bob.read_all,
        "latest_profile": bob.latest_profile,
        "append": lambda: bob.append(
            kind="conversation", content="bob's", summary="bob", source=src("bob")
        ),
        "retract": lambda: bob.retract("m-1", reason="bob says no", source=src("bob")),
        "recall-indexed": lambda: RecallEngine(bob).recall("layered memory"),
        "recall-teaching": lambda: RecallEngine(bob, strategy="teaching").recall("layered"),
        "system-prompt": lambda: build_system_prompt(bob),
    }
    for name, attempt in attempts.items():
        with pytest.raises(RemoteMemoryScopeError) as info:
            attempt()
        message = str(info.value)
        assert "user_scope" in message, name
        assert "alice" not in message.casefold() and "bob" not in message.casefold()
        assert path.read_bytes() == before, f"{name} wrote to another user's file"
    assert len(alice.read_all()) == 4  # the owner is unaffected
    _figures["second_user_attempts_refused"] = len(attempts)


def test_a_mixed_scope_file_is_refused_by_every_reader(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    fill(RemoteMemoryStore(path, user_id="alice"), 1)
    other = tmp_path / "other.jsonl"
    RemoteMemoryStore(other, user_id="bob").append(
        kind="conversation", memory_id="b-1", content="bob", summary="b", source=src()
    )
    path.write_bytes(path.read_bytes() + other.read_bytes())
    before = path.read_bytes()
    alice = RemoteMemoryStore(path, user_id="alice")
    with pytest.raises(RemoteMemoryScopeError, match="line 3"):
        alice.read_all()
    with pytest.raises(RemoteMemoryScopeError):
        alice.append(kind="conversation", content="x", summary="x", source=src())
    with pytest.raises(RemoteMemoryScopeError):
        repair_store_file(path)
    assert path.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_file_owned_by_another_os_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "theirs.jsonl"
    store = RemoteMemoryStore(path, user_id="alice")
    fill(store)
    store.read_all()  # fill() appended through this object: it has read the file before
    os.chown(path, OTHER_UID, OTHER_UID)
    before = path.read_bytes()
    for reader in (store, RemoteMemoryStore(path, user_id="alice")):
        for attempt in (
            reader.read_all,
            reader.latest_profile,
            lambda r=reader: r.append(kind="conversation", content="x", summary="x", source=src()),
            lambda r=reader: r.retract("m-1", reason="r", source=src()),
            lambda r=reader: RecallEngine(r).recall("layered"),
        ):
            with pytest.raises(RemoteMemoryScopeError, match=f"uid {OTHER_UID}"):
                attempt()
    assert read_bytes(path) == before
    report = check_store_file(path)
    assert report.owner_uid == OTHER_UID and not report.healthy
    assert report.problems[0][0] == 0 and f"uid {OTHER_UID}" in report.problems[0][1]
    with pytest.raises(RemoteMemoryScopeError, match="refuses"):
        repair_store_file(path)
    assert read_bytes(path) == before
    # a symlink to another user's file is no way around the check
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    with pytest.raises(RemoteMemoryScopeError):
        RemoteMemoryStore(link, user_id="alice").read_all()
    _figures["foreign_uid_attempts_refused"] = 11


def test_errors_never_carry_the_raw_user_id(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "e.jsonl", user_id=RAW_USER_ID)
    fill(store)
    messages = [repr(store)]
    for attempt in (
        lambda: store.append(
            kind="conversation", memory_id="m-1", content="x", summary="x", source=src()
        ),
        lambda: store.retract("nope", reason="r", source=src()),
        lambda: RemoteMemoryStore(store.path, user_id="someone").read_all(),
        lambda: RecallEngine(store).recall("?!"),
    ):
        with pytest.raises(RemoteMemoryError) as info:
            attempt()
        messages.append(str(info.value))
    for message in messages:
        assert "secret" not in message.casefold(), message
