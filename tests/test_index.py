"""The indexed recall path returns exactly the teaching path's RecallResult.

Property tests drive random stores (tiny vocabularies, so shared terms and ties are
the rule), random queries, limits, policies and clocks through both strategies and
compare the full ``RecallResult``. The index's internal knobs (CSR merge threshold,
chunk size, sort-or-bincount switch) are drawn too, so every code path is compared.
Other tests follow the file: appends by this and by another process, retractions,
a replaced file (also of the same size) and a truncated one.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import types
from collections import defaultdict
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryCorruptionError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
    StoredMemory,
    extract_terms,
    normalize_recall_query,
    normalize_text,
    recall_pipeline,
)
from memorylib import index as index_module
from memorylib import store as store_module
from memorylib.index import RecallIndex, index_terms, term_key

ROOT = Path(__file__).resolve().parents[1]
USER = "index-tester"

# Tiny vocabularies: English words, CJK characters (joined without spaces they form
# runs, hence bigrams), and words that exercise NFKC, casefold and combining marks.
WORDS = ["memory", "layered", "design", "lock", "the", "Memory", "LOG", "café", "42", "_x"]
HAN = ["记", "忆", "分", "层", "上", "下"]
ODD = ["ｆｕｌｌ", "STRASSE", "straße", "e\u0301", "क\u093f", "ᴬb", "Ω"]
TIMES = [
    "2026-07-01T00:00:00Z",
    "2026-07-20T08:30:00Z",
    "2026-07-20T08:30:00Z",  # drawn twice as often: equal capture times
    "2026-07-31T23:59:59.500000Z",
    "2026-08-01T00:00:00+08:00",
    "2026-08-02T12:00:00Z",
]
CLOCKS = [*TIMES, "2026-06-01T00:00:00Z", "2026-09-01T00:00:00Z", "2027-01-01T00:00:00Z"]

token = st.one_of(st.sampled_from(WORDS), st.sampled_from(HAN), st.sampled_from(ODD))
separator = st.sampled_from([" ", " ", "", "，", "-", "  "])


@st.composite
def texts(draw: st.DrawFn, min_tokens: int = 1, max_tokens: int = 6) -> str:
    tokens = draw(st.lists(token, min_size=min_tokens, max_size=max_tokens))
    out = ""
    for tok in tokens:
        out += (draw(separator) if out else "") + tok
    return out


def query_texts() -> st.SearchStrategy[str]:
    return texts(max_tokens=4).filter(lambda t: bool(extract_terms(normalize_text(t))))


policies = st.builds(
    ScoringPolicy,
    lexical_weight=st.sampled_from([0.0, 0.1, 0.5, 0.85, 1.0, 3.0]),
    recency_weight=st.sampled_from([0.15, 0.5, 1.0, 2.0, 1e-6]),
    recency_window_days=st.sampled_from([0.5, 1.0, 30.0, 365.0]),
)


@st.composite
def operations(draw: st.DrawFn, max_size: int = 14) -> list[tuple]:
    """("append", kind, content, summary, captured_at) and ("retract", n) operations."""
    ops = []
    for _ in range(draw(st.integers(1, max_size))):
        if ops and draw(st.integers(0, 6)) == 0:
            ops.append(("retract", draw(st.integers(0, 50))))
            continue
        kind = draw(st.sampled_from([MemoryKind.CONVERSATION] * 5 + [MemoryKind.PROFILE]))
        ops.append(("append", kind, draw(texts()), draw(texts()), draw(st.sampled_from(TIMES))))
    return ops


def apply(store: RemoteMemoryStore, ops: list[tuple], start: int = 0) -> None:
    """Run ``ops`` through the store's public API; memory ids count on from ``start``."""
    appended = [r.memory_id for r in store.read_all() if r.kind is not MemoryKind.RETRACTION]
    for n, op in enumerate(ops, start):
        if op[0] == "retract":
            if appended:
                store.retract(
                    appended[op[1] % len(appended)],
                    reason="no longer true",
                    source=MemorySource(f"retraction-{n}", "user_request", "forget", TIMES[0]),
                    retraction_id=f"retraction-{n:03d}",
                )
            continue
        _, kind, content, summary, captured_at = op
        memory_id = f"{kind.value}-{n:03d}"
        store.append(
            kind=kind,
            memory_id=memory_id,
            content=content,
            summary=summary,
            source=MemorySource(f"src-{n}", "conversation_transcript", "t", captured_at),
            stored_at="2026-08-02T00:00:00Z",
        )
        appended.append(memory_id)


