"""Concurrency with real processes and real files: nothing lost, nothing doubled.

* 8 processes x 500 appends, about 10% of them on memory_ids shared between the
  processes, plus retractions, all on one store file: exactly one durable record per
  id, every loser gets RemoteMemoryDuplicateError, no torn or interleaved line, and a
  fresh process reads every record back.
* Readers recalling (RecallEngine, strategy "indexed" and "teaching") while writers
  append never see a partial record and never raise anything but a typed error.
* Threads (own store objects and one shared store object) keep the same guarantees.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from memorylib import (
    MemoryKind,
    MemorySource,
    RemoteMemoryDuplicateError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
)
from memorylib.fsck import check_store_file

from ._reliability import PROCESS_TIMEOUT, finish, record_figures, release_when_ready, spawn

USER = "concurrency-user"
WRITERS, APPENDS, SHARED_IDS = 8, 500, 40

APPENDER = """
path, wid, n, seed, shared = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5])
store = RemoteMemoryStore(path, user_id="concurrency-user")
rng = random.Random(seed)
barrier(Path(path).parent, f"w{wid}")
won, lost, errors, retractions, unknown = [], [], [], [], 0
for j in range(n):
    mid = f"shared-{rng.randrange(shared)}" if rng.random() < 0.1 else f"w{wid}-{j}"
    try:
        store.append(
            kind="conversation",
            memory_id=mid,
            content=f"layered memory {mid} " + "x" * rng.randrange(0, 3000),
            summary=f"layered memory note {mid}",
            source=MemorySource(f"src-{mid}", "conversation_transcript", "t",
                                "2026-08-01T12:00:00Z"),
        )
        won.append(mid)
    except RemoteMemoryDuplicateError:
        lost.append(mid)
    except Exception as exc:
        errors.append(f"append {mid}: {type(exc).__name__}: {exc}")
    if j % 20 == 19:
        if won and rng.random() < 0.5:
            target = rng.choice(won)
        else:
            target = f"shared-{rng.randrange(shared)}"
        try:
            record = store.retract(
                target, reason="retracted while others write",
                source=MemorySource("r", "retraction", "t", "2026-08-02T00:00:00Z"),
                retraction_id=f"r-w{wid}-{j}",
            )
            retractions.append([target, record.memory_id])
        except RemoteMemoryValidationError as exc:
            if "is not in the store" in str(exc):
                unknown += 1
            else:
                errors.append(f"retract {target}: {type(exc).__name__}: {exc}")
        except Exception as exc:
            errors.append(f"retract {target}: {type(exc).__name__}: {exc}")
print(json.dumps({"won": won, "lost": lost, "errors": errors, "retractions": retractions,
                  "unknown_targets": unknown}))
"""

VERIFIER = """
store = RemoteMemoryStore(sys.argv[1], user_id="concurrency-user")
records = store.read_all()
ids = sorted(r.memory_id for r in records)
print(json.dumps({"count": len(records), "ids": ids}))
"""


def _check_lines(path: Path) -> list[dict]:
    """Every line is complete, alone, valid JSON: no torn or interleaved record."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    payloads = [json.loads(line) for line in lines]
    for line, payload in zip(lines, payloads, strict=True):
        assert line.count(b'"schema_version"') == 1, "two records share a line"
        assert json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() == line
    return payloads


