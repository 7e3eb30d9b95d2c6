"""Reference solution for notebook 11's "Your turn" (for instructors).

A  alice appends 'm-1' again -> RemoteMemoryDuplicateError: the unique index on
   (user_scope, memory_id) refuses the second insert; nothing is written.
B  bob appends 'm-1' into the same file -> no error: bob's user_scope makes it another
   key, and his record is stored beside alice's (neither can read the other's).
C  alice retracts 'm-1' a second time -> no error: retraction is idempotent on every
   backend; the call returns the first retraction and writes nothing.
D  migrate into a target holding other data -> RemoteMemoryValidationError: migrate
   only resumes a target that holds a prefix of the source, and refuses anything else
   before writing.
E  True: SQLite's indexed recall returns the same RecallResult as the JSONL store.
"""

from memorylib import RemoteMemoryDuplicateError, RemoteMemoryValidationError

my_prediction = {
    "A": RemoteMemoryDuplicateError,
    "B": None,
    "C": None,
    "D": RemoteMemoryValidationError,
    "E": True,
}
