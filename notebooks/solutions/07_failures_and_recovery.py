"""Reference solution for notebook 07's "Your turn" (failures and recovery; for instructors).

A  engine.recall("layered memory", limit=0) -> RemoteMemoryValidationError: the limit
   must be an int in 1..10; it is checked while the query is normalized.
B  store.append(memory_id="conversation-001", ...) -> RemoteMemoryDuplicateError (a
   subclass of RemoteMemoryValidationError; the specific class is the answer).
C  RemoteMemoryStore(store.path, user_id="bob").read_all() -> RemoteMemoryScopeError:
   line 1 belongs to another user_scope; the store fails closed.
D  engine.recall("kubernetes helm chart") -> no error: hits are empty and
   empty_reason is "no_matching_terms".
E  store.append(...) after a crash tore the last line -> no error: a record commits at
   its newline, so the torn line was never committed. Under the lock, the append moves
   its bytes to <store>.quarantine.jsonl, cuts them off, and writes the new record.
F  store.append(...) when line 3 is a complete line that is not JSON ->
   RemoteMemoryCorruptionError naming line 3: a committed line was damaged, and the
   store refuses to write after it until `python -m memorylib repair` quarantines it.
"""

from memorylib import (
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
)

my_prediction = {
    "A": RemoteMemoryValidationError,
    "B": RemoteMemoryDuplicateError,
    "C": RemoteMemoryScopeError,
    "D": None,
    "E": None,
    "F": RemoteMemoryCorruptionError,
}
