"""``SQLiteMemoryStore``: the store contract on SQLite (stdlib ``sqlite3``, WAL mode).

Where the JSONL store takes a lock file, reads the ids and appends a line, this store
lets the database decide: ``INSERT ... ON CONFLICT (user_scope, memory_id) DO NOTHING
RETURNING seq`` inside one ``BEGIN IMMEDIATE`` transaction. A row comes back: the
record is stored (durably once COMMIT returns, ``synchronous=FULL``). No row: the id
was taken, ``RemoteMemoryDuplicateError``, nothing written. Two processes racing one
memory_id: the unique constraint lets exactly one in.

* One file may hold many users; every statement names the store's user_scope, and a
  row's record must carry that scope. Store order is insertion order (``seq``, an
  AUTOINCREMENT key).
* Files as the JSONL store: the database file (and SQLite's ``-wal``/``-shm``, which
  copy its mode) 0600 in folders created 0700; a file owned by another OS user is
  refused (``RemoteMemoryScopeError``); constructing the store touches nothing,
  reading a missing file is an empty store and never creates it.
* Rows are never updated or deleted (triggers refuse it); ``schema_version`` records
  the migrations applied. A database locked longer than ``timeout`` seconds raises
  ``RemoteMemoryUnavailableError``; a damaged file ``RemoteMemoryCorruptionError``.
* ``indexed_recall`` takes candidates from a terms table (``backends.recall``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import quote

from memorylib.checks import require_file_path
from memorylib.errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryUnavailableError,
    RemoteMemoryValidationError,
    RemoteMemoryWriteError,
)
from memorylib.files import fsync_directory, private_dirs
from memorylib.interface import (
    MemoryStore,
    check_new_ids,
    latest_profile_of,
    user_scope_for,
)
from memorylib.pipeline import recall_pipeline
from memorylib.records import RecallQuery, RecallResult, StoredMemory
from memorylib.scoring import DEFAULT_POLICY, ScoringPolicy
from memorylib.timestamps import format_timestamp, utc_now

from .recall import TermMatches, recall_from_matches, serves
from .rows import captured_micros, record_from_row, record_json, record_terms

__all__ = ["SCHEMA_VERSION", "SQLiteMemoryStore"]

SCHEMA_VERSION = 1
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            user_scope TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('profile', 'conversation', 'retraction')),
            captured_us INTEGER NOT NULL,
            retracts TEXT,
            record TEXT NOT NULL,
            UNIQUE (user_scope, memory_id)
        )""",
        # one retraction per target: a second one would be a second audit entry
        """CREATE UNIQUE INDEX memories_retracts ON memories (user_scope, retracts)
            WHERE retracts IS NOT NULL""",
        "CREATE INDEX memories_kind ON memories (user_scope, kind)",
        # one row per (record, term), carrying what ranking needs: a covering index
        """CREATE TABLE memory_terms (
            user_scope TEXT NOT NULL,
            term TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES memories (seq),
            captured_us INTEGER NOT NULL,
            memory_id TEXT NOT NULL,
            PRIMARY KEY (user_scope, term, seq)
        ) WITHOUT ROWID""",
        # per scope: conversations stored and how many a retraction hides (recall's counts)
        """CREATE TABLE scope_counts (
            user_scope TEXT PRIMARY KEY,
            conversations INTEGER NOT NULL,
            retracted INTEGER NOT NULL
        )""",
        """CREATE TRIGGER memories_count AFTER INSERT ON memories BEGIN
            INSERT INTO scope_counts (user_scope, conversations, retracted)
              VALUES (NEW.user_scope, 0, 0) ON CONFLICT (user_scope) DO NOTHING;
            UPDATE scope_counts SET
              conversations = conversations + (NEW.kind = 'conversation'),
              retracted = retracted
                + (NEW.kind = 'retraction' AND EXISTS (SELECT 1 FROM memories m
                     WHERE m.user_scope = NEW.user_scope AND m.memory_id = NEW.retracts
                       AND m.kind = 'conversation'))
                + (NEW.kind = 'conversation' AND EXISTS (SELECT 1 FROM memories r
                     WHERE r.user_scope = NEW.user_scope AND r.retracts = NEW.memory_id))
            WHERE user_scope = NEW.user_scope;
        END""",
        """CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
            BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END""",
        """CREATE TRIGGER memories_no_delete BEFORE DELETE ON memories
            BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END""",
    ),
}
_COLUMNS = "seq, memory_id, record"


