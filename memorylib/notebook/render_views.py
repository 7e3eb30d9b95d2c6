"""The "Your turn" checks of notebooks 06 (render) and 06b (profile).

Everything a student should read (the tool's JSON, the rendered block, the hostile record
on both paths, the prompt budget, profile selection) is written in the notebooks' cells.
What stays here is what a cell would give away: each exercise's scenario, the truth the
library computes for it in a temporary store, and its checker on the exercise engine.
"""

from __future__ import annotations

import json
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RecallResult,
    RemoteMemoryError,
    RemoteMemoryStore,
    build_system_prompt,
    recall_history,
    render_recall_context,
    seed_teaching_store,
)
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.seed import TEACHING_RECORDS

__all__ = [
    "PROFILE_SCENARIOS",
    "RENDER_CALLS",
    "RENDER_RECORD",
    "check_profile_predictions",
    "check_render_predictions",
    "profile_exercise_frame",
    "profile_exercise_truth",
    "render_exercise_frame",
    "render_exercise_truth",
]

# -- notebook 06: what reaches the model -----------------------------------------------------

# Appended to a fresh copy of the teaching store before every call of the exercise.
RENDER_RECORD: dict[str, Any] = {
    "kind": MemoryKind.CONVERSATION,
    "memory_id": "conversation-007",
    "summary": 'Wrap ids in <code> & "quote" them.',
    "content": 'Style review: answers put memory ids in <code> tags & titles in "quotes".',
    "source": MemorySource(
        "transcript-conversation-007",
        "conversation_transcript",
        "answer style",
        "2026-07-31T10:00:00Z",
    ),
    "stored_at": "2026-07-31T10:00:00Z",
}

# label -> (what to predict, query text, limit). "snippet-xml": the characters between
# conversation-007's <snippet> and </snippet> in the rendered block; "snippet-json": the
# characters between the quotes of its "snippet" value in the tool's JSON text; "hits":
# the number of <hit> elements, or "rejected" when recall raises before anything renders.
RENDER_CALLS: dict[str, tuple[str, str, int]] = {
    "A": ("snippet-xml", "quote ids", 5),
    "B": ("snippet-json", "quote ids", 5),
    "C": ("hits", "sqlite jsonl wal", 5),
    "D": ("hits", "persistence decision", 5),
    "E": ("hits", "layered memory", 11),
}
_ASKED = {
    "snippet-xml": "conversation-007's <snippet> text, exactly as the rendered block spells it",
    "snippet-json": "conversation-007's snippet, exactly as the tool's JSON text spells it",
    "hits": 'the number of <hit> elements in the rendered block, or "rejected"',
}
_TARGET = RENDER_RECORD["memory_id"]
_JSON_STRING = r'"((?:[^"\\]|\\.)*)"'  # a JSON string literal, escapes and all


def render_exercise_frame() -> pd.DataFrame:
    """The task: one row per call (query, limit, what to predict), no answer."""
    return pd.DataFrame(
        [
            (label, repr(text), limit, _ASKED[asked])
            for label, (asked, text, limit) in RENDER_CALLS.items()
        ],
        columns=["call", "query", "limit", "predict"],
    )


def _xml_snippet(block: str) -> str | None:
    """The raw characters of the target hit's <snippet>, as they stand in the block."""
    hit = block.find(f'memory_id="{_TARGET}"')
    found = re.compile(r"<snippet>(.*?)</snippet>", re.S).search(block, hit)
    return None if hit < 0 or found is None else found.group(1)


def _json_snippet(tool_json: str) -> str | None:
    """The raw characters of the target hit's "snippet" value in the tool's JSON text."""
    hit = tool_json.find(f'"memory_id": "{_TARGET}"')
    found = re.compile(r'"snippet": ' + _JSON_STRING).search(tool_json, hit)
    return None if hit < 0 or found is None else found.group(1)


