"""Check and repair a store file: ``python -m memorylib fsck PATH`` / ``repair PATH``.

A crash mid-write leaves an unterminated last line: an uncommitted write, which
readers ignore and the next writer recovers by itself (see ``store``). Damage in the
middle is different: the store never skips a bad committed line, ``read_all`` raises
naming it and ``append`` refuses to write after it. These two tools report it and
get the store working again without losing a byte:

* ``check_store_file(path)`` reads the file and reports what it holds (lines,
  records per kind, user scopes, an uncommitted tail) and every problem, by line. It
  needs no user id and changes nothing (it waits for the store's lock when one
  exists, so a write in progress is not reported).
* A store that FAILED CLOSED (an append failed and cutting it back failed too, see
  ``files.append_bytes``) has a marker beside it, ``<store>.needs-repair``, naming the
  bytes that were never acknowledged; writers refuse while it exists. ``fsck`` reports it
  (and, as always, changes nothing); ``repair`` checks that those bytes are still exactly
  what the marker names (their sha256), moves them to the quarantine file, cuts them off,
  and only then removes the marker. Bytes that differ from the marker are refused (a
  typed error, nothing changed): a person must decide.
* ``repair_store_file(path)`` takes the store's lock, copies every bad chunk (the torn
  tail, malformed or duplicate lines) into ``<store>.quarantine.jsonl`` beside the
  store, ``fsync``s it, and only then removes the chunks from the store: a torn tail
  is truncated in place; bad lines in the middle mean a rewrite through a temporary
  file, ``fsync`` and ``os.replace``. The good bytes plus the quarantined bytes are
  exactly the original file. A file that mixes user scopes, or belongs to another OS
  user, is refused (typed error) and left untouched: a person must decide.

Each quarantine line is one JSON object: ``store``, ``line``, ``byte_offset``,
``length``, ``reason``, ``sha256``, ``bytes_b64`` (the original bytes) and
``quarantined_at``. ``read_quarantine(path)`` decodes it again.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TextIO

from .checks import require_file_path
from .errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
)
from .files import (
    FileLock,
    atomic_replace,
    clear_markers,
    lock_path_for,
    quarantine_entry,
    quarantine_path_for,
    read_markers,
    read_quarantine,
    truncate,
    write_quarantine,
)
from .store import parse_line
from .timestamps import format_timestamp, utc_now

__all__ = [
    "FsckReport",
    "QuarantinedChunk",
    "RepairReport",
    "check_store_file",
    "main_fsck",
    "main_repair",
    "quarantine_path_for",
    "read_quarantine",
    "repair_store_file",
]

_SHOWN_PROBLEMS = 20  # the human report lists this many problems, then counts the rest


@dataclass(frozen=True)
class FsckReport:
    """What a store file holds and what is wrong with it. Nothing was changed.

    ``problems`` are ``(line, message)`` pairs in file order; line 0 means the whole
    file. ``torn_tail_bytes`` counts bytes after the last newline: an uncommitted write
    (a crashed writer), not a problem: readers ignore it and the next append recovers it.
    """

    path: str
    size_bytes: int
    lines: int
    records: int
    records_by_kind: Mapping[str, int]
    user_scopes: tuple[str, ...]
    problems: tuple[tuple[int, str], ...]
    torn_tail_bytes: int
    owner_uid: int | None = None
    failed_closed: bool = False  # a write could not be cut back: writers refuse, see repair

    @property
    def healthy(self) -> bool:
        """No damaged committed line (an uncommitted tail is not damage)."""
        return not self.problems


@dataclass(frozen=True)
class QuarantinedChunk:
    """One chunk moved out of the store: where it was and why."""

    line: int
    byte_offset: int
    length: int
    reason: str


@dataclass(frozen=True)
class RepairReport:
    """What ``repair_store_file`` did. ``method``: 'none', 'truncate' or 'rewrite'."""

    path: str
    quarantine_path: str
    method: str
    quarantined: tuple[QuarantinedChunk, ...]
    records_kept: int
    bytes_kept: int
    bytes_quarantined: int
    torn_tail_bytes: int
    after: FsckReport | None = field(default=None, compare=False)
    failed_closed_cleared: bool = False  # the fail-closed marker was examined and removed

    @property
    def changed(self) -> bool:
        return self.method != "none"


# -- scanning -----------------------------------------------------------------------------


@dataclass
class _Line:
    lineno: int
    offset: int
    raw: bytes  # without the newline
    kind: str | None = None
    scope: str | None = None
    problem: str | None = None


@dataclass
class _Scan:
    lines: list[_Line]
    tail_offset: int
    tail: bytes
    scope_counts: Counter[str]
    scope_first_line: dict[str, int]


def _strip_line_prefix(message: str, lineno: int) -> str:
    prefix = f"line {lineno}: "
    return message[len(prefix) :] if message.startswith(prefix) else message


def _scan(data: bytes) -> _Scan:
    """Split into complete lines and a tail; parse each line; find duplicates."""
    lines: list[_Line] = []
    seen: dict[str, int] = {}
    scope_counts: Counter[str] = Counter()
    scope_first: dict[str, int] = {}
    offset = 0
    lineno = 0
    while True:
        end = data.find(b"\n", offset)
        if end < 0:
            break
        lineno += 1
        entry = _Line(lineno, offset, data[offset:end])
        offset = end + 1
        lines.append(entry)
        try:
            record = parse_line(entry.raw, lineno)
        except RemoteMemoryCorruptionError as exc:
            entry.problem = _strip_line_prefix(str(exc), lineno)
            continue
        first = seen.get(record.memory_id)
        if first is not None:
            entry.problem = (
                f"duplicate memory_id {record.memory_id!r} (first stored on line {first}); "
                "the first line wins"
            )
            continue
        seen[record.memory_id] = lineno
        entry.kind = record.kind.value
        entry.scope = record.user_scope
        scope_counts[record.user_scope] += 1
        scope_first.setdefault(record.user_scope, lineno)
    return _Scan(lines, offset, data[offset:], scope_counts, scope_first)


def _failed_closed_problems(path: Path) -> list[str]:
    """What the fail-closed marker says (empty when the store is not failed closed)."""
    try:
        entries = read_markers(path)
    except RemoteMemoryCorruptionError as exc:
        return [f"FAILED CLOSED, and the marker is unreadable ({exc})"]
    return [
        f"FAILED CLOSED at {e.get('failed_at', '?')}: {e.get('reason', '?')}; bytes "
        f"{e['byte_offset']} to {e['byte_offset'] + e['length']} of {e['file']} were never "
        "acknowledged and may still be there, so writers refuse until `repair`"
        for e in entries or ()
    ]


def _report(path: Path, data: bytes, scan: _Scan, owner_uid: int | None) -> FsckReport:
    failed_closed = _failed_closed_problems(path)
    problems: list[tuple[int, str]] = [(0, message) for message in failed_closed]
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if owner_uid is not None and euid is not None and owner_uid != euid:
        problems.append(
            (
                0,
                f"the file belongs to OS uid {owner_uid}, not to you (uid {euid}); "
                "the store refuses to read or write it",
            )
        )
    problems.extend((e.lineno, e.problem) for e in scan.lines if e.problem is not None)
    if len(scan.scope_counts) > 1:
        owner = next(iter(scan.scope_counts))  # the scope of the first good record
        for scope, count in scan.scope_counts.items():
            if scope != owner:
                problems.append(
                    (
                        scan.scope_first_line[scope],
                        f"{count} record(s) of user_scope {scope!r} in a file whose first "
                        f"record is {owner!r}: the file mixes user scopes",
                    )
                )
    problems.sort(key=lambda p: p[0])
    kinds = Counter(e.kind for e in scan.lines if e.kind is not None)
    return FsckReport(
        path=str(path),
        size_bytes=len(data),
        lines=len(scan.lines),
        records=sum(kinds.values()),
        records_by_kind=MappingProxyType(dict(sorted(kinds.items()))),
        user_scopes=tuple(sorted(scan.scope_counts)),
        problems=tuple(problems),
        torn_tail_bytes=len(scan.tail),
        owner_uid=owner_uid,
        failed_closed=bool(failed_closed),
    )


# -- locking and reading --------------------------------------------------------------------


@contextmanager
def _store_lock(path: Path, *, create: bool) -> Iterator[None]:
    """The store's own lock. Without ``create``, only an existing lock file is used."""
    lock_path = lock_path_for(path)
    if not create and not lock_path.exists():
        yield
        return
    try:
        lock = FileLock(lock_path).__enter__()
    except OSError:
        if create:
            raise
        yield  # a read-only check of a lock we may not open (another account's store)
        return
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def _read(path: Path) -> tuple[bytes, os.stat_result]:
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            return handle.read(), st
    except FileNotFoundError:
        raise RemoteMemoryValidationError(f"no store file at {str(path)!r}") from None
    except IsADirectoryError:
        raise RemoteMemoryValidationError(f"{str(path)!r} is a directory, not a store") from None