@pytest.mark.slow
def test_eight_processes_race_appends_and_retractions(tmp_path: Path) -> None:
    path = tmp_path / "race.jsonl"
    started = time.monotonic()
    procs = [spawn(APPENDER, path, w, APPENDS, 1000 + w, SHARED_IDS) for w in range(WRITERS)]
    release_when_ready(tmp_path, [f"w{w}" for w in range(WRITERS)], procs)
    results = finish(procs)
    elapsed = time.monotonic() - started

    errors = [e for r in results for e in r["errors"]]
    assert errors == []
    wins = Counter(mid for r in results for mid in r["won"])
    assert max(wins.values()) == 1, "an id was appended twice"
    losses = Counter(mid for r in results for mid in r["lost"])
    assert set(losses) <= set(wins), "a DuplicateError for an id nobody stored"
    attempted = sum(len(r["won"]) + len(r["lost"]) for r in results)
    assert attempted == WRITERS * APPENDS
    shared_attempts = sum(n for mid, n in (wins + losses).items() if mid.startswith("shared-"))
    assert shared_attempts > 0.05 * attempted  # the collisions really happened

    payloads = _check_lines(path)
    records = RemoteMemoryStore(path, user_id=USER).read_all()  # raises on any bad line
    assert len(records) == len(payloads)
    conversation = {r.memory_id: r for r in records if r.kind is MemoryKind.CONVERSATION}
    assert set(conversation) == set(wins)
    for mid, record in conversation.items():
        assert record.content.split(" ")[:3] == ["layered", "memory", mid]
        assert record.summary == f"layered memory note {mid}"
    retraction_records = [r for r in records if r.kind is MemoryKind.RETRACTION]
    targets = Counter(r.retracts for r in retraction_records)
    assert max(targets.values(), default=1) == 1, "a target was retracted twice"
    by_id = {r.memory_id: r for r in retraction_records}
    reported = [pair for r in results for pair in r["retractions"]]
    for target, retraction_id in reported:
        assert by_id[retraction_id].retracts == target  # idempotent answers name the real one
    assert {rid for _, rid in reported} == set(by_id)

    # "restart": a fresh process reads every record back
    (fresh,) = finish([spawn(VERIFIER, path)])
    assert fresh["count"] == len(records)
    assert fresh["ids"] == sorted(r.memory_id for r in records)
    report = check_store_file(path)
    assert report.healthy and report.records == len(records)

    record_figures(
        "concurrency",
        processes=WRITERS,
        appends_attempted=attempted,
        appends_stored=len(wins),
        shared_id_attempts=shared_attempts,
        duplicates_rejected=sum(losses.values()),
        retractions_attempted=len(reported) + sum(r["unknown_targets"] for r in results),
        retractions_written=len(by_id),
        retractions_idempotent=len(reported) - len(by_id),
        retractions_of_unknown_ids=sum(r["unknown_targets"] for r in results),
        records_on_disk=len(records),
        torn_or_interleaved_lines=0,
        duplicate_ids_on_disk=0,
        records_lost=len(set(wins) - set(conversation)),
        seconds=round(elapsed, 2),
    )


WRITER = """
path, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = RemoteMemoryStore(path, user_id="concurrency-user")
barrier(Path(path).parent, f"w{wid}")
for j in range(n):
    mid = f"w{wid}-{j:04d}"
    store.append(kind="conversation", memory_id=mid,
                 content=f"layered memory {mid} " + "y" * (j % 7 * 500),
                 summary=f"layered memory note {mid}",
                 source=MemorySource(f"src-{mid}", "conversation_transcript", "t",
                                     "2026-08-01T12:00:00Z"))
    if j % 50 == 49:
        store.retract(f"w{wid}-{j - 1:04d}", reason="r",
                      source=MemorySource("r", "retraction", "t", "2026-08-02T00:00:00Z"))
(Path(path).parent / f"done-w{wid}").touch()
print(json.dumps({"appended": n}))
"""

READER = """
import xml.etree.ElementTree as ET
path, strategy, writers = sys.argv[1], sys.argv[2], int(sys.argv[3])
workdir = Path(path).parent
store = RemoteMemoryStore(path, user_id="concurrency-user")
engine = RecallEngine(store, strategy=strategy)
barrier(workdir, f"reader-{strategy}")
recalls, typed, problems, last_searched, max_searched = 0, 0, [], -1, 0
deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    done = all((workdir / f"done-w{w}").exists() for w in range(writers))
    try:
        result = engine.recall("layered memory", limit=10, as_of=TEACHING_AS_OF,
                               query_id=f"q{recalls}")
        recalls += 1
        seen = result.searched_records + result.retracted_records  # retraction hides one
        if seen < last_searched:
            problems.append(f"conversation records went back {last_searched} -> {seen}")
        last_searched = seen
        max_searched = max(max_searched, result.searched_records)
        for hit in result.hits:
            if hit.snippet != f"layered memory note {hit.memory_id}" or \
                    hit.provenance.source_id != f"src-{hit.memory_id}":
                problems.append(f"partial or mixed record {hit.memory_id}")
        rendered = render_recall_context(result)
        if result.hits and len(ET.fromstring(rendered).findall("hit")) != len(result.hits):
            problems.append("rendered hit count differs")
        if strategy == "teaching" and recalls % 5 == 0:
            for r in store.read_all():
                if r.kind.value == "conversation" and r.content.split(" ")[:3] != [
                        "layered", "memory", r.memory_id]:
                    problems.append(f"partial content {r.memory_id}")
    except RemoteMemoryError as exc:
        typed += 1
    except Exception as exc:
        problems.append(f"untyped {type(exc).__name__}: {exc}")
    if done:
        break
print(json.dumps({"recalls": recalls, "typed_errors": typed, "problems": problems[:20],
                  "max_searched": max_searched}))
"""


