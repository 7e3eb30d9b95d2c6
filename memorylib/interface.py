"""The store interface: what every backend promises, and the record it writes.

The engine, the tool, the runtime and the notebooks see a store only as a
``MemoryStore``: today's JSONL file (``store.RemoteMemoryStore``, the chapter's),
and database backends with the same records, errors and retraction semantics.
A backend decides how "is this memory_id taken?" and "write it" happen atomically
(a lock file and one ``O_APPEND`` write; a unique index; a transaction); what a
record looks like, what is rejected before anything is written, and the steps of
every write are decided here, once, for all of them:

* ``new_memory`` validates and folds the fields ``append`` receives;
* ``new_retraction`` builds the RETRACTION record ``retract`` writes, and
  ``check_retraction_target`` says when a retraction must be refused;
* ``check_new_ids`` refuses an id that is stored or repeats in a batch;
* ``MemoryStore.append``, ``append_many`` and ``retract`` are written once: a backend
  supplies its atomic section (``_write_transaction``) and three steps inside it
  (``_stored``, ``_retraction_of``, ``_insert``);
* ``decode_record`` reads a record back from its JSON bytes (a store line).
"""

from __future__ import annotations

import functools
import hashlib
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Container, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from .checks import require, require_memory_id, require_text
from .errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryValidationError,
)
from .records import MemoryKind, MemorySource, StoredMemory
from .timestamps import canonical_timestamp, format_timestamp, parse_timestamp, utc_now

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_SOURCE_ID_CHARS",
    "MAX_SOURCE_TYPE_CHARS",
    "MAX_SUMMARY_CHARS",
    "MAX_TITLE_CHARS",
    "MemoryStore",
    "active_records_of",
    "check_new_ids",
    "check_retraction_target",
    "decode_record",
    "latest_profile_of",
    "new_memory",
    "new_retraction",
    "normalize_source",
    "retractions_by_target",
    "user_scope_for",
]

MAX_CONTENT_CHARS = 20_000
MAX_SUMMARY_CHARS = 2_000
MAX_SOURCE_ID_CHARS = 256
MAX_SOURCE_TYPE_CHARS = 64
MAX_TITLE_CHARS = 500


def user_scope_for(user_id: object) -> str:
    """First 16 hex chars of sha256(user_id.strip().casefold()); the raw id never hits disk."""
    key = require(user_id, str, "user_id").strip().casefold()
    if not key:
        raise RemoteMemoryValidationError("user_id must not be empty")
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def normalize_source(source: object) -> MemorySource:
    """Validate a MemorySource and return it whitespace-folded with captured_at in UTC ``Z``."""
    source = require(source, MemorySource, "source")
    return MemorySource(
        source_id=require_text(source.source_id, "source.source_id", max_chars=MAX_SOURCE_ID_CHARS),
        source_type=require_text(
            source.source_type, "source.source_type", max_chars=MAX_SOURCE_TYPE_CHARS
        ),
        title=require_text(source.title, "source.title", max_chars=MAX_TITLE_CHARS),
        captured_at=canonical_timestamp(source.captured_at, "source.captured_at"),
    )


def _stored_at(stored_at: datetime | str | None) -> str:
    if stored_at is None:
        return format_timestamp(utc_now())
    return canonical_timestamp(stored_at, "stored_at")


def new_memory(
    *,
    user_scope: str,
    kind: MemoryKind | str,
    content: object,
    summary: object,
    source: object,
    memory_id: object = None,
    stored_at: datetime | str | None = None,
) -> StoredMemory:
    """The PROFILE or CONVERSATION record ``append`` writes, or a named validation error."""
    if isinstance(kind, bool) or not isinstance(kind, str):
        raise RemoteMemoryValidationError(f"kind must be a MemoryKind, got {type(kind).__name__}")
    if kind not in (MemoryKind.PROFILE, MemoryKind.CONVERSATION):
        if kind == MemoryKind.RETRACTION:
            raise RemoteMemoryValidationError(
                "kind 'retraction' cannot be appended directly: use retract(memory_id, reason=..., "
                "source=...) on the store"
            )
        raise RemoteMemoryValidationError(f"kind {kind!r} is not one of 'profile', 'conversation'")
    kind = MemoryKind(kind)
    content = require_text(content, "content", max_chars=MAX_CONTENT_CHARS)
    summary = require_text(summary, "summary", max_chars=MAX_SUMMARY_CHARS)
    return StoredMemory(
        memory_id=require_memory_id(
            f"{kind.value}-{uuid.uuid4().hex[:16]}" if memory_id is None else memory_id
        ),
        user_scope=user_scope,
        kind=kind,
        content=content,
        summary=summary,
        source=normalize_source(source),
        stored_at=_stored_at(stored_at),
    )


