"""The fast path equals the reference, function by function (differential property tests).

Each test draws inputs (arbitrary Unicode, store lines valid and damaged, whole
files) and asserts that the ``memorylib.fast`` function returns exactly what its
reference returns, or raises the same error with the same message:

* ``tokenizer.terms`` / ``term_pairs``  ==  ``extract_terms(normalize_text(text))``
* ``codec.decode_line``                 ==  ``store.parse_line``
* ``codec.build_memory`` / ``build_source``  ==  the dataclass constructors
* ``log.FileLog.sync().records``        ==  ``RemoteMemoryStore.read_all()``
* ``codec.capture_micros``              ==  ``epoch_micros(parse_timestamp(...))``
* ``bm25.length_norms`` / ``term_weights``  ==  ``scoring.bm25_term_weight``
* ``bm25.recency``                      ==  ``recency_score(age_in_days(...))``
* ``score.QueryScorer``                 ==  ``scoring.score_recall_candidate``

The whole indexed ``RecallResult`` is compared with the taught one in ``test_index.py``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import unicodedata
import warnings
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorylib import (
    MemoryKind,
    MemorySource,
    RemoteMemoryStore,
    StoredMemory,
    extract_terms,
    normalize_recall_query,
    normalize_text,
)
from memorylib.analysis import (
    CHAPTER_ANALYZER,
    CHINESE_ANALYZER,
    DIALOGUE_TURNS,
    ENGLISH_ANALYZER,
    FULL_ANALYZER,
)
from memorylib.candidates import build_recall_candidates
from memorylib.fast import bm25, codec, tokenizer
from memorylib.fast.log import FileLog
from memorylib.fast.score import QueryScorer
from memorylib.fast.state import index_terms
from memorylib.pipeline import prepare_query
from memorylib.query import term_counts
from memorylib.scoring import (
    SCORERS,
    ScoringPolicy,
    bm25_term_weight,
    recency_score,
    score_recall_candidate,
)
from memorylib.store import encode_line, parse_line
from memorylib.timestamps import age_in_days, epoch_micros, parse_timestamp

from .conftest import outcome

WORDS = ["memory", "layered", "design", "lock", "the", "Memory", "LOG", "café", "42", "_x"]
HAN = ["记", "忆", "分", "层", "上", "下", "〇", "鿿", "一"]
ODD = ["ｆｕｌｌ", "STRASSE", "straße", "e\u0301", "क\u093f", "ᴬb", "Ω", "\U000e0100x", "😀"]
TIMES = [
    "2026-07-01T00:00:00Z",
    "2026-07-20T08:30:00Z",
    "2026-07-31T23:59:59.500000Z",
    "2026-08-01T00:00:00+08:00",
]

token = st.one_of(st.sampled_from(WORDS), st.sampled_from(HAN), st.sampled_from(ODD))
separator = st.sampled_from([" ", "", "，", "-", "\n", "（"])


@st.composite
def texts(draw: st.DrawFn, min_tokens: int = 0, max_tokens: int = 8) -> str:
    tokens = draw(st.lists(token, min_size=min_tokens, max_size=max_tokens))
    return "".join(draw(separator) + tok for tok in tokens)


any_unicode = st.one_of(
    texts(),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0xFF00, max_codepoint=0xFF70), max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0x4DF0, max_codepoint=0x4E10), max_size=12),
    st.text(alphabet=st.characters(categories=["Mn", "Mc", "Me", "Lo", "Nd"]), max_size=12),
)


# -- tokenizer -------------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(any_unicode)
def test_fast_terms_equal_the_reference(text: str) -> None:
    assert tokenizer.terms(text) == extract_terms(normalize_text(text))


@settings(max_examples=300, deadline=None)
@given(any_unicode)
def test_index_terms_are_the_reference_terms(text: str) -> None:
    taught = extract_terms(normalize_text(text))
    assert index_terms(text) == {tokenizer.term_key(t) for t in taught}


@settings(max_examples=200, deadline=None)
@given(st.lists(any_unicode, min_size=1, max_size=6))
def test_a_batch_of_texts_gets_each_texts_terms(batch: list[str]) -> None:
    vocab: dict = defaultdict(itertools.count().__next__)
    docs, ids, tfs = tokenizer.term_pairs(batch, list(range(len(batch))), vocab.__getitem__, {})
    key_of = {term_id: key for key, term_id in vocab.items()}
    got: list[dict] = [{} for _ in batch]
    for doc, term_id, tf in zip(docs.tolist(), ids.tolist(), tfs.tolist(), strict=True):
        assert key_of[term_id] not in got[doc]  # each (doc, term) pair once
        got[doc][key_of[term_id]] = tf
    expected = [
        {tokenizer.term_key(t): n for t, n in term_counts(normalize_text(text)).items()}
        for text in batch
    ]
    assert got == expected  # the terms and how often each occurs (BM25's tf)
    assert list(ids) == sorted(ids)  # ordered by term, then doc: a sorted run
    keys = [(i, d) for i, d in zip(ids.tolist(), docs.tolist(), strict=True)]
    assert keys == sorted(keys)


def test_every_code_point_is_classified_like_the_reference() -> None:
    """One character at a time over all of Unicode: the fast rules' word characters are
    ``query.is_word_char``'s, and the BMP table matches it."""
    from memorylib.query import CJK_FIRST, CJK_LAST, is_word_char

    table = tokenizer._bmp_word_table()
    rules = tokenizer._rules()
    for cp in itertools.chain(range(0xD800), range(0xE000, 0x110000)):
        char = chr(cp)
        assert (rules.full.fullmatch(char) is not None) == is_word_char(char), hex(cp)
        assert (rules.han.fullmatch(char) is not None) == (CJK_FIRST <= char <= CJK_LAST)
        if cp < 0x10000:
            assert bool(table[cp]) == is_word_char(char), hex(cp)


