"""The agent loop: the model, the ``recall_history`` tool and the profile-bearing prompt.

The loop only needs an object with ``messages.create(...)`` returning a response with
``content`` blocks and a ``stop_reason`` (the anthropic SDK's shape), so the same
code runs live, against a local test server, or on a recorded exchange. Only the
``recall_history`` tool is offered: no shell or file tools in a classroom library.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .engine import RecallEngine
from .tool import RECALL_HISTORY_TOOL, run_recall_tool

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
    max_turns: int = 6,
    max_tokens: int = 1024,
    as_of: datetime | str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
) -> list[dict[str, Any]]:
    """Run model turns until it stops asking for tools; returns the extended messages."""
    emit = on_event or (lambda event: None)
    for turn in range(max_turns):
        response = client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            tools=[RECALL_HISTORY_TOOL],
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
                if block["name"] == RECALL_HISTORY_TOOL["name"]:
                    text, is_error = run_recall_tool(
                        block["input"],
                        engine=engine,
                        as_of=as_of,
                        query_id=f"query-{turn + 1}-{len(results) + 1}",
                    )
                else:
                    text = json.dumps(
                        {
                            "error": {
                                "type": "UnknownTool",
                                "message": f"unknown tool {block['name']!r}",
                            }
                        }
                    )
                    is_error = True
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