def new_retraction(
    *,
    user_scope: str,
    memory_id: object,
    reason: object,
    source: object,
    retraction_id: object = None,
    stored_at: datetime | str | None = None,
) -> StoredMemory:
    """The RETRACTION record ``retract`` writes: it names the memory_id it hides."""
    target_id = require_memory_id(memory_id)
    if retraction_id is None:
        retraction_id = f"retraction-{uuid.uuid4().hex[:16]}"
    retraction_id = require_memory_id(retraction_id, "retraction_id")
    reason = require_text(reason, "reason", max_chars=MAX_SUMMARY_CHARS)
    return StoredMemory(
        memory_id=retraction_id,
        user_scope=user_scope,
        kind=MemoryKind.RETRACTION,
        content=reason,
        summary=reason,
        source=normalize_source(source),
        stored_at=_stored_at(stored_at),
        retracts=target_id,
    )


def check_new_ids(records: Sequence[StoredMemory], stored: Container[str]) -> None:
    """Raise RemoteMemoryDuplicateError if a record's id is stored or repeats in ``records``."""
    batch: set[str] = set()
    for record in records:
        if record.memory_id in stored or record.memory_id in batch:
            field = "retraction_id" if record.kind is MemoryKind.RETRACTION else "memory_id"
            raise RemoteMemoryDuplicateError(
                f"{field} {record.memory_id!r} is already stored; nothing was written"
            )
        batch.add(record.memory_id)


def check_retraction_target(target_id: str, target: StoredMemory | None) -> None:
    """Refuse to retract an unknown id or a retraction."""
    if target is None:
        raise RemoteMemoryValidationError(
            f"memory_id {target_id!r} is not in the store: an unknown memory_id cannot be retracted"
        )
    if target.kind is MemoryKind.RETRACTION:
        raise RemoteMemoryValidationError(
            f"memory_id {target_id!r} is a retraction record; a retraction cannot be retracted"
        )


def retractions_by_target(records: Iterable[StoredMemory]) -> dict[str, StoredMemory]:
    """target memory_id -> the FIRST retraction that names it."""
    found: dict[str, StoredMemory] = {}
    for record in records:
        if record.kind is MemoryKind.RETRACTION and record.retracts is not None:
            found.setdefault(record.retracts, record)
    return found


def active_records_of(records: Sequence[StoredMemory]) -> list[StoredMemory]:
    """``records`` without the RETRACTION records and the records they retract, in order."""
    hidden = retractions_by_target(records)
    return [r for r in records if r.kind is not MemoryKind.RETRACTION and r.memory_id not in hidden]


def latest_profile_of(records: Sequence[StoredMemory]) -> StoredMemory | None:
    """Newest non-retracted PROFILE by (captured_at, memory_id), or None."""
    profiles = [r for r in active_records_of(records) if r.kind is MemoryKind.PROFILE]
    if not profiles:
        return None
    return max(
        profiles,
        key=lambda r: (parse_timestamp(r.source.captured_at, "captured_at"), r.memory_id),
    )


