"""Replay: a recorded Messages API exchange driven through the real ``agent_loop``.

``ReplayClient`` stands where ``anthropic.Anthropic()`` would: ``client.messages.create(...)``
returns the next recorded response (the API's JSON shape, read with attribute access
like the SDK's objects). Before answering, it checks that the loop sent what the
recording expects: the model, the tool list, the start of the system prompt, the
conversation so far (the question, each recorded assistant turn echoed back) and, after
a ``tool_use``, a ``tool_result`` for that id whose JSON, computed live by the engine,
holds the recorded hit ids. A mismatch raises ``ReplayMismatchError`` naming the
request and the field; nothing is skipped. No network, no key, no SDK import.

Recording format (``data/agent_replay.json``)::

    {"format": "memorylib-agent-replay/1", "model": "...", "as_of": "...",
     "messages": [{"role": "user", "content": "..."}],
     "exchanges": [{"expect": {...}, "response": {<a Messages API response>}}, ...]}

``expect`` keys (all optional): ``tools`` (tool names), ``system_starts_with``,
``message_roles`` and ``tool_results`` (``tool_use_id``, ``is_error``, ``hit_memory_ids``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .errors import RemoteMemoryError

__all__ = [
    "DEFAULT_RECORDING",
    "RECORDING_FORMAT",
    "Recording",
    "ReplayClient",
    "ReplayError",
    "ReplayFormatError",
    "ReplayMismatchError",
    "load_recording",
]

RECORDING_FORMAT = "memorylib-agent-replay/1"
DEFAULT_RECORDING = Path(__file__).resolve().parents[1] / "data" / "agent_replay.json"
_STOP_REASONS = {"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"}
_EXPECT_KEYS = {"tools", "system_starts_with", "message_roles", "tool_results"}


class ReplayError(RemoteMemoryError):
    """Base class of replay failures."""


class ReplayFormatError(ReplayError):
    """The recording file is not a valid recording (the message names the field)."""


class ReplayMismatchError(ReplayError):
    """The loop sent something the recording did not expect (request and field named)."""


# -- the recording ----------------------------------------------------------------------


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ReplayFormatError(message)


def _check_block(block: object, where: str) -> None:
    _require(isinstance(block, Mapping), f"{where} must be an object")
    assert isinstance(block, Mapping)
    kind = block.get("type")
    if kind == "text":
        _require(isinstance(block.get("text"), str), f"{where}.text must be a string")
    elif kind == "tool_use":
        _require(
            isinstance(block.get("id"), str) and bool(block.get("id")),
            f"{where}.id must be a non-empty string",
        )
        _require(isinstance(block.get("name"), str), f"{where}.name must be a string")
        _require(isinstance(block.get("input"), Mapping), f"{where}.input must be an object")
    else:
        _require(False, f"{where}.type must be 'text' or 'tool_use', got {kind!r}")


def _check_response(response: object, where: str) -> None:
    _require(isinstance(response, Mapping), f"{where} must be an object")
    assert isinstance(response, Mapping)
    _require(response.get("type") == "message", f"{where}.type must be 'message'")
    _require(response.get("role") == "assistant", f"{where}.role must be 'assistant'")
    _require(isinstance(response.get("id"), str), f"{where}.id must be a string")
    _require(isinstance(response.get("model"), str), f"{where}.model must be a string")
    content = response.get("content")
    _require(isinstance(content, list) and bool(content), f"{where}.content must be a list")
    for i, block in enumerate(content):  # type: ignore[arg-type]
        _check_block(block, f"{where}.content[{i}]")
    _require(
        response.get("stop_reason") in _STOP_REASONS,
        f"{where}.stop_reason must be one of {sorted(_STOP_REASONS)}",
    )
    _require(isinstance(response.get("usage"), Mapping), f"{where}.usage must be an object")


class Recording:
    """A validated recording: the opening messages and the expected request/response pairs."""

    def __init__(self, payload: object, *, name: str = "recording") -> None:
        _require(isinstance(payload, Mapping), f"{name} must be a JSON object")
        assert isinstance(payload, Mapping)
        _require(
            payload.get("format") == RECORDING_FORMAT,
            f"{name}.format must be {RECORDING_FORMAT!r}, got {payload.get('format')!r}",
        )
        for key in ("model", "as_of"):
            _require(isinstance(payload.get(key), str), f"{name}.{key} must be a string")
        messages = payload.get("messages")
        _require(isinstance(messages, list) and bool(messages), f"{name}.messages must be a list")
        exchanges = payload.get("exchanges")
        _require(
            isinstance(exchanges, list) and bool(exchanges), f"{name}.exchanges must be a list"
        )
        for i, exchange in enumerate(exchanges):  # type: ignore[arg-type]
            where = f"{name}.exchanges[{i}]"
            _require(isinstance(exchange, Mapping), f"{where} must be an object")
            expect = exchange.get("expect", {})
            _require(isinstance(expect, Mapping), f"{where}.expect must be an object")
            unknown = set(expect) - _EXPECT_KEYS
            _require(not unknown, f"{where}.expect has unknown key(s) {sorted(unknown)}")
            _check_response(exchange.get("response"), f"{where}.response")
        self.name = name
        self.payload: dict[str, Any] = copy.deepcopy(dict(payload))
        self.model: str = payload["model"]
        self.as_of: str = payload["as_of"]
        self.description: str = str(payload.get("description", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A fresh copy of the opening messages (the loop appends to the list it gets)."""
        return copy.deepcopy(self.payload["messages"])

    @property
    def question(self) -> str:
        first = self.payload["messages"][0]["content"]
        return first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)

    @property
    def exchanges(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.payload["exchanges"])

    def __len__(self) -> int:
        return len(self.payload["exchanges"])


