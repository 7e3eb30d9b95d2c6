"""The store: durable, owned, sourced records in an append-only JSONL file.

``RemoteMemoryStore`` simulates a remote memory service with one JSONL file per user
(created 0600 in a 0700 folder; only a hash of the user id reaches disk).

* ``append`` validates (``interface.new_memory``), then inside ONE exclusive critical
  section (a lock file beside the JSONL) reads the ids already stored, rejects a
  duplicate, writes the record as one line with one ``O_APPEND`` write and ``fsync``s.
  A real service replaces the lock with a unique index or a transaction.
* An append is acknowledged when it returns (its ``fsync`` returned). If a write, an
  ``fsync`` or the tail recovery fails, the file is cut back under the lock, then
  ``RemoteMemoryWriteError`` (nothing stored, retry safe) is raised; if the cut fails,
  the store fails closed (``files.append_bytes``: what readers may see, and when).
* A record is committed when its line, newline included, is durable. A final line
  without its newline is a write a crash interrupted: readers do not see it (and warn,
  ``UncommittedWriteWarning``); the next writer, under the lock, moves its bytes to the
  quarantine file, cuts them off, and appends.
* ``read_all`` re-reads the file (a line seen before is decoded from a cache). A
  committed line that does not parse, a duplicate id or another user's record is
  damage, not a crash: it raises, naming the line, and ``python -m memorylib repair``
  is the way out. Nothing is ever skipped silently.

Reading never writes (not even the lock file). Nothing here rewrites a committed line.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from .checks import require_file_path
from .errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
    RemoteMemoryWriteError,
    UncommittedWriteWarning,
)
from .files import (
    FileLock,
    append_bytes,
    lock_path_for,
    private_dirs,
    quarantine_entry,
    quarantine_path_for,
    read_quarantine,
    refuse_if_failed_closed,
    truncate,
    write_quarantine,
)
from .interface import (
    MemoryStore,
    check_new_ids,
    decode_record,
    user_scope_for,
)
from .records import StoredMemory
from .timestamps import format_timestamp, utc_now

__all__ = [
    "RemoteMemoryStore",
    "encode_line",
    "parse_line",
    "split_committed",
    "user_scope_for",
]


def encode_line(record: StoredMemory) -> bytes:
    """One record as one line. JSON escapes every newline, so a record never spans two;
    ``ensure_ascii=False`` keeps Chinese readable in the file."""
    text = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


def parse_line(raw: bytes, lineno: int) -> StoredMemory:
    """One committed line (without its newline) -> StoredMemory, or an error naming it."""
    try:
        return decode_record(bytes(raw))
    except RemoteMemoryCorruptionError as exc:
        raise RemoteMemoryCorruptionError(f"line {lineno}: {exc}") from None


def split_committed(data: bytes) -> tuple[bytes, bytes]:
    """(committed lines, uncommitted tail): the tail is whatever follows the last newline."""
    end = data.rfind(b"\n") + 1
    return data[:end], data[end:]


def check_line(record: StoredMemory, lineno: int, user_scope: str, seen: Mapping[str, Any]) -> None:
    """A committed record must be the store's user's, and its id must be new."""
    if record.user_scope != user_scope:
        raise RemoteMemoryScopeError(
            f"line {lineno}: record {record.memory_id!r} belongs to another user scope "
            f"(user_scope {record.user_scope!r}, not {user_scope!r})"
        )
    if record.memory_id in seen:
        raise RemoteMemoryCorruptionError(
            f"line {lineno}: duplicate memory_id {record.memory_id!r} "
            "(first stored on an earlier line)"
        )


_LAST_BYTES = 64


@dataclass
class _ReadSoFar:
    """What this store object has read of its file: the committed lines up to ``offset``."""

    identity: tuple[int, int] | None = None  # (device, inode): a replaced file is re-read
    offset: int = 0
    mtime_ns: int = 0
    last_bytes: bytes = b""  # the bytes just before offset: a file rewritten in place differs
    lines: int = 0
    by_id: dict[str, StoredMemory] = field(default_factory=dict)
    retraction_of: dict[str, StoredMemory] = field(default_factory=dict)

    def add(self, record: StoredMemory) -> None:
        self.lines += 1
        self.by_id[record.memory_id] = record
        if record.retracts is not None:
            self.retraction_of.setdefault(record.retracts, record)


class RemoteMemoryStore(MemoryStore):
    """Append-only JSONL store of one user's memories. Constructing it touches no file."""

    def __init__(self, path: str | os.PathLike[str], *, user_id: str = "local-user") -> None:
        self.path = require_file_path(path)
        self.lock_path = lock_path_for(self.path)
        self.quarantine_path = quarantine_path_for(self.path)
        self.user_scope = user_scope_for(user_id)
        self._read = _ReadSoFar()
        self._lock: FileLock | None = None

    def __repr__(self) -> str:
        return f"RemoteMemoryStore({self.path.name!r}, user_scope={self.user_scope!r})"

    # -- reading ------------------------------------------------------------------------

    def read_all(self) -> list[StoredMemory]:
        """Every committed record in file order, re-read from disk. Bad lines raise."""
        refuse_if_failed_closed(self.path)  # a failed cut may have left unacknowledged bytes
        try:
            with open(self.path, "rb") as handle:
                self._check_owner(os.fstat(handle.fileno()))
                data = handle.read()
        except FileNotFoundError:
            return []
        except IsADirectoryError:
            raise self._is_a_directory() from None
        committed, tail = split_committed(data)
        records: list[StoredMemory] = []
        seen: dict[str, StoredMemory] = {}
        for lineno, raw in enumerate(committed.splitlines(), start=1):
            record = parse_line(raw, lineno)
            check_line(record, lineno, self.user_scope, seen)
            seen[record.memory_id] = record
            records.append(record)
        if tail:
            self._warn_uncommitted(len(records) + 1, len(tail))
        return records

    def uncommitted_bytes(self) -> int:
        """Length of an unterminated final line (0 when the file ends with a newline)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0
        return len(split_committed(data)[1])

    # -- writing: MemoryStore's append, append_many and retract, in these steps ---------

    def _write_transaction(self) -> AbstractContextManager[_ReadSoFar]:
        return self._writing()

    def _stored(self, tx: _ReadSoFar, memory_id: str) -> StoredMemory | None:
        return tx.by_id.get(memory_id)

    def _retraction_of(self, tx: _ReadSoFar, target_id: str) -> StoredMemory | None:
        return tx.retraction_of.get(target_id)

    def _insert(self, tx: _ReadSoFar, records: Sequence[StoredMemory]) -> bool:
        check_new_ids(records, tx.by_id)
        self._write(records)
        return True

    # -- inside the lock ------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[_ReadSoFar]:
        """Hold the lock, catch up with the file, recover an interrupted write; yield
        what is stored."""
        if self._lock is None:  # one lock object per store
            if not self.path.parent.is_dir():
                private_dirs(self.path.parent)
            self._lock = FileLock(self.lock_path)
        with self._lock:
            refuse_if_failed_closed(self.path)
            tail = self._catch_up()
            if tail:
                self._recover(tail)
            yield self._read

    def _catch_up(self) -> bytes:
        """Read the committed lines added since the last call; return the uncommitted tail.

        The lock is held, so no writer is between lines. A file that was replaced,
        shortened, or changed where we had read (its last bytes before our offset
        differ) is read again from the start.
        """
        read = self._read
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._read = _ReadSoFar()
            return b""
        if os.path.isdir(self.path):
            raise self._is_a_directory()
        self._check_owner(st)
        if (
            (st.st_dev, st.st_ino) != read.identity
            or st.st_size < read.offset
            or (st.st_size == read.offset and st.st_mtime_ns != read.mtime_ns)
        ):
            read = self._read = _ReadSoFar(identity=(st.st_dev, st.st_ino))
        if st.st_size == read.offset:
            return b""
        with open(self.path, "rb") as handle:
            handle.seek(read.offset - len(read.last_bytes))
            data = handle.read()
        if not data.startswith(read.last_bytes):  # rewritten in place
            self._read = _ReadSoFar(identity=(st.st_dev, st.st_ino))
            return self._catch_up()
        committed, tail = split_committed(data[len(read.last_bytes) :])
        for raw in committed.splitlines():
            record = parse_line(raw, read.lines + 1)
            check_line(record, read.lines + 1, self.user_scope, read.by_id)
            read.add(record)
        read.offset += len(committed)
        read.mtime_ns = st.st_mtime_ns
        read.last_bytes = (read.last_bytes + committed)[-_LAST_BYTES:]
        return tail

    def _recover(self, tail: bytes) -> None:
        """Move an interrupted write's bytes to the quarantine file, then cut them off."""
        offset, line = self._read.offset, self._read.lines + 1
        entry = quarantine_entry(
            self.path,
            line=line,
            offset=offset,
            chunk=tail,
            reason=f"uncommitted write: {len(tail)} bytes with no newline (a writer was "
            "interrupted); recovered by the next writer",
            moment=format_timestamp(utc_now()),
        )
        try:
            if not self._already_quarantined(entry):  # a recovery killed after this step
                write_quarantine(self.path, [entry])
            truncate(self.path, offset)
        except (OSError, RemoteMemoryWriteError) as exc:  # the tail stays uncommitted
            raise RemoteMemoryWriteError(
                f"{self.path.name}: recovering its uncommitted tail failed ({exc}); nothing "
                "was stored, and retrying is safe"
            ) from exc

    def _already_quarantined(self, entry: dict[str, Any]) -> bool:
        try:
            kept = read_quarantine(self.path)
        except RemoteMemoryCorruptionError:
            return False
        return any(
            (e.get("byte_offset"), e.get("sha256")) == (entry["byte_offset"], entry["sha256"])
            for e in kept
        )

    def _write(self, records: list[StoredMemory] | tuple[StoredMemory, ...]) -> None:
        """One O_APPEND write + fsync of every record's line; remember them as read."""
        data = b"".join(encode_line(record) for record in records)
        st = append_bytes(self.path, data)
        read = self._read
        if st.st_size == read.offset + len(data):  # we hold the lock: nothing else was added
            for record in records:
                read.add(record)
            read.identity, read.offset = (st.st_dev, st.st_ino), st.st_size
            read.mtime_ns = st.st_mtime_ns
            read.last_bytes = (read.last_bytes + data)[-_LAST_BYTES:]

    # -- small helpers --------------------------------------------------------------------

    def _check_owner(self, st: os.stat_result) -> None:
        getuid = getattr(os, "geteuid", None)
        if getuid is not None and st.st_uid != getuid():
            raise RemoteMemoryScopeError(
                f"{self.path.name} belongs to another OS user (uid {st.st_uid}); "
                "a store file is never shared between users"
            )

    def _is_a_directory(self) -> RemoteMemoryValidationError:
        return RemoteMemoryValidationError(
            f"path {self.path.name!r} is a directory; a store path must name a JSONL file"
        )

    def _warn_uncommitted(self, lineno: int, size: int) -> None:
        warnings.warn(
            UncommittedWriteWarning(
                f"{self.path.name}: line {lineno} is an uncommitted write ({size} bytes "
                "with no newline: a write in progress, or one a crash interrupted); readers "
                f"ignore it, and the next append moves an interrupted one to "
                f"{self.quarantine_path.name}"
            ),
            stacklevel=3,
        )
