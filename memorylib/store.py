"""The store: durable, owned, sourced records in an append-only JSONL file.

``RemoteMemoryStore`` simulates a remote memory service with one JSONL file per
user. ``append`` validates, then inside ONE exclusive critical section (a lock file
beside the JSONL, held with ``filelock``: threads and processes, Linux, macOS and
Windows) checks the memory_id against the ids already stored, writes the record as
one line with one ``O_APPEND`` write and ``fsync``s. A real service replaces the
lock with a unique index, a conditional write or a transaction.

Nothing here ever rewrites or deletes a line. Reading never skips a bad line: it
raises ``RemoteMemoryCorruptionError`` or ``RemoteMemoryScopeError`` naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import filelock

from ._checks import (
    canonical_timestamp,
    format_timestamp,
    parse_timestamp,
    require_memory_id,
    require_text,
    type_name,
    utc_now,
)
from .errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
)
from .records import (
    MemoryKind,
    MemorySource,
    StoredMemory,
    _clean_utc_timestamp,
    checked_memory,
    checked_source,
)

__all__ = ["RemoteMemoryStore", "normalize_source", "user_scope_for"]

MAX_CONTENT_CHARS = 20_000
MAX_SUMMARY_CHARS = 2_000
MAX_SOURCE_ID_CHARS = 256
MAX_SOURCE_TYPE_CHARS = 64
MAX_TITLE_CHARS = 500
LOCK_TIMEOUT_SECONDS = 30.0
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
_PROBE_BYTES = 64  # bytes before the read offset remembered to detect in-place rewrites


def _make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and any missing ancestor owner-only (0o700), not umask-wide."""
    missing = []
    while not directory.is_dir() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for each in reversed(missing):
        each.mkdir(mode=0o700, exist_ok=True)


def user_scope_for(user_id: object) -> str:
    """First 16 hex chars of sha256(user_id.strip().casefold()); the raw id never hits disk."""
    if not isinstance(user_id, str):
        raise RemoteMemoryValidationError(f"user_id must be a str, got {type_name(user_id)}")
    key = user_id.strip().casefold()
    if not key:
        raise RemoteMemoryValidationError("user_id must not be empty")
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def normalize_source(source: object) -> MemorySource:
    """Validate a MemorySource and return it whitespace-folded with captured_at in UTC ``Z``."""
    if not isinstance(source, MemorySource):
        raise RemoteMemoryValidationError(f"source must be a MemorySource, got {type_name(source)}")
    return MemorySource(
        source_id=require_text(source.source_id, "source.source_id", max_chars=MAX_SOURCE_ID_CHARS),
        source_type=require_text(
            source.source_type, "source.source_type", max_chars=MAX_SOURCE_TYPE_CHARS
        ),
        title=require_text(source.title, "source.title", max_chars=MAX_TITLE_CHARS),
        captured_at=canonical_timestamp(source.captured_at, "source.captured_at"),
    )


_scan_json = json.JSONDecoder().scan_once  # the scanner json.loads runs on a str


def _loads(raw: bytes) -> object:
    """``json.loads(raw)``, quicker for the usual line: UTF-8, one object, nothing after it."""
    if raw[:1] == b"{" and raw[1:2] != b"\x00":  # json.loads would decode it as UTF-8 too
        text = raw.decode("utf-8", "surrogatepass")
        try:
            payload, end = _scan_json(text, 0)
        except (ValueError, StopIteration):
            pass  # json.loads below raises the error with its usual message
        else:
            if end == len(text):
                return payload
    return json.loads(raw)


