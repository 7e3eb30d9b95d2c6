"""The indexed path for the analyzers (memorylib.fast: state, context, bm25) equals the taught path.

Random stores of a few sources (so records have neighbours), English words with
inflections and stopwords, Chinese runs; random queries (some of several lines: dialogue
turns), limits, clocks and policies: every named configuration of ``CONFIGURATIONS`` and
random mixes of analyzer, query weighting, context, scorer and minimum evidence. The
indexed RecallResult must equal the taught one field for field and serialize to the same
JSON bytes (an int count and a float one compare equal but print differently), also
after appends and retractions that move records' neighbours.
"""

from __future__ import annotations

import json
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
)
from memorylib.analysis import (
    CHAPTER_ANALYZER,
    CHINESE_ANALYZER,
    DIALOGUE_TURNS,
    ENGLISH_ANALYZER,
    FULL_ANALYZER,
    text_terms,
)
from memorylib.candidates import build_recall_candidates, in_context
from memorylib.evaluation import CONFIGURATIONS
from memorylib.fast import bm25 as bm25_module
from memorylib.fast import persist
from memorylib.fast.tokenizer import analyzed_counts
from memorylib.pipeline import prepare_query
from memorylib.query import normalize_recall_query
from memorylib.scoring import bm25_score, query_weights

WORDS = ["run", "running", "runs", "the", "a", "memory", "memories", "Lock", "don't", "new"]
HAN = ["记忆", "分层", "系统", "的", "我们", "检索", "记"]
TIMES = [
    "2026-07-01T00:00:00Z",
    "2026-07-01T00:00:01Z",
    "2026-07-01T00:00:01Z",  # equal capture times: memory_id orders the neighbours
    "2026-07-02T10:00:00Z",
    "2026-07-20T08:30:00+02:00",
]
CLOCKS = ["2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z", "2027-01-01T00:00:00Z"]

token = st.sampled_from(WORDS) | st.sampled_from(HAN)


@st.composite
def texts(draw: st.DrawFn, max_tokens: int = 6) -> str:
    tokens = draw(st.lists(token, min_size=1, max_size=max_tokens))
    out = ""
    for tok in tokens:
        out += (draw(st.sampled_from([" ", "", ", "])) if out else "") + tok
    return out


@st.composite
def query_texts(draw: st.DrawFn) -> str:
    return "\n".join(draw(st.lists(texts(max_tokens=3), min_size=1, max_size=3)))


policies = st.sampled_from(list(CONFIGURATIONS.values())) | st.builds(
    ScoringPolicy,
    lexical_weight=st.sampled_from([0.5, 0.85, 1.0]),
    recency_weight=st.sampled_from([0.0, 0.15, 1.0]),
    scorer=st.sampled_from(["coverage", "bm25", "bm25+recency"]),
    min_evidence=st.sampled_from([0.0, 0.0, 0.5]),
    analyzer=st.sampled_from([CHAPTER_ANALYZER, ENGLISH_ANALYZER, CHINESE_ANALYZER, FULL_ANALYZER]),
    query_weighting=st.sampled_from([None, DIALOGUE_TURNS]),
    context=st.sampled_from([(), (0.4, 0.25, 0.1), (0.5,), (1.0, 1.0)]),
).filter(lambda p: p.lexical_weight or p.recency_weight)


@st.composite
def operations(draw: st.DrawFn, max_size: int = 12) -> list[tuple]:
    ops: list[tuple] = []
    for _ in range(draw(st.integers(1, max_size))):
        if ops and draw(st.integers(0, 5)) == 0:
            ops.append(("retract", draw(st.integers(0, 40))))
            continue
        kind = draw(st.sampled_from([MemoryKind.CONVERSATION] * 6 + [MemoryKind.PROFILE]))
        ops.append(
            (
                "append",
                kind,
                draw(texts()),
                draw(texts(max_tokens=2)),
                draw(st.sampled_from(TIMES)),
                draw(st.sampled_from(["s-0", "s-0", "s-1", "s-2"])),
            )
        )
    return ops


