"""Bad input: every public parameter, wrong types and edge values.

Each case either raises a typed error (a ``RemoteMemoryError`` subclass whose message
names the parameter) or is a documented normalization (naive or offset-less times are
UTC, text is whitespace-folded, ...). A rejected write leaves the file byte-identical.
A property test (hypothesis, arbitrary Unicode including lone surrogates) drives
append -> recall (both strategies) -> render -> tool JSON: only the contract's error
types ever escape, and whatever renders parses as XML.

Cases marked ``known_bug`` are contract violations found by this suite in modules
outside the reliability scope; they are strict xfails, so fixing the bug makes the
marker fail and it must be removed.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    MemorySource,
    RecallEngine,
    RecallQuery,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
    StoredMemory,
    build_recall_candidates,
    build_system_prompt,
    normalize_recall_query,
    recall_history,
    render_profile_block,
    render_recall_context,
    score_recall_candidate,
    stable_rank_recall_candidates,
)
from memorylib.tool import run_recall_tool

from ._reliability import read_bytes, record_figures, src

WRONG_TYPES: tuple[Any, ...] = (None, b"bytes", 0, True, 1.5, [], {}, object())
BAD_TIMES: tuple[Any, ...] = (
    None,
    5,
    1.5,
    True,
    b"2026-08-01T12:00:00Z",
    "",
    "   ",
    "yesterday",
    "2026-13-01T00:00:00Z",
    "2026-02-30",
    "12:00",
    "9999-12-31T23:59:59-01:00",  # past datetime.max once in UTC
    "0001-01-01T00:00:00+01:00",  # before datetime.min once in UTC
)
_figures: dict[str, int] = {"cases": 0, "typed_errors": 0, "normalizations": 0}


@pytest.fixture(scope="module", autouse=True)
def _publish_figures():
    yield
    record_figures("bad_input", **_figures)


@dataclass
class Ctx:
    store: RemoteMemoryStore
    engine: RecallEngine
    query: RecallQuery
    records: list[StoredMemory]

    def candidate(self):
        return build_recall_candidates(self.query, self.records).candidates[0]


@pytest.fixture
def ctx(tmp_path: Path) -> Ctx:
    store = RemoteMemoryStore(tmp_path / "bad.jsonl", user_id="bad-input-user")
    store.append(kind="profile", memory_id="p-1", content="profile", summary="p", source=src("p"))
    store.append(
        kind="conversation",
        memory_id="c-1",
        content="layered memory design",
        summary="layered memory",
        source=src(1),
    )
    query = normalize_recall_query(
        "layered memory", user_scope=store.user_scope, query_id="q-1", issued_at=TEACHING_AS_OF
    )
    return Ctx(store, RecallEngine(store), query, store.read_all())


def append_with(ctx: Ctx, **override: Any) -> StoredMemory:
    args: dict[str, Any] = {
        "kind": MemoryKind.CONVERSATION,
        "content": "content",
        "summary": "summary",
        "source": src(9),
    }
    args.update(override)
    return ctx.store.append(**args)


def source_with(**override: Any) -> MemorySource:
    fields = {
        "source_id": "s",
        "source_type": "t",
        "title": "title",
        "captured_at": "2026-08-01T12:00:00Z",
    }
    fields.update(override)
    return MemorySource(**fields)


# -- the table of rejected inputs ---------------------------------------------------------

Case = tuple[str, Callable[[Ctx], Any], str]  # (id, call, field the message must name)
CASES: list[Any] = []


def case(
    name: str,
    call: Callable[[Ctx], Any],
    field: str,
    bug: str | None = None,
    *,
    writes_first: bool = False,
) -> None:
    """One rejected call. ``writes_first``: the call makes a valid write before the bad one."""
    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
    CASES.append(pytest.param(call, field, not writes_first, id=name, marks=marks))


def _store_cases() -> None:
    for n, value in enumerate((*WRONG_TYPES, "", "   ", ".", "..", "a\0b", Path(""))):
        case(f"store-path-{n}", lambda c, v=value: RemoteMemoryStore(v), "path")
    for n, value in enumerate((*WRONG_TYPES, "", "   \t")):
        case(
            f"store-user_id-{n}",
            lambda c, v=value: RemoteMemoryStore(c.store.path, user_id=v),
            "user_id",
        )
    case(
        "store-path-is-directory-read",
        lambda c: RemoteMemoryStore(_a_directory(c)).read_all(),
        "directory",
    )
    case(
        "store-path-is-directory-append",
        lambda c: append_with(Ctx(RemoteMemoryStore(_a_directory(c)), c.engine, c.query, [])),
        "directory",
    )


def _a_directory(c: Ctx) -> Path:
    directory = c.store.path.with_name("a-directory")
    directory.mkdir(exist_ok=True)
    return directory


def _append_cases() -> None:
    for n, value in enumerate(
        (*WRONG_TYPES, "PROFILE", "retraction", MemoryKind.RETRACTION, "memory", "")
    ):
        case(f"append-kind-{n}", lambda c, v=value: append_with(c, kind=v), "kind")
    for field, limit in (("content", 20_000), ("summary", 2_000)):
        for n, value in enumerate(
            (*WRONG_TYPES, "", " \n\t\u3000 ", "x" * (limit + 1), "ok \x00", "ok \ud800")
        ):
            case(f"append-{field}-{n}", lambda c, f=field, v=value: append_with(c, **{f: v}), field)
    for n, value in enumerate((*WRONG_TYPES, "source", {"source_id": "s"})):
        case(f"append-source-{n}", lambda c, v=value: append_with(c, source=v), "source")
    for field, limit in (("source_id", 256), ("source_type", 64), ("title", 500)):
        for n, value in enumerate((*WRONG_TYPES, "", "  ", "x" * (limit + 1), "\x07")):
            case(
                f"append-source.{field}-{n}",
                lambda c, f=field, v=value: append_with(c, source=source_with(**{f: v})),
                f"source.{field}",
            )
    for n, value in enumerate(BAD_TIMES):
        case(
            f"append-source.captured_at-{n}",
            lambda c, v=value: append_with(c, source=source_with(captured_at=v)),
            "source.captured_at",
        )
    for n, value in enumerate((5, b"x", "", "bad id", "x" * 129, True)):
        case(f"append-memory_id-{n}", lambda c, v=value: append_with(c, memory_id=v), "memory_id")
    for n, value in enumerate(v for v in BAD_TIMES if v is not None):
        case(f"append-stored_at-{n}", lambda c, v=value: append_with(c, stored_at=v), "stored_at")
    case("append-duplicate", lambda c: append_with(c, memory_id="c-1"), "memory_id")


def _retract_cases() -> None:
    for n, value in enumerate((*WRONG_TYPES, "", "bad id", "unknown-id")):
        case(
            f"retract-memory_id-{n}",
            lambda c, v=value: c.store.retract(v, reason="r", source=src()),
            "memory_id",
        )
    for n, value in enumerate((*WRONG_TYPES, "", "x" * 2001, "\x00")):
        case(
            f"retract-reason-{n}",
            lambda c, v=value: c.store.retract("c-1", reason=v, source=src()),
            "reason",
        )
    for n, value in enumerate((*WRONG_TYPES, "s")):
        case(
            f"retract-source-{n}",
            lambda c, v=value: c.store.retract("c-1", reason="r", source=v),
            "source",
        )
    for n, value in enumerate((5, b"x", "", "bad id", "c-1", "p-1")):
        case(
            f"retract-retraction_id-{n}",
            lambda c, v=value: c.store.retract("c-1", reason="r", source=src(), retraction_id=v),
            "retraction_id",
        )
    case(
        "retract-a-retraction",
        lambda c: c.store.retract(
            c.store.retract("c-1", reason="r", source=src()).memory_id, reason="r", source=src()
        ),
        "retraction",
        writes_first=True,
    )


def _query_cases() -> None:
    def norm(c: Ctx, **override: Any) -> RecallQuery:
        args: dict[str, Any] = {"text": "layered", "user_scope": c.store.user_scope}
        args.update(override)
        text = args.pop("text")
        return normalize_recall_query(text, **args)

    for n, value in enumerate((*WRONG_TYPES, "", "   ", "!!! ... ???", "x" * 2001)):
        case(f"normalize-text-{n}", lambda c, v=value: norm(c, text=v), "text")
    for n, value in enumerate((None, "", b"scope", 5)):
        case(f"normalize-user_scope-{n}", lambda c, v=value: norm(c, user_scope=v), "user_scope")
    for n, value in enumerate((None, 0, 11, -1, True, False, 5.0, "5", 10**100, float("nan"))):
        case(f"normalize-limit-{n}", lambda c, v=value: norm(c, limit=v), "limit")
    for n, value in enumerate((5, "", "   ", b"q", True)):
        case(f"normalize-query_id-{n}", lambda c, v=value: norm(c, query_id=v), "query_id")
    for n, value in enumerate(v for v in BAD_TIMES if v is not None):
        case(f"normalize-issued_at-{n}", lambda c, v=value: norm(c, issued_at=v), "issued_at")


def _stage_cases() -> None:
    for n, value in enumerate((None, "query", {"text": "x"}, 5)):
        case(
            f"candidates-query-{n}",
            lambda c, v=value: build_recall_candidates(v, c.records),
            "query",
        )
    for n, value in enumerate(("abc", [None], [b"x"], [{"memory_id": "x"}])):
        case(
            f"candidates-records-{n}",
            lambda c, v=value: build_recall_candidates(c.query, v),
            "records",
        )
    for n, value in enumerate((None, 5)):
        case(
            f"candidates-records-noniterable-{n}",
            lambda c, v=value: build_recall_candidates(c.query, v),
            "records",
        )
    for n, value in enumerate((None, "x", 5)):
        case(
            f"score-query-{n}",
            lambda c, v=value: score_recall_candidate(v, c.candidate(), as_of=TEACHING_AS_OF),
            "query",
        )
        case(
            f"score-candidate-{n}",
            lambda c, v=value: score_recall_candidate(c.query, v, as_of=TEACHING_AS_OF),
            "candidate",
        )
        case(
            f"score-policy-{n}",
            lambda c, v=value: score_recall_candidate(
                c.query, c.candidate(), as_of=TEACHING_AS_OF, policy=v
            ),
            "policy",
        )
    case(
        "score-candidate-of-another-query",
        lambda c: score_recall_candidate(
            normalize_recall_query("layered", user_scope=c.store.user_scope, query_id="other"),
            c.candidate(),
            as_of=TEACHING_AS_OF,
        ),
        "query_id",
    )
    for n, value in enumerate(BAD_TIMES):
        case(
            f"score-as_of-{n}",
            lambda c, v=value: score_recall_candidate(c.query, c.candidate(), as_of=v),
            "as_of",
        )
        case(
            f"rank-as_of-{n}",
            lambda c, v=value: stable_rank_recall_candidates(c.query, [c.candidate()], as_of=v),
            "as_of",
        )
    for n, value in enumerate(("abc", [None], [5])):
        case(
            f"rank-candidates-{n}",
            lambda c, v=value: stable_rank_recall_candidates(c.query, v, as_of=TEACHING_AS_OF),
            "candidates",
        )
    for n, value in enumerate((None, 5)):
        case(
            f"rank-candidates-noniterable-{n}",
            lambda c, v=value: stable_rank_recall_candidates(c.query, v, as_of=TEACHING_AS_OF),
            "candidates",
        )
    case(
        "rank-query-none-no-candidates",
        lambda c: stable_rank_recall_candidates(None, [], as_of=TEACHING_AS_OF),
        "query",
    )
    case(
        "rank-as_of-unchecked-without-candidates",
        lambda c: stable_rank_recall_candidates(c.query, [], as_of="not a time"),
        "as_of",
    )


def _engine_cases() -> None:
    for n, value in enumerate((*WRONG_TYPES, "store.jsonl")):
        case(f"engine-store-{n}", lambda c, v=value: RecallEngine(v), "store")
    for n, value in enumerate((None, "", "INDEXED", "fast", 1, ("indexed",))):
        case(
            f"engine-strategy-{n}",
            lambda c, v=value: RecallEngine(c.store, strategy=v),
            "strategy",
        )
    for n, value in enumerate((None, "policy", 0.5, {"lexical_weight": 1})):
        case(f"engine-policy-{n}", lambda c, v=value: RecallEngine(c.store, policy=v), "policy")
    for strategy in ("indexed", "teaching"):

        def recall(c: Ctx, s: str = strategy, **kw: Any) -> Any:
            text = kw.pop("text", "layered")
            return RecallEngine(c.store, strategy=s).recall(text, **kw)

        for n, value in enumerate((*WRONG_TYPES, "", "  ", "?!", "x" * 2001)):
            case(f"recall-{strategy}-text-{n}", lambda c, v=value, r=recall: r(c, text=v), "text")
        for n, value in enumerate((None, 0, 11, True, 5.0, "5")):
            case(
                f"recall-{strategy}-limit-{n}", lambda c, v=value, r=recall: r(c, limit=v), "limit"
            )
        for n, value in enumerate((5, "", b"q")):
            case(
                f"recall-{strategy}-query_id-{n}",
                lambda c, v=value, r=recall: r(c, query_id=v),
                "query_id",
            )
        for n, value in enumerate(v for v in BAD_TIMES if v is not None):
            case(
                f"recall-{strategy}-as_of-{n}", lambda c, v=value, r=recall: r(c, as_of=v), "as_of"
            )
        for n, value in enumerate(("p", 1, ScoringPolicy)):
            case(
                f"recall-{strategy}-policy-{n}",
                lambda c, v=value, r=recall: r(c, policy=v),
                "policy",
            )


def _render_and_tool_cases() -> None:
    for n, value in enumerate((*WRONG_TYPES, "<xml/>")):
        if value is None:
            continue  # render_profile_block(None) is documented: "" (no profile)
        case(f"render-result-{n}", lambda c, v=value: render_recall_context(v), "result")
        case(f"render-profile-{n}", lambda c, v=value: render_profile_block(v), "profile")
        case(f"system-prompt-store-{n}", lambda c, v=value: build_system_prompt(v), "store")
    case("render-result-none", lambda c: render_recall_context(None), "result")
    case("system-prompt-store-none", lambda c: build_system_prompt(None), "store")
    for n, value in enumerate((None, 5, b"q", "", "...")):
        case(
            f"recall_history-query-{n}",
            lambda c, v=value: recall_history(v, engine=c.engine, as_of=TEACHING_AS_OF),
            "text",
        )
    for n, value in enumerate((None, 0, 11, "5", True, 2.0)):
        case(
            f"recall_history-limit-{n}",
            lambda c, v=value: recall_history("layered", v, engine=c.engine, as_of=TEACHING_AS_OF),
            "limit",
        )
    case(
        "recall_history-as_of",
        lambda c: recall_history("layered", engine=c.engine, as_of="soon"),
        "as_of",
    )
    case(
        "recall_history-query_id",
        lambda c: recall_history("layered", engine=c.engine, as_of=TEACHING_AS_OF, query_id=7),
        "query_id",
    )
    for n, value in enumerate(("engine", 5, object())):
        case(
            f"recall_history-engine-{n}",
            lambda c, v=value: recall_history("layered", engine=v, as_of=TEACHING_AS_OF),
            "engine",
        )


def _policy_cases() -> None:
    for name in ("lexical_weight", "recency_weight", "recency_window_days"):
        for n, value in enumerate(
            (None, "1", b"1", True, float("nan"), math.inf, -math.inf, -0.1, [1])
        ):
            case(f"policy-{name}-{n}", lambda c, f=name, v=value: ScoringPolicy(**{f: v}), name)
        case(
            f"policy-{name}-huge-int",
            lambda c, f=name: ScoringPolicy(**{f: 10**400}),
            name,
        )
    case("policy-window-zero", lambda c: ScoringPolicy(recency_window_days=0), "recency_window")
    case(
        "policy-both-weights-zero",
        lambda c: ScoringPolicy(lexical_weight=0, recency_weight=0),
        "weight",
    )


_store_cases()
_append_cases()
_retract_cases()
_query_cases()
_stage_cases()
_engine_cases()
_render_and_tool_cases()
_policy_cases()


@pytest.mark.parametrize(("call", "field", "unchanged"), CASES)
def test_bad_input_raises_a_typed_error_naming_the_field(
    ctx: Ctx, call, field: str, unchanged: bool
) -> None:
    before = read_bytes(ctx.store.path)
    _figures["cases"] += 1
    with pytest.raises(RemoteMemoryError) as info:
        call(ctx)
    assert field in str(info.value), f"message does not name {field!r}: {info.value}"
    if unchanged:
        assert read_bytes(ctx.store.path) == before, "a rejected call changed the file"
    _figures["typed_errors"] += 1


def test_a_rejected_write_leaves_the_file_byte_identical(ctx: Ctx) -> None:
    before = ctx.store.path.read_bytes()
    stat = ctx.store.path.stat()
    rejected = 0
    for bad in (
        {"content": None},
        {"summary": "x" * 2001},
        {"source": source_with(captured_at="nope")},
        {"memory_id": "c-1"},
        {"kind": "retraction"},
        {"content": "bad \x00 byte"},
    ):
        with pytest.raises(RemoteMemoryValidationError):
            append_with(ctx, **bad)
        rejected += 1
    with pytest.raises(RemoteMemoryDuplicateError):
        ctx.store.retract("c-1", reason="r", source=src(), retraction_id="p-1")
    assert ctx.store.path.read_bytes() == before
    assert ctx.store.path.stat().st_mtime_ns == stat.st_mtime_ns  # not even touched
    _figures["byte_identical_checks"] = rejected + 1


# -- documented normalizations ------------------------------------------------------------


def test_documented_normalizations(ctx: Ctx) -> None:
    naive = append_with(ctx, source=source_with(captured_at=datetime(2026, 8, 1, 12, 0)))
    assert naive.source.captured_at == "2026-08-01T12:00:00Z"  # naive datetime -> UTC
    offsetless = append_with(ctx, source=source_with(captured_at="2026-08-01T12:00:00"))
    assert offsetless.source.captured_at == "2026-08-01T12:00:00Z"
    shifted = append_with(ctx, source=source_with(captured_at="2026-08-01T20:00:00+08:00"))
    assert shifted.source.captured_at == "2026-08-01T12:00:00Z"
    date_only = append_with(ctx, source=source_with(captured_at="2026-08-01"))
    assert date_only.source.captured_at == "2026-08-01T00:00:00Z"
    micro = append_with(ctx, stored_at=datetime(2026, 8, 1, 12, 0, 0, 5, tzinfo=UTC))
    assert micro.stored_at == "2026-08-01T12:00:00.000005Z"
    aware = append_with(
        ctx, stored_at=datetime(2026, 8, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    )
    assert aware.stored_at == "2026-08-01T12:00:00Z"
    folded = append_with(ctx, content="  many \t\n spaces\u3000\x1f here ", summary="s\n\ns")
    assert (folded.content, folded.summary) == ("many spaces here", "s s")
    future = append_with(
        ctx,
        memory_id="future-1",
        content="future capture zebra",
        source=source_with(captured_at="2999-01-01T00:00:00Z"),
        stored_at="2999-01-01T00:00:00Z",
    )
    assert future.stored_at == "2999-01-01T00:00:00Z"  # accepted as given
    for strategy in ("indexed", "teaching"):
        engine = RecallEngine(ctx.store, strategy=strategy)
        hit = engine.recall("zebra", as_of=TEACHING_AS_OF).hits[0]
        assert hit.memory_id == "future-1"
        assert hit.score_breakdown.recency == 1.0  # a capture after as_of counts as age 0
        naive_as_of = engine.recall("zebra", as_of=datetime(2026, 8, 2, 12), query_id="q")
        assert naive_as_of.query.issued_at == TEACHING_AS_OF
        assert engine.recall("zebra", as_of=datetime.max).hits  # extreme but valid
        assert engine.recall("zebra", as_of=datetime.min.replace(tzinfo=UTC)).hits
    query = normalize_recall_query(
        "  LAYERED \n Memory ", user_scope="s", limit=10, issued_at=datetime(2026, 8, 2, 12)
    )
    assert (query.text, query.normalized_text, query.terms) == (
        "LAYERED Memory",
        "layered memory",
        ("layered", "memory"),
    )
    assert query.issued_at == TEACHING_AS_OF
    assert len(query.query_id) == 32  # a fresh uuid4 hex
    assert render_profile_block(None) == ""
    _figures["normalizations"] += 16


def test_the_tool_turns_bad_model_input_into_json_errors(ctx: Ctx) -> None:
    for tool_input in (
        None,
        "layered",
        5,
        [],
        {},
        {"query": None},
        {"query": "?!"},
        {"query": "layered", "limit": 0},
        {"query": "layered", "limit": "5"},
        {"query": "x" * 5000},
    ):
        text, is_error = run_recall_tool(tool_input, engine=ctx.engine, as_of=TEACHING_AS_OF)
        assert is_error
        payload = json.loads(text)
        assert payload["error"]["type"].startswith("RemoteMemory")
    text, is_error = run_recall_tool({"query": "layered"}, engine=ctx.engine, as_of=TEACHING_AS_OF)
    assert not is_error and json.loads(text)["hits"]


def test_a_record_of_another_scope_is_a_scope_error_in_every_stage(ctx: Ctx) -> None:
    other = RemoteMemoryStore(ctx.store.path.with_name("other.jsonl"), user_id="someone-else")
    foreign = other.append(kind="conversation", content="layered", summary="x", source=src())
    with pytest.raises(RemoteMemoryScopeError, match="user_scope"):
        build_recall_candidates(ctx.query, [*ctx.records, foreign])


# -- property-based fuzzing --------------------------------------------------------------------

_SPECIALS = "<>&\"' \x00\t\n\r]]>\ud800\udfff\ufffe\u202e"
_char = st.one_of(
    st.characters(exclude_categories=()),  # every code point, lone surrogates included
    st.sampled_from(list(_SPECIALS)),
    st.sampled_from(list("layered memory 分层记忆")),
)
_text = st.text(_char, max_size=40)
_maybe_text = st.one_of(_text, st.sampled_from([None, b"bytes", 7, "layered memory"]))
_time = st.one_of(
    st.sampled_from(["2026-08-01T12:00:00Z", "2026-08-01", "2026-08-01T12:00:00+05:30"]),
    st.datetimes(),
    st.datetimes(timezones=st.just(UTC)),
    _text,
)
_limit = st.one_of(st.integers(-2, 12), st.sampled_from([None, True, 5.0, "5"]))


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory) -> RemoteMemoryStore:
    return RemoteMemoryStore(tmp_path_factory.mktemp("fuzz") / "fuzz.jsonl", user_id="fuzz-user")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(["conversation", "conversation", "profile", "bogus"]),
    content=_maybe_text,
    summary=_maybe_text,
    source_id=_text,
    source_type=_text,
    title=_text,
    captured_at=_time,
    query=st.one_of(_text, _text.map(lambda t: "memory " + t)),
    limit=_limit,
    as_of=st.one_of(st.none(), _time),
)
def test_fuzz_append_recall_render_only_raises_contract_errors(
    fuzz_store: RemoteMemoryStore,
    kind: str,
    content: Any,
    summary: Any,
    source_id: str,
    source_type: str,
    title: str,
    captured_at: Any,
    query: str,
    limit: Any,
    as_of: Any,
) -> None:
    before = read_bytes(fuzz_store.path)
    _figures["fuzz_examples"] = _figures.get("fuzz_examples", 0) + 1
    try:
        fuzz_store.append(
            kind=kind,
            content=content,
            summary=summary,
            source=MemorySource(source_id, source_type, title, captured_at),
        )
    except RemoteMemoryValidationError:
        assert read_bytes(fuzz_store.path) == before
    for strategy in ("indexed", "teaching"):
        engine = RecallEngine(fuzz_store, strategy=strategy)
        try:
            result = engine.recall(query, limit=limit, as_of=as_of)
        except RemoteMemoryValidationError:
            continue
        rendered = render_recall_context(result)
        if rendered:
            root = ET.fromstring(rendered)
            assert len(root.findall("hit")) == len(result.hits)
        payload = json.loads(json.dumps(result.to_dict(), ensure_ascii=False))
        assert len(payload["hits"]) == len(result.hits)
    block = render_profile_block(fuzz_store.latest_profile())
    if block:
        ET.fromstring(block)
