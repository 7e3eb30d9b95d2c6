"""Notebook 09 helpers: run the chapter's agent loop in replay or live mode, and show it.

Both modes call the same ``memorylib.agent.agent_loop`` with the same engine, tool and
profile-bearing system prompt; only the client differs:

* ``"replay"`` (default, offline): a ``ReplayClient`` answers from ``data/agent_replay.json``
  and checks every request the loop sends; the tool results are computed live;
* ``"live"``: ``runtime_client()`` builds the anthropic client; the model id comes from
  ``MODEL_ID`` only. A missing or rejected configuration becomes ``AgentRun.error``, a
  one-paragraph message (never a traceback), and the key never appears in it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from memorylib.agent import AgentEvent, agent_loop
from memorylib.engine import RecallEngine
from memorylib.notebook.exercises import CheckResult, check_value, right, wrong
from memorylib.replay import Recording, ReplayClient, ReplayError, load_recording
from memorylib.runtime import ConfigurationError, runtime_client
from memorylib.tool import run_recall_tool

__all__ = [
    "EXERCISE_ANSWER_TERMS",
    "EXERCISE_QUESTION",
    "EXERCISE_TARGET",
    "MODES",
    "AgentRun",
    "check_restated_query",
    "cited_memory_ids",
    "format_event",
    "format_transcript",
    "missing_configuration_message",
    "print_event",
    "redact",
    "requests_frame",
    "run_agent",
    "tool_hits_frame",
    "tool_result_json",
]

MODES = ("replay", "live")
_SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_CONFIG_VARIABLES = ("MODEL_ID", *_SECRET_VARIABLES)


@dataclass(frozen=True)
class AgentRun:
    """What one run of the loop produced: its events and messages, or a readable error."""

    mode: str
    question: str
    events: tuple[AgentEvent, ...] = ()
    messages: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    requests: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def final_text(self) -> str:
        """The text of the last assistant turn ("" when the run failed before one)."""
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                return "\n".join(
                    b["text"] for b in message.get("content", []) if b.get("type") == "text"
                )
        return ""

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result the loop produced, parsed from its JSON text."""
        return [json.loads(e.payload["content"]) for e in self.events if e.kind == "tool_result"]


def redact(text: str) -> str:
    """``text`` with the value of any API key variable replaced by ``[redacted]``."""
    for name in _SECRET_VARIABLES:
        secret = os.environ.get(name) or ""
        if len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


# -- running ------------------------------------------------------------------------------


_NOT_THE_API = (
    "the server did not answer like the Messages API: if you set ANTHROPIC_BASE_URL, "
    "check that it points at the API"
)


class _NotTheAPIError(Exception):
    pass


def _api_error_message(exc: Exception, model: str) -> str | None:
    """A readable message for an anthropic SDK error, or None when ``exc`` is not one."""
    if isinstance(exc, json.JSONDecodeError):  # the SDK passes a non-JSON body through
        return _NOT_THE_API
    try:
        import anthropic
    except ImportError:  # pragma: no cover - runtime_client already needed it
        return None
    if isinstance(exc, anthropic.APIConnectionError):
        return (
            "could not reach the Messages API (connection failed or timed out): check the "
            "network, or ANTHROPIC_BASE_URL if you set one"
        )
    if not isinstance(exc, anthropic.APIStatusError):
        if isinstance(exc, anthropic.APIError):  # e.g. a response that does not validate
            return f"the API call failed ({type(exc).__name__})"
        return None
    status = exc.status_code
    if isinstance(exc, anthropic.AuthenticationError):
        hint = "the API rejected the key: check ANTHROPIC_API_KEY"
    elif isinstance(exc, anthropic.PermissionDeniedError):
        hint = "the key is not allowed to do this: check the key's workspace and permissions"
    elif isinstance(exc, anthropic.NotFoundError):
        hint = f"not found: is MODEL_ID ({model!r}) a model id your account can use?"
    elif isinstance(exc, anthropic.RateLimitError):
        hint = "rate limited: wait a minute and run the cell again"
    else:
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = (body.get("error") or {}).get("message") if body else None
        hint = f"the API rejected the request: {detail or type(exc).__name__}"
    return f"{hint} (HTTP {status})"