class SQLiteMemoryStore(MemoryStore):
    """One user's memories in a SQLite database file. Constructing it touches no file."""

    def __init__(
        self, path: str | os.PathLike[str], *, user_id: str = "local-user", timeout: float = 30.0
    ) -> None:
        self.path = require_file_path(path)
        self.user_scope = user_scope_for(user_id)
        self.timeout = float(timeout)
        self._local = threading.local()  # one connection per thread (and per process)

    def __repr__(self) -> str:
        return f"SQLiteMemoryStore({self.path.name!r}, user_scope={self.user_scope!r})"

    # -- reading ------------------------------------------------------------------------

    def read_all(self) -> list[StoredMemory]:
        """Every record of this user in insertion order. Damaged rows raise, naming them."""
        with self._reading() as conn:
            if conn is None:
                return []
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE user_scope = ? ORDER BY seq",
                (self.user_scope,),
            ).fetchall()
        return [self._record(row) for row in rows]

    def latest_profile(self) -> StoredMemory | None:
        """Newest non-retracted PROFILE (only profiles and retractions are read)."""
        with self._reading() as conn:
            if conn is None:
                return None
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE user_scope = ? "
                "AND kind IN ('profile', 'retraction') ORDER BY seq",
                (self.user_scope,),
            ).fetchall()
        return latest_profile_of([self._record(row) for row in rows])

    def indexed_recall(
        self,
        query: RecallQuery,
        *,
        as_of: datetime | str,
        policy: ScoringPolicy = DEFAULT_POLICY,
    ) -> RecallResult:
        """The RecallResult of the taught path, with candidates from the terms table."""
        if (
            not isinstance(query, RecallQuery)
            or query.user_scope != self.user_scope
            or not serves(policy)
        ):
            # the taught path raises the error this query deserves
            return recall_pipeline(query, self.read_all(), as_of=as_of, policy=policy)
        with self._reading() as conn:
            if conn is None:
                return recall_pipeline(query, (), as_of=as_of, policy=policy)
            return recall_from_matches(
                query,
                as_of=as_of,
                policy=policy,
                match=lambda terms, limit: self._match(conn, terms, limit),
                fetch=lambda keys: self._fetch(conn, keys),
            )

    # -- writing: MemoryStore's append, append_many and retract, in these steps ---------

    def _write_transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._writing()

    def _stored(self, conn: sqlite3.Connection, memory_id: str) -> StoredMemory | None:
        return self._by_ids(conn, [memory_id]).get(memory_id)

    def _retraction_of(self, conn: sqlite3.Connection, target_id: str) -> StoredMemory | None:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE user_scope = ? AND retracts = ?",
            (self.user_scope, target_id),
        ).fetchone()
        return None if row is None else self._record(row)

    def _insert(self, conn: sqlite3.Connection, records: Sequence[StoredMemory]) -> bool:
        """The unique constraint rejects a taken memory_id (``RemoteMemoryDuplicateError``);
        the ``BEGIN IMMEDIATE`` transaction makes the batch all or nothing."""
        scope = self.user_scope
        for record in records:
            row = conn.execute(
                "INSERT INTO memories (user_scope, memory_id, kind, captured_us, retracts, record)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_scope, memory_id) DO NOTHING"
                " RETURNING seq",
                (
                    scope,
                    record.memory_id,
                    record.kind.value,
                    captured_micros(record),
                    record.retracts,
                    record_json(record),
                ),
            ).fetchone()
            if row is None:  # the unique constraint said no: report like every backend
                check_new_ids(records, {record.memory_id})
            captured = captured_micros(record)
            conn.executemany(
                "INSERT INTO memory_terms (user_scope, term, seq, captured_us, memory_id)"
                " VALUES (?, ?, ?, ?, ?)",
                [(scope, t, row[0], captured, record.memory_id) for t in record_terms(record)],
            )
        return True

    # -- SQL ----------------------------------------------------------------------------

    def _by_ids(self, conn: sqlite3.Connection, ids: list[str]) -> dict[str, StoredMemory]:
        marks = ", ".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE user_scope = ? AND memory_id IN ({marks})",
            (self.user_scope, *ids),
        ).fetchall()
        return {record.memory_id: record for record in map(self._record, rows)}

    def _match(self, conn: sqlite3.Connection, terms: tuple[str, ...], limit: int) -> TermMatches:
        scope = self.user_scope
        counts = conn.execute(
            "SELECT conversations, retracted FROM scope_counts WHERE user_scope = ?", (scope,)
        ).fetchone()
        conversations, retracted = counts or (0, 0)
        sizes: dict[int, int] = {}
        newest: dict[int, list[tuple[Hashable, int]]] = {}
        if terms:
            marks = ", ".join("?" * len(terms))
            rows = conn.execute(
                f"""WITH matched AS (
                      SELECT seq, count(*) AS level, min(captured_us) AS captured_us,
                             min(memory_id) AS memory_id
                      FROM memory_terms WHERE user_scope = ? AND term IN ({marks})
                      GROUP BY seq
                    ), ranked AS (
                      SELECT seq, captured_us, level,
                        row_number() OVER (PARTITION BY level
                                           ORDER BY captured_us DESC, memory_id) AS rn,
                        count(*) OVER (PARTITION BY level) AS size
                      FROM matched x
                      WHERE NOT EXISTS (SELECT 1 FROM memories r
                                        WHERE r.user_scope = ? AND r.retracts = x.memory_id)
                    )
                    SELECT level, size, seq, captured_us FROM ranked WHERE rn <= ?
                    ORDER BY level DESC, rn""",
                (scope, *terms, scope, limit),
            ).fetchall()
            for level, size, seq, captured in rows:
                sizes[level] = size
                newest.setdefault(level, []).append((seq, captured))
        return TermMatches(sizes, newest, conversations - retracted, retracted)

    def _fetch(self, conn: sqlite3.Connection, keys: list[Hashable]) -> list[StoredMemory]:
        marks = ", ".join("?" * len(keys))
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE user_scope = ? AND seq IN ({marks})"
            " ORDER BY seq",
            (self.user_scope, *keys),
        ).fetchall()
        return [self._record(row) for row in rows]

    def _record(self, row: Sequence[Any]) -> StoredMemory:
        seq, memory_id, text = row
        return record_from_row(text, row=seq, user_scope=self.user_scope, memory_id=memory_id)

    # -- connections and transactions ----------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        """A read transaction (one snapshot), or None when there is no store yet."""
        with self._errors():
            conn = self._connection(create=False)
            if conn is None:
                yield None
                return
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` (the write lock, waiting up to ``timeout``) ... COMMIT."""
        with self._errors():
            conn = self._connection(create=True)
            assert conn is not None
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except RemoteMemoryError:
            raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise RemoteMemoryUnavailableError(
                    f"{self.path.name} stayed locked by another writer for {self.timeout:.0f} s"
                ) from None
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:  # a full disk
                raise RemoteMemoryWriteError(
                    f"{self.path.name}: {exc}; nothing was stored (SQLite rolled the "
                    "transaction back), so retrying is safe"
                ) from None
            raise RemoteMemoryCorruptionError(f"{self.path.name}: {exc}") from None
        except sqlite3.DatabaseError as exc:  # "file is not a database", malformed pages
            raise RemoteMemoryCorruptionError(f"{self.path.name}: {exc}") from None

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        local = self._local
        if getattr(local, "pid", None) == os.getpid() and local.conn is not None:
            self._check_owner()
            return local.conn
        if not self.path.exists():
            if not create:
                return None
            self._create_file()
        if self.path.is_dir():
            raise RemoteMemoryValidationError(
                f"path {self.path.name!r} is a directory; a store path must name a database file"
            )
        self._check_owner()
        conn = sqlite3.connect(
            f"file:{quote(os.path.abspath(self.path))}?mode=rw",
            uri=True,
            timeout=self.timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = FULL")  # COMMIT returns once the WAL is synced
                conn.execute("PRAGMA foreign_keys = ON")
                self._migrate(conn)
                break
            except sqlite3.OperationalError as exc:
                # Switching a new file to WAL, or migrating it, while other processes do the
                # same can fail at once with "locked" (SQLite does not wait there): retry.
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    conn.close()
                    raise
                time.sleep(0.01)
        local.pid, local.conn = os.getpid(), conn
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Apply the missing migrations in one write transaction (a no-op when current)."""
        if self._version(conn) == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            current = self._version(conn)
            if current > SCHEMA_VERSION:
                raise RemoteMemoryCorruptionError(
                    f"{self.path.name} has schema version {current}; this memorylib reads "
                    f"up to {SCHEMA_VERSION}"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                    (version, format_timestamp(utc_now())),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def _version(conn: sqlite3.Connection) -> int:
        try:
            (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version")
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            raise
        return int(version[0])

    def _create_file(self) -> None:
        if not self.path.parent.is_dir():
            private_dirs(self.path.parent)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another writer created it first
            return
        os.close(fd)
        fsync_directory(self.path.parent)

    def _check_owner(self) -> None:
        getuid = getattr(os, "geteuid", None)
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if getuid is not None and st.st_uid != getuid():
            raise RemoteMemoryScopeError(
                f"{self.path.name} belongs to another OS user (uid {st.st_uid}); "
                "a store file is never shared between users"
            )

    def close(self) -> None:
        """Close this thread's connection (others close when their thread's state goes)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            conn.close()
        self._local.conn = None
