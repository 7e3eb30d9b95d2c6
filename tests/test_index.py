"""The indexed recall path returns exactly the teaching path's RecallResult.

Property tests drive random stores (tiny vocabularies, so shared terms and ties are
the rule), random queries, limits, policies and clocks through both strategies and
compare the full ``RecallResult``. The index's internal knobs (CSR merge threshold,
chunk size, sort-or-bincount switch) are drawn too, so every code path is compared.
Other tests follow the file: appends by this and by another process, retractions,
a replaced file (also of the same size) and a truncated one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from contextlib import ExitStack
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
from memorylib import store as store_module
from memorylib.fast import bm25 as bm25_module
from memorylib.fast import index as index_module
from memorylib.fast import log as log_module
from memorylib.fast import state as state_module
from memorylib.fast import tokenizer as tokenizer_module
from memorylib.fast.index import RecallIndex

from .conftest import outcome

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
    scorer=st.sampled_from(["coverage", "coverage", "bm25", "bm25+recency"]),
    bm25_k1=st.sampled_from([0.0, 0.9, 1.2, 2.0]),
    bm25_b=st.sampled_from([0.0, 0.5, 0.75, 1.0]),
    min_evidence=st.sampled_from([0.0, 0.0, 0.3, 0.6, 1.0]),
) | st.builds(ScoringPolicy.bm25, min_evidence=st.sampled_from([0.0, 0.5]))


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
            "_NEAR_MAX": st.sampled_from([0, 2, 64]),  # 0, 2: ties cut by the taught keys
            "_PRUNE_MIN": st.sampled_from([0, 8_192]),  # 0: MaxScore tried on small stores too
        }
    )


KNOB_MODULES = {
    "_DELTA_REBUILD_MIN": state_module,
    "_CHUNK": state_module,
    "_BATCH_CHARS": state_module,
    "_SORT_FRACTION": index_module,
    "_POSITION_BITS": tokenizer_module,
    "_NEAR_MAX": bm25_module,
    "_PRUNE_MIN": bm25_module,
}


def patched(stack: ExitStack, values: dict[str, int]) -> None:
    for name, value in values.items():
        stack.enter_context(mock.patch.object(KNOB_MODULES[name], name, value))


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
    max_examples=int(os.environ.get("INDEX_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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


# Reading while another process writes may catch a line half written: the index skips
# it and says so (UncommittedWriteWarning), which is the behaviour under test here.
@pytest.mark.filterwarnings("ignore::memorylib.errors.UncommittedWriteWarning")
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

    def counting(original):
        def parse(raw, lineno):
            parsed.append(lineno)
            return original(raw, lineno)

        return parse

    engine = RecallEngine(store)
    with (
        mock.patch.object(store_module, "parse_line", counting(store_module.parse_line)),
        mock.patch.object(log_module, "decode_line", counting(log_module.decode_line)),
    ):
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
    # An append records its own line without reading it back, so the store parses
    # nothing; the index reads each new line once (not the whole file per recall).
    assert len(parsed) == 60 - 9 and len(set(parsed)) == len(parsed)
    assert [r.memory_id for r in store.read_all()][-1] == "conversation-59"


# -- the saved index --------------------------------------------------------------------------

from memorylib.fast import persist  # noqa: E402


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    operations(max_size=10),
    operations(max_size=6),
    query_lists,
    st.sampled_from(["append", "replace", "same_size", "truncate", "nothing"]),
)
def test_a_new_process_loads_the_saved_index_only_when_it_still_matches(
    ops, later, queries, change
) -> None:
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(persist, "MIN_BYTES", 0):
        store = RemoteMemoryStore(Path(tmp) / "m.jsonl", user_id=USER)
        apply(store, ops)
        assert_same(store, RecallEngine(store), queries)  # builds and saves the index
        snapshot = persist.snapshot_path(store.path)
        assert snapshot.exists() and oct(snapshot.stat().st_mode)[-3:] == "600"
        if change == "append":
            apply(store, later, start=100)
        elif change == "replace":
            replacement = RemoteMemoryStore(Path(tmp) / "new.jsonl", user_id=USER)
            apply(replacement, later, start=200)
            os.replace(replacement.path, store.path)
        elif change == "same_size":  # rewritten in place: every byte count the same
            rotated = b""
            for line in store.path.read_bytes().splitlines():
                payload = StoredMemory.from_dict(json.loads(line)).to_dict()
                payload["content"] = payload["content"].translate(ROTATE)
                payload["summary"] = payload["summary"].translate(ROTATE)
                rotated += store_module.encode_line(StoredMemory.from_dict(payload))
            store.path.write_bytes(rotated)
        elif change == "truncate":
            lines = store.path.read_bytes().splitlines(keepends=True)
            store.path.write_bytes(b"".join(lines[: len(lines) // 2]))
        before = store.path.read_bytes()
        assert_same(store, RecallEngine(store), queries)  # a new index: loads or rebuilds
        assert store.path.read_bytes() == before  # recall never writes the store


def test_a_saved_index_that_does_not_match_is_ignored(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    apply(store, [("append", MemoryKind.CONVERSATION, "memory lock", "memory", TIMES[1])] * 3)
    with mock.patch.object(persist, "MIN_BYTES", 0):
        RecallEngine(store).recall("memory", as_of=TIMES[0])
        assert persist.load_snapshot(store.path, store.user_scope) is not None
        assert persist.load_snapshot(store.path, "someone-else") is None  # another user
        snapshot = persist.snapshot_path(store.path)
        good = snapshot.read_bytes()
        snapshot.write_bytes(good[: len(good) // 2])  # a torn snapshot
        assert persist.load_snapshot(store.path, store.user_scope) is None
        snapshot.write_bytes(b"not an index at all")
        assert persist.load_snapshot(store.path, store.user_scope) is None
        assert_same(store, RecallEngine(store), PROCESS_QUERIES)  # and recall still works
        snapshot.write_bytes(good)
        lines = store.path.read_bytes().splitlines(keepends=True)  # same size, other bytes
        changed = lines[0].replace(b"memory lock", b"memory LOCK")
        store.path.write_bytes(changed + b"".join(lines[1:]))
        assert persist.load_snapshot(store.path, store.user_scope) is None


def test_small_stores_write_no_saved_index(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    apply(store, [("append", MemoryKind.CONVERSATION, "memory lock", "memory", TIMES[1])])
    RecallEngine(store).recall("memory", as_of=TIMES[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl", "m.jsonl.lock"]


def test_a_file_changed_between_refresh_and_read_is_indexed_again(tmp_path: Path) -> None:
    """The shortlist's lines are read back from the file: if they moved, start over."""
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id=USER)
    kind = MemoryKind.CONVERSATION
    ops = [("append", kind, f"memory lock {n}", "memory", TIMES[1]) for n in "xy"]
    apply(store, ops)
    engine = RecallEngine(store)
    assert_same(store, engine, PROCESS_QUERIES)
    replacement = RemoteMemoryStore(tmp_path / "new.jsonl", user_id=USER)
    apply(replacement, [("append", MemoryKind.CONVERSATION, "lock design", "x", TIMES[2])] * 5)
    os.replace(replacement.path, store.path)
    st = os.stat(store.path)  # as if the refresh's stat had raced the replacement:
    engine._index._stat_key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    assert_same(store, engine, PROCESS_QUERIES)


