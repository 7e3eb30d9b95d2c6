"""Notebook 06b's "Your turn": which profile snapshot does a new session get?

The profile takes no stage of the pipeline (store -> latest snapshot -> system prompt),
so this is not a build-it; it sits here with the other exercise definitions. Scenarios A-D
append records to a fresh teaching store (profile-001 and six conversations); E's store holds
the six conversations only. The truth is read back from ``build_system_prompt``, what the
model would really receive.
"""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd

from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.records import MemoryKind, MemorySource
from memorylib.seed import TEACHING_RECORDS, seed_teaching_store
from memorylib.store import RemoteMemoryStore
from memorylib.tool import build_system_prompt

__all__ = [
    "PLACEHOLDER",
    "PROFILE_SCENARIOS",
    "check_profile_predictions",
    "profile_exercise_frame",
    "profile_exercise_truth",
]

PLACEHOLDER = "a dict mapping each of 'A'..'E' to a memory_id (a str) or None"

_FIRST_SNAPSHOT = "2026-07-30T09:00:00Z"  # profile-001's captured_at in the teaching store


def _profile(memory_id: str, captured_at: str, stored_at: str, summary: str) -> dict[str, Any]:
    return {
        "kind": MemoryKind.PROFILE,
        "memory_id": memory_id,
        "content": summary,
        "summary": summary,
        "source": MemorySource(f"ps-{memory_id}", "profile_snapshot", "snapshot", captured_at),
        "stored_at": stored_at,
    }


_PROFILE_CHANGED = {
    "kind": MemoryKind.CONVERSATION,
    "memory_id": "conversation-007",
    "content": "The user said their profile changed: now a staff engineer who wants long answers.",
    "summary": "Updated profile: staff engineer, prefers long answers.",
    "source": MemorySource(
        "transcript-conversation-007",
        "conversation_transcript",
        "profile update",
        "2026-08-02T09:00:00Z",
    ),
    "stored_at": "2026-08-02T09:00:00Z",
}

# label -> (what happens, the records appended to a fresh teaching store). "E" starts from
# the six conversations alone: its snapshot is never written.
PROFILE_SCENARIOS: dict[str, tuple[str, tuple[dict[str, Any], ...]]] = {
    "A": (
        "append a snapshot captured two days later",
        (
            _profile(
                "profile-000",
                "2026-08-01T09:00:00Z",
                "2026-08-02T10:00:00Z",
                "Staff engineer; prefers answers with diagrams.",
            ),
        ),
    ),
    "B": (
        "append two snapshots captured at the same instant, one day later",
        (
            _profile(
                "profile-9",
                "2026-07-31T09:00:00Z",
                "2026-08-02T10:00:00Z",
                "Backend engineer; prefers answers in Chinese.",
            ),
            _profile(
                "profile-10",
                "2026-07-31T09:00:00Z",
                "2026-08-02T10:00:00Z",
                "Backend engineer; prefers answers in English.",
            ),
        ),
    ),
    "C": (
        "append a snapshot imported today from an old wiki",
        (
            _profile(
                "profile-imported",
                "2026-03-01T00:00:00Z",
                "2026-08-02T11:00:00Z",
                "Intern; prefers long explanations.",
            ),
        ),
    ),
    "D": (
        "append a snapshot whose clock says Singapore time",
        (
            _profile(
                "profile-sg",
                "2026-07-30T16:00:00+08:00",
                "2026-08-02T10:00:00Z",
                "Backend engineer in Singapore; prefers short answers.",
            ),
        ),
    ),
    "E": (
        "six conversations only (no profile-001), plus one saying the profile changed",
        (_PROFILE_CHANGED,),
    ),
}


def _scenario_store(label: str, folder: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(folder / f"profile-{label}.jsonl")
    if label == "E":
        store.append_many([r for r in TEACHING_RECORDS if r["kind"] is MemoryKind.CONVERSATION])
    else:
        seed_teaching_store(store)
    store.append_many(PROFILE_SCENARIOS[label][1])
    return store


def profile_exercise_frame() -> pd.DataFrame:
    """The task: one row per appended record (kind, memory_id, captured_at and stored_at
    as written by the scenario), no answer."""
    rows = [
        (
            label,
            what,
            record["kind"].value,
            record["memory_id"],
            record["source"].captured_at,
            record["stored_at"],
        )
        for label, (what, records) in PROFILE_SCENARIOS.items()
        for record in records
    ]
    return pd.DataFrame(
        rows, columns=["call", "what happens", "kind", "memory_id", "captured_at", "stored_at"]
    )


def _injected(system_prompt: str) -> str | None:
    """The memory_id of the prompt's <remote_profile> block, or None without one."""
    start = system_prompt.find("<remote_profile ")
    if start < 0:
        return None
    end = system_prompt.index("</remote_profile>") + len("</remote_profile>")
    return ET.fromstring(system_prompt[start:end]).get("memory_id")


def profile_exercise_truth() -> dict[str, str | None]:
    """The memory_id in each scenario's ``<remote_profile>`` block, or None without one.

    Each scenario gets its own fresh store in a temporary directory, and the answer is
    read back from ``build_system_prompt``: what the model would really receive.
    """
    with tempfile.TemporaryDirectory(prefix="memorylib-06b-") as tmp:
        return {
            label: _injected(build_system_prompt(_scenario_store(label, Path(tmp))))
            for label in PROFILE_SCENARIOS
        }


_PROFILE_HINTS = {
    "A": "the newest captured_at wins; memory_id only breaks a tie.",
    "B": "a tie on captured_at: max() takes the larger memory_id, compared as text, "
    "character by character (not as a number).",
    "C": "the file line and stored_at are not in the key: only (captured_at, memory_id).",
    "D": "captured_at is compared as an instant: convert the offset to UTC first.",
    "E": "only PROFILE records can be injected; without one there is no block at all.",
}


def _same_profile(given: object, expected: str | None) -> bool:
    if isinstance(given, str):
        given = given.strip()
        if given.lower() == "none":
            given = None
    return given == expected


def check_profile_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 06b: ``answer`` maps "A".."E" to the injected memory_id or None.

    Right when all five are right; wrong with one hint per wrong label; not answered
    while the placeholder ``...`` (or a ``...`` value) is still there.
    """

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer, PROFILE_SCENARIOS, "a dict from 'A'..'E' to a memory_id or None"
        )
        mistakes = grade_labels(profile_exercise_truth(), given, _PROFILE_HINTS, same=_same_profile)
        if mistakes is not None:
            return mistakes
        return right(
            "All 5 right. The newest PROFILE by (captured_at as an instant, then the larger "
            "memory_id as text) is injected, whatever its line in the file; nothing else "
            "ever is."
        )

    # The placeholder names the shape only: no candidate memory_id, no label with a value.
    return check_value(answer, judge, placeholder=PLACEHOLDER)
