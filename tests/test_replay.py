"""The hand-written script replays through the real agent loop, the replay checks the loop, and
the deterministic stand-in model answers any question through the same loop."""

from __future__ import annotations

import copy
import json
import os
import re
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
    DEFAULT_SCRIPT,
    STAND_IN_LABEL,
    STAND_IN_MODEL,
    ReplayClient,
    ReplayFormatError,
    ReplayMismatchError,
    ReplayScript,
    StandInModel,
    derive_query,
    load_script,
    read_tool_hits,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def script() -> ReplayScript:
    return load_script()


@pytest.fixture
def chapter(teaching_store: RemoteMemoryStore) -> tuple[RemoteMemoryStore, RecallEngine, str]:
    return teaching_store, RecallEngine(teaching_store), build_system_prompt(teaching_store)


def replay(script, engine, system, *, model=None, max_turns=6):
    client = ReplayClient(script)
    events = []
    messages = agent_loop(
        script.messages,
        client=client,
        model=model or client.model,
        engine=engine,
        system=system,
        as_of=script.as_of,
        on_event=events.append,
        max_turns=max_turns,
    )
    return client, events, messages


def test_the_script_is_the_default_file_and_the_chapter_clock(script: ReplayScript) -> None:
    assert DEFAULT_SCRIPT == ROOT / "data" / "agent_replay.json"
    assert script.as_of == TEACHING_AS_OF
    assert len(script) == 2


def test_every_scripted_response_has_the_messages_api_shape(script: ReplayScript) -> None:
    types = pytest.importorskip("anthropic.types")
    for exchange in script.exchanges:
        message = types.Message.model_validate(exchange["response"])
        assert message.role == "assistant"
    first, last = (e["response"] for e in script.exchanges)
    assert first["stop_reason"] == "tool_use"
    assert [b["type"] for b in first["content"]] == ["text", "tool_use"]
    assert first["content"][1]["name"] == "recall_history"
    assert last["stop_reason"] == "end_turn"
    assert "conversation-003" in last["content"][0]["text"]


def test_the_scripts_query_restates_the_question_never_the_answer(script, chapter) -> None:
    # the rule the script teaches: the words the query shares with what it finds (the hit's
    # snippet) come from the question, not from the answer the model is looking for
    _, engine, _ = chapter
    query = script.exchanges[0]["response"]["content"][1]["input"]["query"]
    result = engine.recall(query, limit=3, as_of=TEACHING_AS_OF)
    question_terms = set(engine.recall(script.question, as_of=TEACHING_AS_OF).query.terms)
    assert result.hits, "the script's query finds nothing"
    for hit in result.hits:
        snippet_terms = set(engine.recall(hit.snippet, as_of=TEACHING_AS_OF).query.terms)
        assert set(result.query.terms) & snippet_terms <= question_terms


def test_the_scripted_answer_says_only_what_the_hits_hold(script, chapter) -> None:
    # every quotation is copied from a returned snippet, and each hit it relies on is cited
    # with its memory_id and captured_at, as the memory rules ask
    _, engine, system = chapter
    _, events, _ = replay(script, engine, system)
    hits = read_tool_hits(events[2].payload["content"])
    answer = events[3].payload["text"]
    quotes = re.findall(r'"([^"]+)"', answer)
    assert quotes and all(any(q in hit.snippet for hit in hits) for q in quotes)
    for hit in hits:
        assert f"memory_id {hit.memory_id}, captured_at {hit.captured_at}" in answer
    assert set(re.findall(r"conversation-\d+", answer)) == {hit.memory_id for hit in hits}


def test_the_script_holds_no_secret_and_no_real_model_id() -> None:
    text = DEFAULT_SCRIPT.read_text(encoding="utf-8")
    assert "sk-" not in text and "api_key" not in text.lower() and "x-api-key" not in text
    assert json.loads(text)["model"] == "hand-written-script"


def test_replay_runs_the_real_loop_with_live_tool_results(script, chapter) -> None:
    store, engine, system = chapter
    before = store.path.read_bytes()
    client, events, messages = replay(script, engine, system)
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
    assert [h["memory_id"] for h in hits] == ["conversation-003"]
    assert "conversation-003" in events[3].payload["text"]
    assert events[4].payload == {"stop_reason": "end_turn"}
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert store.path.read_bytes() == before  # recall is read-only


