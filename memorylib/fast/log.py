"""An incremental view of a store file: read only the committed lines it gained.

The reference ``RemoteMemoryStore.read_all`` re-reads and re-parses the whole file on
every call. ``FileLog.sync`` remembers how far it has read and, while the file only
grows, reads just the new committed lines (decoded by ``codec.decode_line``, with the
reference ``store.check_line`` rules). When the file was replaced, truncated or
rewritten (identity, size, mtime or the bytes before the old end differ) it starts
again and bumps ``generation``, so a consumer (the index) knows to rebuild.

Like the reference reader it needs no lock: an unterminated final line is an
uncommitted write, not read (an ``UncommittedWriteWarning`` says so, once per tail),
and the next writer's recovery cuts exactly those bytes.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from memorylib.errors import (
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
    UncommittedWriteWarning,
)
from memorylib.records import MemoryKind, StoredMemory
from memorylib.store import check_line, split_committed

from .codec import decode_line

__all__ = ["FileLog"]

_PROBE_BYTES = 64  # bytes before the read offset remembered to detect in-place rewrites


@dataclass
class FileLog:
    """What has been read of one store file; ``sync()`` brings it up to the file's end."""

    path: Path
    user_scope: str
    identity: tuple[int, int] | None = None
    offset: int = 0
    mtime_ns: int = 0
    probe: bytes = b""
    generation: int = 0
    records: list[StoredMemory] = field(default_factory=list)
    by_id: dict[str, StoredMemory] = field(default_factory=dict)
    retraction_of: dict[str, StoredMemory] = field(default_factory=dict)
    _warned: tuple[int, int] | None = None

    def _reset(self) -> None:
        self.identity, self.offset, self.mtime_ns, self.probe = None, 0, 0, b""
        self.generation += 1
        self.records, self.by_id, self.retraction_of = [], {}, {}

    def stat_key(self) -> tuple[int, int, int, int] | None:
        """(device, inode, size, mtime) of the file as last read, or None."""
        if self.identity is None:
            return None
        return (*self.identity, self.offset, self.mtime_ns)

    def sync(self) -> FileLog:
        """Read the committed lines added since the last call. Bad lines raise, naming them."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            if self.identity is not None or self.records:
                self._reset()
            return self
        except IsADirectoryError:
            raise RemoteMemoryValidationError(
                f"path {self.path.name!r} is a directory; a store path must name a JSONL file"
            ) from None
        with handle:
            st = os.fstat(handle.fileno())
            getuid = getattr(os, "geteuid", None)
            if getuid is not None and st.st_uid != getuid():
                raise RemoteMemoryScopeError(
                    f"{self.path.name} belongs to another OS user (uid {st.st_uid}); "
                    "a store file is never shared between users"
                )
            identity = (st.st_dev, st.st_ino)
            if (
                self.identity == identity
                and st.st_size == self.offset
                and (st.st_mtime_ns == self.mtime_ns)
            ):
                return self
            # Same size but a new mtime: rewritten in place (an append always grows it).
            fresh = self.identity != identity or st.st_size <= self.offset
            if not fresh and self.offset:
                start = max(0, self.offset - _PROBE_BYTES)
                handle.seek(start)
                fresh = handle.read(self.offset - start) != self.probe
            if fresh and (self.identity is not None or self.records):
                self._reset()
            handle.seek(self.offset)
            data = handle.read(st.st_size - self.offset)
        committed, tail = split_committed(data)
        self._add(committed)
        self.identity, self.mtime_ns = identity, st.st_mtime_ns
        self.offset += len(committed)
        self.probe = (self.probe + committed)[-_PROBE_BYTES:]
        if tail and self._warned != (self.offset, len(tail)):
            self._warned = (self.offset, len(tail))
            warnings.warn(
                UncommittedWriteWarning(
                    f"{self.path.name}: line {len(self.records) + 1} is an uncommitted write "
                    f"({len(tail)} bytes with no newline: a write in progress, or one a crash "
                    "interrupted); readers ignore it, and the next append moves an "
                    "interrupted one to the quarantine file"
                ),
                stacklevel=2,
            )
        return self

    def _add(self, committed: bytes) -> None:
        lineno = len(self.records)
        scope, by_id, records = self.user_scope, self.by_id, self.records
        for raw in committed.split(b"\n")[:-1]:
            lineno += 1
            record = decode_line(raw, lineno)
            if record.user_scope != scope or record.memory_id in by_id:
                check_line(record, lineno, scope, by_id)  # raises the reference's error
            records.append(record)
            by_id[record.memory_id] = record
            if record.kind is MemoryKind.RETRACTION and record.retracts is not None:
                self.retraction_of.setdefault(record.retracts, record)