def knobs() -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries(
        {
            "_DELTA_REBUILD_MIN": st.sampled_from([0, 1, 7, 50_000]),
            "_CHUNK": st.sampled_from([1, 3, 8_192]),
            "_SORT_FRACTION": st.sampled_from([0, 16, 10**9]),
            "_BATCH_CHARS": st.sampled_from([1, 40, 4_000_000]),
            "_POSITION_BITS": st.sampled_from([2, 24]),  # 2: the argsort fallback
        }
    )


def patched(stack: ExitStack, values: dict[str, int]) -> None:
    for name, value in values.items():
        stack.enter_context(mock.patch.object(index_module, name, value))


def assert_same(store: RemoteMemoryStore, engine: RecallEngine, queries: list[tuple]) -> None:
    teaching = RecallEngine(store, strategy="teaching")
    for n, (text, limit, as_of, policy) in enumerate(queries):
        kwargs = {"limit": limit, "query_id": f"q-{n}", "as_of": as_of, "policy": policy}
        expected = teaching.recall(text, **kwargs)
        got = engine.recall(text, **kwargs)
        assert got == expected, (text, limit, as_of, policy)


query_lists = st.lists(
    st.tuples(query_texts(), st.integers(1, 10), st.sampled_from(CLOCKS), policies),
    min_size=1,
    max_size=6,
)

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- terms ----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        texts(0, 12),
        st.text(max_size=40),
        st.text(alphabet=st.characters(min_codepoint=0xFF00, max_codepoint=0xFF70), max_size=12),
        st.text(alphabet=st.characters(min_codepoint=0x4DF0, max_codepoint=0x4E10), max_size=12),
    )
)
def test_index_terms_are_the_taught_terms(text: str) -> None:
    taught = extract_terms(normalize_text(text))
    assert index_terms(text) == {term_key(t) for t in taught}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(texts(0, 8), st.text(max_size=20)), min_size=1, max_size=6))
def test_a_batch_of_texts_gets_each_texts_terms(batch: list[str]) -> None:
    vocab: dict = defaultdict(itertools.count().__next__)
    docs, ids = index_module._term_pairs(batch, list(range(len(batch))), vocab.__getitem__, {})
    key_of = {term_id: key for key, term_id in vocab.items()}
    got = [set() for _ in batch]
    for doc, term_id in zip(docs.tolist(), ids.tolist(), strict=True):
        got[doc].add(key_of[term_id])
    assert len(docs) == sum(map(len, got))  # each (doc, term) pair once
    assert got == [index_terms(text) for text in batch]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(
                lambda d: f"{d.year:04d}-{d:%m-%dT%H:%M:%S}Z"
            ),
            st.sampled_from([*TIMES, "2026-08-01T00:00:00.000001Z", "2026-08-01 12:00:00Z"]),
        ),
        max_size=12,
    )
)
def test_vectorized_capture_times_match_the_parser(stamps: list[str]) -> None:
    expected = [index_module._micros(stamp) for stamp in stamps]
    assert index_module._capture_micros(stamps).tolist() == expected


def test_term_keys_never_collide() -> None:
    terms = ["记", "记忆", "忆记", "一", "鿿", "一鿿", "word", "一x", "", "记忆分"]
    keys = [term_key(t) for t in terms]
    assert len(set(keys)) == len(keys)
    assert term_key("一x") == "一x" and term_key("记忆分") == "记忆分"  # never tokenizer terms


# -- the indexed path equals the teaching path ------------------------------------------------


@SETTINGS
@given(operations(), query_lists, knobs())
def test_indexed_equals_teaching(ops, queries, knob_values) -> None:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        patched(stack, knob_values)
        store = RemoteMemoryStore(Path(tmp) / "m.jsonl", user_id=USER)
        apply(store, ops)
        assert_same(store, RecallEngine(store), queries)