def test_term_keys_never_collide() -> None:
    found = ["记", "记忆", "忆记", "一", "鿿", "一鿿", "word", "一x", "", "记忆分"]
    keys = [tokenizer.term_key(t) for t in found]
    assert len(set(keys)) == len(keys)
    assert tokenizer.term_key("一x") == "一x" and tokenizer.term_key("记忆分") == "记忆分"


# -- codec -----------------------------------------------------------------------------------

GOOD = StoredMemory(
    "conversation-1",
    "0123456789abcdef",
    MemoryKind.CONVERSATION,
    "content",
    "summary",
    MemorySource("s", "conversation_transcript", "title", "2026-08-01T00:00:00Z"),
    "2026-08-02T00:00:00Z",
)
any_text = st.text(min_size=1, max_size=12)  # quotes, backslashes, controls, emoji, ...


@settings(max_examples=300, deadline=None)
@given(
    memory_id=st.sampled_from(["m-1", "conversation-0000001", "a:b@c", "会话-003"]),
    kind=st.sampled_from(list(MemoryKind)),
    content=st.one_of(any_text, texts(1)),
    summary=st.one_of(any_text, st.sampled_from(['say "hi"', "back\\slash", "tab\tx", "é"])),
    title=any_text,
    captured=st.sampled_from([*TIMES, "2026-08-01T00:00:00.25Z", "2026-02-30T00:00:00Z", "x"]),
)
def test_decode_line_equals_parse_line_on_written_lines(
    memory_id, kind, content, summary, title, captured
) -> None:
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
    try:
        raw = encode_line(record)[:-1]
    except UnicodeEncodeError:  # a lone surrogate: the store never writes one
        return
    assert outcome(lambda: codec.decode_line(raw, 7)) == outcome(lambda: parse_line(raw, 7))


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_decode_line_equals_parse_line_on_damaged_lines(data) -> None:
    raw = bytearray(encode_line(GOOD)[:-1])
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        action = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        byte = data.draw(st.sampled_from(list(b'" \\{}:,1Z\x00\x1f\xc3\xa9\xed\xa0\x80a-')))
        if action == "insert":
            raw[at:at] = bytes([byte])
        elif at < len(raw):
            raw[at : at + 1] = b"" if action == "delete" else bytes([byte])
    line = bytes(raw)
    assert outcome(lambda: codec.decode_line(line, 7)) == outcome(lambda: parse_line(line, 7))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=40),
        st.builds(
            lambda prefix, body: prefix + body,
            st.sampled_from([b"", b"{", b" ", b"\xef\xbb\xbf"]),
            st.sampled_from([json.dumps(GOOD.to_dict()).encode(), b'"a": 1}', b"}"])
            | st.binary(max_size=20),
        ),
    )
)
def test_decode_line_equals_parse_line_on_random_bytes(raw: bytes) -> None:
    assert outcome(lambda: codec.decode_line(raw, 3)) == outcome(lambda: parse_line(raw, 3))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=5), min_size=9, max_size=9), st.sampled_from(list(MemoryKind)))
