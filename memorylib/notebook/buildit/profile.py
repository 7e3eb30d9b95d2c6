"""Notebook 06b's "Your turn": which profile snapshot does a new session get?"""

import operator
from typing import Any

from memorylib.interface import latest_profile_of, new_memory
from memorylib.notebook import exercises as ex
from memorylib.notebook.buildit import fixtures as fx
from memorylib.notebook.messages import said, say
from memorylib.records import MemoryKind, MemorySource


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
_SEEDED = "ABCD"  # the calls whose fresh store is the seeded one (profile-001 too)
# label -> (what the fresh store holds, what happens, the records appended to it)
PROFILE_SCENARIOS: dict[str, tuple[str, str, tuple[dict[str, Any], ...]]] = {
    label: (
        said("profile.seeded") if label in _SEEDED else said("profile.bare"),
        said(f"profile.call.{label}"),
        tuple(_record(*row[1:]) for row in _ROWS if row[0] == label),
    )
    for label in "ABCDEF"
}


def profile_exercise_truth() -> dict[str, str | None]:
    """Label -> the memory_id ``latest_profile_of`` picks in the call's fresh store, or None."""
    truth = {}
    for label, (_, _, appended) in PROFILE_SCENARIOS.items():
        kept = [r for r in fx.chapter_records() if label in _SEEDED or r.kind != "profile"]
        added = [new_memory(user_scope=fx.CHAPTER_SCOPE, **record) for record in appended]
        profile = latest_profile_of([*kept, *added])
        truth[label] = profile and profile.memory_id
    return truth


def check_profile_predictions(answer: object) -> ex.CheckResult:
    """06b's self-check: "A".."F" -> the injected memory_id or None; one hint per wrong label."""

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, PROFILE_SCENARIOS, say("profile.described"))
        given = {k: v.strip() if isinstance(v, str) else v for k, v in given.items()}
        given |= {k: None for k, v in given.items() if isinstance(v, str) and v.lower() == "none"}
        hints = {label: say(f"profile.hint.{label}") for label in PROFILE_SCENARIOS}
        truth = profile_exercise_truth()
        wrong = ex.grade_labels(truth, given, hints, same=operator.eq)
        return wrong or ex.right(say("profile.right"))

    return ex.check_value(answer, judge, placeholder=say("profile.placeholder"))
