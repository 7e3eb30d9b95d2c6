"""Analyzers beyond the chapter's term rule, query weighting and context (memorylib.analysis).

What a user relies on: the chain turns records and queries into the same terms (a query
can find a record only through a term both were filed under); stopwords, stems, jieba's
words and single characters are the packages' own; older dialogue turns weigh less; a
turn is counted with its neighbours of the same source (never a retracted one or one of
another source), with BM25 on the fractional counts exactly as worked out by hand here;
every breakdown explains each matched term, in the tool JSON and the XML too; and the
chapter's analysis stays the default, unchanged.
"""

from __future__ import annotations

import json
import math

import pytest

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RecallResult,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    ScoringPolicy,
    normalize_recall_query,
    recall_history,
    recall_pipeline,
    render_recall_context,
)
from memorylib.analysis import (
    CHAPTER_ANALYZER,
    CHINESE_ANALYZER,
    DIALOGUE_TURNS,
    ENGLISH_ANALYZER,
    FULL_ANALYZER,
    Analyzer,
    analyze_query,
    analyzed_occurrences,
    query_term_weights,
    stop_terms,
    text_terms,
)
from memorylib.candidates import Neighbour, build_recall_candidates, in_context, neighbours
from memorylib.evaluation import CONFIGURATIONS
from memorylib.pipeline import prepare_query
from memorylib.query import normalize_text, term_counts
from memorylib.records import RecallQuery

AS_OF = "2026-08-02T12:00:00Z"


def terms_of(text: str, analyzer: Analyzer) -> dict[str, int]:
    return dict(text_terms(text, analyzer).counts)


def steps_of(text: str, analyzer: Analyzer) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for term, step, _ in analyzed_occurrences(normalize_text(text), analyzer):
        found.setdefault(term, set()).add(step)
    return found


# -- the chain -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Selected SQLite WAL for local persistence.", "分层记忆 and café straße", "a 记 b", "!!"],
)
def test_the_chapter_analyzer_is_the_chapters_term_rule(text: str) -> None:
    assert terms_of(text, CHAPTER_ANALYZER) == dict(term_counts(normalize_text(text)))


def test_the_snowball_stopword_list_passes_through_the_term_rule() -> None:
    english = stop_terms(("english",))
    assert {"the", "of", "is", "what", "don", "t", "s"} <= english  # "don't" -> don, t
    assert {"new", "work", "memory"}.isdisjoint(english)  # not in the Snowball list
    assert "".join(["aren", "'", "t"]) not in english
    counts = terms_of("What is the status of the new index? Don't ask.", ENGLISH_ANALYZER)
    assert counts == {"status": 1, "new": 1, "index": 1, "ask": 1}


def test_stems_are_snowball_english_and_match_at_both_ends() -> None:
    assert terms_of("running memories transcripts", ENGLISH_ANALYZER) == {
        "run": 1,
        "memori": 1,
        "transcript": 1,
    }
    steps = steps_of("running index", ENGLISH_ANALYZER)
    assert steps == {"run": {"stem"}, "index": {"word"}}  # a word that is its own stem
    record = text_terms("Bob: we were running the transcripts", ENGLISH_ANALYZER)
    query = analyze_query(
        normalize_recall_query("runs transcript", user_scope="u", query_id="q", issued_at=AS_OF),
        ENGLISH_ANALYZER,
    )
    assert set(query.terms) == {"run", "transcript"} <= set(record.counts)
    assert not {"runs"} & set(text_terms("we were running", CHAPTER_ANALYZER).counts)


def test_jieba_words_beside_the_bigrams_and_the_single_characters() -> None:
    counts = terms_of("分层记忆系统", CHINESE_ANALYZER)
    steps = steps_of("分层记忆系统", CHINESE_ANALYZER)
    for bigram in ("分层", "层记", "记忆", "忆系", "系统"):
        assert "bigram" in steps[bigram]
    segments = {t for t, s in steps.items() if "segment" in s}
    assert segments and all(s in "分层记忆系统" for s in segments)
    assert "".join(sorted(segments, key="分层记忆系统".index)) == "分层记忆系统"  # a cut of the run
    for char in "分层记忆系统":
        assert "unigram" in steps[char]
    assert counts["分层"] == 1 + ("分层" in segments)  # every step's occurrence counts
    # the Chinese stopword list drops single characters such as 的 and 我
    assert {"的", "我"} <= stop_terms(("chinese",))
    assert "的" not in terms_of("我的记忆", CHINESE_ANALYZER)
    assert "的" in terms_of("我的记忆", CHAPTER_ANALYZER) or "我的" in terms_of(
        "我的记忆", CHAPTER_ANALYZER
    )


