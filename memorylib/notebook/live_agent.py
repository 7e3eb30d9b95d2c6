"""Notebook 09: run the agent loop with one of three players of the model's part.

All three call the same ``memorylib.agent.agent_loop`` with the same engine and tool;
only the client differs:

* ``"stand-in"`` (offline, any question): ``memorylib.replay.StandInModel``, a
  deterministic stand-in that is not a language model and says so in every text;
* ``"script"`` (offline, one question): ``ReplayClient`` plays the hand-written script
  ``data/agent_replay.json`` and checks every request the loop sends;
* ``"live"``: ``runtime_client()`` builds the anthropic client; the model id comes from
  ``MODEL_ID`` only.

A missing or rejected configuration, or a script mismatch, becomes ``AgentRun.error``, a
one-paragraph message (never a traceback), and the key never appears in it. The "Your
turn" checker is here too (a checker in the notebook would show its answer).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memorylib.agent import AgentEvent, agent_loop
from memorylib.engine import RecallEngine
from memorylib.notebook.exercises import CheckResult, check_value, right, wrong
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query
from memorylib.records import MemoryKind, MemorySource, StoredMemory
from memorylib.replay import (
    ReplayClient,
    ReplayError,
    ReplayScript,
    StandInModel,
    load_script,
    read_tool_hits,
)
from memorylib.runtime import ConfigurationError, runtime_client
from memorylib.tool import RESTATE_RULE, run_recall_tool

__all__ = [
    "ANSWER_PREFIX",
    "EXERCISE_ANSWER_TERMS",
    "EXERCISE_CHAT",
    "EXERCISE_QUESTION",
    "EXERCISE_TARGET",
    "MODES",
    "AgentRun",
    "answer_forms",
    "check_restated_query",
    "format_event",
    "format_transcript",
    "redact",
    "run_agent",
]

MODES = ("stand-in", "script", "live")
# Who wrote the assistant turns, as the transcript labels them (the stand-in's texts
# carry their own "[stand-in model]" label).
SPEAKERS = {"stand-in": "assistant", "script": "script", "live": "model"}
_SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


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
    script: ReplayScript | None = None,
    as_of: str | None = None,
    tool_result: str = "json",
    on_event: Callable[[AgentEvent], None] | None = None,
    max_turns: int = 6,
) -> AgentRun:
    """Run the loop once in ``mode`` and return an ``AgentRun`` (never raises for config).

    ``question`` defaults to the script's (``data/agent_replay.json``), and ``as_of`` to
    its clock, so every mode reads the frozen store the same way. Script mode can only
    play its own question, on the JSON path (its replay checks the JSON's hit ids), and a
    request the script did not expect is an error.
    ``tool_result`` is the loop's option ("json" or "recalled_context"): pass a
    ``system`` built with the same option, so its rules name what the model receives.
    """
    script = script if script is not None else load_script()
    as_of = as_of if as_of is not None else script.as_of
    asked = question if question is not None else script.question
    events: list[AgentEvent] = []

    def emit(event: AgentEvent) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    if mode not in MODES:
        return AgentRun(mode=str(mode), question=asked, error=f"MODE must be one of {MODES}")
    messages: list[dict[str, Any]] = [{"role": "user", "content": asked}]
    if mode == "script":
        if asked != script.question:
            return AgentRun(
                mode=mode,
                question=asked,
                error="the script can only play its own question; switch MODE to 'stand-in' "
                "(offline) or 'live' to ask your own",
            )
        if tool_result == "recalled_context":
            return AgentRun(
                mode=mode,
                question=asked,
                error="the script was written for the JSON path (its replay checks the hit ids "
                "of the JSON tool result); set TOOL_RESULT = 'json', or switch MODE to "
                "'stand-in' to read the rendered context",
            )
        client: Any = ReplayClient(script)
        model = client.model
        messages = script.messages
    elif mode == "stand-in":
        client = StandInModel()
        model = client.model
    else:
        try:
            client, model = runtime_client()
        except ConfigurationError as exc:
            return AgentRun(mode=mode, question=asked, error=redact(str(exc)))
    try:
        agent_loop(
            messages,
            client=client,
            model=model,
            engine=engine,
            system=system,
            tool_result=tool_result,
            as_of=as_of,
            on_event=emit,
            max_turns=max_turns,
        )
        if isinstance(client, ReplayClient):
            client.assert_finished()
        elif events and events[-1].kind == "stop" and events[-1].payload["stop_reason"] is None:
            raise _NotTheAPIError  # a 200 whose JSON is not a Messages API response
    except ReplayError as exc:
        error = f"script mismatch: {exc}"
    except _NotTheAPIError:
        error = f"live mode failed: {_NOT_THE_API}"
    except Exception as exc:
        message = _api_error_message(exc, model) if mode == "live" else None
        if message is None:
            raise
        error = f"live mode failed: {message}"
    else:
        error = None
    kept = getattr(client, "requests", ())
    return AgentRun(
        mode=mode,
        question=asked,
        events=tuple(events),
        messages=tuple(messages),
        error=redact(error) if error else None,
        requests=tuple(kept) if isinstance(kept, list) else (),
    )


# -- showing ------------------------------------------------------------------------------


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_event(event: AgentEvent, speaker: str = "model") -> str:
    """One event as the transcript shows it (a tool result summarised, not dumped)."""
    payload = event.payload
    if event.kind == "text":
        return f"{speaker}: {payload['text']}"
    if event.kind == "tool_use":
        return f"tool_use    {payload['name']}({json.dumps(payload['input'], ensure_ascii=False)})"
    if event.kind == "tool_result":
        content = payload["content"]
        if payload["is_error"]:
            return f"tool_result is_error=True: {_one_line(content)}"
        try:
            hits = read_tool_hits(content)
        except (ValueError, KeyError, TypeError):
            return f"tool_result (unreadable): {_one_line(content)}"
        shape = "<recalled_context>" if content.lstrip().startswith("<") else "JSON"
        lines = [f"tool_result {shape}, {len(content)} characters: {len(hits)} hit(s)"]
        lines += [
            f"  #{hit.rank} {hit.memory_id:<17} captured_at {hit.captured_at}  "
            f"{_one_line(hit.snippet, 60)}"
            for hit in hits
        ]
        return "\n".join(lines)
    if event.kind == "stop":
        return f"stop: {payload['stop_reason']}"
    return f"{event.kind}: {payload}"


def format_transcript(run: AgentRun) -> str:
    """The question, every event, and the error when there is one."""
    speaker = SPEAKERS.get(run.mode, "model")
    lines = [f"[{run.mode}] user: {run.question}"]
    lines += [format_event(event, speaker) for event in run.events]
    if run.error:
        lines.append(f"⚠️  {run.error}")
    return "\n".join(lines)


# -- your turn ------------------------------------------------------------------------------

# The conversation so far: the last question points back at "those", which only the chat
# explains. The search sees none of it.
EXERCISE_CHAT = (
    {"role": "user", "content": "I'm writing the recorder that saves each session's transcripts."},
    {"role": "assistant", "content": "Good. Do you want the earlier decision about them?"},
    {
        "role": "user",
        "content": "Yes: remind me which file format we settled on for those, and why?",
    },
)
EXERCISE_QUESTION = EXERCISE_CHAT[-1]["content"]
EXERCISE_TARGET = "conversation-001"

# The answer to the question (the format conversation-001 chose, and why): the model cannot
# know it before recall, so a query that holds one of these words asks for what it already
# claims to know. Another form of one counts too: a query term is refused when it shares its
# first ANSWER_PREFIX letters with one of them (json, appended, crashes) or is one of their
# irregular forms (torn). The notebook states this rule without printing the words.
EXERCISE_ANSWER_TERMS = ("jsonl", "append", "crash", "tear")
_IRREGULAR_FORMS = frozenset({"tore", "torn"})
ANSWER_PREFIX = 4


def answer_forms(terms: Iterable[str]) -> list[str]:
    """The ``terms`` (normalized query terms) that are a form of a word of the answer."""
    prefixes = {word[:ANSWER_PREFIX] for word in EXERCISE_ANSWER_TERMS}
    return [
        term
        for term in terms
        if term in _IRREGULAR_FORMS
        or (len(term) >= ANSWER_PREFIX and term[:ANSWER_PREFIX] in prefixes)
    ]


# Two records the notebook never shows, each sharing one word of the topic and newer than
# the target: a query that names only part of the topic ranks one of them first.
_UNSEEN = (
    ("support-calls-001", "Support call transcripts are kept for 90 days.", "2026-08-01T09:00:00Z"),
    ("session-tokens-001", "Session tokens expire after twelve hours.", "2026-07-30T10:00:00Z"),
)


def _unseen_records(user_scope: str) -> list[StoredMemory]:
    return [
        StoredMemory(
            memory_id=memory_id,
            user_scope=user_scope,
            kind=MemoryKind.CONVERSATION,
            content=text,
            summary=text,
            source=MemorySource(f"transcript-{memory_id}", "conversation_transcript", text, at),
            stored_at=at,
        )
        for memory_id, text, at in _UNSEEN
    ]


def check_restated_query(answer: object, engine: RecallEngine, *, as_of: str) -> CheckResult:
    """Self-check: does ``answer``, sent as the tool's query, rank EXERCISE_TARGET first,
    without naming the answer (no form of ``EXERCISE_ANSWER_TERMS``: ``answer_forms``), on
    the notebook's store AND on
    that store with two unseen records that share part of the topic?

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
        if leaked := answer_forms(data["query"]["terms"]):
            return wrong(
                f"Not yet: {', '.join(repr(t) for t in leaked)} "
                f"{'is a form' if len(leaked) == 1 else 'are forms'} of a word of the record's "
                "answer, not of the question. The model recalls because it does not know which "
                f"format was picked or why: the query must {RESTATE_RULE}."
            )
        hits = data["hits"]
        if not hits:
            return wrong(
                f"No hits for {query!r}: the {data['searched_records']} records share none of "
                f"its terms {data['query']['terms']}. Retrieval cannot see the chat and does not "
                "stem (another form of a word is another term): the query must "
                f"{RESTATE_RULE}."
            )
        top = hits[0]
        if top["memory_id"] != EXERCISE_TARGET:
            return wrong(
                f"The top hit is {top['memory_id']} ({top['source']['title']!r}), not the "
                "decision the student means. 'those' points back into the chat: name what it "
                "stands for, rather than words that other decisions share."
            )
        recall_query = normalize_recall_query(
            query, user_scope=engine.store.user_scope, limit=3, query_id="q-09-unseen"
        )
        records = [*engine.store.read_all(), *_unseen_records(engine.store.user_scope)]
        unseen = recall_pipeline(recall_query, records, as_of=as_of).hits[0]
        if unseen.memory_id != EXERCISE_TARGET:
            return wrong(
                f"On this notebook's store {EXERCISE_TARGET} ranks first, but add two records "
                "the notebook never showed (support call transcripts kept 90 days; session "
                f"tokens expiring) and {unseen.memory_id} ({unseen.snippet!r}) overtakes it: "
                "your query names only part of the topic. Name the whole of it."
            )
        return right(
            f"{EXERCISE_TARGET} ranks first (total {top['score']:.6f}, matched "
            f"{top['score_breakdown']['matched_terms']}), and still does beside two unseen "
            "records on neighbouring topics: the query restates what 'those' meant, without "
            "the answer and without the chat."
        )

    return check_value(
        answer,
        judge,
        placeholder="the query string the model should send",
        kind=str,
        described="a str (the query the model sends)",
    )