@SETTINGS
@given(operations(max_size=8), operations(max_size=8), query_lists, knobs())
def test_indexed_follows_appends_and_retractions(ops, more, queries, knob_values) -> None:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        patched(stack, knob_values)
        store = RemoteMemoryStore(Path(tmp) / "m.jsonl", user_id=USER)
        apply(store, ops)
        engine = RecallEngine(store)
        assert_same(store, engine, queries)  # builds the index
        apply(store, more, start=len(ops))  # same process, same store object
        assert_same(store, engine, queries)
        other = RemoteMemoryStore(store.path, user_id=USER)  # another writer object
        apply(other, more[:3], start=len(ops) + len(more))
        assert_same(store, engine, queries)


@SETTINGS
@given(operations(max_size=8), operations(max_size=8), query_lists, st.booleans())
def test_index_is_rebuilt_when_the_file_is_replaced(ops, other_ops, queries, same_size) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = RemoteMemoryStore(Path(tmp) / "m.jsonl", user_id=USER)
        apply(store, ops)
        engine = RecallEngine(store)
        assert_same(store, engine, queries)
        replacement = RemoteMemoryStore(Path(tmp) / "new.jsonl", user_id=USER)
        if same_size:  # same records, every ASCII letter of the content rotated: same bytes
            for line in store.path.read_bytes().splitlines():
                record = StoredMemory.from_dict(json.loads(line))
                payload = record.to_dict()
                payload["content"] = payload["content"].translate(ROTATE)
                payload["summary"] = payload["summary"].translate(ROTATE)
                with open(replacement.path, "ab") as handle:
                    handle.write(store_module.encode_line(StoredMemory.from_dict(payload)))
            assert replacement.path.stat().st_size == store.path.stat().st_size
        else:
            apply(replacement, other_ops)
        os.replace(replacement.path, store.path)
        assert_same(store, engine, queries)


