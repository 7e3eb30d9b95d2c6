"""The course data: schema, counts, the chapter export, deterministic stores and labels.

Every labelled query is run through the real pipeline (default ScoringPolicy,
limit 5), and the ranking behaviour each one claims to teach is checked in the
data itself: a tie that memory_id breaks, a stale and a fresh version, stopword
noise, a near miss, Chinese bigrams, mixed scripts, isolation and retractions.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memorylib import (
    MemoryKind,
    RecallEngine,
    RemoteMemoryError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    datasets,
    extract_terms,
    normalize_text,
    searchable_terms,
    seed_teaching_store,
    user_scope_for,
)
from memorylib.datasets import (
    COURSE_AS_OF,
    COURSE_USERS,
    CourseDataError,
    CourseDataMissingError,
    LabelledQuery,
)

ENTRIES = datasets.load_course_entries()
QUERIES = datasets.load_labelled_queries(entries=ENTRIES)
QUERY_IDS = [q.query_id for q in QUERIES]
HAN = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
# Function words of the stopword lessons (English words and Chinese "function" bigrams).
ENGLISH_STOPWORDS = {"a", "an", "and", "for", "in", "is", "of", "on", "the", "to", "was", "what"}
CHINESE_STOPWORD_BIGRAMS = {"我们", "们的", "什么", "是什", "时候", "么时", "的中", "做的"}
STOPWORDS = frozenset(ENGLISH_STOPWORDS | CHINESE_STOPWORD_BIGRAMS)
EXPECTED_LATEST_PROFILE = {
    "mei.lin@northwind.example": "mei-prof-03",
    "omar.haddad@northwind.example": "omar-prof-02",  # omar-prof-03 is retracted
    "sam.ortiz@northwind.example": "sam-prof-02",  # sam-prof-03 is a later-stored backfill
    "wen.zhao@northwind.example": "wen-prof-04",
}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RemoteMemoryStore]:
    folder = tmp_path_factory.mktemp("course")
    return {user: datasets.build_store(ENTRIES, folder, user) for user in COURSE_USERS}


@pytest.fixture(scope="module")
def unretracted_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RemoteMemoryStore]:
    """The same stores without their retraction records: what recall would show otherwise."""
    folder = tmp_path_factory.mktemp("course-unretracted")
    kept = [e for e in ENTRIES if e.kind is not MemoryKind.RETRACTION]
    return {user: datasets.build_store(kept, folder, user) for user in COURSE_USERS}


def by_id(memory_id: str) -> datasets.CourseEntry:
    return next(e for e in ENTRIES if e.memory_id == memory_id)


def recall(query: LabelledQuery, store: RemoteMemoryStore, **kwargs):
    return RecallEngine(store, **kwargs).recall(
        query.text, limit=5, as_of=query.as_of, query_id=query.query_id
    )


def queries_teaching(lesson: str) -> list[LabelledQuery]:
    found = [q for q in QUERIES if q.teaches == lesson]
    assert found, f"no labelled query teaches {lesson}"
    return found


def outcome(relevant: list[str], hit_ids: list[str]) -> str:
    """data/README.md's ``expect``: where ``relevant[0]`` lands among five hits."""
    if not relevant or relevant[0] not in hit_ids:
        return "miss"
    return "top1" if hit_ids[0] == relevant[0] else "top5"


def language(text: str) -> str:
    """data/README.md's language heuristic: Han share = Han characters / (Han characters
    + 2 x Latin words); under 0.15 ``en``, 0.8 or more ``zh``, between ``mixed``."""
    han, words = len(HAN.findall(text)), len(LATIN_WORD.findall(text))
    share = han / (han + 2 * words) if han else 0.0
    return "en" if share < 0.15 else "zh" if share >= 0.8 else "mixed"


# -- where the data lives ----------------------------------------------------------------


def test_data_dir_defaults_to_the_repository_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(datasets.DATA_DIR_ENV, raising=False)
    expected = Path(__file__).resolve().parents[1] / "data"
    assert datasets.data_dir() == expected
    assert (expected / datasets.CORPUS_FILE).is_file()


def test_data_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(tmp_path))
    assert datasets.data_dir() == tmp_path
    with pytest.raises(CourseDataMissingError, match=datasets.CORPUS_FILE):
        datasets.load_course_entries()
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(CourseDataMissingError, match="MEMORYLIB_DATA_DIR") as caught:
        datasets.data_dir()
    assert isinstance(caught.value, FileNotFoundError)
    assert isinstance(caught.value, RemoteMemoryError)