def run_agent(
    mode: str,
    *,
    engine: RecallEngine,
    system: str,
    question: str | None = None,
    recording: Recording | None = None,
    as_of: str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    max_turns: int = 6,
) -> AgentRun:
    """Run the loop once in ``mode`` and return an ``AgentRun`` (never raises for config).

    Replay: the question and ``as_of`` come from the recording (default
    ``data/agent_replay.json``); a request the recording did not expect is an error.
    Live: ``question`` (default: the recording's), ``as_of`` (default: the recording's,
    so both modes read the same frozen store the same way).
    """
    recording = recording if recording is not None else load_recording()
    as_of = as_of if as_of is not None else recording.as_of
    events: list[AgentEvent] = []

    def emit(event: AgentEvent) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    if mode not in MODES:
        return AgentRun(
            mode=str(mode),
            question=question or recording.question,
            error=f"MODE must be 'replay' or 'live', got {mode!r}",
        )
    if mode == "replay":
        if question is not None and question != recording.question:
            return AgentRun(
                mode=mode,
                question=question,
                error="replay mode can only replay the recorded question; switch MODE to 'live' "
                "to ask your own",
            )
        client: Any = ReplayClient(recording)
        model = recording.model
        messages = recording.messages
    else:
        try:
            client, model = runtime_client()
        except ConfigurationError as exc:
            return AgentRun(
                mode=mode, question=question or recording.question, error=redact(str(exc))
            )
        messages = [{"role": "user", "content": question or recording.question}]
    asked = messages[0]["content"]
    try:
        agent_loop(
            messages,
            client=client,
            model=model,
            engine=engine,
            system=system,
            as_of=as_of,
            on_event=emit,
            max_turns=max_turns,
        )
        if isinstance(client, ReplayClient):
            client.assert_finished()
        elif events and events[-1].kind == "stop" and events[-1].payload["stop_reason"] is None:
            raise _NotTheAPIError  # a 200 whose JSON is not a Messages API response
    except ReplayError as exc:
        error = f"replay mismatch: {exc}"
    except _NotTheAPIError:
        error = f"live mode failed: {_NOT_THE_API}"
    except Exception as exc:
        message = _api_error_message(exc, model) if mode == "live" else None
        if message is None:
            raise
        error = f"live mode failed: {message}"
    else:
        error = None
    requests = tuple(client.requests) if isinstance(client, ReplayClient) else ()
    return AgentRun(
        mode=mode,
        question=asked,
        events=tuple(events),
        messages=tuple(messages),
        error=redact(error) if error else None,
        requests=requests,
    )


@contextmanager
def _without_configuration() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in _CONFIG_VARIABLES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def missing_configuration_message() -> str:
    """What live mode says on a machine with no configuration (the real check, run now).

    The environment is restored afterwards, so the output is the same on every machine.
    """
    with _without_configuration():
        try:
            runtime_client()
        except ConfigurationError as exc:
            return f"ConfigurationError: {exc}"
    return "no error"  # pragma: no cover - runtime_client always fails without MODEL_ID


# -- showing ------------------------------------------------------------------------------


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_event(event: AgentEvent) -> str:
    """One event as the transcript shows it (tool results summarised, not dumped)."""
    payload = event.payload
    if event.kind == "text":
        return f"assistant: {payload['text']}"
    if event.kind == "tool_use":
        return f"tool_use   {payload['name']}({json.dumps(payload['input'], ensure_ascii=False)})"
    if event.kind == "tool_result":
        try:
            data = json.loads(payload["content"])
        except ValueError:
            return f"tool_result (is_error={payload['is_error']}): {_one_line(payload['content'])}"
        if "error" in data:
            error = data["error"]
            return f"tool_result is_error=True: {error['type']}: {_one_line(error['message'])}"
        lines = [
            f"tool_result query_id={data['query']['query_id']} terms={data['query']['terms']}: "
            f"searched {data['searched_records']}, candidates {data['candidate_records']}, "
            f"hits {len(data['hits'])}"
        ]
        lines += [
            f"  #{hit['rank']} {hit['memory_id']:<18} total {hit['score']:.6f}  "
            f"captured_at {hit['provenance']['captured_at']}  {_one_line(hit['snippet'], 60)}"
            for hit in data["hits"]
        ]
        return "\n".join(lines)
    if event.kind == "stop":
        return f"stop: {payload['stop_reason']}"
    return f"{event.kind}: {payload}"


def print_event(event: AgentEvent) -> None:
    """``on_event`` callback that prints each step as it happens."""
    print(format_event(event))


def format_transcript(run: AgentRun) -> str:
    """The question, every event, and the error when there is one."""
    lines = [f"[{run.mode}] user: {run.question}"]
    lines += [format_event(event) for event in run.events]
    if run.error:
        lines.append(f"⚠️  {run.error}")
    return "\n".join(lines)


def tool_result_json(run: AgentRun, index: int = 0) -> str:
    """The ``index``-th tool result exactly as the model received it, indented for reading."""
    results = [e.payload["content"] for e in run.events if e.kind == "tool_result"]
    if not results:
        return "(no tool result in this run)"
    return json.dumps(json.loads(results[index]), indent=2, ensure_ascii=False)


