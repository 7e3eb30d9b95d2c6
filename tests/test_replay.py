"""The recorded exchange replays through the real agent loop, and the replay checks the loop."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryError,
    RemoteMemoryStore,
    build_system_prompt,
    recall_history,
)
from memorylib.agent import agent_loop
from memorylib.replay import (
    DEFAULT_RECORDING,
    Recording,
    ReplayClient,
    ReplayFormatError,
    ReplayMismatchError,
    load_recording,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def recording() -> Recording:
    return load_recording()


@pytest.fixture
def chapter(teaching_store: RemoteMemoryStore) -> tuple[RemoteMemoryStore, RecallEngine, str]:
    return teaching_store, RecallEngine(teaching_store), build_system_prompt(teaching_store)


def replay(recording, engine, system, *, model=None, max_turns=6):
    client = ReplayClient(recording)
    events = []
    messages = agent_loop(
        recording.messages,
        client=client,
        model=model or client.model,
        engine=engine,
        system=system,
        as_of=recording.as_of,
        on_event=events.append,
        max_turns=max_turns,
    )
    return client, events, messages


def test_the_recording_is_the_default_file_and_the_chapter_clock(recording: Recording) -> None:
    assert DEFAULT_RECORDING == ROOT / "data" / "agent_replay.json"
    assert recording.as_of == TEACHING_AS_OF
    assert len(recording) == 2


def test_every_recorded_response_has_the_messages_api_shape(recording: Recording) -> None:
    types = pytest.importorskip("anthropic.types")
    for exchange in recording.exchanges:
        message = types.Message.model_validate(exchange["response"])
        assert message.role == "assistant"
    first, last = (e["response"] for e in recording.exchanges)
    assert first["stop_reason"] == "tool_use"
    assert [b["type"] for b in first["content"]] == ["text", "tool_use"]
    assert first["content"][1]["name"] == "recall_history"
    assert last["stop_reason"] == "end_turn"
    assert "conversation-003" in last["content"][0]["text"]


def test_the_recording_holds_no_secret_and_no_real_model_id() -> None:
    text = DEFAULT_RECORDING.read_text(encoding="utf-8")
    assert "sk-" not in text and "api_key" not in text.lower() and "x-api-key" not in text
    assert json.loads(text)["model"] == "replay-recording"


def test_replay_runs_the_real_loop_with_live_tool_results(recording, chapter) -> None:
    store, engine, system = chapter
    before = store.path.read_bytes()
    client, events, messages = replay(recording, engine, system)
    client.assert_finished()
    assert [e.kind for e in events] == ["text", "tool_use", "tool_result", "text", "stop"]
    tool_input = events[1].payload["input"]
    # the tool result the model got is exactly what the real engine computes now
    expected = recall_history(
        tool_input["query"],
        tool_input["limit"],
        engine=RecallEngine(store),
        as_of=TEACHING_AS_OF,
        query_id="query-1-1",
    )
    assert events[2].payload == {"content": expected, "is_error": False}
    hits = json.loads(expected)["hits"]
    assert [h["memory_id"] for h in hits] == ["conversation-003", "conversation-002"]
    assert "conversation-003" in events[3].payload["text"]
    assert events[4].payload == {"stop_reason": "end_turn"}
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert store.path.read_bytes() == before  # recall is read-only


def test_requests_are_snapshots_of_what_the_loop_sent(recording, chapter) -> None:
    _, engine, system = chapter
    client, _, _ = replay(recording, engine, system)
    first, second = client.requests
    assert len(first["messages"]) == 1  # not the list the loop kept appending to
    assert [t["name"] for t in first["tools"]] == ["recall_history"]
    assert first["system"].startswith('<remote_profile memory_id="profile-001"')
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_replay_0001"


def test_a_prompt_without_the_profile_is_a_mismatch(recording, chapter) -> None:
    _, engine, _ = chapter
    with pytest.raises(ReplayMismatchError, match=r"request 1, system"):
        replay(recording, engine, "You are a coding assistant.")


def test_another_model_is_a_mismatch(recording, chapter) -> None:
    _, engine, system = chapter
    with pytest.raises(ReplayMismatchError, match=r"request 1, model"):
        replay(recording, engine, system, model="some-other-model")


def test_a_store_that_no_longer_ranks_the_cited_record_is_a_mismatch(
    recording, tmp_path: Path
) -> None:
    store = RemoteMemoryStore(tmp_path / "other.jsonl")
    store.append(
        kind=MemoryKind.PROFILE,
        memory_id="profile-001",
        content="Backend engineer.",
        summary="Backend engineer.",
        source=MemorySource(
            "profile-snapshot-001", "profile_snapshot", "p", "2026-07-30T09:00:00Z"
        ),
    )
    store.append(
        kind=MemoryKind.CONVERSATION,
        memory_id="conversation-009",
        content="A flat memory design with one file for everything.",
        summary="Flat memory design.",
        source=MemorySource("t-9", "conversation_transcript", "t", "2026-08-01T00:00:00Z"),
    )
    with pytest.raises(ReplayMismatchError, match=r"request 2, tool_result\[0\]\.content.*"):
        replay(recording, RecallEngine(store), build_system_prompt(store))


def test_a_loop_that_stops_early_or_asks_too_much_is_a_mismatch(recording, chapter) -> None:
    _, engine, system = chapter
    client, _, _ = replay(recording, engine, system, max_turns=1)
    with pytest.raises(ReplayMismatchError, match="stopped after 1 of 2"):
        client.assert_finished()
    truncated = copy.deepcopy(recording.payload)
    truncated["exchanges"] = truncated["exchanges"][:1]
    with pytest.raises(ReplayMismatchError, match="holds only 1"):
        replay(Recording(truncated), engine, system)


def test_a_changed_question_is_a_mismatch(recording, chapter) -> None:
    _, engine, system = chapter
    client = ReplayClient(recording)
    with pytest.raises(ReplayMismatchError, match="opening messages"):
        agent_loop(
            [{"role": "user", "content": "something else"}],
            client=client,
            model=client.model,
            engine=engine,
            system=system,
            as_of=recording.as_of,
        )


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("format",), "v2", "format"),
        (("exchanges", 0, "response", "stop_reason"), "done", "stop_reason"),
        (("exchanges", 0, "response", "content", 0, "type"), "image", "content\\[0\\].type"),
        (("exchanges", 0, "response", "content", 1, "input"), "q", "content\\[1\\].input"),
        (("exchanges", 1, "expect", "surprise"), 1, "unknown key"),
        (("messages",), [], "messages"),
    ],
)
def test_a_malformed_recording_is_rejected_naming_the_field(
    recording, path, value, message
) -> None:
    payload = copy.deepcopy(recording.payload)
    target = payload
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ReplayFormatError, match=message):
        Recording(payload)


def test_replay_errors_are_memorylib_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(RemoteMemoryError, match=r"bad\.json is not valid JSON"):
        load_recording(bad)


def test_importing_replay_imports_no_sdk() -> None:
    code = "import sys, memorylib.replay; sys.exit('anthropic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