def apply(store: RemoteMemoryStore, ops: list[tuple], start: int = 0) -> None:
    appended = [r.memory_id for r in store.read_all() if r.kind is not MemoryKind.RETRACTION]
    for n, op in enumerate(ops, start):
        if op[0] == "retract":
            if appended:
                store.retract(
                    appended[op[1] % len(appended)],
                    reason="wrong",
                    source=MemorySource(f"r-{n}", "user_request", "forget", TIMES[0]),
                    retraction_id=f"retraction-{n:03d}",
                )
            continue
        _, kind, content, summary, captured_at, source = op
        memory_id = f"m-{n:03d}"
        store.append(
            kind=kind,
            memory_id=memory_id,
            content=content,
            summary=summary,
            source=MemorySource(source, "conversation_transcript", "t", captured_at),
        )
        appended.append(memory_id)


def both(store: RemoteMemoryStore, indexed: RecallEngine, text: str, limit: int, clock: str):
    taught = RecallEngine(store, policy=indexed.policy, strategy="teaching")
    outcomes = []
    for engine in (taught, indexed):
        try:
            outcomes.append(engine.recall(text, limit=limit, as_of=clock, query_id="q"))
        except RemoteMemoryValidationError as exc:  # a query of no term: both refuse
            outcomes.append(str(exc))
    return outcomes


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=operations(),
    later=operations(max_size=5),
    queries=st.lists(query_texts(), min_size=1, max_size=3),
    policy=policies,
    limit=st.integers(1, 10),
    clock=st.sampled_from(CLOCKS),
    prune_min=st.sampled_from([0, bm25_module._PRUNE_MIN]),  # 0: MaxScore tried here too
)
def test_indexed_equals_taught_for_every_analysis(
    tmp_path_factory, ops, later, queries, policy, limit, clock, prune_min
) -> None:
    store = RemoteMemoryStore(tmp_path_factory.mktemp("a") / "m.jsonl", user_id="u")
    apply(store, ops)
    indexed = RecallEngine(store, policy=policy)
    with mock.patch.object(bm25_module, "_PRUNE_MIN", prune_min):
        for step in range(2):
            for text in queries:
                taught, fast = both(store, indexed, text, limit, clock)
                assert fast == taught
                if not isinstance(taught, str):
                    assert json.dumps(fast.to_dict()) == json.dumps(taught.to_dict())
            if step == 0:
                apply(store, later, start=len(ops))  # the index follows appends, retractions


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=operations(),
    text=query_texts(),
    policy=st.builds(
        ScoringPolicy.bm25_recency,
        k1=st.sampled_from([0.0, 1.2, 2.0]),
        b=st.sampled_from([0.0, 0.75, 1.0]),
        analyzer=st.sampled_from([CHAPTER_ANALYZER, ENGLISH_ANALYZER, FULL_ANALYZER]),
        query_weighting=st.sampled_from([None, DIALOGUE_TURNS]),
        context=st.sampled_from([(), (), (0.4, 0.25, 0.1)]),
    ),
    prune_min=st.sampled_from([0, bm25_module._PRUNE_MIN]),
)
def test_the_best_bm25_is_the_taught_one_to_the_last_bit(
    tmp_path_factory, ops, text, policy, prune_min
) -> None:
    # bm25+recency divides every BM25 by the query's best; without context the index
    # takes the numpy BM25's top for it (the same float operations in the same order as
    # the taught bm25_score), with context the taught score of the top docs. Either must
    # be the taught maximum exactly, not merely within rounding.
    store = RemoteMemoryStore(tmp_path_factory.mktemp("b") / "m.jsonl", user_id="u")
    apply(store, ops)
    query = prepare_query(
        normalize_recall_query(text, user_scope=store.user_scope, limit=1), policy, text
    )
    found = build_recall_candidates(
        query, store.read_all(), analyzer=policy.analyzer, context=policy.context
    )
    weights = query_weights(query)
    taught = max(
        (bm25_score(c, found.corpus, policy, weights) for c in found.candidates), default=None
    )
    seen: list[float | None] = []
    original = bm25_module.BM25Scorer._with_best_bm25

    def recorded(self, *args):
        corpus = original(self, *args)
        seen.append(corpus.best_bm25)
        return corpus

    with (
        mock.patch.object(bm25_module.BM25Scorer, "_with_best_bm25", recorded),
        mock.patch.object(bm25_module, "_PRUNE_MIN", prune_min),
    ):
        RecallEngine(store, policy=policy).recall(text, limit=1, as_of=CLOCKS[1], query_id="q")
    assert all(best == taught for best in seen), (seen, taught)