def tool_hits_frame(run: AgentRun) -> pd.DataFrame:
    """A DataFrame of every hit the tool returned in the run, with its score breakdown."""
    rows = []
    for result in run.tool_results:
        for hit in result.get("hits", []):
            b = hit["score_breakdown"]
            rows.append(
                {
                    "query_id": result["query"]["query_id"],
                    "rank": hit["rank"],
                    "memory_id": hit["memory_id"],
                    "total": b["total"],
                    "lexical_coverage": b["lexical_coverage"],
                    "recency": b["recency"],
                    "matched_terms": ", ".join(b["matched_terms"]),
                    "source_id": hit["provenance"]["source_id"],
                    "captured_at": hit["provenance"]["captured_at"],
                }
            )
    columns = [
        "query_id",
        "rank",
        "memory_id",
        "total",
        "lexical_coverage",
        "recency",
        "matched_terms",
        "source_id",
        "captured_at",
    ]
    return pd.DataFrame(rows, columns=columns)


def cited_memory_ids(run: AgentRun) -> list[str]:
    """Memory ids the final answer mentions that a tool result really returned, in hit order.

    An id in the answer that no tool result held would be an invented citation.
    """
    recalled = [hit["memory_id"] for result in run.tool_results for hit in result.get("hits", [])]
    text = run.final_text
    return [memory_id for memory_id in dict.fromkeys(recalled) if memory_id in text]


def _block_types(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return "text"
    return ", ".join(block.get("type", "?") for block in content or [])


def requests_frame(run: AgentRun) -> pd.DataFrame:
    """What the loop sent on each request (replay keeps them): the checks, made visible."""
    rows = []
    for number, request in enumerate(run.requests, start=1):
        messages = request.get("messages", [])
        rows.append(
            {
                "request": number,
                "model": request.get("model"),
                "tools": ", ".join(t["name"] for t in request.get("tools", [])),
                "system starts with": _one_line(request.get("system", ""), 40),
                "message roles": " > ".join(m["role"] for m in messages),
                "last message holds": _block_types(messages[-1]) if messages else "",
            }
        )
    return pd.DataFrame(rows)


# -- your turn ------------------------------------------------------------------------------

EXERCISE_QUESTION = "Which file format did we pick for saving session transcripts, and why?"
EXERCISE_TARGET = "conversation-001"


# The answer to the question: the model cannot know it before recall, so a query that
# holds one of these terms asks for what it already claims to know.
EXERCISE_ANSWER_TERMS = ("jsonl", "append", "crash", "tear")


def check_restated_query(answer: object, engine: RecallEngine, *, as_of: str) -> CheckResult:
    """Self-check: does ``answer``, sent as the tool's query, rank EXERCISE_TARGET first,
    without naming the answer (``EXERCISE_ANSWER_TERMS``)?

    Right, wrong with a hint, or not answered yet for the ``...`` placeholder.
    """

    def judge(query: str) -> CheckResult:
        text, is_error = run_recall_tool(
            {"query": query, "limit": 3}, engine=engine, as_of=as_of, query_id="q-09-your-turn"
        )
        data = json.loads(text)
        if is_error:
            error = data["error"]
            return wrong(f"The tool rejected it ({error['type']}): {error['message']}")
        if leaked := [t for t in data["query"]["terms"] if t in EXERCISE_ANSWER_TERMS]:
            return wrong(
                f"Not yet: {', '.join(leaked)} is the answer, not the question. The model "
                "recalls because it does not know which format was picked: restate what the "
                "student asks about (the topic, in the record's words), never the reply."
            )
        hits = data["hits"]
        if not hits:
            return wrong(
                f"No hits for {query!r}: the {data['searched_records']} records share none of "
                f"its terms {data['query']['terms']}. Retrieval cannot see the chat and does not "
                "stem ('transcript' is not 'transcripts'): restate the topic with words the "
                "record uses."
            )
        top = hits[0]
        if top["memory_id"] != EXERCISE_TARGET:
            return wrong(
                f"The top hit is {top['memory_id']} ({top['source']['title']!r}), not the "
                "transcript decision. Name what the question is about (session transcripts, "
                "their storage format) rather than words that other decisions share."
            )
        return right(
            f"{EXERCISE_TARGET} ranks first (total {top['score']:.6f}, matched "
            f"{top['score_breakdown']['matched_terms']}): a self-contained query finds the "
            "decision without seeing the conversation."
        )

    return check_value(
        answer,
        judge,
        placeholder="the query string the model should send",
        kind=str,
        described="a str (the query the model sends)",
    )