# -- the corpus file ---------------------------------------------------------------------


def test_every_line_follows_the_schema() -> None:
    path = datasets.data_dir() / datasets.CORPUS_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(ENTRIES)
    low = datetime(2025, 12, 1, tzinfo=UTC)
    high = datetime(2026, 11, 26, tzinfo=UTC)
    for line, entry in zip(lines, ENTRIES, strict=True):
        payload = json.loads(line)
        required = {"user_id", "memory_id", "kind", "summary", "content", "source", "stored_at"}
        extra = {"retracts"} if entry.kind is MemoryKind.RETRACTION else set()
        assert set(payload) == required | extra, entry.memory_id
        assert set(payload["source"]) == {"source_id", "source_type", "title", "captured_at"}
        assert payload == entry.to_dict()
        assert len(entry.content) <= 600, entry.memory_id
        assert len(entry.summary) <= 200, entry.memory_id
        # one sentence: no sentence break inside the summary
        assert not re.search(r"[.!?]\s+[A-Z]|[。！？].", entry.summary), entry.summary
        captured = datetime.fromisoformat(entry.captured_at.replace("Z", "+00:00"))
        stored = datetime.fromisoformat(entry.stored_at.replace("Z", "+00:00"))
        assert low <= captured < high, entry.memory_id
        assert stored >= captured
        assert entry.captured_at.endswith("Z") and entry.stored_at.endswith("Z")
    stored_order = [e.stored_at for e in ENTRIES]
    assert stored_order == sorted(stored_order)  # the file is in the order records were stored


def test_counts_by_kind_user_and_language() -> None:
    assert len(ENTRIES) >= 170
    kinds = collections.Counter(e.kind for e in ENTRIES)
    assert set(kinds) == set(MemoryKind)
    assert kinds[MemoryKind.RETRACTION] >= 3
    users = collections.Counter(e.user_id for e in ENTRIES)
    assert set(users) == set(COURSE_USERS)
    assert COURSE_USERS[0] == "mei.lin@northwind.example"
    for user in COURSE_USERS:
        mine = [e for e in ENTRIES if e.user_id == user]
        profiles = [e for e in mine if e.kind is MemoryKind.PROFILE]
        conversations = [e for e in mine if e.kind is MemoryKind.CONVERSATION]
        assert 2 <= len(profiles) <= 4, user
        assert len(conversations) >= 25, user
    languages = collections.Counter(language(e.summary + " " + e.content) for e in ENTRIES)
    share = {lang: n / len(ENTRIES) for lang, n in languages.items()}
    assert 0.45 <= share["en"] <= 0.65, share
    assert 0.20 <= share["zh"] <= 0.40, share
    assert 0.08 <= share["mixed"] <= 0.25, share


def test_retractions_name_an_earlier_record_of_the_same_user() -> None:
    seen: dict[str, datasets.CourseEntry] = {}
    for entry in ENTRIES:
        if entry.kind is MemoryKind.RETRACTION:
            target = seen[entry.retracts]
            assert target.user_id == entry.user_id
            assert target.kind is not MemoryKind.RETRACTION
        seen[entry.memory_id] = entry
    targets = {by_id(e.retracts).kind for e in ENTRIES if e.retracts}
    assert targets == {MemoryKind.CONVERSATION, MemoryKind.PROFILE}


# -- the loader rejects what it cannot trust ---------------------------------------------

GOOD = {
    "user_id": "u@example.org",
    "memory_id": "m-1",
    "kind": "conversation",
    "summary": "A summary.",
    "content": "Some content.",
    "source": {
        "source_id": "s-1",
        "source_type": "conversation_transcript",
        "title": "t",
        "captured_at": "2026-01-01T00:00:00Z",
    },
    "stored_at": "2026-01-01T00:05:00Z",
}


def variant(**changes) -> dict:
    payload = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if key == "captured_at":
            payload["source"]["captured_at"] = value
        elif value is None:
            payload.pop(key)
        else:
            payload[key] = value
    return payload


