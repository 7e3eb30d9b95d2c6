"""One contender of a race: a process that appends the race's memory_id.

Notebooks 07 (``contender``: the JSONL file) and 11 (``store_contender``: any store
URL, SQLite and PostgreSQL too) start the processes themselves (their cell is the
lesson: five fresh interpreters, one barrier, one memory_id). Their target has to live
in a module: the "spawn" start method, the only one every platform has, starts a new
interpreter that imports the target by name, and a function defined in a notebook
cannot be imported. This module imports only memorylib (no pandas or matplotlib), so
each contender starts fast.
"""

from __future__ import annotations

import threading
from typing import Any

from memorylib.backends import open_store
from memorylib.errors import RemoteMemoryError
from memorylib.records import MemoryKind, MemorySource
from memorylib.store import RemoteMemoryStore

__all__ = ["RACE_MEMORY_ID", "WON", "contender", "store_contender"]

RACE_MEMORY_ID = "conversation-race"
WON = "appended (won)"


def contender(path: str, index: int, barrier: Any, results: Any) -> None:
    """Wait at ``barrier`` with the others, then append ``RACE_MEMORY_ID`` to the store at
    ``path``; put ``WON``, the name of the typed error, or ``"barrier broken"`` (the others
    never arrived) on the ``results`` queue."""
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


def store_contender(url: str, index: int, barrier: Any, results: Any) -> None:
    """``contender`` for the store at ``url`` (``open_store``: ``jsonl:``, ``sqlite:`` or
    ``postgresql://``), as the default user: ``WON`` or the typed error's name on ``results``."""
    store = open_store(url, user_id="local-user")
    text = f"Contender {index} wrote this record."
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
    finally:
        getattr(store, "close", lambda: None)()  # a database store's connections