def check_store_file(path: str | os.PathLike[str]) -> FsckReport:
    """Report on a store file without changing it (and without needing the user id)."""
    store_path = require_file_path(path)
    with _store_lock(store_path, create=False):
        data, st = _read(store_path)
    return _report(store_path, data, _scan(data), st.st_uid)


# -- repairing --------------------------------------------------------------------------------


def repair_store_file(path: str | os.PathLike[str]) -> RepairReport:
    """Quarantine the torn tail and every bad line, keeping every byte; see the module doc.

    Raises RemoteMemoryScopeError (and changes nothing) when the file mixes user scopes
    or belongs to another OS user, RemoteMemoryValidationError when there is no file.
    """
    store_path = require_file_path(path)
    quarantine = quarantine_path_for(store_path)
    with _store_lock(store_path, create=True):
        data, st = _read(store_path)
        scan = _scan(data)
        before = _report(store_path, data, scan, st.st_uid)
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise RemoteMemoryScopeError(
                f"{store_path.name} belongs to OS uid {st.st_uid}; repair refuses to change "
                "another user's store (nothing was changed)"
            )
        if len(scan.scope_counts) > 1:
            scopes = ", ".join(f"{s!r} ({n} records)" for s, n in scan.scope_counts.items())
            raise RemoteMemoryScopeError(
                f"{store_path.name} mixes user scopes {scopes}; repair refuses to choose an "
                "owner (nothing was changed): split the file by user_scope by hand"
            )
        moment = format_timestamp(utc_now())
        removed = _remove_unacknowledged(store_path, moment)
        unacknowledged = removed or []
        if removed is not None:  # the marker is gone: read again what is left
            data, st = _read(store_path)
            scan = _scan(data)
            before = _report(store_path, data, scan, st.st_uid)
        bad = [e for e in scan.lines if e.problem is not None]
        if not bad and not scan.tail:  # nothing damaged, nothing uncommitted
            return RepairReport(
                path=str(store_path),
                quarantine_path=str(quarantine),
                method="none" if removed is None else "truncate",
                quarantined=tuple(unacknowledged),
                records_kept=before.records,
                bytes_kept=len(data),
                bytes_quarantined=sum(c.length for c in unacknowledged),
                torn_tail_bytes=0,
                after=before,
                failed_closed_cleared=removed is not None,
            )
        chunks: list[QuarantinedChunk] = []
        entries: list[dict[str, Any]] = []

        def keep(lineno: int, offset: int, chunk: bytes, reason: str) -> None:
            chunks.append(QuarantinedChunk(lineno, offset, len(chunk), reason))
            entries.append(
                quarantine_entry(
                    store_path,
                    line=lineno,
                    offset=offset,
                    chunk=chunk,
                    reason=reason,
                    moment=moment,
                )
            )

        for entry in bad:
            keep(entry.lineno, entry.offset, entry.raw + b"\n", entry.problem or "bad line")
        if scan.tail:
            keep(
                len(scan.lines) + 1,
                scan.tail_offset,
                scan.tail,
                f"uncommitted write: {len(scan.tail)} bytes with no newline (an interrupted write)",
            )
        good = b"".join(e.raw + b"\n" for e in scan.lines if e.problem is None)
        quarantined_bytes = sum(c.length for c in chunks)
        if len(good) + quarantined_bytes != len(data):  # never lose a byte
            raise RemoteMemoryCorruptionError(
                f"repair of {store_path.name} would not account for every byte; nothing changed"
            )
        write_quarantine(store_path, entries)
        if bad:
            atomic_replace(store_path.resolve(), good)  # a symlinked store stays a symlink
            method = "rewrite"
        else:
            truncate(store_path, scan.tail_offset)
            method = "truncate"
        after_data, after_st = _read(store_path)
        after = _report(store_path, after_data, _scan(after_data), after_st.st_uid)
    if not after.healthy:
        raise RemoteMemoryCorruptionError(
            f"{store_path.name} still has problems after repair: {after.problems[:3]}"
        )
    return RepairReport(
        path=str(store_path),
        quarantine_path=str(quarantine),
        method=method,
        quarantined=(*unacknowledged, *chunks),
        records_kept=after.records,
        bytes_kept=len(after_data),
        bytes_quarantined=quarantined_bytes + sum(c.length for c in unacknowledged),
        torn_tail_bytes=len(scan.tail),
        after=after,
        failed_closed_cleared=removed is not None,
    )


