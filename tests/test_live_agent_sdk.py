"""The live path with the real anthropic SDK, against a local server that speaks the Messages API.

The server (stdlib ``http.server`` on 127.0.0.1, in a thread) answers ``tool_use`` then
``end_turn`` and records every request, so the SDK's own request building, headers and
response parsing run offline, on both tool-result paths (the JSON, and the rendered
``<recalled_context>``). Also: notebook 09's harness cells as saved (``run_agent`` in its
three modes, with ``memorylib.runtime``'s readable errors and redaction) and the exercise
checker (``memorylib.notebook.live_agent``).
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
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
from memorylib.runtime import live_error, redact
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


# -- notebook 09's harness: its run_agent and print_transcript, run as saved ------------------

NOTEBOOK = SOLUTION.parents[1] / "09_live_agent.ipynb"
HARNESS_CELLS = ("cd8822e2", "nb09-run-agent", "nb09-transcript")  # set-up, then the harness


@pytest.fixture
def notebook(capsys) -> dict[str, Any]:
    """The namespace of notebook 09 after its set-up cell and its two harness cells."""
    cells = {c.get("id"): c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells}
    namespace: dict[str, Any] = {}
    for cell_id in HARNESS_CELLS:
        exec(compile(cells[cell_id], cell_id, "exec"), namespace)
    capsys.readouterr()  # the set-up cell's own output
    return namespace


def final_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in messages[-1]["content"] if b["type"] == "text")


def live(clean_env: pytest.MonkeyPatch, url: str) -> None:
    clean_env.setenv("MODEL_ID", "model-from-config")
    clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
    clean_env.setenv("ANTHROPIC_BASE_URL", url)


def test_run_agent_live_uses_the_configuration_and_never_shows_the_key(
    api: FakeMessagesAPI, notebook, clean_env, capsys
) -> None:
    live(clean_env, api.url)
    messages, events, error = notebook["run_agent"]("live", "How did we layer memory?")
    assert error is None
    assert final_text(messages) == "Layered memory: see conversation-003."
    assert [r["body"]["model"] for r in api.requests] == ["model-from-config"] * 2
    assert credential(api.requests[0]) == SECRET
    sent = api.requests[1]["body"]["messages"][2]["content"][0]["content"]
    assert sent == expected_tool_json(notebook["engine"])
    notebook["print_transcript"]("live", "How did we layer memory?", events, error)
    printed = capsys.readouterr()
    everything = printed.out + printed.err + json.dumps(messages)
    assert SECRET not in everything + json.dumps([e.payload for e in events])
    assert "tool_use    recall_history" in printed.out and "\nmodel: Layered" in printed.out


@pytest.mark.parametrize(
    ("status", "error_type", "expected"),
    [
        (401, "authentication_error", "check ANTHROPIC_API_KEY (HTTP 401)"),
        (404, "not_found_error", "is MODEL_ID ('model-from-config') a model id"),
        (400, "invalid_request_error", "rejected the request: bad thing [redacted] (HTTP 400)"),
    ],
)
def test_a_rejected_configuration_is_a_message_not_a_traceback(
    notebook, clean_env, status, error_type, expected
) -> None:
    reply = {"type": "error", "error": {"type": error_type, "message": f"bad thing {SECRET}"}}
    with FakeMessagesAPI([(status, reply)]) as server:
        live(clean_env, server.url)
        _, _, error = notebook["run_agent"]("live", "hi")
    assert error.startswith("live mode failed: ")
    assert expected in error
    assert SECRET not in error and "Traceback" not in error


@pytest.mark.parametrize("body", [b"<html>a login page</html>", b'"a JSON string"'])
def test_a_server_that_is_not_the_api_is_a_message(notebook, clean_env, body) -> None:
    with FakeMessagesAPI([(200, body)]) as server:
        live(clean_env, server.url)
        _, _, error = notebook["run_agent"]("live", "hi")
    assert error is not None and error.startswith("live mode failed: ")
    assert "ANTHROPIC_BASE_URL" in error and SECRET not in error


def test_an_unreachable_api_is_a_message(notebook, clean_env) -> None:
    with FakeMessagesAPI([]) as server:
        url = server.url  # closed when the block ends: nothing listens there any more
    live(clean_env, url)
    _, _, error = notebook["run_agent"]("live", "hi")
    assert error is not None and "could not reach the Messages API" in error


def test_a_harness_fault_is_raised_not_hidden(notebook) -> None:
    def create(**request: Any) -> Any:
        raise ZeroDivisionError("a bug of the harness, not of the API call")

    client = SimpleNamespace(messages=SimpleNamespace(create=create))
    notebook["runtime_client"] = lambda: (client, "model-from-config")
    assert live_error(ZeroDivisionError(), "model-from-config") is None
    with pytest.raises(ZeroDivisionError):
        notebook["run_agent"]("live", "hi")


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, "MODEL_ID is not set"),
        ({"MODEL_ID": "model-from-config"}, "ANTHROPIC_API_KEY is not set"),
    ],
)
def test_missing_configuration_gives_the_configuration_error_text(
    notebook, clean_env, variables, expected
) -> None:
    for name, value in variables.items():
        clean_env.setenv(name, value)
    with pytest.raises(ConfigurationError) as raised:
        runtime_client()
    _, events, error = notebook["run_agent"]("live", "hi")
    assert error == str(raised.value)
    assert expected in error
    assert events == []


def test_redact_hides_the_key(clean_env) -> None:
    clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
    assert redact(f"key={SECRET}!") == "key=[redacted]!"


def test_run_agent_script_is_offline_and_complete(notebook, clean_env, capsys) -> None:
    question = load_script().question
    messages, events, error = notebook["run_agent"]("script", question)
    assert error is None
    assert "conversation-003" in final_text(messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    notebook["print_transcript"]("script", question, events, error)
    transcript = capsys.readouterr().out
    assert transcript.startswith("[script] user: ")
    assert "\nscript: " in transcript and "\nmodel: " not in transcript  # says who wrote it
    assert "tool_use    recall_history" in transcript and "stop: end_turn" in transcript
    assert "#1 conversation-003" in transcript and "#2 " not in transcript


@pytest.mark.parametrize("tool_result", ["json", "recalled_context"])
def test_run_agent_stand_in_answers_any_question_offline(notebook, clean_env, tool_result) -> None:
    question = "What is our policy on shell commands that delete files?"
    messages, events, error = notebook["run_agent"]("stand-in", question, tool_result)
    assert error is None
    assert [e.kind for e in events] == ["text", "tool_use", "tool_result", "text", "stop"]
    assert events[1].payload["input"]["query"] == derive_query(question)
    assert events[2].payload["content"].startswith("{" if tool_result == "json" else "<")
    assert "conversation-002, captured_at 2026-07-15T14:00:00Z" in final_text(messages)
    texts = [e.payload["text"] for e in events if e.kind == "text"]
    assert all(text.startswith(STAND_IN_LABEL) for text in texts)


def test_run_agent_script_reports_a_mismatch_as_a_message(notebook, tmp_path: Path) -> None:
    notebook["store"] = RemoteMemoryStore(tmp_path / "empty.jsonl")  # no profile to inject
    notebook["engine"] = RecallEngine(notebook["store"])
    _, _, error = notebook["run_agent"]("script", load_script().question)
    assert error.startswith("script mismatch: request 1, system")


@pytest.mark.parametrize(
    ("mode", "question", "tool_result", "expected"),
    [
        ("replay", "hi", "json", "MODE must be 'stand-in', 'script' or 'live'"),
        ("script", "Another question?", "json", "the script plays only its own question"),
        # the replay checks the hit ids of a JSON tool result: it says so before request 1
        ("script", None, "recalled_context", "on the JSON path"),
    ],
)
def test_run_agent_rejects_a_bad_mode_question_or_path(
    notebook, mode, question, tool_result, expected
) -> None:
    question = question or load_script().question
    _, events, error = notebook["run_agent"](mode, question, tool_result)
    assert expected in error and events == []


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


def test_the_exercise_needs_the_chat_the_stand_in_never_reads(notebook) -> None:
    # the question alone does not say what 'those' are; the earlier turn of the chat does
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    (cell,) = [c for c in cells if c.cell_type == "code" and "my_query = ..." in c.source]
    exec(cell.source, notebook)
    assert notebook["chat"][-1] == ("user", live_agent.EXERCISE_QUESTION)
    earlier = " ".join(text for _, text in notebook["chat"][:-1]).lower()
    assert "transcripts" not in live_agent.EXERCISE_QUESTION.lower() and "transcripts" in earlier


@pytest.mark.parametrize("tool_result", TOOL_RESULT_FORMATS)
def test_asking_the_stand_in_first_does_not_give_the_exercise_away(
    engine, notebook, tool_result
) -> None:
    # The notebook tells the student to ask the stand-in the exercise's question first: its
    # run must neither retrieve the target record (whose snippet states the answer) nor
    # write a word of the answer, and its own query must fail the check.
    _, events, error = notebook["run_agent"]("stand-in", live_agent.EXERCISE_QUESTION, tool_result)
    assert error is None
    (result,) = [e.payload for e in events if e.kind == "tool_result"]
    hits = [hit.memory_id for hit in read_tool_hits(result["content"])]
    assert hits and live_agent.EXERCISE_TARGET not in hits
    answer = events[-2].payload["text"]  # what the stand-in writes: it quotes each hit's snippet
    assert live_agent.EXERCISE_TARGET not in answer
    words = "".join(c if c.isalnum() else " " for c in answer.casefold()).split()
    assert live_agent.answer_forms(words) == []
    (query,) = [e.payload["input"]["query"] for e in events if e.kind == "tool_use"]
    assert not live_agent.check_restated_query(query, engine, as_of=TEACHING_AS_OF).is_right
