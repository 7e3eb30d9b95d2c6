"""The agent loop: the model, the ``recall_history`` tool and the profile-bearing prompt.

The loop only needs an object with ``messages.create(...)`` returning a response with
``content`` blocks and a ``stop_reason`` (the anthropic SDK's shape), so the same
code runs live, against a local test server, on a hand-written script or with the
deterministic stand-in model (both in ``memorylib.replay``). Only the
``recall_history`` tool is offered: no shell or file tools in a classroom library.

What a tool result holds is an option: the chapter's JSON (``tool_result="json"``, the
default) or, beyond the chapter, the rendered ``<recalled_context>`` block of the same
RecallResult (``tool_result="recalled_context"``). Build the system prompt with the same
option (``build_system_prompt(store, tool_result=...)``) so its memory rules name what
the model receives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .engine import RecallEngine
from .tool import recall_history_tool, run_recall_tool

__all__ = ["AgentEvent", "agent_loop", "block_to_dict"]


@dataclass(frozen=True)
class AgentEvent:
    """One visible step of the loop: 'text', 'tool_use', 'tool_result' or 'stop'."""

    kind: str
    payload: dict[str, Any]


def _field(block: Any, name: str, default: Any = None) -> Any:
    if isinstance(block, dict):
        return block.get(name, default)
    return getattr(block, name, default)


def block_to_dict(block: Any) -> dict[str, Any]:
    """A content block (SDK object or dict) as a plain dict to send back as history."""
    kind = _field(block, "type")
    if kind == "text":
        return {"type": "text", "text": _field(block, "text", "")}
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": _field(block, "id"),
            "name": _field(block, "name"),
            "input": _field(block, "input", {}),
        }
    return {"type": kind}


def agent_loop(
    messages: list[dict[str, Any]],
    *,
    client: Any,
    model: str,
    engine: RecallEngine,
    system: str,
    tool_result: str = "json",
    max_turns: int = 6,
    max_tokens: int = 1024,
    as_of: datetime | str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
) -> list[dict[str, Any]]:
    """Run model turns until it stops asking for tools; returns the extended messages.

    Each request sends the whole conversation (the API keeps no state); each tool call
    of a turn is answered in one ``user`` turn of ``tool_result`` blocks, whose content
    is the JSON or, with ``tool_result="recalled_context"``, the rendered block.
    """
    tool = recall_history_tool(tool_result)  # rejects an unknown tool_result first
    emit = on_event or (lambda event: None)
    for turn in range(1, max_turns + 1):
        response = client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            tools=[tool],
            messages=messages,
        )
        # ``or []``: a response that is not a Messages API reply may carry content=None.
        blocks = [block_to_dict(b) for b in _field(response, "content", None) or []]
        messages.append({"role": "assistant", "content": blocks})
        results = []
        for block in blocks:
            if block["type"] == "text":
                emit(AgentEvent("text", {"text": block["text"]}))
            elif block["type"] == "tool_use":
                emit(AgentEvent("tool_use", {"name": block["name"], "input": block["input"]}))
                text, is_error = _call_tool(
                    block,
                    engine=engine,
                    as_of=as_of,
                    query_id=f"query-{turn}-{len(results) + 1}",
                    tool_result=tool_result,
                )
                emit(AgentEvent("tool_result", {"content": text, "is_error": is_error}))
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": block["id"],
                        "content": text,
                        "is_error": is_error,
                    }
                )
        stop_reason = _field(response, "stop_reason")
        if stop_reason != "tool_use" or not results:
            emit(AgentEvent("stop", {"stop_reason": stop_reason}))
            return messages
        messages.append({"role": "user", "content": results})
    emit(AgentEvent("stop", {"stop_reason": "max_turns"}))
    return messages


def _call_tool(
    block: dict[str, Any],
    *,
    engine: RecallEngine,
    as_of: datetime | str | None,
    query_id: str,
    tool_result: str,
) -> tuple[str, bool]:
    """(text, is_error) for one ``tool_use`` block: recall_history, or an unknown tool."""
    if block["name"] == "recall_history":
        return run_recall_tool(
            block["input"], engine=engine, as_of=as_of, query_id=query_id, tool_result=tool_result
        )
    error = {"error": {"type": "UnknownTool", "message": f"unknown tool {block['name']!r}"}}
    return json.dumps(error), True