def _remove_unacknowledged(store_path: Path, moment: str) -> list[QuarantinedChunk] | None:
    """Undo the appends the fail-closed marker names, then remove the marker (None: there
    is no marker; [] when the bytes were already gone).

    Under the store's lock. Each entry names a file (the store, or its quarantine file when
    a recovery's quarantine write could not be cut back), the offset it had before the
    failed append and the sha256 of the bytes written. Every entry is checked before
    anything changes; bytes in the store are kept in the quarantine file before the cut.
    """
    try:
        entries = read_markers(store_path)
    except RemoteMemoryCorruptionError as exc:
        raise RemoteMemoryCorruptionError(
            f"{exc}: repair cannot tell which bytes were never acknowledged, so it changes "
            f"nothing; look at the end of {store_path.name} and delete the marker by hand"
        ) from None
    if entries is None:
        return None
    quarantine = quarantine_path_for(store_path)
    cuts: list[tuple[Path, int, bytes, dict[str, Any]]] = []
    for entry in reversed(entries):  # the latest failure first
        target = store_path.with_name(entry["file"])
        if target not in (store_path, quarantine):
            raise RemoteMemoryCorruptionError(
                f"the fail-closed marker names {entry['file']!r}, neither {store_path.name} "
                "nor its quarantine file; repair changes nothing"
            )
        try:
            region = target.read_bytes()[entry["byte_offset"] :]
        except FileNotFoundError:
            region = b""
        if region and (
            len(region) != entry["length"]
            or hashlib.sha256(region).hexdigest() != entry.get("sha256")
        ):
            raise RemoteMemoryCorruptionError(
                f"{target.name}: the {len(region)} bytes from byte {entry['byte_offset']} are "
                f"not the {entry['length']} bytes the fail-closed marker names; repair changes "
                "nothing: compare them by hand"
            )
        cuts.append((target, entry["byte_offset"], region, entry))
    chunks: list[QuarantinedChunk] = []
    for target, offset, region, entry in cuts:
        if not target.exists():
            continue
        if region and target == store_path:  # keep the bytes, as every repair does
            line = target.read_bytes()[:offset].count(b"\n") + 1
            reason = f"never acknowledged: {entry.get('reason', 'a failed write')}"
            write_quarantine(
                store_path,
                [
                    quarantine_entry(
                        store_path,
                        line=line,
                        offset=offset,
                        chunk=region,
                        reason=reason,
                        moment=moment,
                    )
                ],
            )
            chunks.append(QuarantinedChunk(line, offset, len(region), reason))
        # a quarantine file's bytes are a copy of a tail still in the store: just cut them
        truncate(target, min(offset, target.stat().st_size))  # and fsync a cut made before
    clear_markers(store_path)
    return chunks


