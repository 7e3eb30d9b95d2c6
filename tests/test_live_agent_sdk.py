"""The live path with the real anthropic SDK, against a local server that speaks the Messages API.

The server (stdlib ``http.server`` on 127.0.0.1, in a thread) answers ``tool_use`` then
``end_turn`` and records every request, so the SDK's own request building, headers and
response parsing run offline, on both tool-result paths (the JSON, and the rendered
``<recalled_context>``). Also: notebook 09's helpers (``run_agent`` in its three modes,
configuration errors, redaction, the exercise checker).
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memorylib import (
    TEACHING_AS_OF,
    ConfigurationError,
    RecallEngine,
    RemoteMemoryStore,
    build_system_prompt,
    recall_history,
    render_recall_context,
    runtime_client,
)
from memorylib.agent import agent_loop
from memorylib.notebook import live_agent
from memorylib.replay import STAND_IN_LABEL, derive_query, load_script, read_tool_hits
from memorylib.tool import TOOL_RESULT_FORMATS, memory_rules

anthropic = pytest.importorskip("anthropic")

SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "09_live_agent.py"
SECRET = "sk-ant-test-0123456789-secret"
CONFIG_VARIABLES = ("MODEL_ID", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
TOOL_QUERY = "splitting memory into layers, layered memory"


def message(content: list[dict[str, Any]], stop_reason: str, n: int) -> dict[str, Any]:
    return {
        "id": f"msg_local_{n}",
        "type": "message",
        "role": "assistant",
        "model": "model-from-config",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


TOOL_USE = message(
    [
        {"type": "text", "text": "Let me search your history."},
        {
            "type": "tool_use",
            "id": "toolu_local_1",
            "name": "recall_history",
            "input": {"query": TOOL_QUERY, "limit": 3},
        },
    ],
    "tool_use",
    1,
)
FINAL = message([{"type": "text", "text": "Layered memory: see conversation-003."}], "end_turn", 2)


class FakeMessagesAPI:
    """Scripted (status, body) replies to POST /v1/messages; every request is recorded."""

    def __init__(self, replies: list[tuple[int, dict[str, Any]]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                api.requests.append({"path": self.path, "headers": headers, "body": body})
                status, reply = api.replies.pop(0) if api.replies else (500, {"type": "error"})
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeMessagesAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI([(200, TOOL_USE), (200, FINAL)]) as server:
        yield server


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in CONFIG_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def engine(teaching_store: RemoteMemoryStore) -> RecallEngine:
    return RecallEngine(teaching_store)


def credential(request: dict[str, Any]) -> str:
    """The key as the SDK sent it (``x-api-key`` or ``authorization: Bearer``, by version)."""
    headers = request["headers"]
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def expected_tool_json(engine: RecallEngine) -> str:
    return recall_history(
        TOOL_QUERY,
        3,
        engine=RecallEngine(engine.store),
        as_of=TEACHING_AS_OF,
        query_id="query-1-1",
    )


def test_sdk_round_trip_through_the_agent_loop(api: FakeMessagesAPI, engine) -> None:
    client = anthropic.Anthropic(base_url=api.url, api_key="test-key", max_retries=0)
    events = []
    messages = agent_loop(
        [{"role": "user", "content": "How did we layer memory?"}],
        client=client,
        model="model-from-config",
        engine=engine,
        system=build_system_prompt(engine.store),
        as_of=TEACHING_AS_OF,
        on_event=events.append,
    )
    first, second = api.requests
    assert first["path"] == "/v1/messages"
    assert credential(first) == "test-key"  # the SDK sent it; nothing else may show it
    assert "anthropic-version" in first["headers"]
    body = first["body"]
    assert body["model"] == "model-from-config"
    assert [tool["name"] for tool in body["tools"]] == ["recall_history"]
    assert body["tools"][0]["input_schema"]["required"] == ["query"]
    assert body["system"].startswith('<remote_profile memory_id="profile-001"')
    assert body["messages"] == [{"role": "user", "content": "How did we layer memory?"}]
    # the second request carries the assistant turn back and the real tool JSON
    sent = second["body"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][1] == TOOL_USE["content"][1]
    (result,) = sent[2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_local_1"
    assert result["content"] == expected_tool_json(engine)
    assert result["is_error"] is False
    assert json.loads(result["content"])["hits"][0]["memory_id"] == "conversation-003"
    assert [e.kind for e in events] == ["text", "tool_use", "tool_result", "text", "stop"]
    assert messages[-1]["content"] == [{"type": "text", "text": FINAL["content"][0]["text"]}]
    shown = json.dumps([e.payload for e in events]) + json.dumps(messages)
    assert "test-key" not in shown


def test_sdk_round_trip_can_deliver_the_rendered_context(api: FakeMessagesAPI, engine) -> None:
    """The option: the tool result is render_recall_context of the same RecallResult, and
    the tool description and the memory rules the SDK sends name that block."""
    client = anthropic.Anthropic(base_url=api.url, api_key="test-key", max_retries=0)
    system = build_system_prompt(engine.store, tool_result="recalled_context")
    agent_loop(
        [{"role": "user", "content": "How did we layer memory?"}],
        client=client,
        model="model-from-config",
        engine=engine,
        system=system,
        tool_result="recalled_context",
        as_of=TEACHING_AS_OF,
    )
    first, second = api.requests
    (tool,) = first["body"]["tools"]
    assert "Returns a <recalled_context> XML block" in tool["description"]
    assert "Returns JSON" not in tool["description"]
    assert first["body"]["system"].endswith(memory_rules("recalled_context"))
    (result,) = second["body"]["messages"][2]["content"]
    same = RecallEngine(engine.store).recall(
        TOOL_QUERY, limit=3, as_of=TEACHING_AS_OF, query_id="query-1-1"
    )
    assert result["content"] == render_recall_context(same)
    assert result["content"].startswith('<recalled_context query_id="query-1-1"')
    assert result["is_error"] is False


def test_run_agent_live_uses_the_configuration_and_never_shows_the_key(
    api: FakeMessagesAPI, engine, clean_env, capsys
) -> None:
    clean_env.setenv("MODEL_ID", "model-from-config")
    clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
    clean_env.setenv("ANTHROPIC_BASE_URL", api.url)
    run = live_agent.run_agent(
        "live",
        engine=engine,
        system=build_system_prompt(engine.store),
        question="How did we layer memory?",
        on_event=lambda event: print(live_agent.format_event(event)),
    )
    assert run.ok, run.error
    assert run.final_text == "Layered memory: see conversation-003."
    assert [r["body"]["model"] for r in api.requests] == ["model-from-config"] * 2
    assert credential(api.requests[0]) == SECRET
    assert api.requests[1]["body"]["messages"][2]["content"][0]["content"] == expected_tool_json(
        engine
    )
    printed = capsys.readouterr()
    everything = (
        printed.out
        + printed.err
        + live_agent.format_transcript(run)
        + json.dumps(run.messages)
        + json.dumps([e.payload for e in run.events])
        + repr(run)
    )
    assert SECRET not in everything
    assert "tool_use    recall_history" in printed.out


@pytest.mark.parametrize(
    ("status", "error_type", "expected"),
    [
        (401, "authentication_error", "check ANTHROPIC_API_KEY (HTTP 401)"),
        (404, "not_found_error", "is MODEL_ID ('model-from-config') a model id"),
        (400, "invalid_request_error", "rejected the request: bad thing [redacted] (HTTP 400)"),
    ],
)
def test_a_rejected_configuration_is_a_message_not_a_traceback(
    engine, clean_env, status, error_type, expected
) -> None:
    reply = {"type": "error", "error": {"type": error_type, "message": f"bad thing {SECRET}"}}
    with FakeMessagesAPI([(status, reply)]) as server:
        clean_env.setenv("MODEL_ID", "model-from-config")
        clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
        clean_env.setenv("ANTHROPIC_BASE_URL", server.url)
        run = live_agent.run_agent(
            "live", engine=engine, system=build_system_prompt(engine.store), question="hi"
        )
    assert not run.ok
    assert run.error.startswith("live mode failed: ")
    assert expected in run.error
    assert SECRET not in run.error and "Traceback" not in run.error


@pytest.mark.parametrize("body", [b"<html>a login page</html>", b'"a JSON string"'])
def test_a_server_that_is_not_the_api_is_a_message(engine, clean_env, body) -> None:
    with FakeMessagesAPI([(200, body)]) as server:
        clean_env.setenv("MODEL_ID", "model-from-config")
        clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
        clean_env.setenv("ANTHROPIC_BASE_URL", server.url)
        run = live_agent.run_agent("live", engine=engine, system="s", question="hi")
    assert run.error is not None and run.error.startswith("live mode failed: ")
    assert "ANTHROPIC_BASE_URL" in run.error and SECRET not in run.error


def test_an_unreachable_api_is_a_message(engine, clean_env) -> None:
    with FakeMessagesAPI([]) as server:
        url = server.url  # closed when the block ends: nothing listens there any more
    clean_env.setenv("MODEL_ID", "model-from-config")
    clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
    clean_env.setenv("ANTHROPIC_BASE_URL", url)
    run = live_agent.run_agent("live", engine=engine, system="s", question="hi")
    assert run.error is not None and "could not reach the Messages API" in run.error


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, "MODEL_ID is not set"),
        ({"MODEL_ID": "model-from-config"}, "ANTHROPIC_API_KEY is not set"),
    ],
)
def test_missing_configuration_gives_the_configuration_error_text(
    engine, clean_env, variables, expected
) -> None:
    for name, value in variables.items():
        clean_env.setenv(name, value)
    with pytest.raises(ConfigurationError) as raised:
        runtime_client()
    run = live_agent.run_agent("live", engine=engine, system="s", question="hi")
    assert run.error == str(raised.value)
    assert expected in run.error
    assert run.events == ()


def test_redact_hides_the_key(clean_env) -> None:
    clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
    assert live_agent.redact(f"key={SECRET}!") == "key=[redacted]!"


# -- the offline modes through the notebook helper ------------------------------------------


def test_run_agent_script_is_offline_and_complete(engine, clean_env) -> None:
    run = live_agent.run_agent("script", engine=engine, system=build_system_prompt(engine.store))
    assert run.ok, run.error
    assert run.question == load_script().question
    assert "conversation-003" in run.final_text
    assert len(run.requests) == 2
    assert [m["role"] for m in run.requests[1]["messages"]] == ["user", "assistant", "user"]
    transcript = live_agent.format_transcript(run)
    assert transcript.startswith("[script] user: ")
    assert "\nscript: " in transcript and "\nmodel: " not in transcript  # says who wrote it
    assert "tool_use    recall_history" in transcript and "stop: end_turn" in transcript
    assert "#1 conversation-003" in transcript and "#2 " not in transcript


@pytest.mark.parametrize("tool_result", ["json", "recalled_context"])
def test_run_agent_stand_in_answers_any_question_offline(engine, clean_env, tool_result) -> None:
    question = "What is our policy on shell commands that delete files?"
    run = live_agent.run_agent(
        "stand-in",
        engine=engine,
        system=build_system_prompt(engine.store, tool_result=tool_result),
        question=question,
        tool_result=tool_result,
    )
    assert run.ok, run.error
    assert [e.kind for e in run.events] == ["text", "tool_use", "tool_result", "text", "stop"]
    assert run.events[1].payload["input"]["query"] == derive_query(question)
    assert run.events[2].payload["content"].startswith("{" if tool_result == "json" else "<")
    assert "conversation-002, captured_at 2026-07-15T14:00:00Z" in run.final_text
    texts = [e.payload["text"] for e in run.events if e.kind == "text"]
    assert all(text.startswith(STAND_IN_LABEL) for text in texts)
    assert [r["model"] for r in run.requests] == ["stand-in-model"] * 2


def test_run_agent_script_reports_a_mismatch_as_a_message(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "empty.jsonl")
    run = live_agent.run_agent("script", engine=RecallEngine(store), system="no profile")
    assert not run.ok and run.error.startswith("script mismatch: request 1, system")


@pytest.mark.parametrize(
    ("mode", "question", "expected"),
    [
        ("replay", None, "MODE must be one of ('stand-in', 'script', 'live')"),
        ("script", "Another question?", "the script can only play its own question"),
    ],
)
def test_run_agent_rejects_a_bad_mode_or_question(engine, mode, question, expected) -> None:
    run = live_agent.run_agent(mode, engine=engine, system="s", question=question)
    assert not run.ok and expected in run.error


def test_run_agent_says_the_script_plays_only_the_json_path(engine) -> None:
    # the replay checks the hit ids of a JSON tool result: on the rendered path it would
    # fail on request 2 with a mismatch a student cannot read; it says why before request 1
    system = build_system_prompt(engine.store, tool_result="recalled_context")
    run = live_agent.run_agent(
        "script", engine=engine, system=system, tool_result="recalled_context"
    )
    assert not run.ok and "written for the JSON path" in run.error
    assert run.events == () and run.requests == ()


# -- your turn ----------------------------------------------------------------------------------


def load_solution() -> Any:
    spec = importlib.util.spec_from_file_location("solution_09", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checker_accepts_the_reference_solution(engine) -> None:
    answer = load_solution().my_query
    assert live_agent.check_restated_query(answer, engine, as_of=TEACHING_AS_OF).is_right
    assert "conversation-001 ranks first" in str(
        live_agent.check_restated_query(answer, engine, as_of=TEACHING_AS_OF)
    )


@pytest.mark.parametrize(
    ("answer", "mark", "hint"),
    [
        (..., "⏳", "Not answered yet"),
        (42, "❌", "must be a str"),
        ("   ", "❌", "rejected it"),
        ("what we said earlier", "❌", "No hits"),
        ("transcript format", "❌", "does not stem"),
        # the chat's topic word in another form: right by accident nowhere
        ("transcript", "❌", "No hits"),
        ("transcript file format", "❌", "top hit is conversation-003"),
        ("transcripts", "❌", "support-calls-001"),
        ("SQLite WAL persistence", "❌", "top hit is conversation-004"),
        # the stand-in's own query: the question alone, without what 'those' stands for
        (derive_query(live_agent.EXERCISE_QUESTION), "❌", "top hit is conversation-003"),
        # right on the notebook's store, wrong beside records it never showed
        ("saving transcripts", "❌", "support-calls-001"),
        ("session", "❌", "session-tokens-001"),
        # right by accident: the answer itself finds the record, but the model cannot know it
        ("session transcripts JSONL", "❌", "'jsonl' is a form of a word of the record's answer"),
        ("append-only session transcripts", "❌", "'append' is a form"),
        # other forms of the answer's words: another ending, a shorter name, an irregular form
        (
            "json lines appended file format for session transcripts",
            "❌",
            "'appended', 'json' are forms of a word of the record's answer",
        ),
        ("session transcripts that crashes cannot corrupt", "❌", "'crashes' is a form"),
        ("session transcripts never torn", "❌", "'torn' is a form"),
    ],
)
def test_the_checker_rejects_wrong_answers_with_a_hint(engine, answer, mark, hint) -> None:
    verdict = str(live_agent.check_restated_query(answer, engine, as_of=TEACHING_AS_OF))
    assert verdict.startswith(mark) and hint in verdict


@pytest.mark.parametrize(
    ("terms", "refused"),
    [
        # the topic's words, even long ones, are never refused
        (["session", "transcripts", "file", "format", "recorder", "saves"], []),
        # four shared first letters make another form; fewer do not
        (
            ["jsonlines", "appending", "crashed", "tears", "tore"],
            ["jsonlines", "appending", "crashed", "tears", "tore"],
        ),
        (["jso", "app", "team", "crane"], []),
    ],
)
def test_answer_forms_refuses_every_form_of_an_answer_word(terms, refused) -> None:
    assert live_agent.answer_forms(terms) == refused


def test_the_exercise_needs_the_chat_the_stand_in_never_reads() -> None:
    # the question alone does not say what 'those' are; the earlier turn of the chat does
    chat = " ".join(m["content"] for m in live_agent.EXERCISE_CHAT).lower()
    assert "transcripts" not in live_agent.EXERCISE_QUESTION.lower() and "transcripts" in chat
    assert live_agent.EXERCISE_CHAT[-1]["content"] == live_agent.EXERCISE_QUESTION


@pytest.mark.parametrize("tool_result", TOOL_RESULT_FORMATS)
def test_asking_the_stand_in_first_does_not_give_the_exercise_away(
    engine, teaching_store, tool_result
) -> None:
    # The notebook tells the student to ask the stand-in the exercise's question first: its
    # run must neither retrieve the target record (whose snippet states the answer) nor
    # write a word of the answer, and its own query must fail the check.
    run = live_agent.run_agent(
        "stand-in",
        engine=engine,
        system=build_system_prompt(teaching_store, tool_result=tool_result),
        question=live_agent.EXERCISE_QUESTION,
        tool_result=tool_result,
        as_of=TEACHING_AS_OF,
    )
    assert run.ok, run.error
    (result,) = [e.payload for e in run.events if e.kind == "tool_result"]
    hits = [hit.memory_id for hit in read_tool_hits(result["content"])]
    assert hits and live_agent.EXERCISE_TARGET not in hits
    answer = run.final_text  # what the stand-in writes: it quotes each hit's snippet
    assert live_agent.EXERCISE_TARGET not in answer
    words = "".join(c if c.isalnum() else " " for c in answer.casefold()).split()
    assert live_agent.answer_forms(words) == []
    (query,) = [e.payload["input"]["query"] for e in run.events if e.kind == "tool_use"]
    assert not live_agent.check_restated_query(query, engine, as_of=TEACHING_AS_OF).is_right
