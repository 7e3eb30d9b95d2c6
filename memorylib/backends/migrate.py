"""Copy one user's store between any two backends, verified and restartable.

``migrate(source, target)`` (``python -m memorylib migrate SRC DST --user USER_ID``):

1. reads every record of the source (one snapshot) and of the target;
2. refuses, writing nothing, a target that is not a prefix of the source: it holds
   other data, or the same ids with other content (``RemoteMemoryValidationError``);
3. appends what the target lacks, in order: conversations and profiles in batches
   through ``append_many`` (all or nothing each), retractions through ``retract``,
   every field as it was (ids, times, text), so the records are equal;
4. verifies: the same number of records and the same content hash, sha256 over the
   canonical records in order (``rows.content_hash``: for a JSONL store written by
   memorylib, the sha256 of its file).

Killed at any moment, the target holds a prefix of the source (a batch is all or
nothing, a JSONL batch one write whose torn tail is never read), so running the same
command again finishes the copy without duplicating anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from memorylib.errors import (
    RemoteMemoryCorruptionError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
)
from memorylib.interface import MemoryStore
from memorylib.records import MemoryKind, StoredMemory

from .rows import content_hash
from .urls import store_url

__all__ = ["MigrationReport", "migrate"]


@dataclass(frozen=True)
class MigrationReport:
    source: str
    target: str
    user_scope: str
    source_records: int
    already_there: int  # records the target held before this run (a restart resumes)
    copied: int
    target_records: int
    content_hash: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def migrate(
    source: MemoryStore,
    target: MemoryStore,
    *,
    batch_size: int = 500,
    progress: Callable[[int, int], None] | None = None,
) -> MigrationReport:
    """Copy what ``target`` lacks of ``source`` (same user), then verify; see the module."""
    if source.user_scope != target.user_scope:
        raise RemoteMemoryScopeError(
            f"source user_scope {source.user_scope!r} and target {target.user_scope!r} differ; "
            "migrate copies one user's store to the same user"
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise RemoteMemoryValidationError(f"batch_size must be a positive int, got {batch_size!r}")
    records = source.read_all()
    present = target.read_all()
    _check_prefix(records, present)
    todo = records[len(present) :]
    done = 0
    while done < len(todo):
        record = todo[done]
        if record.kind is MemoryKind.RETRACTION:
            target.retract(
                record.retracts or "",
                reason=record.content,
                source=record.source,
                retraction_id=record.memory_id,
                stored_at=record.stored_at,
            )
            done += 1
        else:
            batch = []
            while done < len(todo) and len(batch) < batch_size:
                if todo[done].kind is MemoryKind.RETRACTION:
                    break
                batch.append(_entry(todo[done]))
                done += 1
            target.append_many(batch)
        if progress is not None:
            progress(len(present) + done, len(records))
    copied = target.read_all()
    expected_hash = content_hash(records)
    if len(copied) != len(records) or content_hash(copied) != expected_hash:
        raise RemoteMemoryCorruptionError(
            f"verification failed: the target holds {len(copied)} records (hash "
            f"{content_hash(copied)[:12]}), the source {len(records)} (hash "
            f"{expected_hash[:12]}); a record did not survive the copy unchanged"
        )
    return MigrationReport(
        source=store_url(source),
        target=store_url(target),
        user_scope=source.user_scope,
        source_records=len(records),
        already_there=len(present),
        copied=len(todo),
        target_records=len(copied),
        content_hash=expected_hash,
    )


def _entry(record: StoredMemory) -> dict[str, object]:
    return {
        "kind": record.kind,
        "content": record.content,
        "summary": record.summary,
        "source": record.source,
        "memory_id": record.memory_id,
        "stored_at": record.stored_at,
    }


def _check_prefix(records: Sequence[StoredMemory], present: Sequence[StoredMemory]) -> None:
    """The target may hold only what an earlier, interrupted run of this copy wrote."""
    for position, held in enumerate(present):
        if position >= len(records):
            raise RemoteMemoryValidationError(
                f"the target already holds {len(present)} records, more than the source's "
                f"{len(records)}; refusing to migrate into a store with other data"
            )
        if held != records[position]:
            raise RemoteMemoryValidationError(
                f"the target already holds different data: its record {position + 1} is "
                f"{held.memory_id!r}, the source's is {records[position].memory_id!r}"
                f"{' with other content' if held.memory_id == records[position].memory_id else ''}"
                "; refusing to migrate (nothing was written)"
            )