def retraction(target: str, user: str = "u@example.org", memory_id: str = "r-1") -> dict:
    return variant(memory_id=memory_id, kind="retraction", retracts=target, user_id=user)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], "line 1: not valid JSON"),
        ([GOOD, GOOD], "line 2.*duplicate memory_id 'm-1'"),
        ([variant(kind="note")], "kind 'note' is not a MemoryKind"),
        ([variant(extra=1)], "unknown field"),
        ([variant(content=None)], "is missing content"),
        ([variant(memory_id="bad id")], "not a valid id"),
        ([variant(summary="two  spaces")], "whitespace-folded"),
        ([variant(stored_at="2025-12-31T00:00:00Z")], "before captured_at"),
        ([variant(captured_at="2026-01-01T08:00:00+08:00")], "must be written in UTC"),
        ([retraction("m-1"), GOOD], "line 1.*not an earlier line"),
        ([GOOD, retraction("m-1", user="other@example.org")], "another user"),
        ([GOOD, retraction("m-1"), retraction("m-1", memory_id="r-2")], "second time"),
        ([GOOD, retraction("m-1"), retraction("r-1", memory_id="r-2")], "itself a retraction"),
        ([variant(retracts="m-0")], "only retraction entries"),
        ([[1, 2]], "must be a JSON object"),
    ],
)
def test_loader_rejects_bad_lines(tmp_path: Path, lines: list, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CourseDataError, match=message):
        datasets.load_course_entries(path)


def test_loader_rejects_blank_lines_and_a_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n", encoding="utf-8")
    with pytest.raises(CourseDataError, match="line 2: blank line"):
        datasets.load_course_entries(path)
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    with pytest.raises(CourseDataError, match="end with a newline"):
        datasets.load_course_entries(path)


def test_labelled_query_loader_rejects_bad_items(tmp_path: Path) -> None:
    good = QUERIES[0].to_dict()
    path = tmp_path / "q.json"
    cases = [
        ([{**good, "expect": "top3"}], "expect 'top3'"),
        ([{**good, "teaches": "magic"}], "teaches 'magic'"),
        ([good, good], "duplicate query_id"),
        ([{**good, "query_id": "query one"}], "must look like"),
        ([{k: v for k, v in good.items() if k != "note"}], "is missing note"),
        ([{**good, "relevant": ["omar-conv-001"]}], "not a record of its user"),
        ([{**good, "relevant": ["mei-prof-01"]}], "not a conversation record"),
    ]
    for items, message in cases:
        path.write_text(json.dumps(items), encoding="utf-8")
        with pytest.raises(CourseDataError, match=message):
            datasets.load_labelled_queries(path, entries=ENTRIES)


# -- the chapter export ------------------------------------------------------------------


def test_chapter_export_equals_seed_py() -> None:
    assert datasets.load_chapter_entries() == datasets.chapter_entries_from_seed()
    assert {e.user_id for e in datasets.load_chapter_entries()} == {datasets.CHAPTER_USER}


def test_chapter_store_is_byte_identical_to_the_seeded_teaching_store(tmp_path: Path) -> None:
    built = datasets.build_chapter_store(tmp_path / "built")
    seeded = RemoteMemoryStore(tmp_path / "seeded" / "teaching.jsonl")
    seed_teaching_store(seeded)
    assert built.path.read_bytes() == seeded.path.read_bytes()
    assert list(datasets.chapter_records()) == seeded.read_all()


# -- building stores ---------------------------------------------------------------------


def test_builds_are_deterministic(tmp_path: Path, stores: dict[str, RemoteMemoryStore]) -> None:
    for user, store in stores.items():
        again = datasets.build_course_store(tmp_path, user)
        assert again.path.read_bytes() == store.path.read_bytes(), user


def test_each_store_holds_only_its_own_user(stores: dict[str, RemoteMemoryStore]) -> None:
    for user, store in stores.items():
        records = store.read_all()
        scope = user_scope_for(user)
        assert {r.user_scope for r in records} == {scope}
        assert [r.memory_id for r in records] == [e.memory_id for e in ENTRIES if e.user_id == user]
        assert store.path.name == f"{scope}.jsonl"
        assert user.encode() not in store.path.read_bytes()  # the raw id never hits disk
        for record in records:
            entry = by_id(record.memory_id)
            assert (record.kind, record.source, record.stored_at) == (
                entry.kind,
                entry.source,
                entry.stored_at,
            )
            if record.kind is MemoryKind.RETRACTION:
                assert record.retracts == entry.retracts
                assert record.content == f"{entry.summary} {entry.content}"
            else:
                assert (record.summary, record.content) == (entry.summary, entry.content)