def test_slot_builders_equal_the_constructors(values, kind) -> None:
    source = codec.build_source(*values[:4])
    assert source == MemorySource(*values[:4])
    record = codec.build_memory(*values[4:6], kind, *values[6:8], source, values[8])
    expected = StoredMemory(*values[4:6], kind, *values[6:8], MemorySource(*values[:4]), values[8])
    assert record == expected and repr(record) == repr(expected)
    assert dataclasses.asdict(record) == dataclasses.asdict(expected)  # every slot is set


# -- the incremental log -----------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(texts(1, 4), st.sampled_from(TIMES)), min_size=0, max_size=8),
    st.lists(
        st.sampled_from([b"", b"{}\n", b'{"torn', b"not json\n", b"", b""]), min_size=1, max_size=3
    ),
)
def test_file_log_reads_what_read_all_reads(entries, extras) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = RemoteMemoryStore(Path(tmp) / "m.jsonl", user_id="log-tester")
        log = FileLog(store.path, store.user_scope)
        log.seen = []  # type: ignore[attr-defined]
        for n, (text, captured) in enumerate(entries):
            store.append(
                kind=MemoryKind.CONVERSATION,
                memory_id=f"m-{n}",
                content=text,
                summary=text,
                source=MemorySource("s", "t", "t", captured),
            )
            if n % 3 == 0:  # read part of the way, then the rest: the same records
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outcome(lambda: read(log))
        for extra in extras:
            with open(store.path, "ab") as handle:
                handle.write(extra)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = outcome(store.read_all)
            got = outcome(lambda: list(read(log)))
        assert got == expected


def read(log: FileLog) -> list[StoredMemory]:
    """Everything ``log`` has handed over so far, after one more sync (a tiny chunk size
    makes lines straddle chunks)."""
    log.sync(lambda records, offsets, lengths, generation: log.seen.extend(records), 7)
    return log.seen


# -- timestamps --------------------------------------------------------------------------------


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
    expected = [epoch_micros(parse_timestamp(stamp, "t")) for stamp in stamps]
    assert codec.capture_micros(stamps).tolist() == expected


# -- the scoring formulas over arrays ------------------------------------------------------------

parameters = st.floats(0.0, 3.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    tfs=st.lists(st.integers(1, 0xFFFF), min_size=1, max_size=20),
    lengths=st.lists(st.integers(0, 5_000), min_size=1, max_size=20),
    average=st.one_of(st.just(0.0), st.floats(0.5, 5_000.0)),
    k1=parameters,
    b=st.floats(0.0, 1.0),
)
def test_vectorized_bm25_term_weights_are_the_scalar_ones(tfs, lengths, average, k1, b) -> None:
    size = min(len(tfs), len(lengths))
    tfs, lengths = tfs[:size], lengths[:size]
    norms = bm25.length_norms(np.asarray(lengths, dtype=np.int32), average, k1, b)
    got = bm25.term_weights(np.asarray(tfs, dtype=np.uint16), norms, k1).tolist()
    assert got == [
        bm25_term_weight(tf, n, average, k1, b) for tf, n in zip(tfs, lengths, strict=True)
    ]