@pytest.mark.slow
def test_readers_recall_while_writers_append(tmp_path: Path) -> None:
    path = tmp_path / "readers.jsonl"
    writers, appends = 4, 400
    names = [f"w{w}" for w in range(writers)] + ["reader-indexed", "reader-teaching"]
    procs = [spawn(WRITER, path, w, appends) for w in range(writers)]
    procs += [spawn(READER, path, s, writers) for s in ("indexed", "teaching")]
    release_when_ready(tmp_path, names, procs)
    results = finish(procs)
    readers = results[writers:]
    for reader in readers:
        assert reader["problems"] == []
        assert reader["recalls"] > 0
    records = RemoteMemoryStore(path, user_id=USER).read_all()
    conversations = writers * appends
    assert sum(r.kind is MemoryKind.CONVERSATION for r in records) == conversations
    retractions = writers * (appends // 50)
    assert len(records) == conversations + retractions
    record_figures(
        "concurrent_readers",
        writer_processes=writers,
        reader_processes=len(readers),
        appends=conversations,
        retractions=retractions,
        recalls_indexed=readers[0]["recalls"],
        recalls_teaching=readers[1]["recalls"],
        typed_errors_seen=sum(r["typed_errors"] for r in readers),
        partial_records_seen=0,
        untyped_errors=0,
    )


@pytest.mark.parametrize("shared_object", [False, True], ids=["own-stores", "one-shared-store"])
def test_threads_race_the_same_ids(tmp_path: Path, shared_object: bool) -> None:
    path = tmp_path / "threads.jsonl"
    threads_n, per_thread = 8, 60
    shared_store = RemoteMemoryStore(path, user_id=USER)
    start = threading.Barrier(threads_n, timeout=PROCESS_TIMEOUT)
    won: list[str] = []
    lost: list[str] = []
    errors: list[str] = []
    guard = threading.Lock()

    def work(t: int) -> None:
        store = shared_store if shared_object else RemoteMemoryStore(path, user_id=USER)
        start.wait()
        for j in range(per_thread):
            mid = f"shared-{j % 12}" if j % 5 == 0 else f"t{t}-{j}"
            try:
                store.append(
                    kind="conversation",
                    memory_id=mid,
                    content=f"layered memory {mid}",
                    summary=f"note {mid}",
                    source=MemorySource("s", "t", "t", "2026-08-01T12:00:00Z"),
                )
                with guard:
                    won.append(mid)
            except RemoteMemoryDuplicateError:
                with guard:
                    lost.append(mid)
            except Exception as exc:
                with guard:
                    errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=PROCESS_TIMEOUT)
        assert not thread.is_alive()
    assert errors == []
    assert len(won) == len(set(won))
    assert len(won) + len(lost) == threads_n * per_thread
    records = RemoteMemoryStore(path, user_id=USER).read_all()
    assert sorted(r.memory_id for r in records) == sorted(won)
    _check_lines(path)
    record_figures(
        f"threads_{'shared' if shared_object else 'own'}_store",
        threads=threads_n,
        appends_attempted=threads_n * per_thread,
        appends_stored=len(won),
        duplicates_rejected=len(lost),
    )


def test_a_duplicate_and_a_failed_retraction_write_nothing(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "one.jsonl", user_id=USER)
    source = MemorySource("s", "t", "t", "2026-08-01T12:00:00Z")
    store.append(kind="conversation", memory_id="x", content="c", summary="s", source=source)
    before = store.path.read_bytes()
    with pytest.raises(RemoteMemoryDuplicateError):
        store.append(kind="conversation", memory_id="x", content="c2", summary="s", source=source)
    with pytest.raises(RemoteMemoryValidationError, match="not in the store"):
        store.retract("missing", reason="r", source=source)
    assert store.path.read_bytes() == before
    digest = hashlib.sha256(before).hexdigest()
    assert hashlib.sha256(store.path.read_bytes()).hexdigest() == digest