def test_latest_profile_selection_is_visible(stores: dict[str, RemoteMemoryStore]) -> None:
    for user, store in stores.items():
        assert store.latest_profile().memory_id == EXPECTED_LATEST_PROFILE[user]
    sam = [e.memory_id for e in ENTRIES if e.user_id == COURSE_USERS[2] and e.kind == "profile"]
    assert sam[-1] == "sam-prof-03"  # stored last, captured earlier: not the latest profile


def test_build_store_refuses_existing_records_and_unknown_users(tmp_path: Path) -> None:
    datasets.build_course_store(tmp_path, COURSE_USERS[1])
    with pytest.raises(RemoteMemoryValidationError, match="already holds records"):
        datasets.build_course_store(tmp_path, COURSE_USERS[1])
    (tmp_path / "empty.jsonl").touch()
    store = datasets.build_course_store(tmp_path, COURSE_USERS[1], name="empty.jsonl")
    assert len(store.read_all()) == sum(e.user_id == COURSE_USERS[1] for e in ENTRIES)
    with pytest.raises(RemoteMemoryValidationError, match="no entries belong"):
        datasets.build_store(ENTRIES, tmp_path, "nobody@northwind.example")


def test_course_records_are_the_stored_records(stores: dict[str, RemoteMemoryStore]) -> None:
    assert list(datasets.course_records()) == stores[COURSE_USERS[0]].read_all()
    assert list(datasets.course_records(COURSE_USERS[3])) == stores[COURSE_USERS[3]].read_all()
    assert datasets.course_records() is datasets.course_records()  # cached


# -- labelled queries --------------------------------------------------------------------


def test_labelled_queries_cover_every_lesson() -> None:
    assert len(QUERIES) >= 24
    assert [f"q-{i:02d}" for i in range(1, len(QUERIES) + 1)] == QUERY_IDS
    assert {q.teaches for q in QUERIES} == set(datasets.TEACHES)
    assert {q.expect for q in QUERIES} == set(datasets.EXPECTATIONS)
    assert {q.user_id for q in QUERIES} == set(COURSE_USERS)
    assert sum(q.as_of == COURSE_AS_OF for q in QUERIES) >= len(QUERIES) - 3


@pytest.mark.parametrize("query", QUERIES, ids=QUERY_IDS)
def test_labelled_query_holds(query: LabelledQuery, stores: dict[str, RemoteMemoryStore]) -> None:
    store = stores[query.user_id]
    result = recall(query, store)
    hit_ids = [hit.memory_id for hit in result.hits]
    assert outcome(query.relevant, hit_ids) == query.expect, hit_ids
    if query.expect == "miss":
        assert not set(query.relevant) & set(hit_ids)
    else:
        assert set(query.relevant) <= set(hit_ids)
    assert all(hit.scope.memory_kind is MemoryKind.CONVERSATION for hit in result.hits)
    assert all(hit.scope.user_scope == store.user_scope for hit in result.hits)
    teaching = recall(query, store, strategy="teaching")
    assert teaching.hits == result.hits


def test_tie_breaks_are_real_ties(stores: dict[str, RemoteMemoryStore]) -> None:
    for query in queries_teaching("tie_break"):
        first, second = recall(query, stores[query.user_id]).hits[:2]
        a, b = first.score_breakdown, second.score_breakdown
        assert (a.total, a.lexical_coverage) == (b.total, b.lexical_coverage)
        assert first.provenance.captured_at == second.provenance.captured_at
        assert first.memory_id < second.memory_id


def test_stale_and_fresh_versions_tie_on_coverage(stores: dict[str, RemoteMemoryStore]) -> None:
    for query in queries_teaching("stale_vs_fresh"):
        hits = recall(query, stores[query.user_id]).hits
        pairs = [
            (x, y)
            for i, x in enumerate(hits)
            for y in hits[i + 1 :]
            if x.score_breakdown.lexical_coverage == y.score_breakdown.lexical_coverage > 0.5
            and x.provenance.captured_at != y.provenance.captured_at
        ]
        assert pairs, query.query_id  # two versions of one decision, equally well matched
        for ranked_higher, ranked_lower in pairs:
            assert ranked_higher.provenance.captured_at > ranked_lower.provenance.captured_at


