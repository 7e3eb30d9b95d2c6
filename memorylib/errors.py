"""The error hierarchy of the recall contract.

Every rejection in `memorylib` raises one of these, with a message that names the
field or the line at fault. Catch `RemoteMemoryError` to catch them all.

    RemoteMemoryError
    ├── RemoteMemoryValidationError      bad input (a field, a query, a limit)
    │   └── RemoteMemoryDuplicateError   a memory_id that is already stored
    ├── RemoteMemoryScopeError           a record or store of another user
    └── RemoteMemoryCorruptionError      a line on disk that does not parse
"""

from __future__ import annotations

__all__ = [
    "RemoteMemoryCorruptionError",
    "RemoteMemoryDuplicateError",
    "RemoteMemoryError",
    "RemoteMemoryScopeError",
    "RemoteMemoryValidationError",
]


class RemoteMemoryError(Exception):
    """Base class of every error raised by memorylib."""


class RemoteMemoryValidationError(RemoteMemoryError, ValueError):
    """An input was rejected before anything was read or written."""


class RemoteMemoryDuplicateError(RemoteMemoryValidationError):
    """The memory_id is already in the store; nothing was written."""


class RemoteMemoryScopeError(RemoteMemoryError):
    """A record, query or store belongs to another user scope."""


class RemoteMemoryCorruptionError(RemoteMemoryError):
    """Stored data does not parse; the message names the line."""