def test_an_analyzer_says_what_it_does_and_refuses_what_it_cannot() -> None:
    assert CHAPTER_ANALYZER.is_chapter and CHAPTER_ANALYZER.parameters() == ()
    assert FULL_ANALYZER.parameters() == (
        ("stopwords", "english chinese"),
        ("stemmer", "english"),
        ("cjk_segmenter", "jieba"),
        ("cjk_unigrams", "yes"),
    )
    with pytest.raises(RemoteMemoryValidationError, match="stemmer"):
        Analyzer("x", stemmer="klingon")
    with pytest.raises(RemoteMemoryValidationError, match="cjk_segmenter"):
        Analyzer("x", cjk_segmenter="hanlp")
    with pytest.raises(RemoteMemoryValidationError, match="stopwords"):
        Analyzer("x", stopwords="english")  # type: ignore[arg-type]
    with pytest.raises(RemoteMemoryValidationError, match="not a list of the stopwords"):
        text_terms("hello", Analyzer("x", stopwords=("elvish",)))
    with pytest.raises(RemoteMemoryValidationError, match="query_weighting"):
        ScoringPolicy.bm25(query_weighting="loud")
    with pytest.raises(RemoteMemoryValidationError, match="context"):
        ScoringPolicy.bm25(context=(0.4, 1.5))


def test_a_query_of_stopwords_alone_recalls_nothing(tmp_path) -> None:
    store = _store(
        tmp_path, [("s1", "m-1", "2026-08-01T10:00:00Z", "Ann", "the plan is what it is")]
    )
    policy = ScoringPolicy.bm25(analyzer=ENGLISH_ANALYZER)
    result = RecallEngine(store, policy=policy).recall("what is the", as_of=AS_OF, query_id="q")
    assert result.query.terms == () and result.hits == ()
    assert result.empty_reason == "no_matching_terms"


# -- query weighting -------------------------------------------------------------------------


def test_dialogue_turns_weigh_older_lines_less() -> None:
    text = "Ann: I love pizza\nBob: me too\nAnn: let us book a table"
    weights = query_term_weights(text, CHAPTER_ANALYZER, 0.9)
    assert weights["book"] == 1.0 and weights["me"] == 0.9
    assert weights["pizza"] == pytest.approx(0.81)
    assert weights["ann"] == 1.0  # the max over the turns that hold it
    one_line = query_term_weights("pizza me book", CHAPTER_ANALYZER, 0.9)
    assert set(one_line.values()) == {1.0}  # the identity for an ordinary question


def test_the_engine_reads_the_turns_from_the_raw_text(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    policy = ScoringPolicy.bm25(query_weighting=DIALOGUE_TURNS)
    query = RecallEngine(store, policy=policy).recall("pizza\nbob", as_of=AS_OF, query_id="q").query
    assert query.text == "pizza bob"  # folded, as the chapter wants
    weights = {t.term: t.weight for t in query.analysis.terms}
    assert weights == {"bob": 1.0, "pizza": 0.9}
    # a query normalized by hand has one turn: weight 1 everywhere
    plain = prepare_query(_query("pizza\nbob"), policy)
    assert {t.weight for t in plain.analysis.terms} == {1.0}


# -- context -------------------------------------------------------------------------------

# (source, memory_id, captured_at, summary, content)
THREE_TURNS = [
    ("s1", "t-1", "2026-08-01T10:00:00Z", "Ann", "pizza tonight"),
    ("s1", "t-2", "2026-08-01T10:00:01Z", "Bob", "yes"),
    ("s1", "t-3", "2026-08-01T10:00:02Z", "Ann", "great"),
]


def _store(tmp_path, rows, name: str = "m.jsonl") -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / name, user_id="alice")
    for source, memory_id, captured_at, summary, content in rows:
        store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content=content,
            summary=summary,
            source=MemorySource(source, "conversation_transcript", "chat", captured_at),
        )
    return store


def _query(text: str, scope: str = "u") -> RecallQuery:
    return normalize_recall_query(text, user_scope=scope, limit=10, query_id="q", issued_at=AS_OF)


def test_neighbours_follow_captured_at_within_one_source(tmp_path) -> None:
    rows = [THREE_TURNS[2], THREE_TURNS[0], ("s2", "o-1", "2026-08-01T10:00:00Z", "Cy", "x")]
    rows.append(THREE_TURNS[1])  # stored last, captured between the two others
    records = _store(tmp_path, rows).read_all()
    near = neighbours(records, (0.4, 0.25))
    assert [(n.record.memory_id, n.distance, n.weight) for n in near["t-2"]] == [
        ("t-1", 1, 0.4),
        ("t-3", 1, 0.4),
    ]
    assert [(n.record.memory_id, n.distance) for n in near["t-1"]] == [("t-2", 1), ("t-3", 2)]
    assert near["o-1"] == ()  # alone in its source


