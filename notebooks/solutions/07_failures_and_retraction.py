"""Reference solution for notebook 07's "Your turn" (for instructors).

A  engine.recall("layered memory", limit=0) -> RemoteMemoryValidationError: the limit
   must be an int in 1..10; it is checked while the query is normalized.
B  store.append(memory_id="conversation-001", ...) -> RemoteMemoryDuplicateError (a
   subclass of RemoteMemoryValidationError; the specific class is the answer).
C  RemoteMemoryStore(store.path, user_id="bob").read_all() -> RemoteMemoryScopeError:
   line 1 belongs to another user_scope; the store fails closed.
D  engine.recall("kubernetes helm chart") -> no error: hits are empty and
   empty_reason is "no_matching_terms".
E  store.append(...) after a torn last line -> RemoteMemoryCorruptionError naming the
   torn line: the store refuses to write after it until it is repaired.
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
    "E": RemoteMemoryCorruptionError,
}
