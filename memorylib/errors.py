"""The error hierarchy of the recall contract.

Every rejection in `memorylib` raises one of these, with a message that names the
field or the line at fault. Catch `RemoteMemoryError` to catch them all. Like the
chapter's reference code, the base is a `RuntimeError` (the store or the service
refused); a validation error is also a `ValueError` (the caller's value was bad).

    RuntimeError
    └── RemoteMemoryError
        ├── RemoteMemoryValidationError      bad input (a field, a query, a limit); a ValueError
        │   └── RemoteMemoryDuplicateError   a memory_id that is already stored
        ├── RemoteMemoryScopeError           a record or store of another user
        ├── RemoteMemoryCorruptionError      a line on disk that does not parse
        ├── RemoteMemoryUnavailableError     a database backend cannot be reached in time
        └── runtime.ConfigurationError       the live agent lacks MODEL_ID or a key

    UncommittedWriteWarning (a warning, not an error): the store file ends in a line
    without its newline, a write a crash interrupted. Readers do not see it; the next
    writer moves its bytes to the quarantine file.
"""

from __future__ import annotations

__all__ = [
    "RemoteMemoryCorruptionError",
    "RemoteMemoryDuplicateError",
    "RemoteMemoryError",
    "RemoteMemoryScopeError",
    "RemoteMemoryUnavailableError",
    "RemoteMemoryValidationError",
    "UncommittedWriteWarning",
]


class RemoteMemoryError(RuntimeError):
    """Base class of every error raised by memorylib."""


class RemoteMemoryValidationError(RemoteMemoryError, ValueError):
    """An input was rejected before anything was read or written."""


class RemoteMemoryDuplicateError(RemoteMemoryValidationError):
    """The memory_id is already in the store; nothing was written."""


class RemoteMemoryScopeError(RemoteMemoryError):
    """A record, query or store belongs to another user scope."""


class RemoteMemoryCorruptionError(RemoteMemoryError):
    """Stored data does not parse; the message names the line."""


class RemoteMemoryUnavailableError(RemoteMemoryError):
    """A database backend did not answer in time (server down, wrong address or
    credentials, a statement past its timeout). Nothing is known to be written unless
    the call returned; retrying an append with the same memory_id is safe."""


class UncommittedWriteWarning(UserWarning):
    """The store ends in an unterminated line: an interrupted write, invisible to readers."""