class MemoryStore(ABC):
    """One user's durable memories. Every backend keeps these promises:

    * ``append`` validates (``new_memory``) and then, atomically, rejects a memory_id
      that is already stored (``RemoteMemoryDuplicateError``) or writes the record
      durably; two writers racing on one id: exactly one wins.
    * ``append_many`` does the same for a batch, all or nothing.
    * ``retract`` appends a RETRACTION that hides its target from recall and profile
      selection; retracting twice returns the first retraction and writes nothing.
    * ``read_all`` returns every committed record in the order they were stored (the
      audit trail, retractions included), as a new list each call; a record of another
      user_scope raises ``RemoteMemoryScopeError`` and damaged data
      ``RemoteMemoryCorruptionError``. Reading never writes.
    * ``active_records`` is what recall and profile selection see: ``read_all`` without
      the RETRACTION records and the records they retract.

    A backend implements ``read_all`` and the write steps below (``_write_transaction``
    and the three it runs); a write raises the backend's own errors too (a damaged
    file, a server that does not answer, a failed write).
    """

    user_scope: str

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
        """Validate and durably store one PROFILE or CONVERSATION record.

        Raises RemoteMemoryValidationError (a field, named), RemoteMemoryDuplicateError
        (the memory_id is stored) or the store's own errors (damaged data, a server that
        does not answer, a failed write). A rejected append writes nothing.
        """
        record = new_memory(
            user_scope=self.user_scope,
            kind=kind,
            content=content,
            summary=summary,
            source=source,
            memory_id=memory_id,
            stored_at=stored_at,
        )
        self._insert_all((record,))
        return record

    def append_many(self, entries: Iterable[Mapping[str, Any]]) -> tuple[StoredMemory, ...]:
        """Append every entry (``append``'s keyword arguments) in one atomic write, or none."""
        records = self.new_records(entries)
        check_new_ids(records, ())  # an id twice in the batch: refused before any write
        if records:
            self._insert_all(records)
        return records

    def retract(
        self,
        memory_id: str,
        *,
        reason: str,
        source: MemorySource,
        retraction_id: str | None = None,
        stored_at: datetime | str | None = None,
    ) -> StoredMemory:
        """Store a RETRACTION that hides ``memory_id`` from recall and profile selection.

        The target stays stored (the audit trail); retracting it again returns the first
        retraction and writes nothing. Unknown targets and retractions of retractions
        raise RemoteMemoryValidationError.
        """
        record = new_retraction(
            user_scope=self.user_scope,
            memory_id=memory_id,
            reason=reason,
            source=source,
            retraction_id=retraction_id,
            stored_at=stored_at,
        )
        target_id = record.retracts or ""
        with self._write_transaction() as tx:
            check_retraction_target(target_id, self._stored(tx, target_id))
            earlier = self._retraction_of(tx, target_id)
            if earlier is None:
                if self._insert(tx, (record,)):
                    return record
                earlier = self._retraction_of(tx, target_id)  # a racing retraction won
            if earlier is None:
                raise RemoteMemoryError(f"retraction {record.memory_id!r} was refused")
            return earlier

    @abstractmethod
    def read_all(self) -> list[StoredMemory]: ...

    # -- the write steps a backend supplies ---------------------------------------------

    @abstractmethod
    def _write_transaction(self) -> AbstractContextManager[Any]:
        """The atomic section of one write (a lock, a transaction); it yields the handle
        the steps below take, and leaves nothing written if the block raises."""

    @abstractmethod
    def _stored(self, tx: Any, memory_id: str) -> StoredMemory | None:
        """The stored record with ``memory_id`` (any kind), or None."""

    @abstractmethod
    def _retraction_of(self, tx: Any, target_id: str) -> StoredMemory | None:
        """The first RETRACTION stored for ``target_id``, or None."""

    @abstractmethod
    def _insert(self, tx: Any, records: Sequence[StoredMemory]) -> bool:
        """Store all ``records`` or none: RemoteMemoryDuplicateError (``check_new_ids``)
        when an id is stored; False when the store refused them otherwise (a retraction
        whose target another retraction claimed first, a race only a database has)."""

    def _insert_all(self, records: Sequence[StoredMemory]) -> None:
        with self._write_transaction() as tx:
            if not self._insert(tx, records):
                raise RemoteMemoryError(f"insert of {records[0].memory_id!r} was refused")

    def active_records(self) -> list[StoredMemory]:
        """Every record not retracted and not a retraction (profiles too), in storage order."""
        return active_records_of(self.read_all())

    def latest_profile(self) -> StoredMemory | None:
        """Newest non-retracted PROFILE by (captured_at, memory_id), or None."""
        return latest_profile_of(self.read_all())

    def new_records(self, entries: Iterable[Mapping[str, Any]]) -> tuple[StoredMemory, ...]:
        """The records ``append_many`` would write for ``entries`` (validated, not written)."""
        if isinstance(entries, Mapping | str | bytes) or not isinstance(entries, Iterable):
            raise RemoteMemoryValidationError(
                f"entries must be an iterable of dicts of append()'s arguments, "
                f"got {type(entries).__name__}"
            )
        records = []
        for position, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                raise RemoteMemoryValidationError(
                    f"entries[{position}] must be a dict, got {type(entry).__name__}"
                )
            unknown = set(entry) - {
                "kind",
                "content",
                "summary",
                "source",
                "memory_id",
                "stored_at",
            }
            if unknown:
                names = ", ".join(sorted(map(str, unknown)))
                raise RemoteMemoryValidationError(
                    f"entries[{position}] has unknown field(s) {names}"
                )
            try:
                records.append(new_memory(user_scope=self.user_scope, **entry))
            except TypeError as exc:  # a missing required argument
                raise RemoteMemoryValidationError(f"entries[{position}]: {exc}") from None
            except RemoteMemoryValidationError as exc:
                raise type(exc)(f"entries[{position}]: {exc}") from None
        return tuple(records)


@functools.lru_cache(maxsize=1 << 15)
def decode_record(raw: bytes) -> StoredMemory:
    """The record a JSON line holds, or RemoteMemoryCorruptionError. A pure function of
    the bytes, so it is cached: the taught path re-reads an unchanged file per query and
    decodes each line once (errors are raised each time, never cached)."""
    try:
        payload = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise RemoteMemoryCorruptionError(f"not valid JSON ({exc})") from None
    return StoredMemory.from_dict(payload)