def test_bm25_on_counts_with_context_worked_by_hand(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    policy = ScoringPolicy.bm25(context=(0.5,))
    result = RecallEngine(store, policy=policy, strategy="teaching").recall(
        "pizza", limit=3, as_of=AS_OF, query_id="q"
    )
    # Terms: t-1 {ann, pizza, tonight} (3), t-2 {bob, yes} (2), t-3 {ann, great} (2).
    # With half of each neighbour's counts: lengths 3 + 0.5*2 = 4, 2 + 0.5*3 + 0.5*2 = 4.5
    # and 2 + 0.5*2 = 3, mean 11.5 / 3. "pizza": 1 in t-1, 0.5 in t-2, none in t-3: df 2.
    k1, b, average = 1.2, 0.75, 11.5 / 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))

    def bm25(tf: float, length: float) -> float:
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))

    assert [h.memory_id for h in result.hits] == ["t-1", "t-2"]
    assert result.hits[0].score_breakdown.bm25 == round(bm25(1.0, 4.0), 6)
    assert result.hits[1].score_breakdown.bm25 == round(bm25(0.5, 4.5), 6)
    assert dict(result.hits[0].score_breakdown.parameters)["average_length"] == round(average, 6)
    # and without context t-2 is no candidate at all
    alone = RecallEngine(store, policy=ScoringPolicy.bm25()).recall("pizza", as_of=AS_OF)
    assert [h.memory_id for h in alone.hits] == ["t-1"]


