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
        ├── RemoteMemoryWriteError           a write failed (disk full, I/O error); nothing was
        │                                    stored, the file is as it was: retrying is safe
        ├── RemoteMemoryFailedClosedError    a failed write could not even be cut back: the
        │                                    store refuses writes until `memorylib repair`
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
    "RemoteMemoryFailedClosedError",
    "RemoteMemoryScopeError",
    "RemoteMemoryUnavailableError",
    "RemoteMemoryValidationError",
    "RemoteMemoryWriteError",
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


class RemoteMemoryWriteError(RemoteMemoryError):
    """Writing to disk failed (a full disk, an I/O error, a failed fsync). Before raising,
    the JSONL writer cut the file back to where it was (SQLite rolled its transaction
    back): nothing was stored, no read after the call sees the record, and retrying the
    same call (same memory_id) is safe."""


class RemoteMemoryFailedClosedError(RemoteMemoryError):
    """A write failed AND cutting the file back failed too, so bytes that were never
    acknowledged may still be in the file. The store refuses every write (this process and,
    through a marker file beside the store, every other) until ``python -m memorylib repair
    PATH`` has removed them. ``recorded`` is False when even the marker could not be
    written: then only this store object knows, and the message says so."""

    def __init__(self, message: str, *, recorded: bool = True) -> None:
        super().__init__(message)
        self.recorded = recorded


class UncommittedWriteWarning(UserWarning):
    """The store ends in an unterminated line: an interrupted write, invisible to readers."""