# A JSON string without escapes or control characters: its value is its text.
_PLAIN = r'"([^"\\\x00-\x1f]+)"'
# Exactly the line ``encode_line`` writes for a profile or conversation record whose
# strings need no escaping (keys in ``to_dict`` order, no spaces).
_CANONICAL_LINE = re.compile(
    rf'\{{"schema_version":1,"memory_id":{_PLAIN},"user_scope":{_PLAIN},'
    rf'"kind":"(conversation|profile)","content":{_PLAIN},"summary":{_PLAIN},'
    rf'"source":\{{"source_id":{_PLAIN},"source_type":{_PLAIN},"title":{_PLAIN},'
    rf'"captured_at":{_PLAIN}\}},"stored_at":{_PLAIN}\}}\Z'
)
_KINDS = {"conversation": MemoryKind.CONVERSATION, "profile": MemoryKind.PROFILE}


def _canonical_record(raw: bytes) -> StoredMemory | None:
    """The record of a line exactly as ``encode_line`` writes it, else None.

    On such a line every JSON value is its own text, so this builds what
    ``StoredMemory.from_dict(json.loads(raw))`` builds, without the generic decoder
    (a third of the time of reading 100,000 lines). Anything else, including any
    escape or a timestamp not in the ``...Z`` form, returns None and takes that path.
    """
    if raw[:1] != b"{":
        return None
    try:
        match = _CANONICAL_LINE.match(raw.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        return None
    if match is None:
        return None
    memory_id, scope, kind, content, summary, source_id, source_type, title, captured, stored = (
        match.groups()
    )
    if not (_clean_utc_timestamp(captured) and _clean_utc_timestamp(stored)):
        return None
    source = checked_source(source_id, source_type, title, captured)
    return checked_memory(memory_id, scope, _KINDS[kind], content, summary, source, stored)


def parse_line(raw: bytes, lineno: int) -> StoredMemory:
    """One JSONL line -> StoredMemory, or RemoteMemoryCorruptionError naming the line."""
    record = _canonical_record(raw)  # (_parse_block tries this first itself)
    if record is not None:
        return record
    try:
        payload = _loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise RemoteMemoryCorruptionError(f"line {lineno}: not valid JSON ({exc})") from None
    try:
        return StoredMemory.from_dict(payload)
    except RemoteMemoryCorruptionError as exc:
        raise RemoteMemoryCorruptionError(f"line {lineno}: {exc}") from None


def encode_line(record: StoredMemory) -> bytes:
    # ensure_ascii=False keeps Chinese readable in the file; JSON escapes every
    # newline, so one record is always exactly one b"\n"-terminated line.
    text = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


@dataclass
class _LogState:
    """What this process has read of the file so far (kept in step with its tail)."""

    identity: tuple[int, int] | None = None
    offset: int = 0
    mtime_ns: int = 0
    probe: bytes = b""
    generation: int = 0
    records: list[StoredMemory] = field(default_factory=list)
    by_id: dict[str, StoredMemory] = field(default_factory=dict)
    retraction_of: dict[str, StoredMemory] = field(default_factory=dict)

    def reset(self) -> None:
        self.identity, self.offset, self.mtime_ns, self.probe = None, 0, 0, b""
        self.generation += 1
        self.records, self.by_id, self.retraction_of = [], {}, {}


class RemoteMemoryStore:
    """Append-only JSONL store of one user's memories. Constructing it touches no file."""

    def __init__(self, path: str | os.PathLike[str], *, user_id: str = "local-user") -> None:
        if not isinstance(path, str | os.PathLike):
            raise RemoteMemoryValidationError(
                f"path must be a str or os.PathLike, got {type_name(path)}"
            )
        if isinstance(path, str) and not path.strip():
            raise RemoteMemoryValidationError("path must not be empty")
        try:
            self.path = Path(path)
        except TypeError:  # an os.PathLike whose __fspath__ returns bytes
            raise RemoteMemoryValidationError("path must be a str path, got bytes") from None
        if "\0" in str(self.path) or self.path.name in ("", ".", ".."):
            raise RemoteMemoryValidationError(
                f"path {str(path)[:80]!r} must name a file (no NUL byte, not '.' or '..')"
            )
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        # str forms, computed once: appends are on the hot path (pathlib re-parses per use)
        self._file = os.fspath(self.path)
        self._dir = os.fspath(self.path.parent)
        self.user_scope = user_scope_for(user_id)
        self._state = _LogState()
        self._lock: filelock.BaseFileLock | None = None

    def __repr__(self) -> str:
        return f"RemoteMemoryStore({self.path.name!r}, user_scope={self.user_scope!r})"

    # -- locking ------------------------------------------------------------------------

    @contextmanager
    def _locked(self, *, create: bool) -> Iterator[None]:
        """Hold the store's exclusive lock. Reads of a read-only location go unlocked."""
        if create:
            if not os.path.isdir(self._dir):
                _make_private_dirs(self.path.parent)
        elif not os.path.isdir(self._dir) or not os.access(self._dir, os.W_OK):
            yield  # nothing to lock against: no writer can exist without write access
            return
        lock = self._lock
        if lock is None:  # one lock object per store: per-thread state, reused per call
            lock = self._lock = filelock.FileLock(
                os.fspath(self.lock_path), mode=0o600, timeout=LOCK_TIMEOUT_SECONDS
            )
        try:
            lock.acquire()
        except filelock.Timeout:
            raise RemoteMemoryError(
                f"could not lock {self.lock_path.name} within {LOCK_TIMEOUT_SECONDS:.0f} s; "
                "another writer holds it"
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _is_a_directory(self) -> RemoteMemoryValidationError:
        return RemoteMemoryValidationError(
            f"path {self.path.name!r} is a directory; a store path must name a JSONL file"
        )

    def _check_owner(self, st: os.stat_result) -> None:
        getuid = getattr(os, "geteuid", None)
        if getuid is not None and st.st_uid != getuid():
            raise RemoteMemoryScopeError(
                f"{self.path.name} belongs to another OS user (uid {st.st_uid}); "
                "a store file is never shared between users"
            )

    # -- reading ------------------------------------------------------------------------

    def _parse_block(
        self, data: bytes, first_lineno: int, known: Mapping[str, object] | None = None
    ) -> list[StoredMemory]:
        """Parse complete lines; ``known`` holds ids already read from earlier lines."""
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when data ends with a newline
        records: list[StoredMemory] = []
        seen: dict[str, int] = {}
        scope = self.user_scope
        for lineno, raw in enumerate(lines, first_lineno):
            record = _canonical_record(raw) or parse_line(raw, lineno)
            memory_id = record.memory_id
            if record.user_scope != scope:
                raise RemoteMemoryScopeError(
                    f"line {lineno}: record {memory_id!r} belongs to user_scope "
                    f"{record.user_scope!r}, not {scope!r}"
                )
            if memory_id in seen or (known is not None and memory_id in known):
                first = seen.get(memory_id)
                where = f"line {first}" if first else "an earlier line"
                raise RemoteMemoryCorruptionError(
                    f"line {lineno}: duplicate memory_id {memory_id!r} (first stored on {where})"
                )
            seen[memory_id] = lineno
            records.append(record)
        if tail:
            raise RemoteMemoryCorruptionError(
                f"line {first_lineno + len(lines)}: torn record ({len(tail)} bytes with no "
                "newline; a write was interrupted). Run `python -m memorylib repair` to "
                "quarantine it"
            )
        return records

    def read_all(self) -> tuple[StoredMemory, ...]:
        """Every record in file order, re-read from disk. Bad lines raise; none is skipped."""
        with self._locked(create=False):
            try:
                with open(self.path, "rb") as handle:
                    self._check_owner(os.fstat(handle.fileno()))
                    data = handle.read()
            except FileNotFoundError:
                return ()
            except IsADirectoryError:
                raise self._is_a_directory() from None
        return tuple(self._parse_block(data, 1))

    def _sync(self) -> _LogState:
        """Bring the in-process state up to the file's end. Caller holds the lock.

        Reads only the bytes appended since the last sync; a replaced, truncated or
        rewritten file (identity, size, mtime or the bytes before the offset differ)
        is read again from the start.
        """
        state = self._state
        try:
            handle = open(self._file, "rb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            if state.identity is not None or state.records:
                state.reset()
            return state
        except IsADirectoryError:
            raise self._is_a_directory() from None
        with handle:
            st = os.fstat(handle.fileno())
            self._check_owner(st)
            identity = (st.st_dev, st.st_ino)
            same_size = st.st_size == state.offset
            if state.identity == identity and same_size and st.st_mtime_ns == state.mtime_ns:
                return state
            # Same size but a new mtime: rewritten in place (an append always grows it).
            fresh = state.identity != identity or st.st_size < state.offset or same_size
            if not fresh and state.offset:
                start = max(0, state.offset - _PROBE_BYTES)
                handle.seek(start)
                fresh = handle.read(state.offset - start) != state.probe
            if fresh:
                state.reset()
            handle.seek(state.offset)
            data = handle.read(st.st_size - state.offset)
        new = self._parse_block(data, len(state.records) + 1, state.by_id)
        for record in new:
            state.records.append(record)
            state.by_id[record.memory_id] = record
            if record.kind is MemoryKind.RETRACTION and record.retracts is not None:
                state.retraction_of.setdefault(record.retracts, record)
        state.identity, state.mtime_ns = identity, st.st_mtime_ns
        state.offset += len(data)
        state.probe = (state.probe + data)[-_PROBE_BYTES:]
        return state

    def synced_state(self) -> _LogState:
        """Internal: the up-to-date state (used by the index and the profile lookup)."""
        with self._locked(create=False):
            return self._sync()

    def latest_profile(self) -> StoredMemory | None:
        """Newest non-retracted PROFILE by (captured_at, memory_id), or None."""
        state = self.synced_state()
        profiles = [
            r
            for r in state.records
            if r.kind is MemoryKind.PROFILE and r.memory_id not in state.retraction_of
        ]
        if not profiles:
            return None
        return max(
            profiles,
            key=lambda r: (parse_timestamp(r.source.captured_at, "captured_at"), r.memory_id),
        )

    # -- writing ------------------------------------------------------------------------

    def _write_line(self, record: StoredMemory) -> None:
        """One O_APPEND write + fsync. Caller holds the lock and has just synced."""
        line = encode_line(record)
        state = self._state
        created = state.identity is None  # the sync found no file
        fd = os.open(self._file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_BINARY, 0o600)
        try:
            written = os.write(fd, line)
            if written != len(line):  # a short write on a full disk: report, never hide
                raise RemoteMemoryError(
                    f"short write to {self.path.name}: {written} of {len(line)} bytes; "
                    "run `python -m memorylib fsck` before writing again"
                )
            os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if created and hasattr(os, "O_DIRECTORY"):
            dir_fd = os.open(self._dir, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        if st.st_size != state.offset + len(line) or (
            not created and state.identity != (st.st_dev, st.st_ino)
        ):
            self._sync()  # the file changed under us (a writer without the lock): re-read
            return
        # We hold the lock and synced just before writing: the file is exactly what we
        # knew plus this line, so record it without reading it back.
        state.records.append(record)
        state.by_id[record.memory_id] = record
        if record.kind is MemoryKind.RETRACTION and record.retracts is not None:
            state.retraction_of.setdefault(record.retracts, record)
        state.identity, state.mtime_ns = (st.st_dev, st.st_ino), st.st_mtime_ns
        state.offset = st.st_size
        state.probe = (state.probe + line)[-_PROBE_BYTES:]

    def _new_record(
        self,
        *,
        kind: MemoryKind,
        content: str,
        summary: str,
        source: MemorySource,
        memory_id: str | None,
        stored_at: datetime | str | None,
        retracts: str | None = None,
    ) -> StoredMemory:
        if memory_id is None:
            memory_id = f"{kind.value}-{uuid.uuid4().hex[:16]}"
        return StoredMemory(
            memory_id=require_memory_id(memory_id),
            user_scope=self.user_scope,
            kind=kind,
            content=content,
            summary=summary,
            source=normalize_source(source),
            stored_at=(
                format_timestamp(utc_now())
                if stored_at is None
                else canonical_timestamp(stored_at, "stored_at")
            ),
            retracts=retracts,
        )

    def append(
        self,
        *,
        kind: MemoryKind | str,
        content: str,
        summary: str,
        source: MemorySource,
        memory_id: str | None = None,
        stored_at: datetime | str | None = None,
    ) -> StoredMemory:
        """Validate and durably append one PROFILE or CONVERSATION record.

        Raises RemoteMemoryValidationError (a field, named), RemoteMemoryDuplicateError
        (memory_id already stored) or RemoteMemoryCorruptionError (the file has a bad
        line; nothing is written after it). A rejected append writes nothing.
        """
        if isinstance(kind, bool) or not isinstance(kind, str):
            raise RemoteMemoryValidationError(f"kind must be a MemoryKind, got {type_name(kind)}")
        try:
            checked_kind = MemoryKind(kind)
        except ValueError:
            raise RemoteMemoryValidationError(
                f"kind {kind!r} is not one of 'profile', 'conversation'"
            ) from None
        if checked_kind is MemoryKind.RETRACTION:
            raise RemoteMemoryValidationError(
                "kind 'retraction' cannot be appended directly; use store.retract(memory_id, ...)"
            )
        record = self._new_record(
            kind=checked_kind,
            content=require_text(content, "content", max_chars=MAX_CONTENT_CHARS),
            summary=require_text(summary, "summary", max_chars=MAX_SUMMARY_CHARS),
            source=source,
            memory_id=memory_id,
            stored_at=stored_at,
        )
        with self._locked(create=True):
            state = self._sync()
            if record.memory_id in state.by_id:
                raise RemoteMemoryDuplicateError(
                    f"memory_id {record.memory_id!r} is already stored; nothing was written"
                )
            self._write_line(record)
        return record

    def retract(
        self,
        memory_id: str,
        *,
        reason: str,
        source: MemorySource,
        retraction_id: str | None = None,
        stored_at: datetime | str | None = None,
    ) -> StoredMemory:
        """Append a RETRACTION that hides ``memory_id`` from recall and profile selection.

        The target stays in the file (the audit trail); retracting it again returns the
        first retraction and writes nothing. Unknown targets and retractions of
        retractions raise RemoteMemoryValidationError.
        """
        target_id = require_memory_id(memory_id)
        if retraction_id is not None:
            require_memory_id(retraction_id, "retraction_id")
        checked_reason = require_text(reason, "reason", max_chars=MAX_SUMMARY_CHARS)
        record = self._new_record(
            kind=MemoryKind.RETRACTION,
            content=checked_reason,
            summary=checked_reason,
            source=source,
            memory_id=retraction_id,
            stored_at=stored_at,
            retracts=target_id,
        )
        with self._locked(create=True):
            state = self._sync()
            target = state.by_id.get(target_id)
            if target is None:
                raise RemoteMemoryValidationError(f"memory_id {target_id!r} is not in the store")
            if target.kind is MemoryKind.RETRACTION:
                raise RemoteMemoryValidationError(
                    f"memory_id {target_id!r} is a retraction; a retraction cannot be retracted"
                )
            if target_id in state.retraction_of:
                return state.retraction_of[target_id]
            if record.memory_id in state.by_id:
                raise RemoteMemoryDuplicateError(
                    f"retraction_id {record.memory_id!r} is already stored; nothing was written"
                )
            self._write_line(record)
        return record