ROTATE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations(max_size=10), operations(max_size=6), query_lists)
def test_index_is_rebuilt_when_the_file_is_truncated(ops, later, queries) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = RemoteMemoryStore(Path(tmp) / "m.jsonl", user_id=USER)
        apply(store, ops)
        engine = RecallEngine(store)
        assert_same(store, engine, queries)
        lines = store.path.read_bytes().splitlines(keepends=True)
        store.path.write_bytes(b"".join(lines[: len(lines) // 2]))  # same inode, shorter
        assert_same(store, engine, queries)
        apply(store, later, start=100)  # and it grows again from there
        assert_same(store, engine, queries)


def test_scope_and_type_errors_match_the_teaching_path(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    apply(store, [("append", MemoryKind.CONVERSATION, "memory", "memory", TIMES[0])])
    index = RecallIndex(store)
    foreign = normalize_recall_query(
        "memory", user_scope="f" * 16, query_id="q", issued_at=TIMES[0]
    )
    taught = outcome(lambda: recall_pipeline(foreign, store.read_all(), as_of=TIMES[0]))
    assert taught[0] is RemoteMemoryScopeError
    assert outcome(lambda: index.recall(foreign, as_of=TIMES[0])) == taught
    with pytest.raises(RemoteMemoryValidationError, match="RecallQuery"):
        index.recall("memory", as_of=TIMES[0])  # type: ignore[arg-type]


def test_a_corrupt_file_raises_on_both_paths(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    apply(store, [("append", MemoryKind.CONVERSATION, "memory", "memory", TIMES[0])])
    with open(store.path, "ab") as handle:
        handle.write(b'{"not": "a record"}\n')
    for strategy in ("teaching", "indexed"):
        with pytest.raises(RemoteMemoryCorruptionError, match="line 2"):
            RecallEngine(store, strategy=strategy).recall("memory", as_of=TIMES[0])


# -- another process writes ---------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from memorylib import MemoryKind, MemorySource, RemoteMemoryStore
    path, user, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = RemoteMemoryStore(path, user_id=user)
    words = ["memory", "layered", "design", "lock", "记忆", "分层", "上下"]
    for n in range(first, first + count):
        text = " ".join(words[(n * k) % len(words)] for k in (1, 2, 3))
        store.append(
            kind=MemoryKind.CONVERSATION, memory_id=f"remote-{n:04d}", content=text,
            summary=words[n % len(words)],
            source=MemorySource(f"s-{n}", "conversation_transcript", "t",
                                f"2026-07-{1 + n % 28:02d}T00:00:00Z"),
            stored_at="2026-08-02T00:00:00Z",
        )
        if n % 7 == 3:
            store.retract(f"remote-{n - 2:04d}", reason="wrong",
                          source=MemorySource(f"r-{n}", "user_request", "t",
                                              "2026-08-01T00:00:00Z"),
                          retraction_id=f"retraction-{n:04d}")
    """
)

PROCESS_QUERIES = [
    ("memory design", 5, "2026-08-02T00:00:00Z", ScoringPolicy()),
    ("记忆 lock", 3, "2026-07-10T00:00:00Z", ScoringPolicy(0.2, 1.0, 2.0)),
    ("分层上下 layered", 10, "2026-09-01T00:00:00Z", ScoringPolicy()),
]


def writer(path: Path, first: int, count: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), USER, str(first), str(count)], env=env
    )


def test_index_follows_another_process(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    apply(store, [("append", MemoryKind.CONVERSATION, "memory lock", "memory", TIMES[1])])
    engine = RecallEngine(store)
    assert_same(store, engine, PROCESS_QUERIES)
    for first in (0, 40):
        assert writer(store.path, first, 40).wait(timeout=120) == 0
        assert_same(store, engine, PROCESS_QUERIES)


def test_index_stays_consistent_while_another_process_appends(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    apply(store, [("append", MemoryKind.CONVERSATION, "memory lock", "memory", TIMES[1])])
    engine = RecallEngine(store)
    proc = writer(store.path, 0, 150)
    seen = 0
    while proc.poll() is None:  # recall races the writer: never an error, never going back
        result = engine.recall("memory design 记忆", as_of="2026-08-02T00:00:00Z", query_id="q")
        total = result.searched_records + result.retracted_records
        assert total >= seen
        seen = total
    assert proc.wait(timeout=120) == 0
    assert_same(store, engine, PROCESS_QUERIES)


# -- the store reads only what is new -------------------------------------------------------


def test_append_and_recall_parse_only_new_lines(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    parsed: list[int] = []
    original = RemoteMemoryStore._parse_block

    def counting(self, data, first_lineno, known=None):
        records = original(self, data, first_lineno, known)
        parsed.append(len(records))
        return records

    engine = RecallEngine(store)
    with mock.patch.object(RemoteMemoryStore, "_parse_block", counting):
        for n in range(60):
            store.append(
                kind=MemoryKind.CONVERSATION,
                memory_id=f"conversation-{n}",
                content=f"memory {n}",
                summary="memory",
                source=MemorySource(f"s-{n}", "conversation_transcript", "t", TIMES[0]),
            )
            if n % 10 == 0:
                engine.recall("memory", as_of=TIMES[0], query_id="q")
    # An append records its own line without reading it back, and recall in the same
    # process finds nothing new to parse: the work per append does not grow with the file.
    assert sum(parsed) == 0
    assert [r.memory_id for r in store.read_all()][-1] == "conversation-59"


# -- the fast read path accepts exactly what the full checks accept ------------------------------

GOOD = StoredMemory(
    "conversation-1",
    "0123456789abcdef",
    MemoryKind.CONVERSATION,
    "content",
    "summary",
    MemorySource("s", "conversation_transcript", "title", "2026-08-01T00:00:00Z"),
    "2026-08-02T00:00:00Z",
).to_dict()

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from(["", " ", "x", "conversation", "profile", "retraction", "Conversation"]),
    st.sampled_from(
        [
            "2026-08-01T00:00:00Z",
            " 2026-08-01T00:00:00Z",
            "2026-08-01T00:00:00+08:00",
            "2026-08-01T00:00:00",
            "2026-08-01",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59Z",
            "2026-13-01T00:00:00Z",
            "Z",
            "2026-08-01T00:00:00.5Z",
        ]
    ),
    # builds, not just: a shared {} would be mutated by later draws (flaky data generation)
    st.builds(list),
    st.builds(dict),
)


@st.composite
def payloads(draw: st.DrawFn) -> dict:
    payload = json.loads(json.dumps(GOOD))
    for _ in range(draw(st.integers(0, 3))):
        inner = payload.get("source")
        where = inner if isinstance(inner, dict) and draw(st.booleans()) else payload
        key = draw(st.sampled_from([*sorted(where), "retracts", "extra"]))
        if draw(st.integers(0, 5)) == 0:
            where.pop(key, None)
        else:
            where[key] = draw(values)
    return payload


def outcome(call):
    try:
        return ("ok", call())
    except Exception as exc:  # the type and message are what is compared
        return (type(exc), str(exc))


@settings(max_examples=400, deadline=None)
@given(payloads())
def test_fast_from_dict_matches_the_full_checks(payload: dict) -> None:
    def full_checks():  # a read-only mapping is not a dict: it always takes the full checks
        inner = payload.get("source")
        proxied = dict(payload)
        if isinstance(inner, dict):
            proxied["source"] = types.MappingProxyType(inner)
        return StoredMemory.from_dict(types.MappingProxyType(proxied))

    assert outcome(lambda: StoredMemory.from_dict(payload)) == outcome(full_checks)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=30),
        st.builds(
            lambda prefix, body, suffix: prefix + body + suffix,
            st.sampled_from([b"", b"{", b" ", b"\xef\xbb\xbf", b"{\x00", b"\x00{"]),
            st.sampled_from([json.dumps(GOOD).encode(), b'"a": 1}', b"}", b'{"a": [1'])
            | st.binary(max_size=20),
            st.sampled_from([b"", b" ", b"\r", b"}", b" x", b"\t", b"\xff"]),
        ),
    )
)
def test_fast_json_matches_json_loads(raw: bytes) -> None:
    assert outcome(lambda: store_module._loads(raw)) == outcome(lambda: json.loads(raw))


def json_path_parse(raw: bytes):
    """parse_line without the canonical-line shortcut: the generic decoder and from_dict."""
    with mock.patch.object(store_module, "_canonical_record", lambda raw: None):
        return store_module.parse_line(raw, 7)


any_text = st.text(min_size=1, max_size=12)  # quotes, backslashes, controls, emoji, ...


@settings(max_examples=300, deadline=None)
@given(
    memory_id=st.sampled_from(["m-1", "conversation-0000001", "a:b@c"]),
    kind=st.sampled_from([MemoryKind.CONVERSATION, MemoryKind.PROFILE, MemoryKind.RETRACTION]),
    content=st.one_of(any_text, texts()),
    summary=st.one_of(any_text, st.sampled_from(['say "hi"', "back\\slash", "tab\tx", "é"])),
    title=any_text,
    captured=st.sampled_from([*TIMES, "2026-08-01T00:00:00.25Z", "2026-02-30T00:00:00Z", "x"]),
)
def test_canonical_lines_parse_like_json(memory_id, kind, content, summary, title, captured):
    record = StoredMemory(
        memory_id,
        "0123456789abcdef",
        kind,
        content,
        summary,
        MemorySource("s", "conversation_transcript", title, captured),
        "2026-08-02T00:00:00Z",
        retracts="m-0" if kind is MemoryKind.RETRACTION else None,
    )
    raw = store_module.encode_line(record)[:-1]
    assert outcome(lambda: store_module.parse_line(raw, 7)) == outcome(lambda: json_path_parse(raw))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_mutated_canonical_lines_parse_like_json(data) -> None:
    raw = bytearray(json.dumps(GOOD, ensure_ascii=False, separators=(",", ":")).encode())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        action = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        byte = data.draw(st.sampled_from(list(b'" \\{}:,1Z\x00\x1f\xc3\xa9\xed\xa0\x80a-')))
        if action == "insert":
            raw[at:at] = bytes([byte])
        elif at < len(raw):
            raw[at : at + 1] = b"" if action == "delete" else bytes([byte])
    line = bytes(raw)
    assert outcome(lambda: store_module.parse_line(line, 7)) == outcome(
        lambda: json_path_parse(line)
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=5), min_size=9, max_size=9), st.sampled_from(list(MemoryKind)))
def test_checked_builders_equal_the_constructors(values, kind) -> None:
    from memorylib.records import checked_memory, checked_source

    source = checked_source(*values[:4])
    assert source == MemorySource(*values[:4])
    record = checked_memory(*values[4:6], kind, *values[6:8], source, values[8])
    expected = StoredMemory(*values[4:6], kind, *values[6:8], MemorySource(*values[:4]), values[8])
    assert record == expected and repr(record) == repr(expected)
    assert dataclasses.asdict(record) == dataclasses.asdict(expected)  # every slot is set
