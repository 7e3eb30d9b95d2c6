"""I/O faults inside a write: nothing that was never acknowledged stays behind.

An append is acknowledged only when it returns (its fsync returned). Here every step of
a write is made to fail, by replacing ``os.write`` / ``os.fsync`` / ``os.ftruncate`` for
the one file the step touches: the write itself (an I/O error, a full disk raising
ENOSPC, a short write), the fsync of the file, the fsync of the folder of a new file,
and in the tail recovery the quarantine write, its fsyncs and the cut of the tail. For
``append``, ``append_many`` and ``retract`` alike the suite checks:

* the call raises ``RemoteMemoryWriteError``, saying nothing was stored and a retry is safe;
* the store's bytes are those from before the call, ``read_all`` is unchanged (0 records
  lost, 0 unacknowledged records visible) and the quarantine file holds no torn entry;
* the same call, retried, succeeds; so does another process appending after the failure.

When the cut itself fails (the ``ftruncate`` or its ``fsync``), the store fails closed:
``RemoteMemoryFailedClosedError``, a marker beside the store that makes every writer in
every process refuse, ``fsck`` saying so, and ``repair`` moving the bytes that were never
acknowledged to the quarantine file before the store takes writes again. Last, a real
full disk: a 64 KiB tmpfs mounted by the test when it runs as root.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from memorylib import (
    TEACHING_AS_OF,
    RecallEngine,
    RemoteMemoryError,
    RemoteMemoryFailedClosedError,
    RemoteMemoryStore,
    RemoteMemoryWriteError,
    StoredMemory,
)
from memorylib.files import marker_path_for, quarantine_path_for, read_quarantine
from memorylib.fsck import check_store_file, main_fsck, main_repair, repair_store_file

from ._reliability import (
    PROCESS_TIMEOUT,
    PYTHON,
    finish,
    python_env,
    read_bytes,
    record_figures,
    spawn,
    src,
)

USER = "faults-user"
_figures: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _publish_figures():
    yield
    record_figures("faults", **dict(sorted(_figures.items())))


# -- fault injection ------------------------------------------------------------------------


@dataclass
class Fault:
    """Fail the ``nth`` call of ``call`` on the file ``target`` names, once."""

    call: str  # "open", "write", "fsync" or "ftruncate"
    target: str  # "store", "quarantine", "marker" or "folder"
    code: int = errno.EIO
    short: bool = False  # a write that takes only part of the bytes, as a full disk does
    nth: int = 1
    seen: int = 0
    fired: bool = False


class Faults:
    """os.open/close/write/fsync/ftruncate replaced; every fd remembers which file it is."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store_path: Path) -> None:
        self.names = {
            store_path.name: "store",
            quarantine_path_for(store_path).name: "quarantine",
            marker_path_for(store_path).name: "marker",
        }
        self.folder = os.path.abspath(store_path.parent)
        self.fds: dict[int, str] = {}
        self.plan: list[Fault] = []
        real = {
            name: getattr(os, name) for name in ("open", "close", "write", "fsync", "ftruncate")
        }
        self.real = real

        def opened(path, flags, mode=0o777, *, dir_fd=None):
            kind = "folder" if os.path.abspath(path) == self.folder else None
            kind = kind or self.names.get(Path(path).name)
            if kind is not None and self._due("open", kind) is not None:
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            fd = real["open"](path, flags, mode, dir_fd=dir_fd)
            if kind is not None:
                self.fds[fd] = kind
            return fd

        def closed(fd):
            self.fds.pop(fd, None)
            return real["close"](fd)

        def write(fd, data):
            fault = self._due("write", fd)
            if fault is None:
                return real["write"](fd, data)
            if fault.short:
                return real["write"](fd, bytes(data)[: max(1, len(data) // 3)])
            raise OSError(fault.code, os.strerror(fault.code))

        def failing(name: str) -> Callable[..., None]:
            def call(fd, *args):
                if self._due(name, fd) is not None:
                    raise OSError(errno.EIO, os.strerror(errno.EIO))
                return real[name](fd, *args)

            return call

        monkeypatch.setattr(os, "open", opened)
        monkeypatch.setattr(os, "close", closed)
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", failing("fsync"))
        monkeypatch.setattr(os, "ftruncate", failing("ftruncate"))

    def _due(self, call: str, fd: int | str) -> Fault | None:
        """The fault this call must raise, if any; every matching fault counts the call."""
        due = None
        target = fd if isinstance(fd, str) else self.fds.get(fd)
        for fault in self.plan:
            if fault.call == call and not fault.fired and target == fault.target:
                fault.seen += 1
                if fault.seen == fault.nth and due is None:
                    fault.fired, due = True, fault
        return due

    def arm(self, *faults: Fault) -> None:
        self.plan = [dataclasses.replace(f, seen=0, fired=False) for f in faults]  # fresh

    def disarm(self, step: str) -> None:
        """Stop injecting; every planned fault must have fired (else the test proves nothing)."""
        assert all(f.fired for f in self.plan), f"{step}: a planned fault never fired"
        _figures[f"step: {step}"] += 1
        _figures["faults_injected"] += len(self.plan)
        _figures["calls_failed"] += 1
        self.plan = []


# -- the operations under test ---------------------------------------------------------------


def _fill(store: RemoteMemoryStore, n: int = 4) -> list[StoredMemory]:
    return [
        store.append(
            kind="conversation", memory_id=f"m-{i}", content=f"kept {i}", summary="s", source=src(i)
        )
        for i in range(n)
    ]


def _append(store: RemoteMemoryStore, pad: int = 0) -> tuple[StoredMemory, ...]:
    return (
        store.append(
            kind="conversation",
            memory_id="new-1",
            content="new" + "x" * pad,
            summary="s",
            source=src("n"),
        ),
    )


def _append_many(store: RemoteMemoryStore, pad: int = 0) -> tuple[StoredMemory, ...]:
    return store.append_many(
        {
            "kind": "conversation",
            "memory_id": f"batch-{i}",
            "content": f"batch {i}" + "x" * (pad // 3),
            "summary": "s",
            "source": src(f"b{i}"),
        }
        for i in range(3)
    )


def _retract(store: RemoteMemoryStore, pad: int = 0) -> tuple[StoredMemory, ...]:
    reason = "wrong" + "x" * min(pad // 2, 1990)
    return (store.retract("m-1", reason=reason, source=src("r"), retraction_id="r-1"),)


OPERATIONS = {"append": _append, "append_many": _append_many, "retract": _retract}

# each step, and the faults that make it fail (the write path of an existing store file)
WRITE_STEPS = {
    "write EIO": (Fault("write", "store"),),
    "write ENOSPC": (Fault("write", "store", code=errno.ENOSPC),),
    "short write": (Fault("write", "store", short=True),),
    "fsync of the file": (Fault("fsync", "store"),),
}
# with an uncommitted tail to recover first (the quarantine file is new)
RECOVERY_STEPS = {
    "quarantine write": (Fault("write", "quarantine"),),
    "quarantine short write": (Fault("write", "quarantine", short=True),),
    "quarantine fsync": (Fault("fsync", "quarantine"),),
    "quarantine folder fsync": (Fault("fsync", "folder"),),
    "tail cut (ftruncate)": (Fault("ftruncate", "store"),),
    "tail cut (its fsync)": (Fault("fsync", "store"),),
}
TORN = b'{"schema_version":1,"memory_id":"torn-1","user_sco'


def _snapshot(path: Path) -> tuple[bytes | None, bytes | None, tuple[StoredMemory, ...]]:
    records = RemoteMemoryStore(path, user_id=USER).read_all() if path.exists() else []
    return read_bytes(path), read_bytes(quarantine_path_for(path)), tuple(records)


def _check_nothing_stored(path: Path, before, error: RemoteMemoryError) -> None:
    assert isinstance(error, RemoteMemoryWriteError), repr(error)
    assert "nothing was stored" in str(error) and "retrying is safe" in str(error)
    assert not marker_path_for(path).exists()
    after = _snapshot(path)
    assert after[0] == before[0], "the store's bytes are those from before the call"
    assert after[2] == before[2], "read_all is unchanged"
    _figures["records_lost"] += len(set(before[2]) - set(after[2]))
    _figures["unacknowledged_records_visible_after_the_call"] += len(set(after[2]) - set(before[2]))


def _retry_succeeds(path: Path, op, before_records: tuple[StoredMemory, ...]) -> None:
    store = RemoteMemoryStore(path, user_id=USER)
    written = op(store)
    assert tuple(store.read_all()) == (*before_records, *written)
    assert check_store_file(path).healthy
    _figures["retries_that_succeeded"] += 1


@pytest.mark.parametrize("op", OPERATIONS)
@pytest.mark.parametrize("step", WRITE_STEPS)
def test_a_failed_write_step_is_cut_back_and_the_retry_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, step: str
) -> None:
    path = tmp_path / "store.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    _fill(store)
    faults = Faults(monkeypatch, path)
    before = _snapshot(path)
    faults.arm(*WRITE_STEPS[step])
    with pytest.raises(RemoteMemoryError) as caught:
        OPERATIONS[op](store)
    faults.disarm(step)
    _check_nothing_stored(path, before, caught.value)
    assert before[1] is None and read_bytes(quarantine_path_for(path)) is None
    _retry_succeeds(path, OPERATIONS[op], before[2])  # the same object's retry works too


@pytest.mark.parametrize("op", ["append", "append_many"])
def test_a_failed_folder_fsync_of_a_new_file_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    path = tmp_path / "new.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    faults = Faults(monkeypatch, path)
    faults.arm(Fault("fsync", "folder"))
    with pytest.raises(RemoteMemoryWriteError, match="the fsync of its folder failed") as caught:
        OPERATIONS[op](store)
    faults.disarm("fsync of the folder (new file)")
    _check_nothing_stored(path, (None, None, ()), caught.value)
    assert not path.exists()  # the file this call created is gone again
    _retry_succeeds(path, OPERATIONS[op], ())


@pytest.mark.parametrize("op", OPERATIONS)
@pytest.mark.parametrize("step", RECOVERY_STEPS)
def test_a_failed_tail_recovery_stores_nothing_and_the_retry_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, step: str
) -> None:
    path = tmp_path / "store.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    kept = _fill(store)
    with open(path, "ab") as handle:  # a writer died in the middle of its line
        handle.write(TORN)
    faults = Faults(monkeypatch, path)
    with pytest.warns(UserWarning):
        before = _snapshot(path)
    faults.arm(*RECOVERY_STEPS[step])
    with pytest.raises(RemoteMemoryWriteError, match="recovering its uncommitted tail") as caught:
        OPERATIONS[op](store)
    faults.disarm(f"recovery: {step}")
    assert "nothing was stored" in str(caught.value) and "retrying is safe" in str(caught.value)
    assert not marker_path_for(path).exists()
    with pytest.warns(UserWarning) if path.read_bytes().endswith(TORN) else _no_warning():
        after = _snapshot(path)
    assert after[2] == tuple(kept)  # nothing new is visible, nothing lost
    _figures["records_lost"] += len(set(kept) - set(after[2]))
    _figures["unacknowledged_records_visible_after_the_call"] += len(set(after[2]) - set(kept))
    if step == "tail cut (its fsync)":  # ftruncate worked: only the tail left, as intended
        assert after[0] == before[0][: -len(TORN)]
    else:
        assert after[0] == before[0]
    entries = read_quarantine(path)  # never a torn or half-written quarantine line
    assert [e["bytes"] for e in entries] in ([], [TORN])
    _retry_succeeds(path, OPERATIONS[op], tuple(kept))
    assert [e["bytes"] for e in read_quarantine(path)] == [TORN]  # once, not twice


@contextmanager
def _no_warning() -> Iterator[None]:
    yield


def test_an_interrupt_between_write_and_fsync_is_cut_back_and_re_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    _fill(store)
    before = _snapshot(path)
    real_fsync = os.fsync
    calls = []

    def interrupted_once(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C after the write, before its fsync returned
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        _append(store)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert len(calls) == 2  # the failed fsync, then the cut's
    assert _snapshot(path) == before
    _retry_succeeds(path, _append, before[2])


# -- the cut fails too: the store fails closed until repair -----------------------------------

CUT_FAILS = {
    "ftruncate": (Fault("fsync", "store"), Fault("ftruncate", "store")),
    "fsync after the cut": (Fault("fsync", "store"), Fault("fsync", "store", nth=2)),
}


def _fail_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, how: str, *extra: Fault
) -> tuple[Path, tuple, RemoteMemoryFailedClosedError]:
    path = tmp_path / "store.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    _fill(store)
    faults = Faults(monkeypatch, path)
    before = _snapshot(path)
    faults.arm(*CUT_FAILS[how], *extra)
    with pytest.raises(RemoteMemoryFailedClosedError, match="FAILED CLOSED") as caught:
        OPERATIONS[op](store)
    faults.disarm(f"the cut fails: {how}" + (f" + {extra[0].call} of the marker" if extra else ""))
    monkeypatch.undo()
    return path, before, caught.value


@pytest.mark.parametrize("op", OPERATIONS)
def test_a_failed_cut_fails_closed_and_repair_removes_the_unacknowledged_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    path, before, error = _fail_closed(tmp_path, monkeypatch, op, "ftruncate")
    assert error.recorded and "repair" in str(error)
    unacknowledged = path.read_bytes()[len(before[0]) :]
    assert unacknowledged.endswith(b"\n")  # complete lines that were never acknowledged
    marker = marker_path_for(path)
    assert marker.exists() and (marker.stat().st_mode & 0o777) == 0o600
    for writer in (RemoteMemoryStore(path, user_id=USER), RemoteMemoryStore(path, user_id=USER)):
        with pytest.raises(RemoteMemoryFailedClosedError, match="repair"):
            _append(writer)
        with pytest.raises(RemoteMemoryFailedClosedError):
            _retract(writer)
    _figures["writes_refused_while_failed_closed"] += 4
    assert path.read_bytes() == before[0] + unacknowledged  # the refusals wrote nothing
    reader = RemoteMemoryStore(path, user_id=USER)  # readers are not handed those bytes either
    with pytest.raises(RemoteMemoryFailedClosedError, match="reads and writes"):
        reader.read_all()
    for strategy in ("indexed", "teaching"):
        with pytest.raises(RemoteMemoryFailedClosedError):
            RecallEngine(reader, strategy=strategy).recall("memory", as_of=TEACHING_AS_OF)

    report = check_store_file(path)  # fsck says so, and changes nothing
    assert report.failed_closed and not report.healthy
    assert "FAILED CLOSED" in report.problems[0][1]
    assert main_fsck(str(path)) == 1
    assert marker.exists() and path.read_bytes() == before[0] + unacknowledged

    repaired = repair_store_file(path)
    assert repaired.failed_closed_cleared and repaired.method == "truncate"
    assert [c.length for c in repaired.quarantined] == [len(unacknowledged)]
    assert [e["bytes"] for e in read_quarantine(path)] == [unacknowledged]  # kept, not lost
    assert not marker.exists()
    assert _snapshot(path)[0] == before[0] and _snapshot(path)[2] == before[2]
    _figures["repairs_after_failing_closed"] += 1
    _retry_succeeds(path, OPERATIONS[op], before[2])


def test_a_cut_whose_fsync_failed_is_checked_by_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, before, error = _fail_closed(tmp_path, monkeypatch, "append", "fsync after the cut")
    assert path.read_bytes() == before[0]  # cut, but the cut was not known to be durable
    assert error.recorded and marker_path_for(path).exists()
    with pytest.raises(RemoteMemoryFailedClosedError):
        _append(RemoteMemoryStore(path, user_id=USER))
    assert main_repair(str(path)) == 0
    assert not marker_path_for(path).exists() and read_quarantine(path) == []
    _figures["repairs_after_failing_closed"] += 1
    _retry_succeeds(path, _append, before[2])


@pytest.mark.parametrize("marker_fault", ["open", "write", "fsync"])
def test_when_even_the_marker_cannot_be_written_this_process_still_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker_fault: str
) -> None:
    path, before, error = _fail_closed(
        tmp_path, monkeypatch, "append", "ftruncate", Fault(marker_fault, "marker")
    )
    assert not error.recorded and "only this process knows" in str(error)
    marker = marker_path_for(path)
    # open failed: no marker at all; write failed: an empty one, which still refuses;
    # fsync failed: a marker whose line may not be durable
    assert marker.exists() == (marker_fault != "open")
    with pytest.raises(RemoteMemoryFailedClosedError, match="FAILED CLOSED") as again:
        _append(RemoteMemoryStore(path, user_id=USER))  # a new object in the same process
    assert not again.value.recorded  # the marker, if any, does not say which bytes
    report = check_store_file(path)  # fsck in this process knows it too, once
    assert report.failed_closed and len(report.problems) == 1
    repaired = repair_store_file(path)  # and repair here can still remove the bytes
    assert repaired.failed_closed_cleared and len(repaired.quarantined) == 1
    assert _snapshot(path)[0] == before[0] and not marker.exists()
    _retry_succeeds(path, _append, before[2])


def test_an_empty_or_torn_marker_makes_repair_refuse_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    kept = _fill(RemoteMemoryStore(path, user_id=USER))
    size = path.stat().st_size
    marker = marker_path_for(path)
    for content in (b"", b'{"file": "store.jsonl", "byte_of'):  # as a dying disk leaves it
        marker.write_bytes(content)
        with pytest.raises(RemoteMemoryFailedClosedError):
            _append(RemoteMemoryStore(path, user_id=USER))
        assert check_store_file(path).failed_closed
        with pytest.raises(RemoteMemoryError, match="delete the marker by hand"):
            repair_store_file(path)  # it cannot know which bytes were never acknowledged
        assert marker.read_bytes() == content and path.stat().st_size == size
    marker.unlink()  # a person looked at the end of the file
    _retry_succeeds(path, _append, tuple(kept))


def test_a_failed_cut_of_the_quarantine_file_fails_closed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    kept = _fill(store)
    with open(path, "ab") as handle:
        handle.write(TORN)
    faults = Faults(monkeypatch, path)
    faults.arm(Fault("fsync", "quarantine"), Fault("ftruncate", "quarantine"))
    with pytest.raises(RemoteMemoryFailedClosedError, match="quarantine"):
        _append(store)
    faults.disarm("the cut fails: quarantine ftruncate")
    monkeypatch.undo()
    assert json.loads(marker_path_for(path).read_text())["file"] == quarantine_path_for(path).name
    with pytest.raises(RemoteMemoryFailedClosedError):
        _append(RemoteMemoryStore(path, user_id=USER))
    repaired = repair_store_file(path)  # cuts the quarantine back, then recovers the tail
    assert repaired.failed_closed_cleared
    assert [e["bytes"] for e in read_quarantine(path)] == [TORN]
    _figures["repairs_after_failing_closed"] += 1
    _retry_succeeds(path, _append, tuple(kept))


def test_repair_refuses_bytes_that_differ_from_the_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _, _ = _fail_closed(tmp_path, monkeypatch, "append", "ftruncate")
    edited = path.read_bytes().replace(b"new", b"NEW")  # someone changed the bytes since
    path.write_bytes(edited)
    with pytest.raises(RemoteMemoryError, match="compare them by hand"):
        repair_store_file(path)
    assert path.read_bytes() == edited and marker_path_for(path).exists()  # nothing changed
    with pytest.raises(RemoteMemoryFailedClosedError):
        _append(RemoteMemoryStore(path, user_id=USER))


# -- other processes -------------------------------------------------------------------------

APPEND_ONCE = """
path, mid = sys.argv[1], sys.argv[2]
store = RemoteMemoryStore(path, user_id="faults-user")
size = os.path.getsize(path)
try:
    store.append(kind="conversation", memory_id=mid, content="from a child", summary="s",
                 source=MemorySource("child", "conversation_transcript", "t",
                                     "2026-08-01T12:00:00Z"))
    print(json.dumps({"ok": True, "error": None, "grew": os.path.getsize(path) > size}))
except RemoteMemoryError as exc:
    print(json.dumps({"ok": False, "error": type(exc).__name__,
                      "grew": os.path.getsize(path) != size}))
"""


def _child_append(path: Path, memory_id: str) -> dict[str, object]:
    (result,) = finish([spawn(APPEND_ONCE, path, memory_id)], timeout=PROCESS_TIMEOUT)
    _figures["child_process_appends"] += 1
    return result


@pytest.mark.slow
def test_another_process_appends_after_a_failed_write_and_refuses_after_a_failed_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    _fill(store)
    faults = Faults(monkeypatch, path)
    faults.arm(Fault("fsync", "store"))
    with pytest.raises(RemoteMemoryWriteError):
        _append(store)
    faults.disarm("fsync of the file")
    monkeypatch.undo()
    assert _child_append(path, "child-1") == {"ok": True, "error": None, "grew": True}

    path2, before, _ = _fail_closed(tmp_path / "b", monkeypatch, "append", "ftruncate")
    size = path2.stat().st_size
    refused = _child_append(path2, "child-2")
    assert refused == {"ok": False, "error": "RemoteMemoryFailedClosedError", "grew": False}
    assert path2.stat().st_size == size
    fsck = subprocess.run(
        [PYTHON, "-m", "memorylib", "fsck", str(path2)],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        env=python_env(),
    )
    assert fsck.returncode == 1 and "FAILED CLOSED" in fsck.stdout
    assert main_repair(str(path2)) == 0
    assert _child_append(path2, "child-3") == {"ok": True, "error": None, "grew": True}
    ids = [r.memory_id for r in RemoteMemoryStore(path2, user_id=USER).read_all()]
    assert ids == [r.memory_id for r in before[2]] + ["child-3"]  # new-1 was never stored


# -- a real full disk ------------------------------------------------------------------------


@contextmanager
def _small_tmpfs(tmp_path: Path, size: str = "64k") -> Iterator[Path]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real full disk needs root to mount a small tmpfs; run the suite as root")
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if done.returncode != 0:
        pytest.skip(f"could not mount a tmpfs (no CAP_SYS_ADMIN here?): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def _fill_until_full(store: RemoteMemoryStore) -> tuple[list[StoredMemory], RemoteMemoryError]:
    acked: list[StoredMemory] = []
    for i in range(1000):
        try:
            acked.append(
                store.append(
                    kind="conversation",
                    memory_id=f"full-{i}",
                    content=f"record {i} " + "x" * 1500,
                    summary="s",
                    source=src(i),
                )
            )
        except RemoteMemoryError as exc:
            return acked, exc
    raise AssertionError("the 64 KiB tmpfs never filled up")


def _fill_the_disk(mount: Path) -> Path:
    filler = mount / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"f" * 1024)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_real_full_disk_stores_nothing_and_the_retry_succeeds(tmp_path: Path) -> None:
    pad = 5000  # more than a page: the slack at the end of the file's last page cannot hold it
    with _small_tmpfs(tmp_path) as mount:
        spare = mount / "spare"
        spare.write_bytes(b"s" * 32768)  # room to free once the disk is full
        path = mount / "store.jsonl"
        store = RemoteMemoryStore(path, user_id=USER)
        acked = _fill(store)
        more, error = _fill_until_full(store)
        acked += more
        before = _snapshot(path)
        assert isinstance(error, RemoteMemoryWriteError), repr(error)
        assert "nothing was stored" in str(error) and "ENOSPC" in str(error)
        assert before[2] == tuple(acked)  # every acknowledged record, and nothing else
        _figures["full disk: appends acknowledged before ENOSPC"] += len(acked)
        _figures["full disk: calls failed (ENOSPC)"] += 1
        _fill_the_disk(mount)  # what the last record left, to the last byte
        for op in OPERATIONS.values():  # still full: each fails the same way, nothing changes
            with pytest.raises(RemoteMemoryWriteError, match="nothing was stored"):
                op(store, pad)
            assert _snapshot(path) == before
            _figures["full disk: calls failed (ENOSPC)"] += 1
        spare.unlink()  # free some room: every retry succeeds, on the same store object
        for name, op in OPERATIONS.items():
            assert op(store, pad), name
            _figures["full disk: retries that succeeded"] += 1
        after = RemoteMemoryStore(path, user_id=USER).read_all()
        assert after[: len(acked)] == list(acked)
        _figures["records_lost"] += len(set(acked) - set(after))
        assert check_store_file(path).healthy and not marker_path_for(path).exists()


def test_a_tail_recovery_on_a_real_full_disk_stores_nothing_and_the_retry_succeeds(
    tmp_path: Path,
) -> None:
    with _small_tmpfs(tmp_path) as mount:
        path = mount / "store.jsonl"
        store = RemoteMemoryStore(path, user_id=USER)
        kept = _fill(store)
        with open(path, "ab") as handle:
            handle.write(TORN)
        filler = _fill_the_disk(mount)
        with pytest.warns(UserWarning):
            before = _snapshot(path)
        with pytest.raises(RemoteMemoryWriteError, match="recovering its uncommitted tail"):
            _append(store, 5000)  # the quarantine write needs room
        _figures["full disk: calls failed (ENOSPC)"] += 1
        with pytest.warns(UserWarning):
            assert _snapshot(path) == before
        assert not quarantine_path_for(path).exists()  # created, then removed again
        filler.unlink()
        _retry_succeeds(path, _append, tuple(kept))
        assert [e["bytes"] for e in read_quarantine(path)] == [TORN]
        _figures["full disk: retries that succeeded"] += 1


def test_sqlite_on_a_real_full_disk_stores_nothing_and_the_retry_succeeds(tmp_path: Path) -> None:
    """The SQLite backend commits in a transaction: a full disk rolls it back."""
    from memorylib.backends import SQLiteMemoryStore

    with _small_tmpfs(tmp_path, size="1m") as mount:  # room for the WAL to grow
        spare = mount / "spare"
        spare.write_bytes(b"s" * 393216)
        path = mount / "store.db"
        store = SQLiteMemoryStore(path, user_id=USER)
        acked = _fill(store)  # type: ignore[arg-type]
        more, error = _fill_until_full(store)  # type: ignore[arg-type]
        acked += more
        assert isinstance(error, RemoteMemoryWriteError), repr(error)
        assert "nothing was stored" in str(error)
        _figures["sqlite full disk: appends acknowledged before SQLITE_FULL"] += len(acked)
        _figures["sqlite full disk: calls failed"] += 1
        other = SQLiteMemoryStore(path, user_id=USER)  # another connection sees the same
        for reader in (store, other):
            assert reader.read_all() == list(acked)
        for op in OPERATIONS.values():
            with pytest.raises(RemoteMemoryWriteError):
                op(store, 5000)  # type: ignore[arg-type]
            assert other.read_all() == list(acked)
            _figures["sqlite full disk: calls failed"] += 1
        spare.unlink()
        for name, op in OPERATIONS.items():
            assert op(store, 5000), name  # type: ignore[arg-type]
            _figures["sqlite full disk: retries that succeeded"] += 1
        after = other.read_all()
        assert after[: len(acked)] == list(acked) and len(after) == len(acked) + 5
        _figures["records_lost"] += len(set(acked) - set(after))
        store.close()
        other.close()
