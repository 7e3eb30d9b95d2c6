"""Crashes: writers killed with SIGKILL at random moments, and injected partial writes.

A writer reports each id through a pipe only AFTER ``append``/``retract`` returned
(the line is written and fsynced): that is the acknowledgement. A record commits at
its newline, so a writer killed in the middle of a line leaves an uncommitted tail:
readers do not see it, and the next writer, under the lock, moves its bytes to the
quarantine file and cuts them off before appending. After EVERY round of kills this
suite checks, with no manual repair:

* the very next append and recall succeed;
* every acknowledged record is present exactly once;
* every byte of every interrupted write is in the quarantine file (the injected ones
  are reported to the test before they are written, so each is looked up by its bytes);
* a writer killed DURING the recovery (after the quarantine write, after the cut)
  leaves a store the next writer recovers, without a second quarantine entry.

Damage in the middle (a terminated line that does not parse) is not a crash: it
stays fatal, names its line, and ``repair`` quarantines it. Writers are forked from
this process so 200 kills stay fast; a second test kills freshly exec'd interpreters.
"""

from __future__ import annotations

import base64
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryCorruptionError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryWriteError,
    UncommittedWriteWarning,
    user_scope_for,
)
from memorylib import store as store_module
from memorylib.fsck import (
    check_store_file,
    main_fsck,
    main_repair,
    quarantine_path_for,
    read_quarantine,
    repair_store_file,
)

from ._reliability import PROCESS_TIMEOUT, PYTHON, REPO, python_env, record_figures, src

USER = "crash-user"
ROUNDS, WRITERS_PER_ROUND, TORN_EVERY, RECOVERY_KILL_EVERY = 50, 4, 2, 4
_figures: dict[str, int] = {}


def _bump(key: str, n: int = 1) -> None:
    _figures[key] = _figures.get(key, 0) + n


@pytest.fixture(scope="module", autouse=True)
def _publish_figures():
    yield
    record_figures("crash", **_figures)


# -- forked writers ----------------------------------------------------------------------------


def _die_in_recovery(step: str, ack_fd: int) -> None:
    """In this forked child, SIGKILL itself in the middle of the next tail recovery."""
    real_truncate, real_quarantine = store_module.truncate, store_module.write_quarantine

    def quarantine_then_die(path, entries):
        real_quarantine(path, entries)
        if step == "after_quarantine":
            os.write(ack_fd, b"K after_quarantine\n")
            os.kill(os.getpid(), signal.SIGKILL)

    def truncate_then_die(path, size):
        real_truncate(path, size)
        if step == "after_truncate":
            os.write(ack_fd, b"K after_truncate\n")
            os.kill(os.getpid(), signal.SIGKILL)

    store_module.write_quarantine = quarantine_then_die
    store_module.truncate = truncate_then_die


def _writer(
    store: RemoteMemoryStore, ack_fd: int, name: str, seed: int, tear: bool, recovery_kill: str
) -> None:
    """Runs in a forked child; never returns (os._exit). Appends until killed."""
    real_write = os.write
    code = 0
    try:
        rng = random.Random(seed)
        acked: list[str] = []
        tear_after = rng.randrange(0, 6) if tear else -1
        if recovery_kill:
            _die_in_recovery(recovery_kill, ack_fd)
        i = 0
        while True:
            if i == tear_after:

                def torn_write(fd: int, data: bytes) -> int:
                    if fd == ack_fd:
                        return real_write(fd, data)
                    prefix = bytes(data)[: rng.randrange(1, len(data))]
                    real_write(ack_fd, b"T " + base64.b64encode(prefix) + b"\n")  # report first
                    real_write(fd, prefix)
                    os.kill(os.getpid(), signal.SIGKILL)  # die in the middle of the line
                    raise AssertionError("unreachable")

                os.write = torn_write  # only this forked child is affected
            mid = f"{name}-{i}"
            size = rng.choices((0, 10, 200, 2_000, 19_000), weights=(3, 3, 3, 2, 1))[0]
            store.append(
                kind="conversation",
                memory_id=mid,
                content=f"crash test {mid} " + "\u8bb0" * size,
                summary=f"summary {mid}",
                source=src(mid),
            )
            real_write(ack_fd, f"A {mid}\n".encode())
            acked.append(mid)
            i += 1
            if i % 7 == 0:
                target = rng.choice(acked)
                record = store.retract(target, reason="crash test retraction", source=src("r"))
                real_write(ack_fd, f"R {target} {record.memory_id}\n".encode())
    except BaseException as exc:
        code = 3
        real_write(ack_fd, f"E {type(exc).__name__}: {exc}\n".encode(errors="replace"))
    finally:
        os._exit(code)