def render_exercise_truth() -> dict[str, int | str | None]:
    """What reaches the model for each call, computed by the library.

    Each call runs on a fresh teaching store plus ``RENDER_RECORD`` (in a temporary
    directory) at the chapter's clock, through ``recall_history`` (the JSON text) and
    ``render_recall_context`` of the same result (the block).
    """
    truth: dict[str, int | str | None] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-06-") as tmp:
        store = RemoteMemoryStore(Path(tmp) / "chapter.jsonl")
        seed_teaching_store(store)
        store.append(**RENDER_RECORD)
        engine = RecallEngine(store)
        for label, (asked, text, limit) in RENDER_CALLS.items():
            try:
                tool_json = recall_history(
                    text, limit, engine=engine, as_of=TEACHING_AS_OF, query_id=f"q-06-ex-{label}"
                )
            except RemoteMemoryError:
                truth[label] = "rejected"
                continue
            block = render_recall_context(RecallResult.from_dict(json.loads(tool_json)))
            if asked == "snippet-xml":
                truth[label] = _xml_snippet(block)
            elif asked == "snippet-json":
                truth[label] = _json_snippet(tool_json)
            else:
                truth[label] = len(ET.fromstring(block).findall("hit")) if block else 0
    return truth


_RENDER_HINTS = {
    "A": "inside an element's text the renderer escapes &, < and >; a double quote stays "
    "as it is (quotes are escaped in attribute values only).",
    "B": "the tool's text is json.dumps(..., ensure_ascii=False): inside a JSON string each "
    'double quote is written \\" and each backslash \\\\; <, > and & are left alone. Type '
    "the characters the model reads (a raw string r'...' helps).",
    "C": "read the content column as well as the summary: a term may be in either.",
    "D": "recall searches the summary and the content; the provenance title is never searched.",
    "E": "look at the limit before the query: the chapter accepts 1 to 10.",
}


def _as_text(given: object) -> object:
    return given.strip() if isinstance(given, str) else given


def _same_render(given: object, expected: int | str | None) -> bool:
    if isinstance(expected, int):
        return isinstance(given, int) and not isinstance(given, bool) and given == expected
    if expected == "rejected":
        return isinstance(given, str) and given.strip().lower() == "rejected"
    return _as_text(given) == expected


def check_render_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 06: ``answer`` maps "A".."E" to the predicted text or count.

    A and B are strings (the characters as they stand in the block or in the JSON text;
    the JSON string's own surrounding quotes may be included), C-E a number or
    "rejected". Right when all five are right; one hint per wrong label.
    """

    def judge(answer: object) -> CheckResult:
        given = expect_labels(answer, RENDER_CALLS, "a dict from 'A'..'E' to a str or a number")
        if isinstance(given["B"], str) and re.fullmatch(_JSON_STRING, given["B"].strip()):
            given["B"] = given["B"].strip()[1:-1]  # the student copied the JSON quotes too
        truth = render_exercise_truth()
        hints = dict(_RENDER_HINTS)
        stored = RENDER_RECORD["summary"]
        if _as_text(given["A"]) == truth["B"]:
            hints["A"] = "that is how the JSON text spells it; the block uses entities (&lt;)."
        if _as_text(given["B"]) == truth["A"]:
            hints["B"] = 'that is how the block spells it; the JSON text uses backslashes (\\").'
        elif _as_text(given["B"]) == stored:
            hints["B"] = (
                "that is the value json.loads gives back, not the text the model reads: "
                + _RENDER_HINTS["B"]
            )
        mistakes = grade_labels(truth, given, hints, same=_same_render)
        if mistakes is not None:
            return mistakes
        return right(
            "All 5 right. The block escapes with entities, the JSON text with backslashes; "
            "either way a parser gets the stored text back and the model reads every word "
            "of it. Only conversation text is searched, and a limit outside 1..10 is "
            "refused before anything is rendered."
        )

    return check_value(answer, judge, placeholder="a dict like {'A': 'your text', 'C': 7, ...}")


# -- notebook 06b: which snapshot is injected? ----------------------------------------------

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
        "store the six conversations and one saying the profile changed (no snapshot)",
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

    return check_value(
        answer, judge, placeholder="a dict like {'A': 'profile-999', 'B': None, ...}"
    )
