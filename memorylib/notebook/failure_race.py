"""07's and 11's race contenders, importable by name in a spawned process; memorylib only."""

import threading
from typing import Any

from memorylib.backends import open_store
from memorylib.errors import RemoteMemoryError
from memorylib.notebook.messages import said
from memorylib.records import MemoryKind, MemorySource

RACE_MEMORY_ID = "conversation-race"
WON = said("failure_race.won")  # a Said pickles: the parent shows it in its own language


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


def contender(path: str, index: int, barrier: Any, results: Any) -> None:  # notebook 07's
    store_contender(f"jsonl:{path}", index, barrier, results)
