"""An incremental view of a store file: read only the committed lines it gained.

The reference ``RemoteMemoryStore.read_all`` re-reads and re-parses the whole file on
every call and returns every record. ``FileLog.sync(consume)`` remembers how far it has
read and, while the file only grows, reads just the new committed lines, a few
megabytes at a time, decoded by ``codec.decode_line`` and checked with the reference
``store.check_line`` rules; each chunk's records (and where their lines are) go to
``consume`` and are not kept here. When the file was replaced, truncated or rewritten
(identity, size, mtime or the bytes before the old end differ) it starts again and
bumps ``generation``, so the consumer (the index) knows to start again too.

Like the reference reader it takes no lock: an unterminated final line is an
uncommitted write, not read (an ``UncommittedWriteWarning`` says so, once per tail),
and the next writer's recovery cuts exactly those bytes. A bad committed line raises
before its chunk is consumed, and raises again (same line) on the next call.
"""

from __future__ import annotations

import os
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memorylib.errors import (
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
    UncommittedWriteWarning,
)
from memorylib.files import quarantine_path_for, refuse_if_failed_closed
from memorylib.records import StoredMemory
from memorylib.store import check_line

from .codec import decode_line

__all__ = ["CHUNK_BYTES", "Consumer", "FileLog"]

CHUNK_BYTES = 8 << 20  # bytes read (and decoded, and handed over) at a time
_PROBE_BYTES = 64  # bytes before the read offset remembered to detect in-place rewrites

# consume(records, byte offsets of their lines, line lengths without the newline, generation)
Consumer = Callable[[list[StoredMemory], list[int], list[int], int], None]


@dataclass
class FileLog:
    """How far one store file has been read; ``sync(consume)`` reads up to its end."""

    path: Path
    user_scope: str
    identity: tuple[int, int] | None = None
    offset: int = 0
    mtime_ns: int = 0
    probe: bytes = b""
    generation: int = 0
    lines: int = 0
    ids: set[str] = field(default_factory=set)
    crc32: int = 0  # CRC-32 of the committed bytes read so far (a saved index records it)
    _warned: tuple[int, int] | None = None

    def _reset(self) -> None:
        self.identity, self.offset, self.mtime_ns, self.probe = None, 0, 0, b""
        self.generation += 1
        self.lines, self.ids, self.crc32 = 0, set(), 0

    def restore(self, *, offset: int, lines: int, ids: set[str], crc32: int) -> None:
        """Continue from a saved index that covers the file's first ``offset`` bytes."""
        st = os.stat(self.path)
        with open(self.path, "rb") as handle:
            handle.seek(max(0, offset - _PROBE_BYTES))
            self.probe = handle.read(min(offset, _PROBE_BYTES))
        self.identity, self.offset, self.lines, self.ids, self.crc32 = (
            (st.st_dev, st.st_ino),
            offset,
            lines,
            ids,
            crc32,
        )
        self.mtime_ns = st.st_mtime_ns if st.st_size == offset else 0

    def stat_key(self) -> tuple[int, int, int, int] | None:
        """(device, inode, size, mtime) of the file as last read, or None."""
        if self.identity is None:
            return None
        return (*self.identity, self.offset, self.mtime_ns)

    def sync(self, consume: Consumer, chunk_bytes: int = CHUNK_BYTES) -> None:
        """Hand every committed line added since the last call to ``consume``, in order."""
        refuse_if_failed_closed(self.path)  # as read_all: never index unacknowledged bytes
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            if self.identity is not None or self.lines:
                self._reset()
            return
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
                return
            # Same size but a new mtime: rewritten in place (an append always grows it).
            fresh = self.identity != identity or st.st_size <= self.offset
            if not fresh and self.offset:
                start = max(0, self.offset - _PROBE_BYTES)
                handle.seek(start)
                fresh = handle.read(self.offset - start) != self.probe
            if fresh and (self.identity is not None or self.lines):
                self._reset()
            self.identity = identity
            handle.seek(self.offset)
            remaining = st.st_size - self.offset
            carry = b""
            while remaining > 0:
                block = handle.read(min(chunk_bytes, remaining))
                if not block:
                    break
                remaining -= len(block)
                data = carry + block
                end = data.rfind(b"\n") + 1
                carry = data[end:]
                if end:
                    self._consume(data[:end], consume)
            self.mtime_ns = st.st_mtime_ns
        if carry and self._warned != (self.offset, len(carry)):
            self._warned = (self.offset, len(carry))
            warnings.warn(
                UncommittedWriteWarning(
                    f"{self.path.name}: line {self.lines + 1} is an uncommitted write "
                    f"({len(carry)} bytes with no newline: a write in progress, or one a "
                    "crash interrupted); readers ignore it, and the next append moves an "
                    f"interrupted one to {quarantine_path_for(self.path).name}"
                ),
                stacklevel=3,
            )

    def _consume(self, committed: bytes, consume: Consumer) -> None:
        """Decode and check whole lines; hand them over; only then move the offset."""
        records: list[StoredMemory] = []
        offsets: list[int] = []
        lengths: list[int] = []
        seen: set[str] = set()
        lineno, position, scope, ids = self.lines, self.offset, self.user_scope, self.ids
        for raw in committed.split(b"\n")[:-1]:
            lineno += 1
            record = decode_line(raw, lineno)
            if record.user_scope != scope or record.memory_id in ids or record.memory_id in seen:
                check_line(record, lineno, scope, ids | seen)  # raises the reference's error
            seen.add(record.memory_id)
            records.append(record)
            offsets.append(position)
            lengths.append(len(raw))
            position += len(raw) + 1
        consume(records, offsets, lengths, self.generation)
        self.crc32 = zlib.crc32(committed, self.crc32)
        ids |= seen
        self.lines = lineno
        self.offset = position
        self.probe = (self.probe + committed)[-_PROBE_BYTES:]
