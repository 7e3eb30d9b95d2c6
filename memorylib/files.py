"""File handling for the JSONL store and its tools: one place for every byte written.

Used by ``store``, ``fsck``, the synthetic generator and the notebooks' failure views:

* ``private_dirs`` creates missing folders owner-only (0o700), not umask-wide;
* ``FileLock`` is the store's exclusive lock (``filelock``, imported at the first acquire:
  threads and processes on Linux, macOS and Windows) with a typed timeout error;
* ``append_bytes`` is one ``O_APPEND`` write and ``fsync`` (a new file's folder too, so
  its name is durable), all or nothing: a failed step is cut back; a failed cut is named
  in the fail-closed marker ``<store>.needs-repair``, and writers refuse until ``repair``;
* ``truncate``, ``atomic_replace`` and ``fsync_directory`` for recovery and repair;
* the quarantine file, where recovery and repair keep every byte they take out of a
  store: one JSON line per chunk with its offset, length, sha256 and the bytes in base64.

Every file is opened in binary mode (``O_BINARY`` on Windows: no newline translation).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import os
import threading
import uuid
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryError,
    RemoteMemoryFailedClosedError,
    RemoteMemoryWriteError,
)
from .timestamps import format_timestamp, utc_now

if TYPE_CHECKING:
    import filelock

__all__ = [
    "LOCK_TIMEOUT_SECONDS",
    "FileLock",
    "append_bytes",
    "atomic_replace",
    "clear_markers",
    "fsync_directory",
    "lock_path_for",
    "marker_path_for",
    "private_dirs",
    "quarantine_entry",
    "quarantine_path_for",
    "read_markers",
    "read_quarantine",
    "refuse_if_failed_closed",
    "truncate",
    "write_quarantine",
]

LOCK_TIMEOUT_SECONDS = 30.0
O_BINARY = getattr(os, "O_BINARY", 0)


def lock_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def marker_path_for(path: str | os.PathLike[str]) -> Path:
    """The fail-closed marker: while it exists, writers refuse (see ``append_bytes``)."""
    store = Path(path)
    return store.with_name(store.name + ".needs-repair")


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


def append_bytes(
    path: str | os.PathLike[str], data: bytes, *, marker: Path | None = None
) -> os.stat_result:
    """Append ``data`` with ONE ``O_APPEND`` write, ``fsync``; return the file's stat after.

    Call it under the store's lock. All or nothing: if the write fails or is short (a full
    disk), or the ``fsync`` of the file or of a new file's folder fails, the file is cut
    back to its size before the call (``ftruncate`` + ``fsync``; a file this call created
    is removed again) and ``RemoteMemoryWriteError`` says nothing was stored. If the cut
    fails too, the bytes may still be there: a line in ``marker`` (default: the marker of
    ``path``) names them, and ``RemoteMemoryFailedClosedError`` is raised. Anything else
    raised in between (a ``KeyboardInterrupt``) is re-raised after the same cut.
    """
    path = Path(path)
    flags = os.O_WRONLY | os.O_APPEND | O_BINARY
    try:
        fd, created = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600), True
    except FileExistsError:
        fd, created = os.open(path, flags | os.O_CREAT, 0o600), False
    try:
        start = os.fstat(fd).st_size
        written, step = 0, "the write"
        try:
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, f"short write, {written} of {len(data)} bytes")
            step = "the fsync of the file"
            os.fsync(fd)
            if start == 0:  # a new (or empty) file: its name must be durable too
                step = "the fsync of its folder"
                fsync_directory(path.parent)
            return os.fstat(fd)
        except BaseException as failure:
            where = marker or marker_path_for(path)
            _cut_back(fd, path, start, data[:written], created, step, failure, where)
            raise  # not an I/O error (KeyboardInterrupt ...): the cut is done, re-raise it
    finally:
        os.close(fd)


def _cut_back(
    fd: int,
    path: Path,
    start: int,
    written: bytes,
    created: bool,
    step: str,
    failure: BaseException,
    marker: Path,
) -> None:
    """Undo a failed append (see ``append_bytes``); raise the typed error for an OSError."""
    cause = f"{step} failed ({_describe(failure)})"
    try:
        os.ftruncate(fd, start)
        os.fsync(fd)
    except OSError as cut_failure:
        entry = {
            "file": path.name,
            "byte_offset": start,
            "length": len(written),
            "sha256": hashlib.sha256(written).hexdigest(),
            "reason": f"{cause}; the cut back failed ({_describe(cut_failure)})",
            "failed_at": format_timestamp(utc_now()),
        }
        recorded = _write_marker(marker, entry)
        if not recorded:
            _UNRECORDED.setdefault(os.path.abspath(marker), []).append(entry)
        store = marker.with_name(marker.name.removesuffix(".needs-repair"))
        what = (
            f"{marker.name} marks it, and every reader and writer refuses"
            if recorded
            else f"{marker.name} could not be written (in full): only this process knows "
            "which bytes, other processes may not be warned"
        )
        raise RemoteMemoryFailedClosedError(
            f"{path.name}: {cause}, and cutting the file back to {start} bytes failed too "
            f"({_describe(cut_failure)}): bytes {start} to {start + len(written)}, never "
            f"acknowledged, may still be in it. The store FAILED CLOSED: {what}, until "
            f"`python -m memorylib repair {store}` (in this process: fsck.repair_store_file) "
            "has removed them",
            recorded=recorded,
        ) from cut_failure
    if created:  # back to no file at all; an empty file left behind would be harmless too
        with contextlib.suppress(OSError):
            os.unlink(path)
    if isinstance(failure, OSError):
        raise RemoteMemoryWriteError(
            f"{path.name}: {cause}; nothing was stored: the file was cut back to its "
            f"{start} bytes, so retrying is safe"
        ) from failure


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{errno.errorcode.get(exc.errno, exc.errno)}: {exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"


# -- the fail-closed marker ------------------------------------------------------------------

# Failed cuts whose marker line could not be written, by the marker's absolute path: this
# process still refuses to write to the store, and a repair in this process still sees them.
_UNRECORDED: dict[str, list[dict[str, Any]]] = {}


def _write_marker(marker: Path, entry: dict[str, Any]) -> bool:
    """Append one JSON line to the marker (0o600, fsynced, its folder too); True if all of
    that worked. Not through ``append_bytes``: there is nothing left to fall back on."""
    line = json.dumps(entry, ensure_ascii=True, sort_keys=True).encode("ascii") + b"\n"
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_APPEND | os.O_CREAT | O_BINARY, 0o600)
        try:
            complete = os.write(fd, line) == len(line)
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_directory(marker.parent)
    except OSError:
        return False
    return complete


def refuse_if_failed_closed(store: Path) -> None:
    """Raise ``RemoteMemoryFailedClosedError`` while the store's marker exists, or while
    this process knows of a failed cut it could not record. A writer checks it under the
    lock, before it reads or writes anything; ``read_all`` and the index check it before
    they read, so no reader is handed the bytes that were never acknowledged."""
    marker = marker_path_for(store)
    unrecorded = os.path.abspath(marker) in _UNRECORDED
    if unrecorded or os.path.lexists(marker):
        raise RemoteMemoryFailedClosedError(
            f"{store.name} FAILED CLOSED: "
            + ("this process" if unrecorded else marker.name)
            + " knows of an earlier write that failed and could not be cut back, so bytes "
            "never acknowledged may be in the file. Nothing was read or written; the store refuses "
            f"reads and writes until `python -m memorylib repair {store}` has removed them",
            recorded=not unrecorded,
        )


def read_markers(path: str | os.PathLike[str]) -> list[dict[str, Any]] | None:
    """The fail-closed marker's entries for a store (``path``), then those this process
    could not record; None when there are none (the store is not failed closed).

    A line that is not an entry (a marker torn by the same failing disk) raises
    ``RemoteMemoryCorruptionError``: then no tool can tell which bytes to remove.
    """
    target = marker_path_for(path)
    unrecorded = _UNRECORDED.get(os.path.abspath(target), [])
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return list(unrecorded) or None
    entries = []
    for lineno, line in enumerate(data.splitlines(), start=1):
        try:
            entry = json.loads(line)
            entry = {**entry, "byte_offset": int(entry["byte_offset"])}
            entry.update(length=int(entry["length"]), file=str(entry["file"]))
            entries.append(entry)
        except (ValueError, KeyError, TypeError):
            if not unrecorded:  # else this process knows what the torn line was to say
                raise RemoteMemoryCorruptionError(
                    f"{target.name} line {lineno}: not a fail-closed marker entry"
                ) from None
    if not entries and not unrecorded:
        raise RemoteMemoryCorruptionError(f"{target.name} is empty: it names no bytes")
    return entries + [e for e in unrecorded if e not in entries]  # written, not fsynced


def clear_markers(path: str | os.PathLike[str]) -> None:
    """Remove the store's marker (and fsync its folder) and forget unrecorded failed cuts:
    the store accepts writes again. Only ``repair`` calls it, once the bytes are gone."""
    target = marker_path_for(path)
    if os.path.lexists(target):
        target.unlink()
        fsync_directory(target.parent)
    _UNRECORDED.pop(os.path.abspath(target), None)


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
    """Append entries to ``<store>.quarantine.jsonl`` and ``fsync`` before anything is cut
    (all or nothing, like every ``append_bytes``; a failed cut marks the store's marker)."""
    payload = b"".join(
        json.dumps(entry, ensure_ascii=True, sort_keys=True).encode("ascii") + b"\n"
        for entry in entries
    )
    append_bytes(quarantine_path_for(store), payload, marker=marker_path_for(store))


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