def test_stale_record_can_win_on_coverage_and_future_records_count_as_new(
    stores: dict[str, RemoteMemoryStore],
) -> None:
    by_qid = {q.query_id: q for q in QUERIES}
    quoted = recall(by_qid["q-08"], stores[COURSE_USERS[1]]).hits
    assert quoted[0].provenance.captured_at < quoted[1].provenance.captured_at
    early = by_qid["q-09"]
    hits = recall(early, stores[COURSE_USERS[1]]).hits
    assert hits[0].provenance.captured_at > early.as_of  # captured after as_of ...
    assert hits[0].score_breakdown.recency == 1.0  # ... and scored as age zero


def test_stopwords_make_noisy_candidates(stores: dict[str, RemoteMemoryStore]) -> None:
    noise_only = 0
    for query in queries_teaching("stopword_noise"):
        result = recall(query, stores[query.user_id])
        assert result.candidate_records * 2 >= result.searched_records, query.query_id
        noise_only += sum(set(hit.matched_terms) <= STOPWORDS for hit in result.hits)
    assert noise_only >= 2


def test_near_misses_share_no_term(stores: dict[str, RemoteMemoryStore]) -> None:
    records = {r.memory_id: r for s in stores.values() for r in s.read_all()}
    for query in queries_teaching("near_miss"):
        terms = set(extract_terms(normalize_text(query.text)))
        assert not terms & set(searchable_terms(records[query.relevant[0]])), query.query_id


def test_chinese_bigrams_and_mixed_scripts_match(stores: dict[str, RemoteMemoryStore]) -> None:
    for lesson in ("chinese_bigram", "mixed_script"):
        for query in queries_teaching(lesson):
            hit = next(
                h
                for h in recall(query, stores[query.user_id]).hits
                if h.memory_id == query.relevant[0]
            )
            han = [t for t in hit.matched_terms if HAN.match(t)]
            assert any(len(t) == 2 for t in han), query.query_id
            if lesson == "mixed_script":
                assert any(t.isascii() for t in hit.matched_terms), query.query_id


def test_isolation_queries_have_answers_in_other_scopes(
    stores: dict[str, RemoteMemoryStore],
) -> None:
    for query in queries_teaching("isolation"):
        others = [
            RecallEngine(store).recall(query.text, as_of=query.as_of, query_id=query.query_id)
            for user, store in stores.items()
            if user != query.user_id
        ]
        foreign = {h.memory_id for r in others for h in r.hits if h.score_breakdown.total > 0.8}
        assert foreign, query.query_id
        assert not foreign & {h.memory_id for h in recall(query, stores[query.user_id]).hits}


def test_retractions_change_the_answer(
    stores: dict[str, RemoteMemoryStore], unretracted_stores: dict[str, RemoteMemoryStore]
) -> None:
    for query in queries_teaching("retraction"):
        retracted = {e.retracts for e in ENTRIES if e.retracts and e.user_id == query.user_id}
        result = recall(query, stores[query.user_id])
        assert result.retracted_records >= 1
        assert not retracted & {h.memory_id for h in result.hits}
        before = recall(query, unretracted_stores[query.user_id]).hits
        assert before[0].memory_id in retracted, query.query_id


def test_no_match_queries_are_empty(stores: dict[str, RemoteMemoryStore]) -> None:
    for query in queries_teaching("no_match"):
        result = recall(query, stores[query.user_id])
        assert result.hits == ()
        assert result.empty_reason == "no_matching_terms"
    profile = stores[COURSE_USERS[1]].latest_profile()
    assert "Lisbon" in profile.content  # q-36: the words exist, but only in a profile


def test_build_store_checks_hand_made_entries(tmp_path: Path) -> None:
    with pytest.raises(RemoteMemoryValidationError, match=r"entries\[0\] must be a CourseEntry"):
        datasets.build_store([GOOD], tmp_path, "u@example.org")
    first = by_id("omar-retr-01")
    again = dataclasses.replace(first, memory_id="omar-retr-99")
    entries = [e for e in ENTRIES if e.user_id == COURSE_USERS[1]] + [again]
    with pytest.raises(RemoteMemoryValidationError, match="already retracted"):
        datasets.build_store(entries, tmp_path, COURSE_USERS[1])