# -- command line -----------------------------------------------------------------------------


def format_report(report: FsckReport) -> str:
    kinds = ", ".join(f"{kind} {n}" for kind, n in report.records_by_kind.items()) or "none"
    scopes = ", ".join(report.user_scopes) or "none"
    out = [
        f"store file: {report.path} ({report.size_bytes} bytes)",
        f"lines: {report.lines} complete; records: {report.records} ({kinds})",
        f"user scopes: {scopes}",
        f"uncommitted tail: {report.torn_tail_bytes} bytes"
        + (
            " (a write a crash interrupted: readers ignore it; the next append moves it to "
            "the quarantine file)"
            if report.torn_tail_bytes
            else ""
        ),
    ]
    if report.healthy:
        out.append("status: healthy")
        return "\n".join(out)
    out.append(f"problems: {len(report.problems)}")
    for line, message in report.problems[:_SHOWN_PROBLEMS]:
        out.append(f"  {'file' if line == 0 else f'line {line}'}: {message}")
    if len(report.problems) > _SHOWN_PROBLEMS:
        out.append(f"  ... and {len(report.problems) - _SHOWN_PROBLEMS} more")
    if report.failed_closed:
        out.append(
            "status: FAILED CLOSED (a write failed and could not be cut back; writers refuse). "
            "`python -m memorylib repair PATH` moves the bytes never acknowledged to "
            "PATH.quarantine.jsonl and removes the marker PATH.needs-repair"
        )
        return "\n".join(out)
    out.append(
        "status: PROBLEMS (damage in the middle: the store refuses to read or write). "
        "`python -m memorylib repair PATH` moves bad lines to PATH.quarantine.jsonl "
        "(every byte is kept)"
    )
    return "\n".join(out)


