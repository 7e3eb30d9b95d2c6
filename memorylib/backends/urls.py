"""Store URLs: one string names a backend and where its data is.

    jsonl:PATH                    RemoteMemoryStore (the chapter's JSONL file)
    sqlite:PATH                   SQLiteMemoryStore
    postgresql://[HOST]/DB?...    PostgresMemoryStore (a libpq URI; for a Unix socket,
                                  postgresql:///DB?host=/path/to/socket/folder)

``open_store(url, user_id=...)`` constructs the store (which touches nothing until
used); ``store_url(store)`` gives a store's URL back, for messages and reports.
"""

from __future__ import annotations

from typing import Any

from memorylib.errors import RemoteMemoryValidationError
from memorylib.interface import MemoryStore
from memorylib.store import RemoteMemoryStore

from .sqlite import SQLiteMemoryStore

__all__ = ["SCHEMES", "open_store", "store_url"]

SCHEMES = ("jsonl:", "sqlite:", "postgresql://", "postgres://")


def open_store(url: object, *, user_id: str, **options: Any) -> MemoryStore:
    """The store ``url`` names, for ``user_id``; ``options`` go to the constructor."""
    if not isinstance(url, str) or not url.strip():
        raise RemoteMemoryValidationError(f"store url must be a non-empty str, got {url!r}")
    url = url.strip()
    if url.startswith("jsonl:"):
        return RemoteMemoryStore(url[len("jsonl:") :], user_id=user_id, **options)
    if url.startswith("sqlite:"):
        return SQLiteMemoryStore(url[len("sqlite:") :], user_id=user_id, **options)
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresMemoryStore  # psycopg loads only when asked for

        return PostgresMemoryStore(url, user_id=user_id, **options)
    raise RemoteMemoryValidationError(
        f"store url {url[:60]!r} must start with one of {', '.join(SCHEMES)} "
        "(e.g. jsonl:memories.jsonl, sqlite:memories.db, postgresql:///memories?host=/run/pg)"
    )


def store_url(store: MemoryStore) -> str:
    """A store's URL (a PostgreSQL store's without its password)."""
    if isinstance(store, RemoteMemoryStore):
        return f"jsonl:{store.path}"
    if isinstance(store, SQLiteMemoryStore):
        return f"sqlite:{store.path}"
    describe = getattr(store, "url", None)
    if isinstance(describe, str):
        return describe
    return repr(store)
