"""A record as a database row, and the terms a conversation record is found by.

Every backend keeps the record itself as its canonical JSON text (exactly the
JSONL line without its newline), so a record read back equals the one written, field
for field, on every backend; the other columns (memory_id, kind, capture time, the
retracted id, the terms) only serve the database's indexes and are derived from it.

Reading a row checks it like the JSONL store checks a line: JSON that does not parse
or a record that does not decode raises ``RemoteMemoryCorruptionError`` naming the
row; a record of another user_scope, or whose id differs from its indexed column,
raises (``RemoteMemoryScopeError`` / ``RemoteMemoryCorruptionError``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from memorylib.errors import RemoteMemoryCorruptionError, RemoteMemoryScopeError
from memorylib.fast.tokenizer import terms
from memorylib.records import MemoryKind, StoredMemory
from memorylib.timestamps import epoch_micros, parse_timestamp

__all__ = [
    "captured_micros",
    "content_hash",
    "record_from_row",
    "record_json",
    "record_terms",
]


def record_json(record: StoredMemory) -> str:
    """The canonical JSON of a record: ``store.encode_line`` without the newline."""
    return json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))


def record_from_row(text: object, *, row: int, user_scope: str, memory_id: str) -> StoredMemory:
    """One stored row's JSON -> StoredMemory, checked; errors name the row (its seq)."""
    if isinstance(text, bytes | bytearray | memoryview):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RemoteMemoryCorruptionError(f"row {row}: not valid JSON ({exc})") from None
    if not isinstance(text, str):
        raise RemoteMemoryCorruptionError(f"row {row}: record is {type(text).__name__}, not text")
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise RemoteMemoryCorruptionError(f"row {row}: not valid JSON ({exc})") from None
    try:
        record = StoredMemory.from_dict(payload)
    except RemoteMemoryCorruptionError as exc:
        raise RemoteMemoryCorruptionError(f"row {row}: {exc}") from None
    if record.user_scope != user_scope:
        raise RemoteMemoryScopeError(
            f"row {row}: record {record.memory_id!r} belongs to another user scope "
            f"(user_scope {record.user_scope!r}, not {user_scope!r})"
        )
    if record.memory_id != memory_id:
        raise RemoteMemoryCorruptionError(
            f"row {row}: record {record.memory_id!r} is filed under memory_id {memory_id!r}"
        )
    return record


def record_terms(record: StoredMemory) -> tuple[str, ...]:
    """The terms recall finds a CONVERSATION record by (none for other kinds):
    ``searchable_terms(record)``, computed by the fast tokenizer (proven equal)."""
    if record.kind is not MemoryKind.CONVERSATION:
        return ()
    return terms(record.summary + " " + record.content)


def captured_micros(record: StoredMemory) -> int:
    """The source's capture time as integer microseconds since the epoch (exact)."""
    return epoch_micros(parse_timestamp(record.source.captured_at, "captured_at"))


def content_hash(records: Iterable[StoredMemory]) -> str:
    """sha256 over the canonical records in order, one JSON text + newline each: the
    hash of the JSONL file that would hold them, whatever backend they came from."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(record_json(record).encode("utf-8") + b"\n")
    return digest.hexdigest()
