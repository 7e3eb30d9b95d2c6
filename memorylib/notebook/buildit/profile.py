"""Notebook 06b's "Your turn": which profile snapshot does a new session get?

The profile takes no stage of the pipeline (store -> latest snapshot -> system prompt),
so this is not a build-it; it sits here with the other exercise definitions. Each call
starts from a fresh store, named in the table like every other column: this course's
teaching store (profile-001 and six conversations) or its six conversations alone, then
appends the records shown. The truth is read back from ``build_system_prompt``, what the
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

PLACEHOLDER = "a dict mapping each of 'A'..'F' to a memory_id (a str) or None"

# What each call's fresh store holds before its appends (the table's "store holds" column).
TEACHING_STORE = "profile-001 + 6 conversations"
CONVERSATIONS_ONLY = "6 conversations only"


def _profile(memory_id: str, captured_at: str, stored_at: str, summary: str) -> dict[str, Any]:
    return {
        "kind": MemoryKind.PROFILE,
        "memory_id": memory_id,
        "content": summary,
        "summary": summary,
        "source": MemorySource(f"ps-{memory_id}", "profile_snapshot", "snapshot", captured_at),
        "stored_at": stored_at,
    }


def _profile_changed(memory_id: str, summary: str, content: str, at: str) -> dict[str, Any]:
    """A CONVERSATION in which the user says their profile changed."""
    return {
        "kind": MemoryKind.CONVERSATION,
        "memory_id": memory_id,
        "content": content,
        "summary": summary,
        "source": MemorySource(
            f"transcript-{memory_id}", "conversation_transcript", "profile update", at
        ),
        "stored_at": at,
    }


# label -> (what the fresh store holds, what happens, the records appended to it).
PROFILE_SCENARIOS: dict[str, tuple[str, str, tuple[dict[str, Any], ...]]] = {
    "A": (
        TEACHING_STORE,
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
        TEACHING_STORE,
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
        TEACHING_STORE,
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
        TEACHING_STORE,
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
        CONVERSATIONS_ONLY,
        "append a conversation saying the profile changed",
        (
            _profile_changed(
                "conversation-007",
                "Updated profile: staff engineer, prefers long answers.",
                "The user said their profile changed: now a staff engineer who wants long answers.",
                "2026-08-02T09:00:00Z",
            ),
        ),
    ),
    "F": (
        CONVERSATIONS_ONLY,
        "append an HR snapshot, then a conversation saying the profile changed",
        (
            _profile(
                "profile-hr",
                "2026-07-01T09:00:00Z",
                "2026-08-02T10:00:00Z",
                "Platform engineer; prefers answers with a checklist.",
            ),
            _profile_changed(
                "conversation-008",
                "Profile changed: moved to the data team, prefers Chinese.",
                "The user said their profile changed: moved to the data team and now "
                "prefers answers in Chinese.",
                "2026-08-02T11:00:00Z",
            ),
        ),
    ),
}


def _scenario_store(label: str, folder: Path) -> RemoteMemoryStore:
    holds, _, appended = PROFILE_SCENARIOS[label]
    store = RemoteMemoryStore(folder / f"profile-{label}.jsonl")
    if holds == TEACHING_STORE:
        seed_teaching_store(store)
    else:
        store.append_many([r for r in TEACHING_RECORDS if r["kind"] is MemoryKind.CONVERSATION])
    store.append_many(appended)
    return store


def profile_exercise_frame() -> pd.DataFrame:
    """The task: one row per appended record (what the call's fresh store holds, kind,
    memory_id, captured_at and stored_at as written by the scenario), no answer."""
    rows = [
        (
            label,
            holds,
            what,
            record["kind"].value,
            record["memory_id"],
            record["source"].captured_at,
            record["stored_at"],
        )
        for label, (holds, what, records) in PROFILE_SCENARIOS.items()
        for record in records
    ]
    columns = ["call", "store holds", "what happens", "kind", "memory_id", "captured_at"]
    return pd.DataFrame(rows, columns=[*columns, "stored_at"])


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
    "F": "only PROFILE records can be injected, however new a conversation is or what it says.",
}


def _same_profile(given: object, expected: str | None) -> bool:
    if isinstance(given, str):
        given = given.strip()
        if given.lower() == "none":
            given = None
    return given == expected


def check_profile_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 06b: ``answer`` maps "A".."F" to the injected memory_id or None.

    Right when all six are right; wrong with one hint per wrong label; not answered
    while the placeholder ``...`` (or a ``...`` value) is still there.
    """

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer, PROFILE_SCENARIOS, "a dict from 'A'..'F' to a memory_id or None"
        )
        mistakes = grade_labels(profile_exercise_truth(), given, _PROFILE_HINTS, same=_same_profile)
        if mistakes is not None:
            return mistakes
        return right(
            "All 6 right. The newest PROFILE by (captured_at as an instant, then the larger "
            "memory_id as text) is injected, whatever its line in the file; nothing else "
            "ever is."
        )

    # The placeholder names the shape only: no candidate memory_id, no label with a value.
    return check_value(answer, judge, placeholder=PLACEHOLDER)
