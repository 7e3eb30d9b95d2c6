"""Notebook 06b's "Your turn" (no build-it: the profile takes no stage of the pipeline):
which snapshot does a new session get? Each call appends its records to a fresh store, the
"store holds" of ``PROFILE_SCENARIOS``; the truth is the library's selection."""

import operator
from typing import Any

from memorylib.interface import latest_profile_of, new_memory
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit import fixtures as fx
from memorylib.records import MemoryKind, MemorySource

PLACEHOLDER = "a dict mapping each of 'A'..'F' to a memory_id (a str) or None"
SEEDED, BARE = "profile-001 + 6 conversations", "6 conversations only"


def _record(memory_id: str, captured_at: str, stored_at: str) -> dict[str, Any]:
    """A PROFILE snapshot, or (id "conversation-...") a conversation saying the profile changed."""
    said = memory_id.startswith("conversation")
    text = "The user said their profile changed." if said else f"Profile snapshot {memory_id}."
    source_type = "conversation_transcript" if said else "profile_snapshot"
    source = MemorySource(f"src-{memory_id}", source_type, "profile", captured_at)
    kind = MemoryKind.CONVERSATION if said else MemoryKind.PROFILE
    record = {"kind": kind, "memory_id": memory_id, "summary": text, "content": text}
    return record | {"source": source, "stored_at": stored_at}


_D0, _D1, _D2 = "2026-08-02T09:00:00Z", "2026-08-02T10:00:00Z", "2026-08-02T11:00:00Z"  # today
_ROWS = (  # call, memory_id, captured_at, stored_at
    ("A", "profile-000", "2026-08-01T09:00:00Z", _D1),
    ("B", "profile-9", "2026-07-31T09:00:00Z", _D1),
    ("B", "profile-10", "2026-07-31T09:00:00Z", _D1),
    ("C", "profile-imported", "2026-03-01T00:00:00Z", _D2),
    ("D", "profile-sg", "2026-07-30T16:00:00+08:00", _D1),
    ("E", "conversation-007", _D0, _D0),
    ("F", "profile-hr", "2026-07-01T09:00:00Z", _D1),
    ("F", "conversation-008", _D2, _D2),
)
_CALLS = {  # label: (what the fresh store holds, what happens)
    "A": (SEEDED, "append a snapshot captured two days later"),
    "B": (SEEDED, "append two snapshots captured at the same instant, one day later"),
    "C": (SEEDED, "append a snapshot imported today from an old wiki"),
    "D": (SEEDED, "append a snapshot whose clock says Singapore time"),
    "E": (BARE, "append a conversation saying the profile changed"),
    "F": (BARE, "append an HR snapshot, then a conversation saying the profile changed"),
}
# label -> (what the fresh store holds, what happens, the records appended to it)
PROFILE_SCENARIOS: dict[str, tuple[str, str, tuple[dict[str, Any], ...]]] = {
    label: (*call, tuple(_record(*row[1:]) for row in _ROWS if row[0] == label))
    for label, call in _CALLS.items()
}


def profile_exercise_truth() -> dict[str, str | None]:
    """The memory_id of the snapshot each call's new session gets, or None: the library's
    selection (``latest_profile_of``, which ``build_system_prompt`` injects) over the call's
    fresh store, its records made as ``append`` makes them."""
    truth = {}
    for label, (holds, _, appended) in PROFILE_SCENARIOS.items():
        kept = [r for r in fx.chapter_records() if holds == SEEDED or r.kind != "profile"]
        added = [new_memory(user_scope=fx.CHAPTER_SCOPE, **record) for record in appended]
        profile = latest_profile_of([*kept, *added])
        truth[label] = profile and profile.memory_id
    return truth


HINTS = {
    "A": "the newest captured_at wins; memory_id only breaks a tie.",
    "B": "a tie on captured_at: max() takes the larger memory_id, compared as text, "
    "character by character (not as a number).",
    "C": "the file line and stored_at are not in the key: only (captured_at, memory_id).",
    "D": "captured_at is compared as an instant: convert the offset to UTC first.",
    "E": "only PROFILE records can be injected; without one there is no block at all.",
    "F": "only PROFILE records can be injected, however new a conversation is or what it says.",
}


def check_profile_predictions(answer: object) -> ex.CheckResult:
    """06b's self-check: ``answer`` maps "A".."F" to the injected memory_id or None; wrong
    with one hint per wrong label; not answered while ``...`` (or a ``...`` value) is there.
    The placeholder names the shape only: no candidate memory_id, no label with a value."""

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, _CALLS, "a dict from 'A'..'F' to a memory_id or None")
        given = {k: v.strip() if isinstance(v, str) else v for k, v in given.items()}
        given |= {k: None for k, v in given.items() if isinstance(v, str) and v.lower() == "none"}
        return ex.grade_labels(
            profile_exercise_truth(), given, HINTS, same=operator.eq
        ) or ex.right(
            "All 6 right. The newest PROFILE by (captured_at as an instant, then the larger "
            "memory_id as text) is injected, whatever its line in the file; nothing else ever is."
        )

    return ex.check_value(answer, judge, placeholder=PLACEHOLDER)
