"""Reference solution for notebook 07's "Your turn" (failures and recovery; for instructors).

A  engine.recall("layered memory", limit="5") -> RemoteMemoryValidationError: the limit
   must be an int (not a bool, a float or a str) between 1 and 10; "5" is a str, and the
   type is checked before the range, while the query is normalized.
B  engine.recall("?! layered !?") -> no error: only a query with NO searchable term is
   refused; "layered" survives normalization, and the hit is conversation-003.
C  RemoteMemoryStore(store.path, user_id="  Local-User ").read_all() -> no error: the user
   scope hashes user_id.strip().casefold(), so "  Local-User " is the default user
   "local-user" and every line is its own.
D  store.append(memory_id="conversation-006", ...) when a crash cut short the append of an
   eighth record (the seven complete lines, conversation-006's among them, then half a
   line with no newline) -> RemoteMemoryDuplicateError: under the lock the writer first
   moves the torn tail to the quarantine file and cuts it off, then checks the id, which
   is already stored. (The recovery happened; the record was not written.)
E  store.read_all() when, after the seven lines, an eighth (the last) line ends in its
   newline but is not JSON ->
   RemoteMemoryCorruptionError naming line 8: a record commits at its newline, wherever
   it is in the file, so this line was committed and is now damaged; only a line without
   its newline is an uncommitted (torn) tail.
F  the first append to a new file whose directory fsync fails (only that call) ->
   RemoteMemoryWriteError: the append of a new file is acknowledged only when the file's fsync
   and the directory's fsync have returned, so the failed directory fsync is a failed step of
   the write; a failed step is cut back (a file the call created is
   removed again) and reported as "nothing was stored, retrying is safe"; only a cut back that fails too makes
   the store fail closed (RemoteMemoryFailedClosedError).
"""

from memorylib import (
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryValidationError,
    RemoteMemoryWriteError,
)

my_prediction = {
    "A": RemoteMemoryValidationError,
    "B": None,
    "C": None,
    "D": RemoteMemoryDuplicateError,
    "E": RemoteMemoryCorruptionError,
    "F": RemoteMemoryWriteError,
}
