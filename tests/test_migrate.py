"""``python -m memorylib migrate SRC DST --user USER_ID`` between every pair of backends:
equal records, equal content hash, equal recall; a target with other data is refused;
killed with SIGKILL mid-run and run again, the copy completes without duplicates."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import time
import warnings
from pathlib import Path

import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemorySource,
    RecallEngine,
    RemoteMemoryError,
    UncommittedWriteWarning,
    seed_teaching_store,
)
from memorylib.__main__ import main, run_migrate
from memorylib.backends.rows import content_hash
from memorylib.synthetic import synthetic_entries

from ._reliability import PROCESS_TIMEOUT, PYTHON, REPO, python_env, record_figures
from .backends_support import Backend, make_backend
from .conftest import add, source

PG = pytest.mark.postgres
PAIRS = [
    pytest.param(src, dst, id=f"{src}-to-{dst}", marks=[PG] if "postgresql" in (src, dst) else [])
    for src in ("jsonl", "sqlite", "postgresql")
    for dst in ("jsonl", "sqlite", "postgresql")
]
USER = "migrating-user"
_figures = {"pairs_checked": 0, "kills": 0, "records_after_kills": 0, "duplicates": 0}


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    record_figures("migrate", **_figures)


def filled(backend: Backend) -> None:
    store = backend.open(USER)
    seed_teaching_store(store)
    add(store, "m-1", "第二条 café layered memory", captured_at="2026-07-01T00:00:00+08:00")
    store.retract(
        "m-1",
        reason="wrong",
        source=source("r"),
        retraction_id="r-1",
        stored_at="2026-08-02T00:00:00Z",
    )
    store.retract(
        "profile-001",
        reason="old profile",
        source=source("r2"),
        retraction_id="r-2",
        stored_at="2026-08-02T00:00:00Z",
    )
    add(store, "m-2", "after the retractions", captured_at="2026-08-01T00:00:00Z")


@pytest.mark.parametrize("src, dst", PAIRS)
def test_migrate_copies_equal_records_between_any_two_backends(request, tmp_path, src, dst):
    source_backend = make_backend(src, tmp_path / "src", request)
    target_backend = make_backend(dst, tmp_path / "dst", request)
    target_backend.provision(USER)
    filled(source_backend)
    out = io.StringIO()
    assert run_migrate(source_backend.url(USER), target_backend.url(USER), USER, 3, out=out) == 0
    report = json.loads(out.getvalue().splitlines()[-1])
    records = source_backend.open(USER).read_all()
    copied = target_backend.open(USER).read_all()
    assert copied == records
    assert report["source_records"] == report["target_records"] == report["copied"] == 11
    assert report["content_hash"] == content_hash(records) == content_hash(copied)
    for text in ["layered memory", "café", "SQLite WAL", "上下文"]:
        args = dict(as_of=TEACHING_AS_OF, query_id="q")
        assert RecallEngine(target_backend.open(USER)).recall(text, **args) == RecallEngine(
            source_backend.open(USER), strategy="teaching"
        ).recall(text, **args)
    again = io.StringIO()  # a second run finds everything there and copies nothing
    assert run_migrate(source_backend.url(USER), target_backend.url(USER), USER, 3, out=again) == 0
    assert json.loads(again.getvalue().splitlines()[-1])["copied"] == 0
    assert target_backend.open(USER).read_all() == records
    _figures["pairs_checked"] += 1


@pytest.mark.parametrize("dst", ["jsonl", "sqlite", pytest.param("postgresql", marks=PG)])
def test_migrate_refuses_a_target_with_other_data(request, tmp_path, dst, capsys):
    source_backend = make_backend("jsonl", tmp_path / "src", request)
    target_backend = make_backend(dst, tmp_path / "dst", request)
    filled(source_backend)
    add(target_backend.open(USER), "someone-else", "data the source does not have")
    before = target_backend.snapshot()
    code = main(["migrate", source_backend.url(USER), target_backend.url(USER), "--user", USER])
    assert code == 2
    assert "already holds different data" in capsys.readouterr().err
    assert target_backend.snapshot() == before
    with pytest.raises(RemoteMemoryError, match="store url"):
        run_migrate("memories.jsonl", target_backend.url(USER), USER, 10)


def _start(src_url: str, dst_url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            PYTHON,
            "-m",
            "memorylib",
            "migrate",
            src_url,
            dst_url,
            "--user",
            USER,
            "--batch-size",
            "40",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=python_env(),
        cwd=REPO,
    )


@pytest.mark.slow
@pytest.mark.parametrize("dst", ["jsonl", "sqlite", pytest.param("postgresql", marks=PG)])
def test_migrate_killed_mid_run_resumes_without_duplicates(request, tmp_path: Path, dst):
    source_backend = make_backend("jsonl", tmp_path / "src", request)
    target_backend = make_backend(dst, tmp_path / "dst", request)
    target_backend.provision(USER)
    store = source_backend.open(USER)
    entries = synthetic_entries(2_400, seed=3)
    store.append_many(entries)
    for i in range(5, 2_400, 150):  # retractions between batches
        store.retract(
            entries[i]["memory_id"],
            reason="wrong",
            retraction_id=f"r-{i}",
            source=MemorySource("r", "review", "t", "2026-08-01T00:00:00Z"),
        )
    records = store.read_all()
    counts_at_kill = []
    for kill_after in (200, 900, 1_700):  # three kills at different points of the copy
        proc = _start(source_backend.url(USER), target_backend.url(USER))
        deadline = time.monotonic() + PROCESS_TIMEOUT
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("copied ") and int(line.split()[1].split("/")[0]) >= kill_after:
                break
            assert time.monotonic() < deadline, "migrate never got that far"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=PROCESS_TIMEOUT)
        assert proc.returncode == -signal.SIGKILL
        with warnings.catch_warnings():  # a kill inside a JSONL write leaves a torn tail
            warnings.simplefilter("ignore", UncommittedWriteWarning)
            held = target_backend.open(USER).read_all()
        counts_at_kill.append(len(held))
        assert held == records[: len(held)]  # a prefix: nothing doubled, nothing out of order
        assert len(held) < len(records), "the kill came after the copy had finished"
        _figures["kills"] += 1
    proc = _start(source_backend.url(USER), target_backend.url(USER))
    out, err = proc.communicate(timeout=PROCESS_TIMEOUT)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out.strip().splitlines()[-1])
    copied = target_backend.open(USER).read_all()
    assert copied == records
    assert len({r.memory_id for r in copied}) == len(copied)
    assert report["already_there"] == counts_at_kill[-1]
    assert report["copied"] == len(records) - counts_at_kill[-1]
    assert report["content_hash"] == content_hash(records)
    _figures["records_after_kills"] += len(copied)