def test_a_replaced_file_is_indexed_again(tmp_path) -> None:
    first = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="u")
    apply(first, [("append", MemoryKind.CONVERSATION, "running memories", "Ann", TIMES[0], "s-0")])
    apply(first, [("append", MemoryKind.CONVERSATION, "the lock", "Bob", TIMES[1], "s-0")], 1)
    policy = CONFIGURATIONS["bm25-full"]
    indexed = RecallEngine(first, policy=policy)
    assert [h.memory_id for h in indexed.recall("run", as_of=CLOCKS[1]).hits] == ["m-000", "m-001"]
    other = RemoteMemoryStore(tmp_path / "other.jsonl", user_id="u")
    apply(other, [("append", MemoryKind.CONVERSATION, "running late", "Cy", TIMES[3], "s-1")], 7)
    (tmp_path / "other.jsonl").replace(tmp_path / "m.jsonl")  # same user, other records
    taught, fast = both(first, indexed, "run", 10, CLOCKS[1])
    assert fast == taught and [h.memory_id for h in fast.hits] == ["m-007"]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=operations(),
    later=operations(max_size=4),
    query=query_texts(),
    name=st.sampled_from(["bm25-context", "bm25-full", "bm25-stem-stop"]),
)
def test_a_new_process_that_loads_the_saved_index_answers_as_taught(
    tmp_path_factory, ops, later, query, name
) -> None:
    """The saved index is the chapter's; it carries each record's source, so a process
    that loads it counts context on it, and builds another analyzer's postings from it."""
    path = tmp_path_factory.mktemp("p") / "m.jsonl"
    with mock.patch.object(persist, "MIN_BYTES", 0):
        store = RemoteMemoryStore(path, user_id="u")
        apply(store, ops)
        RecallEngine(store).recall("memory run 记忆", as_of=CLOCKS[1])  # builds and saves it
        assert persist.snapshot_path(path).exists()
        apply(store, later, start=len(ops))  # lines the loaded index reads after it
        fresh = RemoteMemoryStore(path, user_id="u")
        taught, fast = both(
            fresh, RecallEngine(fresh, policy=CONFIGURATIONS[name]), query, 5, CLOCKS[1]
        )
        assert fast == taught


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(
            list("abcXYZ _-'’.,0129")
            + list("记忆分层系统的我们检索上下")
            + ["é", "e", "\u0301", "ß", "ｆ", "，", "Ω", "\u0915", "\u093f", "\u3000", "\n"]
        ),
        max_size=40,
    )
    | st.text(max_size=30),
    analyzer=st.sampled_from([CHAPTER_ANALYZER, ENGLISH_ANALYZER, CHINESE_ANALYZER, FULL_ANALYZER]),
)
def test_the_index_analyzes_a_text_as_the_taught_stage_does(text: str, analyzer) -> None:
    assert analyzed_counts(text, analyzer) == dict(text_terms(text, analyzer).counts)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=operations(),
    asks=st.lists(st.lists(token, min_size=1, max_size=4), min_size=1, max_size=6),
    weights=st.sampled_from([(0.4, 0.25, 0.1), (0.5,), (1.0, 1.0)]),
    analyzer=st.sampled_from([CHAPTER_ANALYZER, FULL_ANALYZER]),
)
def test_a_docs_kept_counts_in_context_are_what_in_context_gives(
    tmp_path_factory, ops, asks, weights, analyzer
) -> None:
    """``Neighbourhood.counted`` keeps each term's numbers for a doc between queries: every
    doc asked for any sequence of term lists (repeats, overlaps, terms it lacks) gets what
    ``in_context`` gives for that list, bit for bit."""
    store = RemoteMemoryStore(tmp_path_factory.mktemp("c") / "m.jsonl", user_id="u")
    apply(store, ops)
    policy = ScoringPolicy.bm25(analyzer=analyzer, context=weights)
    engine = RecallEngine(store, policy=policy)
    engine.recall("memory run 记忆", as_of=CLOCKS[1])  # builds the index and the view
    index = engine._index
    view = index._view(policy)
    docs = [d for d in range(len(view.state.ids)) if view.state.alive.view[d]]
    for doc, record in zip(docs, index._load(docs), strict=True):
        own = text_terms(record.summary + " " + record.content, analyzer)
        around, _, _ = view.context.placed(doc, own, index._load)
        for words in asks:
            terms = tuple(sorted({t for w in words for t in text_terms(w, analyzer).terms}))
            kept = view.context.counted(doc, record, own, around, terms)
            assert repr(kept) == repr(in_context(record, own, around, terms))