@settings(max_examples=200, deadline=None)
@given(
    ages=st.lists(st.integers(-(10**13), 10**14), min_size=1, max_size=20),  # microseconds
    window=st.floats(0.01, 1_000.0),
)
def test_vectorized_recency_is_the_scalar_one(ages, window) -> None:
    as_of = datetime(2026, 8, 2, 12, tzinfo=UTC)
    captured = [as_of - timedelta(microseconds=age) for age in ages]
    got = bm25.recency(
        np.asarray([epoch_micros(c) for c in captured], dtype=np.int64), epoch_micros(as_of), window
    )
    assert got.tolist() == [recency_score(age_in_days(c, as_of), window) for c in captured]


def test_combining_marks_are_found_in_every_plane_that_has_them() -> None:
    every = {chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp))[0] == "M"}
    assert tokenizer._rules().marks == every


# -- score.QueryScorer == scoring.score_recall_candidate ---------------------------------------

_SCORE_WORDS = ["memory", "lock", "the", "design", "locks", "designed", "记忆", "分层", "上下"]
_score_texts = st.lists(st.sampled_from(_SCORE_WORDS), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    contents=st.lists(_score_texts, min_size=1, max_size=8),
    turns=st.lists(_score_texts, min_size=1, max_size=3),
    policy=st.builds(
        ScoringPolicy,
        lexical_weight=st.sampled_from([0.1, 0.85, 1.0, 3.0]),
        recency_weight=st.sampled_from([0.0, 0.15, 2.0]),
        recency_window_days=st.sampled_from([0.5, 30.0]),
        scorer=st.sampled_from(SCORERS),
        bm25_k1=st.sampled_from([0.0, 1.2, 2.0]),
        bm25_b=st.sampled_from([0.0, 0.75, 1.0]),
        min_evidence=st.sampled_from([0.0, 0.4, 1.0]),
        analyzer=st.sampled_from(
            [CHAPTER_ANALYZER, ENGLISH_ANALYZER, CHINESE_ANALYZER, FULL_ANALYZER]
        ),
        query_weighting=st.sampled_from([None, DIALOGUE_TURNS]),
        context=st.sampled_from([(), (0.4,), (0.4, 0.25)]),
    ),
    as_of=st.sampled_from(TIMES),
    explain=st.booleans(),
    best=st.sampled_from([None, 0.0, 1.5]),
)
def test_query_scorer_scores_as_the_reference(
    contents, turns, policy, as_of, explain, best
) -> None:
    # candidates and corpus from the taught candidate stage; every candidate after the
    # first is scored by QueryScorer's own arithmetic, the first by the reference
    records = [
        StoredMemory(
            kind=MemoryKind.CONVERSATION,
            memory_id=f"m-{n}",
            user_scope="user:u",
            content=text,
            summary="s",
            source=MemorySource("chat", "conversation_transcript", "t", TIMES[n % len(TIMES)]),
            stored_at="2026-08-02T00:00:00Z",
        )
        for n, text in enumerate(contents)
    ]
    text = "\n".join(turns)
    query = prepare_query(normalize_recall_query(text, user_scope="user:u", limit=10), policy, text)
    found = build_recall_candidates(
        query, records, analyzer=policy.analyzer, context=policy.context
    )
    corpus = found.corpus
    if policy.scorer == "bm25+recency":
        corpus = dataclasses.replace(corpus, best_bm25=best)
    scorer = QueryScorer(query, policy, corpus)
    for candidate in found.candidates:
        kwargs = {"as_of": as_of, "policy": policy, "corpus": corpus, "explain": explain}
        assert scorer(query, candidate, **kwargs) == score_recall_candidate(
            query, candidate, **kwargs
        )
    other = ScoringPolicy.bm25()  # a call for another policy goes to the reference
    for candidate in found.candidates[:1]:
        kwargs = {"as_of": as_of, "policy": other, "corpus": found.corpus}
        assert scorer(query, candidate, **kwargs) == score_recall_candidate(
            query, candidate, **kwargs
        )