def main_fsck(path: str, out: TextIO | None = None) -> int:
    """Print a report; exit status 0 healthy, 1 problems, 2 could not check."""
    stream = out or sys.stdout
    try:
        report = check_store_file(path)
    except RemoteMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(report), file=stream)
    return 0 if report.healthy else 1


def main_repair(path: str, out: TextIO | None = None) -> int:
    """Repair and print what moved where; 0 when the store is healthy afterwards."""
    stream = out or sys.stdout
    try:
        result = repair_store_file(path)
    except RemoteMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not result.changed:
        print(f"{result.path}: healthy, nothing to repair", file=stream)
    else:
        print(
            f"{result.path}: {len(result.quarantined)} chunk(s), {result.bytes_quarantined} "
            f"bytes moved to {result.quarantine_path} ({result.method})",
            file=stream,
        )
        for chunk in result.quarantined:
            print(
                f"  line {chunk.line} (byte {chunk.byte_offset}, {chunk.length} bytes): "
                f"{chunk.reason}",
                file=stream,
            )
        print(f"kept {result.records_kept} records ({result.bytes_kept} bytes)", file=stream)
        if result.failed_closed_cleared:
            print("the store no longer fails closed: its marker was removed", file=stream)
    if result.after is not None:
        print(format_report(result.after), file=stream)
    return 0 if result.after is None or result.after.healthy else 1
