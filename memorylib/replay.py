"""Two offline players of the model's part, driven through the real ``agent_loop``.

Neither is a language model, and both say so. Each stands where ``anthropic.Anthropic()``
would: ``client.messages.create(...)`` returns a response in the API's JSON shape, read
with attribute access like the SDK's objects. No network, no key, no SDK import.

* ``ReplayClient`` plays a HAND-WRITTEN SCRIPT (``data/agent_replay.json``: one question,
  and the two assistant turns someone wrote for it; nothing in it came from a model).
  Before answering, it checks that the loop sent what the script expects: the model, the
  tool list, the start of the system prompt, the conversation so far (the question, each
  scripted assistant turn echoed back) and, after a ``tool_use``, a ``tool_result`` for
  that id whose JSON, computed live by the engine, holds the expected hit ids. A mismatch
  raises ``ReplayMismatchError`` naming the request and the field; nothing is skipped.
* ``StandInModel`` is a deterministic stand-in model for any question: it derives a
  recall query from the question's own words (``derive_query``: question words dropped),
  calls ``recall_history`` with it, then answers from the hits the tool returned, citing
  each one's memory_id and captured_at. It reads either tool result (the JSON or the
  ``<recalled_context>`` block), and every text it writes starts with ``[stand-in model]``.

Script format (``data/agent_replay.json``)::

    {"format": "memorylib-agent-replay/1", "model": "...", "as_of": "...",
     "messages": [{"role": "user", "content": "..."}],
     "exchanges": [{"expect": {...}, "response": {<a Messages API response>}}, ...]}

``expect`` keys (all optional): ``tools`` (tool names), ``system_starts_with``,
``message_roles`` and ``tool_results`` (``tool_use_id``, ``is_error``, ``hit_memory_ids``).
"""

from __future__ import annotations

import copy
import itertools
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .errors import RemoteMemoryError
from .query import char_class, normalize_text

__all__ = [
    "DEFAULT_SCRIPT",
    "QUESTION_WORDS",
    "SCRIPT_FORMAT",
    "STAND_IN_LABEL",
    "STAND_IN_LIMIT",
    "STAND_IN_MODEL",
    "ReplayClient",
    "ReplayError",
    "ReplayFormatError",
    "ReplayMismatchError",
    "ReplayScript",
    "StandInModel",
    "ToolHit",
    "derive_query",
    "load_script",
    "read_tool_hits",
]

SCRIPT_FORMAT = "memorylib-agent-replay/1"
DEFAULT_SCRIPT = Path(__file__).resolve().parents[1] / "data" / "agent_replay.json"
_STOP_REASONS = {"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"}
_EXPECT_KEYS = {"tools", "system_starts_with", "message_roles", "tool_results"}


class ReplayError(RemoteMemoryError):
    """Base class of replay failures."""


class ReplayFormatError(ReplayError):
    """The script file is not a valid script (the message names the field)."""


class ReplayMismatchError(ReplayError):
    """The loop sent something the script did not expect (request and field named)."""


# -- the script ---------------------------------------------------------------------------


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