def test_a_retracted_turn_is_no_neighbour(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    store.retract("t-2", reason="mistyped", source=MemorySource("s1", "x", "x", AS_OF))
    records = store.read_all()
    candidates = build_recall_candidates(
        _query("pizza", records[0].user_scope), records, context=(0.5,)
    )
    assert [c.record.memory_id for c in candidates.candidates] == ["t-1", "t-3"]
    t3 = candidates.candidates[1]
    assert t3.term_frequencies == (0.5,)  # t-1 is now next to it
    assert t3.length == 2 + 0.5 * 3
    assert [(s.memory_id, s.distance, s.weight, s.count) for s in t3.term_sources[0]] == [
        ("t-1", 1, 0.5, 1)
    ]
    assert candidates.retracted_records == 1 and candidates.searched_records == 2


def test_a_term_source_keeps_the_weight_it_was_given(tmp_path) -> None:
    # TermSources are made once per value (candidates._term_source): a weight of 1 and one
    # of 1.0 are equal keys to a plain cache, yet one prints "1" and the other "1.0"
    records = _store(tmp_path, THREE_TURNS).read_all()
    own = text_terms("Bob yes")
    for weight in (1, 1.0, 1):
        near = ((Neighbour(records[0], 1, weight), text_terms("Ann pizza tonight")),)
        frequencies, length, sources = in_context(records[1], own, near, ("pizza",))
        assert frequencies == (weight * 1,) and length == 2 + weight * 3
        assert json.dumps([s.to_dict() for s in sources[0]]) == json.dumps(
            [{"memory_id": "t-1", "distance": 1, "weight": weight, "count": 1}]
        )


@pytest.mark.parametrize("strategy", ["teaching", "indexed"])
def test_a_context_weight_prints_as_given_whichever_policy_came_first(tmp_path, strategy) -> None:
    # the two policies are equal ((1,) == (1.0,)): the second must not get the first's weights
    store = _store(tmp_path, THREE_TURNS)
    for weight in (1, 1.0, 1):
        policy = ScoringPolicy.bm25(context=(weight,))
        result = RecallEngine(store, policy=policy, strategy=strategy).recall(
            "pizza", limit=3, as_of=AS_OF, query_id="q"
        )
        weights = [
            source.weight
            for hit in result.hits
            for match in hit.score_breakdown.term_matches
            for source in match.found_in
            if source.distance
        ]
        assert weights and all(type(w) is type(weight) for w in weights), (weight, weights)


# -- explanations ---------------------------------------------------------------------------


def test_every_breakdown_explains_its_matched_terms(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    policy = ScoringPolicy.bm25(analyzer=ENGLISH_ANALYZER, context=(0.5,))
    result = RecallEngine(store, policy=policy).recall(
        "Who wants pizzas?", limit=3, as_of=AS_OF, query_id="q"
    )
    assert result.query.analysis.analyzer == "snowball-english"
    pizza, want = result.query.analysis.terms  # "who" is a stopword
    assert (pizza.term, want.term, want.steps) == ("pizza", "want", ("stem",))
    second = result.hits[1].score_breakdown
    assert second.analyzer == "snowball-english"
    assert dict(second.analysis_parameters) == {
        "stopwords": "english",
        "stemmer": "english",
        "context": "0.5",
    }
    match = second.term_matches[0]
    assert (match.term, match.words, match.steps, match.weight, match.frequency) == (
        "pizza",
        ("pizzas",),
        ("stem",),
        1.0,
        0.5,
    )
    assert [(s.memory_id, s.distance, s.weight, s.count) for s in match.found_in] == [
        ("t-1", 1, 0.5, 1)
    ]
    assert pizza.words == ("pizzas",)
    payload = json.loads(
        recall_history(
            "Who wants pizzas?",
            engine=RecallEngine(store, policy=policy),
            as_of=AS_OF,
            query_id="q",
        )
    )
    assert payload["query"]["analysis"]["terms"][0]["words"] == ["pizzas"]
    explained = payload["hits"][1]["score_breakdown"]["analysis"]
    assert explained["terms"][0]["found_in"] == [
        {"memory_id": "t-1", "distance": 1, "weight": 0.5, "count": 1}
    ]
    assert RecallResult.from_dict(result.to_dict()) == result  # round-trips exactly
    xml = render_recall_context(result)
    assert xml.count("<analysis ") == 1
    assert '<analysis analyzer="snowball-english" stopwords="english" stemmer="english"' in xml
    assert '<match term="pizza" words="pizzas" steps="stem" weight="1.000000"' in xml
    assert '<found_in memory_id="t-1" distance="1" weight="0.500000" count="1"/>' in xml


def test_explanations_are_escaped_in_the_xml(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    odd = Analyzer('a<b>&"c', stopwords=("english",))
    result = RecallEngine(store, policy=ScoringPolicy.bm25(analyzer=odd)).recall(
        "pizza", as_of=AS_OF, query_id="q"
    )
    xml = render_recall_context(result)
    assert 'analyzer="a&lt;b&gt;&amp;&quot;c"' in xml and 'a<b>&"c' not in xml


# -- the default stays the chapter's ----------------------------------------------------------


def test_the_default_analysis_adds_nothing(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    for policy in (ScoringPolicy(), ScoringPolicy.bm25(), ScoringPolicy.bm25_recency()):
        engine = RecallEngine(store, policy=policy)
        result = engine.recall("pizza yes", limit=10, as_of=AS_OF, query_id="q")
        text = json.dumps(result.to_dict())
        assert '"analysis"' not in text and "term_sources" not in text
        assert "<analysis" not in render_recall_context(result)
        assert "<match" not in render_recall_context(result)
        assert result.query == _query("pizza yes", result.query.user_scope)  # the chapter's terms


def test_a_query_analyzed_for_one_policy_is_reanalyzed_for_another(tmp_path) -> None:
    store = _store(tmp_path, THREE_TURNS)
    records = store.read_all()
    query = _query("running pizzas", records[0].user_scope)
    stemmed = recall_pipeline(
        query, records, as_of=AS_OF, policy=ScoringPolicy.bm25(analyzer=ENGLISH_ANALYZER)
    )
    assert stemmed.query.terms == ("pizza", "run")
    back = recall_pipeline(stemmed.query, records, as_of=AS_OF, policy=ScoringPolicy.bm25())
    assert back.query == query  # the chapter's terms again, no analysis


# -- the mechanism each configuration adds ------------------------------------------------------


def test_each_configuration_finds_what_bm25_alone_cannot(tmp_path) -> None:
    rows = [
        ("s1", "d-1", "2026-07-01T10:00:00Z", "Ann", "Should we book the sushi place?"),
        ("s1", "d-2", "2026-07-01T10:00:01Z", "Bob", "Yes, Friday at eight."),
        ("s2", "d-3", "2026-07-02T10:00:00Z", "Ann", "I kept the transcripts of the interviews"),
        ("s3", "d-4", "2026-07-03T10:00:00Z", "Ann", "我们讨论了分层记忆系统"),
        ("s4", "d-5", "2026-07-04T10:00:00Z", "Bob", "the weather was bad all week"),
    ]
    store = _store(tmp_path, rows)

    def top(name: str, text: str) -> list[str]:
        engine = RecallEngine(store, policy=CONFIGURATIONS[name])
        return [h.memory_id for h in engine.recall(text, limit=2, as_of=AS_OF).hits]

    # a stem: "transcript" meets "transcripts"
    assert "d-3" not in top("bm25", "interview transcript")
    assert top("bm25-stem-stop", "interview transcript")[0] == "d-3"
    # context: the answer turn holds none of the question's words
    assert "d-2" not in top("bm25", "when is the sushi booking")
    assert "d-2" in top("bm25-context", "when is the sushi booking")
    # single characters beside the bigrams: a one-character question finds a longer run
    assert top("bm25", "记") == []
    assert top("bm25-zh-seg", "记") == ["d-4"] == top("bm25-full", "记")
