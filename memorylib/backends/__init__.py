"""Database backends: the same ``MemoryStore`` contract on SQLite and PostgreSQL.

The chapter's store is a JSONL file whose lock file *simulates* the service's atomic
compare-and-insert. Here the database does it: a unique index on
``(user_scope, memory_id)`` decides which of two racing writers wins, a transaction
makes a batch all or nothing, and (PostgreSQL) row-level security keeps every scope
inside its own rows. What a record is, and what is rejected before anything is
written, stays ``memorylib.interface``'s, so the same inputs give the same records
and the same errors on every backend.

* ``rows``: a record as a database row (its canonical JSON), and the terms it is
  found by;
* ``recall``: recall with candidates from the database (``indexed_recall``): the
  database counts matched query terms per record, Python keeps a shortlist that
  certainly holds the top ``limit`` and ranks it with the taught stage;
* ``sqlite``: ``SQLiteMemoryStore`` (stdlib ``sqlite3``, WAL);
* ``postgres``: ``PostgresMemoryStore`` (psycopg 3 + psycopg_pool), its schema
  migrations and a role per user scope;
* ``urls``: ``open_store("jsonl:PATH" | "sqlite:PATH" | "postgresql://...", user_id=...)``;
* ``migrate``: copy one user's store between any two backends, verified and restartable;
* ``local_postgres``: a throwaway PostgreSQL cluster on a Unix socket (tests, the
  benchmark and notebook 11).

``import memorylib`` imports none of this; ``import memorylib.backends`` imports
``sqlite3`` but not psycopg, which loads only with ``PostgresMemoryStore``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .sqlite import SQLiteMemoryStore
from .urls import open_store, store_url

if TYPE_CHECKING:
    from .postgres import PostgresMemoryStore

__all__ = ["PostgresMemoryStore", "SQLiteMemoryStore", "open_store", "store_url"]


def __getattr__(name: str) -> Any:
    if name == "PostgresMemoryStore":  # psycopg is an optional extra: load it on demand
        from .postgres import PostgresMemoryStore

        return PostgresMemoryStore
    raise AttributeError(f"module 'memorylib.backends' has no attribute {name!r}")
