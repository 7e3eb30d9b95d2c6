"""File handling for the JSONL store and its tools: one place for every byte written.

Used by ``store``, ``fsck``, the synthetic generator and the notebooks' failure views:

* ``private_dirs`` creates missing folders owner-only (0o700), not umask-wide;
* ``FileLock`` is the store's exclusive lock (``filelock``, imported at the first acquire:
  threads and processes on Linux, macOS and Windows) with a typed timeout error;
* ``append_bytes`` is one ``O_APPEND`` write and ``fsync`` (a new file's folder is
  fsynced too, so the file's name is durable as well as its bytes);
* ``truncate``, ``atomic_replace`` and ``fsync_directory`` for recovery and repair;
* the quarantine file, where recovery and repair keep every byte they take out of a
  store: one JSON line per chunk with its offset, length, sha256 and the bytes in base64.

Every file is opened in binary mode (``O_BINARY`` on Windows: no newline translation).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import uuid
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .errors import RemoteMemoryCorruptionError, RemoteMemoryError

if TYPE_CHECKING:
    import filelock

__all__ = [
    "LOCK_TIMEOUT_SECONDS",
    "FileLock",
    "append_bytes",
    "atomic_replace",
    "fsync_directory",
    "lock_path_for",
    "private_dirs",
    "quarantine_entry",
    "quarantine_path_for",
    "read_quarantine",
    "truncate",
    "write_quarantine",
]

LOCK_TIMEOUT_SECONDS = 30.0
O_BINARY = getattr(os, "O_BINARY", 0)


def lock_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def quarantine_path_for(path: str | os.PathLike[str]) -> Path:
    store = Path(path)
    return store.with_name(store.name + ".quarantine.jsonl")


def private_dirs(directory: Path) -> None:
    """Create ``directory`` and any missing ancestor owner-only (0o700)."""
    missing = []
    while not directory.is_dir() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for each in reversed(missing):
        each.mkdir(mode=0o700, exist_ok=True)


class FileLock:
    """An exclusive lock file (created 0o600), re-entrant within a thread.

    One object per store: ``filelock`` keeps per-thread state, reused at every acquire.
    The ``filelock`` object is made (and the module imported) at the first acquire.
    """

    def __init__(self, path: Path, *, timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
        self.path = path
        self.timeout = timeout
        self._lock: filelock.FileLock | None = None
        self._making = threading.Lock()  # two threads' first acquires make ONE object

    def __enter__(self) -> FileLock:
        import filelock  # here, not at import time: it loads asyncio; cached after this

        if self._lock is None:
            with self._making:
                if self._lock is None:
                    self._lock = filelock.FileLock(
                        os.fspath(self.path), mode=0o600, timeout=self.timeout
                    )
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise RemoteMemoryError(
                f"could not lock {self.path.name} within {self.timeout:.0f} s; "
                "another writer holds it"
            ) from None
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._lock is not None  # entered, so made
        self._lock.release()


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a folder's entries (a new or renamed file) durable. A no-op on Windows."""
    if hasattr(os, "O_DIRECTORY"):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def append_bytes(path: str | os.PathLike[str], data: bytes) -> os.stat_result:
    """Append ``data`` with ONE ``O_APPEND`` write, ``fsync``; return the file's stat after.

    A short write (a full disk) raises ``RemoteMemoryError``: it is never hidden.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | O_BINARY, 0o600)
    try:
        created = os.fstat(fd).st_size == 0
        written = os.write(fd, data)
        if written != len(data):
            raise RemoteMemoryError(
                f"short write to {Path(path).name}: {written} of {len(data)} bytes; "
                "the next writer will recover the torn line"
            )
        os.fsync(fd)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if created:
        fsync_directory(Path(path).parent)
    return st


def truncate(path: str | os.PathLike[str], size: int) -> None:
    """Cut the file to ``size`` bytes and ``fsync`` it."""
    fd = os.open(path, os.O_WRONLY | O_BINARY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_replace(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data``: temp file, ``fsync``, ``os.replace``, fsync the folder."""
    temp = path.with_name(f"{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


# -- the quarantine file ---------------------------------------------------------------------


def quarantine_entry(
    store: Path, *, line: int, offset: int, chunk: bytes, reason: str, moment: str
) -> dict[str, Any]:
    """One quarantine line: where the bytes were, why they left, and the bytes themselves."""
    return {
        "store": store.name,
        "line": line,
        "byte_offset": offset,
        "length": len(chunk),
        "reason": reason,
        "sha256": hashlib.sha256(chunk).hexdigest(),
        "bytes_b64": base64.b64encode(chunk).decode("ascii"),
        "quarantined_at": moment,
    }


def write_quarantine(store: Path, entries: list[dict[str, Any]]) -> None:
    """Append entries to ``<store>.quarantine.jsonl`` and ``fsync`` before anything is cut."""
    payload = b"".join(
        json.dumps(entry, ensure_ascii=True, sort_keys=True).encode("ascii") + b"\n"
        for entry in entries
    )
    append_bytes(quarantine_path_for(store), payload)


def read_quarantine(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The quarantine entries of a store (``path`` is the store), bytes decoded again.

    Each entry gains ``bytes`` (the original bytes); a line that is not an entry, or
    whose sha256 does not match its bytes, raises ``RemoteMemoryCorruptionError``.
    """
    target = quarantine_path_for(path)
    try:
        text = target.read_text(encoding="ascii")
    except FileNotFoundError:
        return []
    entries = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        try:
            entry = json.loads(line)
            entry["bytes"] = base64.b64decode(entry["bytes_b64"], validate=True)
        except (ValueError, KeyError, TypeError):
            raise RemoteMemoryCorruptionError(
                f"{target.name} line {lineno}: not a quarantine entry"
            ) from None
        if hashlib.sha256(entry["bytes"]).hexdigest() != entry.get("sha256"):
            raise RemoteMemoryCorruptionError(f"{target.name} line {lineno}: sha256 mismatch")
        entries.append(entry)
    return entries
