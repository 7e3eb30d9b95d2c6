"""Reference solution for notebook 01 (stored records), "Your turn" (for instructors).

The five appends, each through ``user_store(user_id)`` (one file per user_scope):

A  "Dana",        note-1 -> written: the first record of user "dana".
B  " dana ",      note-2 -> written: strip + casefold gives "dana", the same user and file;
                            note-2 is a new id there.
C  "DANA",        note-1 -> RemoteMemoryDuplicateError: "dana" again, and note-1 is already
                            in that user's store (nothing is written).
D  "Dana Okafor", note-1 -> written: "dana okafor" is another key, so another scope and file;
                            ids are unique per store, not across users.
E  "dana",        note 3 -> RemoteMemoryValidationError: a memory_id may not contain a space.
files                    -> 2: one for "dana" (2 lines), one for "dana okafor" (1 line).

The optional stretch: ``my_user_scope`` below agrees with ``user_scope_for`` everywhere
(``lower()`` instead of ``casefold()`` fails on "Straße"; forgetting ``strip()`` fails on
"  Alice ").
"""

import hashlib

from memorylib import RemoteMemoryDuplicateError, RemoteMemoryValidationError

my_prediction = {
    "A": None,
    "B": None,
    "C": RemoteMemoryDuplicateError,
    "D": None,
    "E": RemoteMemoryValidationError,
    "files": 2,
}


def my_user_scope(user_id: str) -> str:
    return hashlib.sha256(user_id.strip().casefold().encode("utf-8")).hexdigest()[:16]