@pytest.mark.slow  # 40-60 s per shape: `make test` runs it, `make test-fast` skips it
@pytest.mark.parametrize(("shape", "records"), [("short", 1000), ("long", 400)])
def test_bm25_and_bm25_recency_pruned_shortlists_equal_teaching(
    tmp_path: Path, shape: str, records: int
) -> None:
    # Synthetic stores have common words (in most records) and rare ones: most BM25 and
    # bm25+recency queries take the pruned shortlist (the rarer terms' docs alone, when the
    # bound proves it); it must still give the teaching path's exact result, after
    # retractions too. The pruned path is counted, so this test cannot pass without it.
    from memorylib.synthetic import synthetic_queries, write_synthetic_store

    store = write_synthetic_store(
        tmp_path / "s.jsonl", records, seed=3, user_id=USER, bulk=True, shape=shape
    )
    ids = [r.memory_id for r in store.read_all()]
    queries = [*synthetic_queries(12, seed=4), "the memory", "记忆 用户 the", "user 用户"]
    policies = [
        ScoringPolicy.bm25(),
        ScoringPolicy.bm25_recency(),
        ScoringPolicy.bm25(k1=2.0, b=0.0),
        ScoringPolicy(scorer="bm25+recency", lexical_weight=0.5, recency_weight=0.5),
    ]
    taken = []
    original = bm25_module.BM25Scorer._pruned

    def counted(self, *args):
        result = original(self, *args)
        taken.append(result is not None)
        return result

    engine = RecallEngine(store)
    with (
        mock.patch.object(bm25_module.BM25Scorer, "_pruned", counted),
        mock.patch.object(bm25_module, "_PRUNE_MIN", 0),  # these stores are below it
    ):
        for round_ in range(2):
            work = [
                (text, limit, "2026-08-01T00:00:00Z", policy)
                for text in queries
                for limit in (1, 10)
                for policy in policies
            ]
            assert_same(store, engine, work)
            for memory_id in ids[round_ * 7 : round_ * 7 + 5]:  # then some retractions
                store.retract(
                    memory_id,
                    reason="test",
                    source=MemorySource(f"r-{memory_id}", "user_request", "forget", TIMES[0]),
                )
    assert sum(taken) >= 20, (sum(taken), len(taken))  # of 240 recalls