class ReplayScript:
    """A validated hand-written script: the opening messages and, for each request the loop
    will send, what it must hold and the response written for it."""

    def __init__(self, payload: object, *, name: str = "script") -> None:
        _require(isinstance(payload, Mapping), f"{name} must be a JSON object")
        assert isinstance(payload, Mapping)
        _require(
            payload.get("format") == SCRIPT_FORMAT,
            f"{name}.format must be {SCRIPT_FORMAT!r}, got {payload.get('format')!r}",
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


def load_script(path: str | Path = DEFAULT_SCRIPT) -> ReplayScript:
    """Read and validate a script file (UTF-8 JSON)."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReplayFormatError(f"{path.name} is not valid JSON: {exc}") from None
    return ReplayScript(payload, name=path.name)


# -- the client ---------------------------------------------------------------------------


def _as_object(response: Mapping[str, Any]) -> SimpleNamespace:
    """The response with SDK-like attribute access; tool ``input`` stays a dict."""
    blocks = [SimpleNamespace(**copy.deepcopy(dict(block))) for block in response["content"]]
    fields = {key: copy.deepcopy(value) for key, value in response.items() if key != "content"}
    fields["usage"] = SimpleNamespace(**fields["usage"])
    return SimpleNamespace(content=blocks, **fields)


def _echo(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """How ``agent_loop`` sends a scripted assistant turn back (see ``block_to_dict``)."""
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
    def __init__(self, client: ReplayClient | StandInModel) -> None:
        self._client = client

    def create(self, **request: Any) -> SimpleNamespace:
        return self._client._answer(request)


class ReplayClient:
    """Plays a ``ReplayScript`` through ``client.messages.create(...)``, checking each request.

    ``requests`` keeps a deep copy of every request received (the loop mutates its
    message list afterwards). Call ``assert_finished()`` after the loop: a loop that
    stopped early is a mismatch too.
    """

    def __init__(self, script: ReplayScript | Mapping[str, Any] | str | Path) -> None:
        if isinstance(script, str | Path):
            script = load_script(script)
        elif not isinstance(script, ReplayScript):
            script = ReplayScript(script)
        self.script = script
        self._exchanges = script.exchanges
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)

    @property
    def model(self) -> str:
        return self.script.model

    @property
    def remaining(self) -> int:
        return len(self._exchanges) - len(self.requests)

    def assert_finished(self) -> None:
        if self.remaining:
            raise ReplayMismatchError(
                f"the loop stopped after {len(self.requests)} of {len(self._exchanges)} "
                "scripted requests"
            )

    # -- checking one request -----------------------------------------------------------

    def _answer(self, request: dict[str, Any]) -> SimpleNamespace:
        number = len(self.requests) + 1
        if number > len(self._exchanges):
            raise ReplayMismatchError(
                f"request {number}: the script holds only {len(self._exchanges)} responses; "
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
        if request.get("model") != self.script.model:
            self._fail(
                number,
                "model",
                f"expected {self.script.model!r}, got {request.get('model')!r}",
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
        """The opening messages, then each earlier scripted response echoed back in order."""
        opening = self.script.messages
        if messages[: len(opening)] != opening:
            self._fail(number, "messages", "the opening messages differ from the script")
        position = len(opening)
        for earlier in range(number - 1):
            content = self._exchanges[earlier]["response"]["content"]
            expected = {"role": "assistant", "content": _echo(content)}
            if position >= len(messages) or messages[position] != expected:
                self._fail(
                    number,
                    f"messages[{position}]",
                    f"expected scripted response {earlier + 1} echoed back as the assistant turn",
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
                        f"hits {ids}, the script expects {list(want['hit_memory_ids'])} "
                        "(the store or the pipeline changed since it was written)",
                    )


# -- the stand-in model -------------------------------------------------------------------

STAND_IN_MODEL = "stand-in-model"
STAND_IN_LABEL = "[stand-in model]"
STAND_IN_LIMIT = 3

# Words that ask, point at the chat or fill a sentence, never name a topic: the stand-in
# drops them from a question to leave its topic words. A short, fixed list, so what the
# stand-in sends is predictable; a language model restates a topic far better.
_QUESTION_WORDS = """
    a about again all also am an and any are as at be been before but by can cite could
    did do does earlier else for from had has have how i if in into is it its just last
    me mentioned my now of on once or our please previous previously record records rely
    remember remind said say should so some tell than that the their them then there these
    they this those time to told us was we were what when where which while who why will
    with would yes you your
"""
QUESTION_WORDS = frozenset(_QUESTION_WORDS.split())
# Chinese question and pointing phrases, cut out of a run of Chinese characters (longest
# first) before its remaining pieces become query words.
_CHINESE_QUESTION_WORDS = ("为什么", "什么", "怎么样", "怎么", "如何", "哪个", "哪些", "我们")
_CHINESE_QUESTION_WORDS += ("之前", "上次", "以前", "是否", "吗", "呢", "吧", "的")


def derive_query(question: str) -> str:
    """The stand-in's recall query for ``question``: its words in order, each once, minus
    ``QUESTION_WORDS``; a run of Chinese characters is kept, minus its question phrases.

    Example: ``derive_query("How did we pick the SQLite WAL mode?")`` is
    ``"pick sqlite wal mode"``. ``""`` when no word is left (nothing to search for).
    """
    text = normalize_text(question)
    for phrase in _CHINESE_QUESTION_WORDS:
        text = text.replace(phrase, " ")
    words = []
    for kind, chars in itertools.groupby(text, key=char_class):
        word = "".join(chars)
        if kind == "cjk" or (kind == "word" and word not in QUESTION_WORDS):
            words.append(word)
    return " ".join(dict.fromkeys(words))


@dataclass(frozen=True)
class ToolHit:
    """What a recall_history tool result says about one hit, on either path."""

    rank: int
    memory_id: str
    captured_at: str
    lexical_coverage: float
    snippet: str


def read_tool_hits(content: str) -> list[ToolHit]:
    """The hits of a recall_history result: its JSON, or its ``<recalled_context>`` block.

    Raises ``ValueError`` for text that is neither (an error result is JSON without hits).
    """
    if content.lstrip().startswith("<"):
        root = ET.fromstring(content)  # ET.ParseError is a ValueError
        if root.tag != "recalled_context":
            raise ValueError(f"expected <recalled_context>, got <{root.tag}>")
        return [
            ToolHit(
                rank=int(hit.get("rank", "0")),
                memory_id=hit.get("memory_id", ""),
                captured_at=hit.find("provenance").get("captured_at", ""),  # type: ignore[union-attr]
                lexical_coverage=float(hit.find("score").get("lexical_coverage", "0")),  # type: ignore[union-attr]
                snippet=hit.findtext("snippet", ""),
            )
            for hit in root.findall("hit")
        ]
    payload = json.loads(content)
    if not isinstance(payload, Mapping) or not isinstance(payload.get("hits"), list):
        raise ValueError("not a recall_history result: no 'hits' list")
    return [
        ToolHit(
            rank=hit["rank"],
            memory_id=hit["memory_id"],
            captured_at=hit["provenance"]["captured_at"],
            lexical_coverage=hit["score_breakdown"]["lexical_coverage"],
            snippet=hit["snippet"],
        )
        for hit in payload["hits"]
    ]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return " ".join(
            b.get("text", "") for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


class StandInModel:
    """A deterministic stand-in for the model: NOT a language model, and labelled so.

    On a user question it calls ``recall_history`` with ``derive_query(question)`` (limit
    3); on the tool result it answers from the hits, quoting each snippet with its
    memory_id and captured_at, in rank order. It never invents a record, and with no
    topic word to search for, no hit or a rejected query it says so. The same messages
    always get the same response. ``requests`` keeps a deep copy of every request.
    """

    model = STAND_IN_MODEL

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)

    def _answer(self, request: dict[str, Any]) -> SimpleNamespace:
        self.requests.append(copy.deepcopy(request))
        messages = request.get("messages") or []
        turn = 1 + sum(1 for m in messages if m.get("role") == "assistant")
        last = messages[-1] if messages else {}
        content = last.get("content")
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        if results:
            blocks = [self._text(self._report(results[0]))]
            return self._response(turn, blocks, "end_turn")
        question = _text_of(content) if last.get("role") == "user" else ""
        query = derive_query(question)
        tools = [t.get("name") for t in request.get("tools") or []]
        if not query:
            text = "Your question names no topic to search your history for: say what it is about."
            return self._response(turn, [self._text(text)], "end_turn")
        if "recall_history" not in tools:
            text = "No recall_history tool was offered, so I cannot search your history."
            return self._response(turn, [self._text(text)], "end_turn")
        call = {
            "type": "tool_use",
            "id": f"toolu_standin_{turn}",
            "name": "recall_history",
            "input": {"query": query, "limit": STAND_IN_LIMIT},
        }
        text = f"Searching your history with the words of your question: {query!r}."
        return self._response(turn, [self._text(text), call], "tool_use")

    @staticmethod
    def _text(text: str) -> dict[str, str]:
        return {"type": "text", "text": f"{STAND_IN_LABEL} {text}"}

    @staticmethod
    def _report(result: Mapping[str, Any]) -> str:
        content = str(result.get("content", ""))
        if result.get("is_error"):
            try:
                message = json.loads(content)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = content
            return f"recall_history rejected the query: {message}"
        try:
            hits = read_tool_hits(content)
        except (ValueError, KeyError, TypeError):
            return "I could not read the tool result, so I have nothing to answer from."
        if not hits:
            return (
                "recall_history found nothing: no stored conversation shares a word with the "
                "query. I will not guess; ask again with the words the topic was discussed in."
            )
        lines = [f"recall_history returned {len(hits)} hit(s), best first:"]
        lines += [
            f'{hit.rank}. "{hit.snippet}" (memory_id {hit.memory_id}, captured_at '
            f"{hit.captured_at}; it matched {hit.lexical_coverage:.0%} of the query's terms)"
            for hit in hits
        ]
        lines.append(
            "These are candidates ranked by shared words and age, not verified facts. A stand-in "
            "model quotes them in rank order and cannot judge which answers your question; a "
            "language model would read them and decide."
        )
        return "\n".join(lines)

    def _response(self, turn: int, blocks: list[dict[str, Any]], stop: str) -> SimpleNamespace:
        return _as_object(
            {
                "id": f"msg_standin_{turn}",
                "type": "message",
                "role": "assistant",
                "model": STAND_IN_MODEL,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
        )
