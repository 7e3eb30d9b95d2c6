"""Reference solution for notebook 11's "Your turn" (for instructors).

alice's SQLite file and her JSONL file both hold the teaching store and her note 'm-1'.

A  alice appends 'm-1' again to her SQLite store -> RemoteMemoryDuplicateError: the unique
   index on (user_scope, memory_id) refuses the second insert; nothing is written.
B  bob's store on alice's SQLite file appends 'm-1' -> no error: a SQLite file holds many
   users' rows; bob's user_scope makes (bob's scope, 'm-1') another key, and his record is
   stored beside alice's.
C  bob's store on alice's JSONL file appends 'm-1' -> RemoteMemoryScopeError: a JSONL file
   holds one user's records; the append reads the file's ids first, and the first record it
   reads belongs to alice's scope. Nothing is written.
D  migrate into a target holding a record the source lacks -> RemoteMemoryValidationError:
   migrate only fills an empty target or resumes one holding a prefix of the source, and
   refuses anything else before writing.
E  True: alice's store reads only her scope's rows, so bob's row in the same file is not in
   her read_all(), which equals her JSONL store's record for record.
"""

from memorylib import (
    RemoteMemoryDuplicateError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
)

my_prediction = {
    "A": RemoteMemoryDuplicateError,
    "B": None,
    "C": RemoteMemoryScopeError,
    "D": RemoteMemoryValidationError,
    "E": True,
}