def _reap(pid: int, deadline: float) -> int:
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            raise AssertionError(f"writer {pid} did not die in time")
        time.sleep(0.001)


def _drain(fd: int) -> list[str]:
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode().splitlines()


def _verify(
    path: Path,
    acked: set[str],
    retracted: dict[str, str],
    torn: list[bytes],
    store: RemoteMemoryStore | None = None,
) -> None:
    """After a crash, with no repair: the next append and recall work, nothing is lost.

    Without ``store`` a fresh store object reads the whole file (a restart); with one,
    the long-lived object the killed writers were forked from carries on.
    """
    store = store or RemoteMemoryStore(path, user_id=USER)
    tail = store.uncommitted_bytes()
    _bump("rounds_ending_with_an_uncommitted_tail", tail > 0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = store.read_all()  # a reader: sees committed records only, never raises
    assert (tail > 0) == any(issubclass(w.category, UncommittedWriteWarning) for w in seen)
    word = f"probe{len(acked)}"  # a term only this record has
    probe = store.append(
        kind="conversation", content=f"{word} after crash", summary="probe", source=src("probe")
    )
    acked.add(probe.memory_id)
    assert not path.read_bytes() or path.read_bytes().endswith(b"\n")  # the tail was cut
    records = store.read_all()
    assert records[: len(before)] == before and records[-1] == probe
    result = RecallEngine(store).recall(word, as_of=TEACHING_AS_OF)
    assert result.hits and result.hits[0].memory_id == probe.memory_id
    counts = Counter(r.memory_id for r in records)
    assert max(counts.values()) == 1
    missing = acked - set(counts)
    assert not missing, f"acknowledged records lost: {sorted(missing)[:5]}"
    ids = {r.memory_id: r for r in records}
    for target, retraction_id in retracted.items():
        assert ids[retraction_id].kind is MemoryKind.RETRACTION
        assert ids[retraction_id].retracts == target
    quarantined = read_quarantine(path)
    kept = {entry["bytes"] for entry in quarantined}
    for prefix in torn:  # every byte of every injected interrupted write was kept
        assert prefix in kept or prefix in path.read_bytes(), prefix[:60]
    keys = [(entry["byte_offset"], entry["sha256"]) for entry in quarantined]
    assert len(keys) == len(set(keys)), "a recovery quarantined the same tail twice"
    for entry in quarantined:
        assert b"\n" not in entry["bytes"] and "uncommitted write" in entry["reason"]
        assert entry["bytes"].startswith(b'{"schema_version":1,"memory_id":"'[: entry["length"]])


@pytest.mark.slow
def test_sigkilled_writers_never_lose_an_acknowledged_record(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    rng = random.Random(20260802)
    parent_store = RemoteMemoryStore(path, user_id=USER)
    acked: set[str] = set()
    retracted: dict[str, str] = {}
    torn: list[bytes] = []
    started = time.monotonic()
    for round_no in range(ROUNDS):
        parent_store.append(
            kind="conversation", content=f"round {round_no}", summary="round", source=src(round_no)
        )  # children inherit what the parent read
        children = []
        tearing = round_no % TORN_EVERY == 0  # one extra writer that dies mid-line
        recovery_kill = ""  # in some tearing rounds, whoever recovers the tail dies doing it
        if round_no % RECOVERY_KILL_EVERY == 0:
            recovery_kill = ("after_quarantine", "after_truncate")[round_no // 4 % 2]
        for c in range(WRITERS_PER_ROUND + tearing):
            tear = c == WRITERS_PER_ROUND
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(read_fd)
                _writer(
                    parent_store,
                    write_fd,
                    f"r{round_no}c{c}",
                    rng.randrange(1 << 30),
                    tear,
                    "" if tear else recovery_kill,
                )
            os.close(write_fd)
            children.append((pid, read_fd, tear))
        time.sleep(rng.uniform(0.005, 0.05))
        statuses: dict[int, int] = {}
        if tearing:  # the lock is polled (50 ms): give the tearing writer its turn (bounded)
            tear_pid = children[-1][0]
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                done, status = os.waitpid(tear_pid, os.WNOHANG)
                if done:
                    statuses[tear_pid] = status
                    break
                time.sleep(0.002)
        for pid, _, _tear in children:
            if pid in statuses:
                continue
            time.sleep(rng.uniform(0, 0.015))
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:  # died on its own: the tearing writer, or one killed in a recovery
                statuses[pid] = status
                continue
            os.kill(pid, signal.SIGKILL)
            _bump("sigkills_sent")
        deadline = time.monotonic() + PROCESS_TIMEOUT
        for pid, read_fd, _ in children:
            status = statuses[pid] if pid in statuses else _reap(pid, deadline)
            lines = _drain(read_fd)
            errors = [line for line in lines if line.startswith("E ")]
            assert errors == [], errors
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            for line in lines:
                if line.startswith("A "):
                    acked.add(line[2:])
                elif line.startswith("R "):
                    _, target, retraction_id = line.split()
                    retracted[target] = retraction_id
                elif line.startswith("T "):
                    torn.append(base64.b64decode(line[2:]))
                    _bump("partial_writes_injected")
                elif line.startswith("K "):
                    _bump(f"killed_during_recovery_{line[2:]}")
        restart = round_no % 10 == 9  # every 10th round: a fresh reader of the whole file
        _verify(path, acked, retracted, torn, None if restart else parent_store)
        _bump("rounds_verified_without_repair")
    # The random rounds reach a kill step only when an armed writer meets a torn tail before
    # the parent kills it, which a slow or busy machine can miss. Then tear the tail here and
    # let one armed writer recover it and die at that step, so both steps are always tried.
    for step in ("after_quarantine", "after_truncate"):
        if _figures.get(f"killed_during_recovery_{step}", 0):
            continue
        prefix = b'{"schema_version":1,"memory_id":"torn-' + step.encode() + b'","kind":"conv'
        with path.open("ab") as handle:
            handle.write(prefix)
        torn.append(prefix)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            _writer(parent_store, write_fd, f"forced-{step}", 0, False, step)
        os.close(write_fd)
        status = _reap(pid, time.monotonic() + PROCESS_TIMEOUT)
        lines = _drain(read_fd)
        assert [line for line in lines if line.startswith("E ")] == []
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert f"K {step}" in lines, lines
        _bump(f"killed_during_recovery_{step}")
        _bump("forced_recovery_kills")
        _verify(path, acked, retracted, torn, None)
    elapsed = time.monotonic() - started
    records = RemoteMemoryStore(path, user_id=USER).read_all()
    assert check_store_file(path).healthy
    # a fresh interpreter reads every acknowledged record back
    probe = subprocess.run(
        [
            PYTHON,
            "-c",
            "import sys, json; from memorylib import RemoteMemoryStore as S; "
            "print(json.dumps([r.memory_id for r in S(sys.argv[1], user_id='crash-user')"
            ".read_all()]))",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=python_env(),
        cwd=REPO,
        timeout=PROCESS_TIMEOUT,
        check=True,
    )
    assert acked <= set(json.loads(probe.stdout))
    recoveries = len(read_quarantine(path))
    assert _figures.get("partial_writes_injected", 0) > 0
    assert recoveries >= len(torn)  # each torn tail recovered once (plus kernel-cut writes)
    assert _figures.get("killed_during_recovery_after_quarantine", 0) > 0
    assert _figures.get("killed_during_recovery_after_truncate", 0) > 0
    _bump("writer_processes", ROUNDS * WRITERS_PER_ROUND + (ROUNDS + TORN_EVERY - 1) // TORN_EVERY)
    _figures.update(
        automatic_recoveries=recoveries,
        manual_repairs=0,
        acknowledged_records=len(acked),
        acknowledged_retractions=len(retracted),
        records_on_disk=len(records),
        unacknowledged_but_stored=len(records) - len(acked) - len(set(retracted.values())),
        acknowledged_records_lost=0,
        fork_crash_seconds=round(elapsed, 2),
    )


EXEC_WRITER = """
import os, sys
from memorylib import MemorySource, RemoteMemoryStore
path, name = sys.argv[1], sys.argv[2]
store = RemoteMemoryStore(path, user_id="crash-user")
i = 0
while True:
    mid = f"{name}-{i}"
    store.append(kind="conversation", memory_id=mid, content=f"exec {mid}", summary="s",
                 source=MemorySource("s", "t", "t", "2026-08-01T12:00:00Z"))
    os.write(1, f"A {mid}\\n".encode())
    i += 1
"""


def _first_ack(proc: subprocess.Popen[bytes]) -> bytes:
    """Bytes the writer printed up to its first complete acknowledgement (bounded wait)."""
    fd = proc.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + PROCESS_TIMEOUT
    while b"\n" not in seen:
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(0.0, remaining))
        if not ready:
            proc.kill()
            raise AssertionError("an exec'd writer never acknowledged a record")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise AssertionError(f"writer exited early: {proc.communicate(timeout=10)[1][-2000:]}")
        seen += chunk
    return seen


@pytest.mark.slow
def test_killed_interpreters_restart_and_lose_nothing(tmp_path: Path) -> None:
    """Long-lived exec'd writers, killed at random moments and restarted, in a loop."""
    path = tmp_path / "exec.jsonl"
    rng = random.Random(7)
    acked: set[str] = set()
    kills = 0
    for generation in range(4):
        procs = [
            subprocess.Popen(
                [PYTHON, "-c", EXEC_WRITER, str(path), f"g{generation}w{w}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=python_env(),
                cwd=REPO,
            )
            for w in range(3)
        ]
        early = [_first_ack(proc) for proc in procs]  # each writer is appending now
        for proc in procs:
            time.sleep(rng.uniform(0, 0.1))  # then die at a random moment
            proc.send_signal(signal.SIGKILL)
            kills += 1
        for proc, head in zip(procs, early, strict=True):
            out, err = proc.communicate(timeout=PROCESS_TIMEOUT)
            assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
            text = (head + out).decode()
            acked |= {line[2:] for line in text.splitlines() if line.startswith("A ")}
        _verify(path, acked, {}, [])
    assert acked, "the writers never got to append"
    _bump("exec_writer_kills", kills)
    _bump("exec_writer_acknowledged_records", len(acked))


# -- injected partial writes without a crash, and the repair tool ------------------------------


def _fill(store: RemoteMemoryStore, n: int = 5) -> None:
    for i in range(n):
        store.append(
            kind="conversation", memory_id=f"m-{i}", content=f"c {i}", summary="s", source=src(i)
        )


def test_a_short_write_is_cut_back_by_the_writer_and_the_retry_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RemoteMemoryStore(tmp_path / "short.jsonl", user_id=USER)
    _fill(store)
    before = store.path.read_bytes()
    real_write = os.write

    def short_write(fd: int, data: bytes) -> int:  # a full disk: the kernel took 17 bytes
        return real_write(fd, bytes(data)[:17])

    monkeypatch.setattr(os, "write", short_write)
    with pytest.raises(RemoteMemoryWriteError, match=r"short write.*nothing was stored"):
        store.append(kind="conversation", content="lost", summary="s", source=src())
    monkeypatch.setattr(os, "write", real_write)
    assert store.path.read_bytes() == before  # not even an uncommitted tail is left
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncommittedWriteWarning)
        assert len(RemoteMemoryStore(store.path, user_id=USER).read_all()) == 5
    report = check_store_file(store.path)
    assert report.healthy and report.torn_tail_bytes == 0
    assert main_fsck(str(store.path)) == 0
    RemoteMemoryStore(store.path, user_id=USER).append(
        kind="conversation", memory_id="after", content="x", summary="s", source=src()
    )
    assert [r.memory_id for r in store.read_all()][-1] == "after"
    assert read_quarantine(store.path) == []  # nothing was left to recover
    _bump("short_writes_injected")


def test_bad_middle_lines_are_quarantined_by_a_rewrite_keeping_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "middle.jsonl"
    store = RemoteMemoryStore(path, user_id=USER)
    _fill(store, 6)
    lines = path.read_bytes().splitlines(keepends=True)
    injected = [
        b"not json at all\n",
        b"\n",  # an empty line
        b'{"schema_version": 1}\n',  # JSON, not a record
        b"\xff\xfe invalid utf-8 \x80\n",
        lines[0],  # a duplicate of line 1
        b'["a", "list"]\n',
    ]
    mixed = [lines[0], injected[0], lines[1], injected[1], injected[2], lines[2], injected[3]]
    mixed += [lines[3], injected[4], lines[4], injected[5], lines[5], b'{"torn": tr']
    original = b"".join(mixed)
    path.write_bytes(original)
    with pytest.raises(RemoteMemoryCorruptionError, match="line 2"):
        RemoteMemoryStore(path, user_id=USER).read_all()
    report = check_store_file(path)
    bad_lines = [2, 4, 5, 7, 9, 11]  # damage; line 13 is an uncommitted tail, not a problem
    assert [line for line, _ in report.problems] == bad_lines
    assert report.records == 6 and report.torn_tail_bytes == len(b'{"torn": tr')
    assert path.read_bytes() == original  # fsck changed nothing
    with pytest.raises(RemoteMemoryCorruptionError, match="line 2"):  # writers refuse too
        store.append(kind="conversation", content="c", summary="s", source=src())
    assert path.read_bytes() == original
    result = repair_store_file(path)
    assert result.method == "rewrite"
    assert [chunk.line for chunk in result.quarantined] == [*bad_lines, 13]
    assert result.records_kept == 6 and result.after.healthy
    # store bytes + quarantined bytes, put back at their offsets, are the original file
    rebuilt = {e["byte_offset"]: e["bytes"] for e in read_quarantine(path)}
    kept = path.read_bytes()
    assert kept == b"".join(lines)
    offset, pieces, cursor = 0, [], 0
    while offset < len(original):
        if offset in rebuilt:
            pieces.append(rebuilt[offset])
        else:
            end = kept.index(b"\n", cursor) + 1
            pieces.append(kept[cursor:end])
            cursor = end
        offset += len(pieces[-1])
    assert b"".join(pieces) == original
    for entry in read_quarantine(path):
        assert base64.b64decode(entry["bytes_b64"]) == entry["bytes"]
        assert entry["quarantined_at"].endswith("Z") and entry["reason"]
    records = RemoteMemoryStore(path, user_id=USER).read_all()
    assert [r.memory_id for r in records] == [f"m-{i}" for i in range(6)]
    store.append(kind="conversation", memory_id="after", content="c", summary="s", source=src())
    _bump("malformed_lines_quarantined_by_repair", len(bad_lines))


def test_repair_of_a_healthy_store_changes_nothing(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "ok.jsonl", user_id=USER)
    _fill(store)
    before = store.path.read_bytes()
    result = repair_store_file(store.path)
    assert result.method == "none" and not result.changed
    assert store.path.read_bytes() == before
    assert not quarantine_path_for(store.path).exists()


def test_fsck_needs_no_user_id_and_changes_nothing(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "f.jsonl", user_id=USER)
    _fill(store, 3)
    store.append(kind="profile", memory_id="p", content="p", summary="p", source=src("p"))
    store.retract("m-0", reason="r", source=src("r"))
    (tmp_path / "f.jsonl.lock").unlink()
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    report = check_store_file(tmp_path / "f.jsonl")
    assert report.healthy and report.lines == 5 and report.records == 5
    assert dict(report.records_by_kind) == {"conversation": 3, "profile": 1, "retraction": 1}
    assert report.user_scopes == (user_scope_for(USER),)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before
    with pytest.raises(RemoteMemoryError, match="no store file"):
        check_store_file(tmp_path / "missing.jsonl")


def test_repair_refuses_a_file_that_mixes_user_scopes(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    _fill(RemoteMemoryStore(path, user_id=USER), 2)
    other = tmp_path / "other.jsonl"
    _fill(RemoteMemoryStore(other, user_id="someone-else"), 1)
    path.write_bytes(path.read_bytes() + other.read_bytes().replace(b"m-0", b"o-0") + b"torn")
    before = path.read_bytes()
    report = check_store_file(path)
    assert len(report.user_scopes) == 2
    assert any("mixes user scopes" in message for _, message in report.problems)
    with pytest.raises(RemoteMemoryScopeError, match="mixes user scopes"):
        repair_store_file(path)
    assert path.read_bytes() == before
    assert not quarantine_path_for(path).exists()
    assert main_repair(str(path)) == 2


def test_the_command_line_fsck_and_repair(tmp_path: Path) -> None:
    path = tmp_path / "cli.jsonl"
    _fill(RemoteMemoryStore(path, user_id=USER), 2)
    path.write_bytes(path.read_bytes() + b'{"half a record')  # a crash: not a problem

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memorylib", *args],
            capture_output=True,
            text=True,
            env=python_env(),
            cwd=REPO,
            timeout=PROCESS_TIMEOUT,
        )

    crashed = run("fsck", str(path))
    assert crashed.returncode == 0 and "uncommitted tail: 15 bytes" in crashed.stdout
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"damage in the middle\n" + b"".join(lines[1:]))
    first = run("fsck", str(path))
    assert first.returncode == 1 and "line 2: not valid JSON" in first.stdout
    fixed = run("repair", str(path))
    assert fixed.returncode == 0 and "quarantine" in fixed.stdout
    assert run("fsck", str(path)).returncode == 0
    missing = run("fsck", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "no store file" in missing.stderr
    assert [
        json.loads(line)["line"] for line in quarantine_path_for(path).read_text().splitlines()
    ] == [2, 4]
    again = MemorySource("s", "t", "t", "2026-08-01T12:00:00Z")
    RemoteMemoryStore(path, user_id=USER).append(
        kind="conversation", content="works again", summary="s", source=again
    )
