"""A real race for notebook 07: several processes append the SAME memory_id at once.

Each contender is a fresh process started with the "spawn" method (the only method
that exists on every platform). All of them wait at one barrier, then call
``store.append`` with the same ``memory_id``. The store checks the id and writes the
line inside one exclusive lock, so exactly one wins and the others get
``RemoteMemoryDuplicateError``; the file holds exactly one line with that id.

This module imports only the standard library and memorylib (no pandas or matplotlib):
every contender imports it, and a lighter import makes the race start sooner.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorylib.errors import RemoteMemoryError
from memorylib.records import MemoryKind, MemorySource
from memorylib.store import RemoteMemoryStore

__all__ = ["RACE_MEMORY_ID", "WON", "RaceReport", "count_lines_with_id", "race_for_memory_id"]

RACE_MEMORY_ID = "conversation-race"
WON = "appended (won)"
_CAPTURED_AT = "2026-08-02T11:00:00Z"


def _contender(
    path: str, user_id: str, memory_id: str, index: int, barrier: Any, results: Any
) -> None:
    """One process: wait for everyone, then try to append ``memory_id``; report the outcome."""
    store = RemoteMemoryStore(path, user_id=user_id)
    source = MemorySource(
        f"transcript-race-{index}", "conversation_transcript", "race", _CAPTURED_AT
    )
    try:
        barrier.wait(timeout=60)
    except threading.BrokenBarrierError:
        results.put((index, "barrier broken"))
        return
    try:
        store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content=f"Contender {index} wrote this line.",
            summary=f"Contender {index} wrote this line.",
            source=source,
            stored_at=_CAPTURED_AT,
        )
    except RemoteMemoryError as exc:
        results.put((index, type(exc).__name__))
        return
    results.put((index, WON))


def count_lines_with_id(path: str | Path, memory_id: str) -> tuple[int, int]:
    """(lines whose memory_id is ``memory_id``, all lines), read raw: a duplicate would show."""
    with_id = total = 0
    for raw in Path(path).read_bytes().splitlines():
        total += 1
        try:
            if json.loads(raw).get("memory_id") == memory_id:
                with_id += 1
        except (ValueError, AttributeError):
            continue  # a bad line is not this question's business; fsck reports it
    return with_id, total


@dataclass(frozen=True)
class RaceReport:
    """What a race produced, in counts only (which process wins is up to the OS)."""

    contenders: int
    outcomes: dict[str, int]
    lines_with_id_after: int
    lines_before: int
    lines_after: int
    survivor_wrote_by_a_contender: bool
    clean_exits: int


def race_for_memory_id(
    path: str | Path,
    *,
    contenders: int = 5,
    memory_id: str = RACE_MEMORY_ID,
    user_id: str = "local-user",
    timeout: float = 120.0,
) -> RaceReport:
    """Start ``contenders`` spawn processes that append ``memory_id`` to ``path`` at once."""
    if contenders < 2:
        raise ValueError("a race needs at least 2 contenders")
    path = Path(path)
    lines_before = count_lines_with_id(path, memory_id)[1] if path.exists() else 0
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(contenders)
    results = ctx.Queue()
    processes = [
        ctx.Process(
            target=_contender,
            args=(str(path), user_id, memory_id, index, barrier, results),
            name=f"contender-{index}",
        )
        for index in range(contenders)
    ]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=timeout)[1] for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=timeout)
            if process.is_alive():  # only our own children, by handle
                process.terminate()
                process.join()
    with_id, lines_after = count_lines_with_id(path, memory_id)
    records = RemoteMemoryStore(path, user_id=user_id).read_all()
    survivor = next((r for r in records if r.memory_id == memory_id), None)
    return RaceReport(
        contenders=contenders,
        outcomes=dict(sorted(Counter(outcomes).items())),
        lines_with_id_after=with_id,
        lines_before=lines_before,
        lines_after=lines_after,
        survivor_wrote_by_a_contender=survivor is not None
        and survivor.content.startswith("Contender "),
        clean_exits=sum(1 for p in processes if p.exitcode == 0),
    )