def load_recording(path: str | Path = DEFAULT_RECORDING) -> Recording:
    """Read and validate a recording file (UTF-8 JSON)."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReplayFormatError(f"{path.name} is not valid JSON: {exc}") from None
    return Recording(payload, name=path.name)


# -- the client ---------------------------------------------------------------------------


def _as_object(response: Mapping[str, Any]) -> SimpleNamespace:
    """The response with SDK-like attribute access; tool ``input`` stays a dict."""
    blocks = [SimpleNamespace(**copy.deepcopy(dict(block))) for block in response["content"]]
    fields = {key: copy.deepcopy(value) for key, value in response.items() if key != "content"}
    fields["usage"] = SimpleNamespace(**fields["usage"])
    return SimpleNamespace(content=blocks, **fields)


def _echo(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """How ``agent_loop`` sends a recorded assistant turn back (see ``block_to_dict``)."""
    echoed = []
    for block in content:
        if block["type"] == "text":
            echoed.append({"type": "text", "text": block["text"]})
        else:
            echoed.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": dict(block["input"]),
                }
            )
    return echoed


class _Messages:
    def __init__(self, client: ReplayClient) -> None:
        self._client = client

    def create(self, **request: Any) -> SimpleNamespace:
        return self._client._answer(request)


class ReplayClient:
    """Plays a ``Recording`` back through ``client.messages.create(...)``, checking each request.

    ``requests`` keeps a deep copy of every request received (the loop mutates its
    message list afterwards). Call ``assert_finished()`` after the loop: a loop that
    stopped early is a mismatch too.
    """

    def __init__(self, recording: Recording | Mapping[str, Any] | str | Path) -> None:
        if isinstance(recording, str | Path):
            recording = load_recording(recording)
        elif not isinstance(recording, Recording):
            recording = Recording(recording)
        self.recording = recording
        self._exchanges = recording.exchanges
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)

    @property
    def model(self) -> str:
        return self.recording.model

    @property
    def remaining(self) -> int:
        return len(self._exchanges) - len(self.requests)

    def assert_finished(self) -> None:
        if self.remaining:
            raise ReplayMismatchError(
                f"the loop stopped after {len(self.requests)} of {len(self._exchanges)} "
                "recorded requests"
            )

    # -- checking one request -----------------------------------------------------------

    def _answer(self, request: dict[str, Any]) -> SimpleNamespace:
        number = len(self.requests) + 1
        if number > len(self._exchanges):
            raise ReplayMismatchError(
                f"request {number}: the recording holds only {len(self._exchanges)} responses; "
                "the loop asked for another"
            )
        snapshot = copy.deepcopy(request)
        self.requests.append(snapshot)
        exchange = self._exchanges[number - 1]
        self._check(number, snapshot, exchange.get("expect", {}))
        return _as_object(exchange["response"])

    def _fail(self, number: int, field: str, message: str) -> None:
        raise ReplayMismatchError(f"request {number}, {field}: {message}")

    def _check(self, number: int, request: Mapping[str, Any], expect: Mapping[str, Any]) -> None:
        if request.get("model") != self.recording.model:
            self._fail(
                number,
                "model",
                f"expected {self.recording.model!r}, got {request.get('model')!r}",
            )
        if "tools" in expect:
            names = [tool.get("name") for tool in request.get("tools") or []]
            if names != list(expect["tools"]):
                self._fail(number, "tools", f"expected {list(expect['tools'])}, got {names}")
        if "system_starts_with" in expect:
            system = request.get("system")
            prefix = expect["system_starts_with"]
            if not isinstance(system, str) or not system.startswith(prefix):
                head = system[: len(prefix) + 20] if isinstance(system, str) else system
                self._fail(number, "system", f"expected it to start with {prefix!r}, got {head!r}")
        messages = request.get("messages")
        if not isinstance(messages, list):
            self._fail(number, "messages", "must be a list")
            return
        if "message_roles" in expect:
            roles = [m.get("role") for m in messages]
            if roles != list(expect["message_roles"]):
                self._fail(number, "messages", f"roles {roles}, expected {expect['message_roles']}")
        self._check_history(number, messages)
        if "tool_results" in expect:
            self._check_tool_results(number, messages, expect["tool_results"])

    def _check_history(self, number: int, messages: list[Mapping[str, Any]]) -> None:
        """The opening messages, then each earlier recorded response echoed back in order."""
        opening = self.recording.messages
        if messages[: len(opening)] != opening:
            self._fail(number, "messages", "the opening messages differ from the recording")
        position = len(opening)
        for earlier in range(number - 1):
            content = self._exchanges[earlier]["response"]["content"]
            expected = {"role": "assistant", "content": _echo(content)}
            if position >= len(messages) or messages[position] != expected:
                self._fail(
                    number,
                    f"messages[{position}]",
                    f"expected recorded response {earlier + 1} echoed back as the assistant turn",
                )
            position += 2  # the assistant turn, then the user's tool results
        if len(messages) != position:
            self._fail(number, "messages", f"{len(messages)} messages, expected {position}")

    def _check_tool_results(
        self,
        number: int,
        messages: list[Mapping[str, Any]],
        expected: Sequence[Mapping[str, Any]],
    ) -> None:
        last = messages[-1]
        content = last.get("content")
        if last.get("role") != "user" or not isinstance(content, list):
            self._fail(number, "messages[-1]", "expected a user turn holding tool_result blocks")
            return
        results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        if len(results) != len(expected):
            self._fail(
                number, "tool_result", f"{len(results)} tool results, expected {len(expected)}"
            )
        for i, (got, want) in enumerate(zip(results, expected, strict=False)):
            field = f"tool_result[{i}]"
            if got.get("tool_use_id") != want.get("tool_use_id"):
                self._fail(
                    number,
                    f"{field}.tool_use_id",
                    f"expected {want.get('tool_use_id')!r}, got {got.get('tool_use_id')!r}",
                )
            if "is_error" in want and bool(got.get("is_error")) != bool(want["is_error"]):
                self._fail(number, f"{field}.is_error", f"expected {want['is_error']}")
            if "hit_memory_ids" in want:
                try:
                    payload = json.loads(got.get("content", ""))
                    ids = [hit["memory_id"] for hit in payload["hits"]]
                except (TypeError, ValueError, KeyError):
                    self._fail(number, f"{field}.content", "is not a recall_history JSON result")
                    return
                if ids != list(want["hit_memory_ids"]):
                    self._fail(
                        number,
                        f"{field}.content",
                        f"hits {ids}, the recording expects {list(want['hit_memory_ids'])} "
                        "(the store or the pipeline changed since it was recorded)",
                    )
