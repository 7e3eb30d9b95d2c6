"""Reference solution for notebook 01 (stored records), "Your turn" (for instructors).

A. The six appends, each through ``user_store(user_id)`` (one file per user_scope):

A  "Dana",        note-1  -> written: the first record of user "dana".
B  " dana ",      note-2  -> written: strip + casefold gives "dana", the same user and file;
                             note-2 is a new id there.
C  "DANA",        note-1  -> RemoteMemoryDuplicateError: "dana" again, and note-1 is already
                             in that user's store (nothing is written). Its parent class,
                             RemoteMemoryValidationError, is not accepted: name the subclass.
D  "Dana Okafor", note-1  -> written: "dana okafor" is another key, so another scope and file;
                             ids are unique per store, not across users.
E  "Erin",        -draft  -> RemoteMemoryValidationError: an id must start with a letter or a
                             digit. Validation comes before the lock, so no file is created.
F  "dana",        笔记-1   -> written: an id may hold letters of any script.
files                     -> 2: "dana" (3 lines: A, B, F) and "dana okafor" (1 line); Erin has
                             no file.

B. The call: 18:10 on 15 July 2026 in UTC-7 is 01:10 on 16 July in UTC (captured_at); Omar
imported it by hand at 08:03 UTC (stored_at), 6 h 53 min later (not the sync job's usual 12
minutes, so stored_at minus 12 minutes is wrong). The source is the transcript: source_id
"call-0715", source_type "conversation_transcript" (the task gives both), any title. Either
spelling of captured_at works: the store re-emits "2026-07-15T18:10:00-07:00" as
"2026-07-16T01:10:00Z". The answer cell makes a new, empty store at each run, so a corrected
attempt with the same memory_id is not refused.

The optional stretch 1: ``my_user_scope`` below agrees with ``user_scope_for`` on every id
the check passes (none is empty after strip; the library rejects those, and the stretch does
not ask for it). ``lower()`` instead of ``casefold()`` fails on "Straße"; forgetting
``strip()`` fails on "  Alice "; a function that calls ``user_scope_for`` (directly or through
a store's ``user_scope``) is refused. Stretch 2 is self-checked: on Linux and macOS the store's
file is 0o600 and the folder it created 0o700 (``oct(...)`` prints '0o600' and '0o700').
"""

import hashlib

from memorylib import (
    MemoryKind,
    MemorySource,
    RemoteMemoryDuplicateError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    StoredMemory,
)

my_prediction = {
    "A": None,
    "B": None,
    "C": RemoteMemoryDuplicateError,
    "D": None,
    "E": RemoteMemoryValidationError,
    "F": None,
    "files": 2,
}


def my_record_in(omar_store: RemoteMemoryStore) -> StoredMemory:
    """Exercise B: what the notebook's answer cell holds, ``my_record = omar_store.append(...)``."""
    return omar_store.append(
        kind=MemoryKind.CONVERSATION,
        memory_id="tools-review-0715",
        content="Weekly tools review: agreed to keep the shell tool behind a confirmation.",
        summary="Tools review: shell tool stays behind a confirmation.",
        source=MemorySource(
            source_id="call-0715",
            source_type="conversation_transcript",
            title="weekly tools review",
            captured_at="2026-07-15T18:10:00-07:00",
        ),
        stored_at="2026-07-16T08:03:00Z",
    )


def my_user_scope(user_id: str) -> str:
    return hashlib.sha256(user_id.strip().casefold().encode("utf-8")).hexdigest()[:16]
