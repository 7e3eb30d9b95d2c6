"""Reference solution for notebook 11's "Your turn" (for instructors).

alice's SQLite file and her JSONL file both hold the teaching store and her note 'm-1'.

A  alice's SQLite store appends a batch, a new 'm-2' then 'm-1' again ->
   RemoteMemoryDuplicateError: the unique index on (user_scope, memory_id) refuses 'm-1',
   and the batch is one transaction, so 'm-2' is not stored either.
B  bob's store on alice's SQLite file appends 'm-1' -> no error: a SQLite file holds many
   users' rows; bob's user_scope makes (bob's scope, 'm-1') another key, and his record is
   stored beside alice's.
C  bob's store on alice's JSONL file appends 'bob-1', an id no one holds ->
   RemoteMemoryScopeError: a JSONL file holds one user's records; the append reads the
   file first, and the first record it reads belongs to alice's scope. Nothing is written.
D  migrate into a target holding a record the source lacks -> RemoteMemoryValidationError:
   migrate only fills an empty target or resumes one holding a prefix of the source, and
   refuses anything else before writing (both stores are alice's: no scope error).
E  (9, 8): alice.db holds the seven teaching records, alice's 'm-1' and bob's 'm-1' (A
   stored nothing, B one row); alice's read_all() reads only her scope's eight.
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
    "E": (9, 8),
}