def test_requests_are_snapshots_of_what_the_loop_sent(script, chapter) -> None:
    _, engine, system = chapter
    client, _, _ = replay(script, engine, system)
    first, second = client.requests
    assert len(first["messages"]) == 1  # not the list the loop kept appending to
    assert [t["name"] for t in first["tools"]] == ["recall_history"]
    assert first["system"].startswith('<remote_profile memory_id="profile-001"')
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_replay_0001"


def test_a_prompt_without_the_profile_is_a_mismatch(script, chapter) -> None:
    _, engine, _ = chapter
    with pytest.raises(ReplayMismatchError, match=r"request 1, system"):
        replay(script, engine, "You are a coding assistant.")


def test_another_model_is_a_mismatch(script, chapter) -> None:
    _, engine, system = chapter
    with pytest.raises(ReplayMismatchError, match=r"request 1, model"):
        replay(script, engine, system, model="some-other-model")


def test_a_store_that_no_longer_ranks_the_cited_record_is_a_mismatch(
    script, tmp_path: Path
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
        replay(script, RecallEngine(store), build_system_prompt(store))


def test_a_loop_that_stops_early_or_asks_too_much_is_a_mismatch(script, chapter) -> None:
    _, engine, system = chapter
    client, _, _ = replay(script, engine, system, max_turns=1)
    with pytest.raises(ReplayMismatchError, match="stopped after 1 of 2"):
        client.assert_finished()
    truncated = copy.deepcopy(script.payload)
    truncated["exchanges"] = truncated["exchanges"][:1]
    with pytest.raises(ReplayMismatchError, match="holds only 1"):
        replay(ReplayScript(truncated), engine, system)


def test_a_changed_question_is_a_mismatch(script, chapter) -> None:
    _, engine, system = chapter
    client = ReplayClient(script)
    with pytest.raises(ReplayMismatchError, match="opening messages"):
        agent_loop(
            [{"role": "user", "content": "something else"}],
            client=client,
            model=client.model,
            engine=engine,
            system=system,
            as_of=script.as_of,
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
def test_a_malformed_recording_is_rejected_naming_the_field(script, path, value, message) -> None:
    payload = copy.deepcopy(script.payload)
    target = payload
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ReplayFormatError, match=message):
        ReplayScript(payload)


def test_replay_errors_are_memorylib_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(RemoteMemoryError, match=r"bad\.json is not valid JSON"):
        load_script(bad)


def test_importing_replay_imports_no_sdk() -> None:
    code = "import sys, memorylib.replay; sys.exit('anthropic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_the_script_says_it_is_hand_written() -> None:
    description = json.loads(DEFAULT_SCRIPT.read_text(encoding="utf-8"))["description"]
    assert description.startswith("A HAND-WRITTEN SCRIPT, not a recording")


def test_an_unknown_tool_result_option_fails_before_any_request(script, chapter) -> None:
    _, engine, system = chapter
    client = ReplayClient(script)
    with pytest.raises(RemoteMemoryError, match="tool_result must be one of"):
        agent_loop(
            script.messages,
            client=client,
            model=client.model,
            engine=engine,
            system=system,
            tool_result="markdown",
        )
    assert client.requests == []


# -- the deterministic stand-in model -------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("How did we pick the SQLite WAL mode?", "pick sqlite wal mode"),
        (
            "What is our policy on shell commands that delete files?",
            "policy shell commands delete files",
        ),
        ("  Recall   the recall CACHE decision, please ", "recall cache decision"),  # once each
        ("我们之前怎么处理上下文预算的？", "处理上下文预算"),
        ("What did we say before?", ""),  # no topic word: nothing to search for
    ],
)
def test_derive_query_keeps_the_topic_words_in_order(question, query) -> None:
    assert derive_query(question) == query


def stand_in_run(engine, system, question, *, tool_result="json"):
    client = StandInModel()
    events = []
    messages = agent_loop(
        [{"role": "user", "content": question}],
        client=client,
        model=client.model,
        engine=engine,
        system=system,
        tool_result=tool_result,
        as_of=TEACHING_AS_OF,
        on_event=events.append,
    )
    return client, events, messages


