"""One contender of notebook 07's race: a process that appends the race's memory_id.

Notebook 07 starts the processes itself (its cell is the lesson: five fresh
interpreters, one barrier, one memory_id). Their target has to live in a module: the
"spawn" start method, the only one every platform has, starts a new interpreter that
imports the target by name, and a function defined in a notebook cannot be imported.
This module imports only memorylib (no pandas or matplotlib), so each contender starts fast.
"""

from __future__ import annotations

import threading
from typing import Any

from memorylib.errors import RemoteMemoryError
from memorylib.records import MemoryKind, MemorySource
from memorylib.store import RemoteMemoryStore

__all__ = ["RACE_MEMORY_ID", "WON", "contender"]

RACE_MEMORY_ID = "conversation-race"
WON = "appended (won)"


def contender(path: str, index: int, barrier: Any, results: Any) -> None:
    """Wait at ``barrier`` with the others, then append ``RACE_MEMORY_ID`` to the store at
    ``path``; put ``WON`` or the name of the typed error on the ``results`` queue."""
    store = RemoteMemoryStore(path)
    text = f"Contender {index} wrote this line."
    moment = "2026-08-02T11:00:00Z"
    source = MemorySource(f"race-{index}", "conversation_transcript", "race", moment)
    try:
        barrier.wait(timeout=60)
        store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=RACE_MEMORY_ID,
            content=text,
            summary=text,
            source=source,
            stored_at=moment,
        )
    except threading.BrokenBarrierError:
        results.put("barrier broken")
    except RemoteMemoryError as exc:
        results.put(type(exc).__name__)
    else:
        results.put(WON)