def test_the_stand_in_calls_the_tool_and_cites_exactly_what_it_returned(chapter) -> None:
    store, engine, system = chapter
    before = store.path.read_bytes()
    question = "How did we decide to split memory into layers?"
    client, events, messages = stand_in_run(engine, system, question)
    assert [e.kind for e in events] == ["text", "tool_use", "tool_result", "text", "stop"]
    assert events[1].payload["input"] == {"query": derive_query(question), "limit": 3}
    hits = json.loads(events[2].payload["content"])["hits"]
    answer = events[3].payload["text"]
    assert hits and answer.startswith(STAND_IN_LABEL)
    for hit in hits:
        assert (
            f"memory_id {hit['memory_id']}, captured_at {hit['provenance']['captured_at']}"
            in answer
        )
    cited = set(re.findall(r"memory_id (\S+),", answer))
    assert cited == {hit["memory_id"] for hit in hits}  # nothing the tool did not return
    assert all(e.payload["text"].startswith(STAND_IN_LABEL) for e in events if e.kind == "text")
    assert [r["model"] for r in client.requests] == [STAND_IN_MODEL] * 2
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert store.path.read_bytes() == before


def test_the_stand_in_answers_the_same_from_the_json_and_from_the_rendered_block(chapter) -> None:
    store, engine, _ = chapter
    question = "What is our policy on shell commands that delete files?"
    runs = {
        path: stand_in_run(
            engine, build_system_prompt(store, tool_result=path), question, tool_result=path
        )
        for path in ("json", "recalled_context")
    }
    (_, json_events, _), (_, xml_events, _) = runs.values()
    assert json_events[2].payload["content"].startswith('{"query"')
    assert xml_events[2].payload["content"].startswith("<recalled_context ")
    assert json_events[3] == xml_events[3]
    assert "conversation-002" in xml_events[3].payload["text"]


def test_read_tool_hits_reads_both_paths_alike(chapter) -> None:
    _, engine, _ = chapter
    result = engine.recall("layered memory user", as_of=TEACHING_AS_OF, query_id="q")
    from memorylib.tool import tool_result_text

    as_json = read_tool_hits(tool_result_text(result, "json"))
    assert as_json == read_tool_hits(tool_result_text(result, "recalled_context"))
    assert [h.memory_id for h in as_json] == [h.memory_id for h in result.hits]
    with pytest.raises(ValueError):
        read_tool_hits('{"error": {"type": "X", "message": "m"}}')


def test_the_stand_in_never_invents_an_answer(chapter) -> None:
    _, engine, system = chapter
    _, events, _ = stand_in_run(engine, system, "What was the kubernetes upgrade plan?")
    assert json.loads(events[2].payload["content"])["hits"] == []
    assert (
        "found nothing" in events[3].payload["text"]
        and "memory_id" not in events[3].payload["text"]
    )
    _, events, _ = stand_in_run(engine, system, "What did we say before?")
    assert [e.kind for e in events] == ["text", "stop"]  # no topic: no tool call
    assert "names no topic" in events[0].payload["text"]
    too_long = " ".join(f"word{i}" for i in range(400))  # a query over the 2,000-char limit
    _, events, _ = stand_in_run(engine, system, too_long)
    assert events[2].payload["is_error"] is True
    assert "rejected the query" in events[3].payload["text"]


def test_the_stand_in_is_deterministic_in_any_process(chapter, tmp_path: Path) -> None:
    store, engine, system = chapter
    questions = [
        "What is our policy on shell commands that delete files?",
        "How did we decide to split memory into layers?",
        "我们之前怎么处理上下文预算的？",
    ]
    code = (
        "import json, sys\n"
        "from memorylib import RecallEngine, RemoteMemoryStore, TEACHING_AS_OF\n"
        "from memorylib import build_system_prompt as prompt\n"
        "from memorylib.agent import agent_loop\n"
        "from memorylib.replay import StandInModel\n"
        "store = RemoteMemoryStore(sys.argv[1])\n"
        "out = []\n"
        "for q in json.loads(sys.argv[2]):\n"
        "    client = StandInModel()\n"
        "    out.append(agent_loop([{'role': 'user', 'content': q}], client=client,\n"
        "        model=client.model, engine=RecallEngine(store), system=prompt(store),\n"
        "        as_of=TEACHING_AS_OF))\n"
        "print(json.dumps(out, ensure_ascii=False))\n"
    )
    here = [stand_in_run(engine, system, q)[2] for q in questions]
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code, str(store.path), json.dumps(questions)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert json.loads(done.stdout) == here
