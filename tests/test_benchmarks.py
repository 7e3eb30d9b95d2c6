"""memorylib.benchmarks and ``eval --benchmark``: LoCoMo and MADial-Bench folders.

Every folder here is written by the test in the published formats (both LoCoMo shapes,
malformed evidence, a photo turn, an adversarial question, MADial JSON lines with a
published list), so what each record, query and row must be can be worked out by hand.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from memorylib import RecallEngine, RemoteMemoryStore, ScoringPolicy
from memorylib.__main__ import main as cli
from memorylib.benchmarks import (
    BenchmarkDataError,
    BenchmarkQuery,
    load_locomo,
    load_madial,
    parse_evidence,
    parse_locomo_datetime,
    run_benchmark,
    score_ranking,
)
from memorylib.errors import RemoteMemoryValidationError
from memorylib.evaluation import (
    CONFIGURATION_NOTES,
    CONFIGURATIONS,
    DEFAULT_RUN,
    standard_scorers,
)
from memorylib.scoring import DEFAULT_POLICY

from .test_evaluation import EXPECTED_TABLE

ROOT = Path(__file__).resolve().parents[1]

# -- a LoCoMo conversation, as the published files write it --------------------------------------

SESSION_1 = [
    {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to a pottery class."},
    {
        "speaker": "Melanie",
        "dia_id": "D1:2",
        "text": "Look what I made!",
        "img_url": ["https://example.invalid/bowl.jpg"],
        "blip_caption": "a photo of a blue bowl on a table",
    },
    {"speaker": "Caroline", "dia_id": "D1:3", "text": "I saw a zebra at the zoo yesterday."},
]
SESSION_2 = [
    {"speaker": "Melanie", "dia_id": "D2:1", "text": "We camped by the lake last weekend."},
    {"speaker": "Caroline", "dia_id": "D2:2", "text": "Camping sounds lovely, Mel."},
]
QA = [
    {
        "question": "Where did Caroline see a zebra?",
        "answer": "zoo",
        "evidence": ["D1:3"],
        "category": 4,
    },
    {
        "question": "What did Melanie make in pottery?",
        "answer": "a bowl",
        "evidence": ["D1:2; D1:01"],
        "category": 1,
    },
    {
        "question": "When did Melanie camp?",
        "answer": "last weekend",
        "evidence": ["D:2:1", "D"],
        "category": 2,
    },
    {
        "question": "Did Caroline camp by the lake?",
        "adversarial_answer": "yes",
        "evidence": ["D2:1", "D9:9"],
        "category": 5,
    },
    {"question": "What is Caroline's job?", "answer": "unknown", "evidence": [], "category": 3},
    {"question": "?!", "answer": "-", "evidence": ["D1:1"], "category": 4},
    {"question": "Which bowl?", "answer": "blue", "evidence": ["D1:2"], "category": 7},
]
FLAT = {
    "speaker_a": "Caroline",
    "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": SESSION_1,
    "session_2_date_time": "12:04 am on 25 May, 2023",
    "session_2": SESSION_2,
    "session_3_date_time": "10:00 am on 1 June, 2023",  # a date-time with no turns
    "qa": QA,
}


def write_json(path: Path, payload: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


@pytest.fixture
def locomo(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    write_json(folder / "26.json", FLAT)
    (folder / "NOTICE.md").write_text("not JSON, not read\n", encoding="utf-8")
    return folder


def test_locomo_records_one_per_turn_in_session_order(locomo: Path) -> None:
    bench = load_locomo(locomo)
    assert list(bench.stores) == ["26"]
    entries = bench.stores["26"]
    assert [e["memory_id"] for e in entries] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert entries[0]["content"] == "Caroline: Hey Mel! I went to a pottery class."
    assert (
        entries[1]["content"]
        == "Melanie: Look what I made! [image: a photo of a blue bowl on a table]"
    )
    assert [e["summary"] for e in entries] == [
        "Caroline",
        "Melanie",
        "Caroline",
        "Melanie",
        "Caroline",
    ]
    sources = [e["source"].source_id for e in entries]
    assert sources[:3] == [sources[0]] * 3 and sources[3:] == [sources[3]] * 2
    assert sources[0] != sources[3]
    # the session's date-time plus the turn's position in seconds: turns are ordered
    assert [e["source"].captured_at for e in entries] == [
        "2023-05-08T13:56:00Z",
        "2023-05-08T13:56:01Z",
        "2023-05-08T13:56:02Z",
        "2023-05-25T00:04:00Z",
        "2023-05-25T00:04:01Z",
    ]
    assert bench.records == 5


def test_locomo_questions_texts_clock_categories_and_repaired_evidence(locomo: Path) -> None:
    bench = load_locomo(locomo)
    asked = {q.query_id: q for q in bench.queries}
    assert list(asked) == ["26:qa-0", "26:qa-1", "26:qa-2", "26:qa-3"]
    assert [q.text for q in bench.queries] == [qa["question"] for qa in QA[:4]]
    # one day after the latest session with turns (session 3 has none)
    assert {q.as_of for q in bench.queries} == {"2023-05-26T00:04:00Z"}
    assert [q.category for q in bench.queries] == [
        "single-hop",
        "multi-hop",
        "temporal",
        "adversarial",
    ]
    assert asked["26:qa-1"].relevant == ("D1:2", "D1:1")  # split on ';', "01" -> 1
    assert asked["26:qa-2"].relevant == ("D2:1",)  # "D:2:1" read, a bare "D" dropped
    assert asked["26:qa-3"].relevant == ("D2:1",)  # D9:9 names no turn: dropped
    skipped = {note.item: note.reason for note in bench.skipped}
    assert list(skipped) == ["26.json qa[4]", "26.json qa[5]", "26.json qa[6]"]
    assert skipped["26.json qa[4]"] == "no evidence turn"
    assert "no searchable term" in skipped["26.json qa[5]"]
    assert "not 1-5" in skipped["26.json qa[6]"]
    repaired = {note.item: note.reason for note in bench.repaired}
    assert list(repaired) == ["26.json qa[1]", "26.json qa[2]", "26.json qa[3]"]
    assert "dropped ['D'], not turn ids" in repaired["26.json qa[2]"]
    assert "dropped ['D9:9'], no turn of this conversation" in repaired["26.json qa[3]"]


def test_locomo10_list_shape_gives_the_same_records_and_questions(
    locomo: Path, tmp_path: Path
) -> None:
    nested = {
        "sample_id": "conv-26",
        "qa": QA,
        "conversation": {k: v for k, v in FLAT.items() if k != "qa"},
        "session_summary": {},
    }
    other = {**nested, "sample_id": "conv-30"}
    bench = load_locomo(write_json(tmp_path / "list" / "locomo10.json", [nested, other]))
    flat = load_locomo(locomo)
    assert list(bench.stores) == ["conv-26", "conv-30"]
    assert [{**e, "source": e["source"].captured_at} for e in bench.stores["conv-26"]] == [
        {**e, "source": e["source"].captured_at} for e in flat.stores["26"]
    ]
    assert [replace(q, query_id="", store="") for q in bench.queries[:4]] == [
        replace(q, query_id="", store="") for q in flat.queries
    ]
    assert bench.queries[0].query_id == "conv-26:qa-0" and len(bench.queries) == 8


def test_locomo_date_times_and_evidence_strings() -> None:
    assert (
        parse_locomo_datetime("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
    )
    assert parse_locomo_datetime("12:19 am on 4 January, 2024").hour == 0
    assert parse_locomo_datetime("12:05 pm on 4 January, 2024").hour == 12
    for bad in ("8 May 2023", "1:56 pm on 31 February, 2023", "1:56 pm on 8 Mai, 2023", 3):
        with pytest.raises(BenchmarkDataError, match="date"):
            parse_locomo_datetime(bad)
    assert parse_evidence(["D8:6; D9:17", "D30:05", " D1:2 D1:3 ", "D8:6"]) == (
        ("D8:6", "D9:17", "D30:5", "D1:2", "D1:3"),
        (),
    )
    assert parse_evidence(["D:11:26", "D", "11:26", 4]) == (("D11:26",), ("D", "11:26", "4"))


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"speaker_a": "x"}, "not a LoCoMo conversation"),
        ({"qa": []}, "no session_N list"),
        ({**FLAT, "session_2_date_time": "yesterday"}, "session_2_date_time"),
        ({**FLAT, "session_1": [{"speaker": "A", "text": "hi"}]}, r"session_1\[0\] dia_id"),
        ({**FLAT, "qa": [{"question": "q", "evidence": "D1:1", "category": 1}]}, "evidence"),
        ({**FLAT, "session_2": [{**SESSION_2[0], "dia_id": "D1:1"}]}, "D1:1"),
    ],
)
def test_locomo_files_not_in_the_format_are_refused(
    tmp_path: Path, payload: object, message: str
) -> None:
    write_json(tmp_path / "bad" / "1.json", payload)
    with pytest.raises(BenchmarkDataError, match=message):
        bench = load_locomo(tmp_path / "bad")
        run_benchmark(bench, {"coverage": DEFAULT_POLICY})  # a duplicate id fails at append


def test_locomo_missing_and_empty_folders_and_broken_json(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkDataError, match="neither a LoCoMo folder nor a file"):
        load_locomo(tmp_path / "nowhere")
    with pytest.raises(BenchmarkDataError, match=r"no \.json file"):
        load_locomo(tmp_path)
    (tmp_path / "1.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BenchmarkDataError, match=r"1\.json: not readable JSON"):
        load_locomo(tmp_path)


def test_the_stores_are_real_and_a_unique_turn_is_recalled_first(locomo: Path) -> None:
    bench = load_locomo(locomo)
    policies = {
        "coverage": DEFAULT_POLICY,
        "bm25": ScoringPolicy.bm25(),
        "own": ScoringPolicy(recency_weight=0.5, recency_window_days=7.0, scorer="bm25+recency"),
    }
    report = run_benchmark(bench, policies)
    zebra = [s for s in report.scores if s.query_id == "26:qa-0"]
    assert [s.configuration for s in zebra] == ["coverage", "bm25", "own"]
    for score in zebra:
        assert score.hits[0] == "D1:3" and score.reciprocal_rank == 1.0 and score.hit_at_10 == 1.0
    # the same answer from a store an outside harness builds with the public API
    store = RemoteMemoryStore(locomo.parent / "outside.jsonl", user_id="outside")
    store.append_many(bench.stores["26"])
    for name, policy in policies.items():
        engine = RecallEngine(store, policy=policy)
        for query in bench.queries:
            result = engine.recall(query.text, limit=10, as_of=query.as_of, query_id=query.query_id)
            (mine,) = [
                s for s in report.scores if s.configuration == name and s.query_id == query.query_id
            ]
            assert tuple(hit.memory_id for hit in result.hits) == mine.hits
    assert [r.group for r in report.rows[::3]] == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "overall (1-4)",
        "adversarial (5)",
    ]
    assert report.row("bm25", "open-domain").questions == 0
    assert report.row("bm25", "open-domain").recall_at_10 is None
    assert report.row("bm25", "overall (1-4)").questions == 3  # adversarial is apart
    assert report.row("bm25", "adversarial (5)").questions == 1


def test_the_metrics_of_a_known_ranking() -> None:
    query = BenchmarkQuery("q", "s", "text", "2024-01-01T00:00:00Z", "c", ("a", "b"))
    score = score_ranking(
        "x", query, ["x1", "a", "x2", "x3", "x4", "x5", "b", "x6", "x7", "x8", "b2"]
    )
    assert score.hits[-1] == "x8"  # cut at 10
    assert score.recall_at_5 == 0.5 and score.recall_at_10 == 1.0 and score.hit_at_10 == 1.0
    assert score.reciprocal_rank == 0.5
    # binary gains: DCG = 1/log2(3) + 1/log2(8); the ideal puts a and b at ranks 1 and 2
    assert score.ndcg_at_10 == pytest.approx((1 / math.log2(3) + 1 / 3) / (1 + 1 / math.log2(3)))
    empty = score_ranking("x", query, [])
    assert (empty.recall_at_10, empty.hit_at_10, empty.reciprocal_rank, empty.ndcg_at_10) == (
        0,
        0,
        0,
        0,
    )


# -- a MADial-Bench folder ------------------------------------------------------------------------

MEMORIES = [
    {
        "1": {
            "time": "2023-12-25",
            "scene": "活动类",
            "emotion": "开心",
            "event": "Bart在圣诞节晚会上跳舞，感觉非常开心。",
            "user-id": 1,
            "id": "1",
        }
    },
    {
        "2": {
            "time": "2023-03-07",
            "scene": "活动类",
            "emotion": "开心",
            "event": "Bart在学校的体育节上获得一百米第一名。",
            "user-id": 1,
            "id": "2",
        }
    },
    {
        "3": {
            "time": "2024-05-15",
            "scene": "喜好类",
            "emotion": "开心",
            "event": "Bart尝试了芒果口味的冰淇淋。",
            "user-id": 1,
            "id": "3",
        }
    },
    {
        "7": {
            "time": "2024-10-23",
            "scene": "情绪类",
            "emotion": "焦虑",
            "event": "Lisa担心明天的钢琴考试。",
            "user-id": 2,
            "id": "7",
        }
    },
]
DIALOGUES = [
    {
        "dialogue": [
            "<BOD>\n",
            '<Bart>:"元旦晚会我要跳舞！"\n',
            '<Assistant>:"太棒了！"\n',
            '<Bart>:"去年圣诞节晚会也跳舞了。"\n',
            "<EOD>\n",
        ],
        "test-turn": [3],
        "relevant-id": [1, 7],
        "user-id": 1,
        "id": 0,
    },
    {
        "dialogue": ["<BOD>\n", '<Lisa>:"钢琴考试好紧张。"\n', "<EOD>\n"],
        "test-turn": [2],
        "relevant-id": [7],
        "user-id": 2,
        "id": 2,
    },
    {"dialogue": ["？！\n", "……\n"], "test-turn": [2], "relevant-id": [2], "user-id": 1, "id": 4},
]


def write_lines(path: Path, items: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")


def madial_folder(root: Path, *, lists: bool = True) -> Path:
    write_lines(root / "data" / "ch" / "MADial-Bench-zh-memory.json", MEMORIES)
    write_lines(root / "data" / "ch" / "MADial-Bench-zh-dialogue.json", DIALOGUES)
    if lists:
        top = [  # as the benchmark's lists are: dialog_history beside the dialogue
            {
                "id": 0,
                "user-id": 1,
                "top_20_ids": [2, 3, 1],
                "relevant_id": [1, 7],
                "dialog_history": "圣诞节晚会跳舞",
                "dialogue": DIALOGUES[0]["dialogue"],
            },
            {
                "id": 2,
                "user-id": 2,
                "top_20_ids": [7, 7, 3],
                "relevant_id": [7],
                "dialog_history": "钢琴考试",
                "dialogue": DIALOGUES[1]["dialogue"],
            },
        ]
        write_lines(root / "embeddings" / "ch" / "Toy_zh_top_20_ids.json", top)
    return root


def test_madial_records_one_per_memory_one_store_per_user(tmp_path: Path) -> None:
    bench = load_madial(madial_folder(tmp_path))
    assert list(bench.stores) == ["1", "2"]
    first = bench.stores["1"][0]
    assert (first["memory_id"], first["content"], first["summary"]) == (
        "1",
        "Bart在圣诞节晚会上跳舞，感觉非常开心。",
        "活动类 开心",
    )
    assert [e["source"].captured_at for e in bench.stores["1"]] == [
        "2023-12-25T12:00:00Z",
        "2023-03-07T12:00:00Z",
        "2024-05-15T12:00:00Z",
    ]
    assert [e["memory_id"] for e in bench.stores["2"]] == ["7"]


def test_madial_queries_use_the_published_history_and_own_relevant_memories(
    tmp_path: Path,
) -> None:
    bench = load_madial(madial_folder(tmp_path))
    assert [q.query_id for q in bench.queries] == ["dialogue-0", "dialogue-2"]
    assert [q.text for q in bench.queries] == ["圣诞节晚会跳舞", "钢琴考试"]
    assert [q.store for q in bench.queries] == ["1", "2"]
    # one clock for every dialogue: 1 January after the archive's newest memory (2024-10-23)
    assert {q.as_of for q in bench.queries} == {"2025-01-01T00:00:00Z"}
    assert bench.queries[0].relevant == ("1",)  # 7 is another user's memory: dropped, reported
    assert any("relevant-id [1, 7]" in note.reason for note in bench.repaired)
    # dialogue 4 has no published history; its rebuilt one has no searchable term
    assert [n.item for n in bench.skipped] == ["MADial-Bench-zh-dialogue.json:3"]
    assert list(bench.published) == ["published:Toy"]
    assert bench.published["published:Toy"] == {
        "dialogue-0": ("2", "3", "1"),
        "dialogue-2": ("7", "3"),
    }


def test_madial_without_lists_rebuilds_the_history_and_keeps_its_last_2000_characters(
    tmp_path: Path,
) -> None:
    long_turn = '<Bart>:"' + "我" * 2100 + '跳舞"\n'
    dialogues = [{**DIALOGUES[0], "dialogue": ["<BOD>\n", long_turn, "<EOD>\n"], "test-turn": [2]}]
    root = madial_folder(tmp_path, lists=False)
    bench = load_madial(root)
    assert bench.published == {}
    assert bench.queries[0].text == "".join(DIALOGUES[0]["dialogue"][:3])
    write_lines(root / "data" / "ch" / "MADial-Bench-zh-dialogue.json", dialogues)
    (query,) = load_madial(root).queries
    assert len(query.text) == 2000 and query.text.endswith('跳舞"\n')
    assert any("kept the last 2,000" in note.reason for note in load_madial(root).repaired)


def test_madial_published_rows_are_scored_like_ours(tmp_path: Path) -> None:
    report = run_benchmark(load_madial(madial_folder(tmp_path)), {"bm25": ScoringPolicy.bm25()})
    row = report.row("published:Toy", "overall")
    # dialogue-0: relevant 1 at rank 3; dialogue-2: relevant 7 at rank 1 (its repeat dropped)
    assert row.questions == 2
    assert (row.recall_at_5, row.hit_at_10) == (1.0, 1.0)
    assert row.mrr == round((1 / 3 + 1) / 2, 3)
    assert row.ndcg_at_10 == round((0.5 + 1) / 2, 3)  # 1/log2(4) = 0.5
    assert report.runs == ("bm25", "published:Toy")
    with pytest.raises(RemoteMemoryValidationError, match="published run"):
        run_benchmark(load_madial(tmp_path), {"published:Toy": DEFAULT_POLICY})


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda root: (root / "data/ch/MADial-Bench-zh-dialogue.json").unlink(), "dialogue.json"),
        (lambda root: (root / "data/ch/MADial-Bench-zh-memory.json").write_text("{\n"), ":1"),
        (
            lambda root: write_lines(
                root / "data/ch/MADial-Bench-zh-memory.json",
                [{"1": {**MEMORIES[0]["1"], "time": "25 Dec"}}],
            ),
            "time",
        ),
        (
            lambda root: write_lines(
                root / "data/ch/MADial-Bench-zh-dialogue.json", [{"dialogue": "text"}]
            ),
            "dialogue line",
        ),
        (
            lambda root: write_lines(root / "embeddings/ch/X_zh_top_20_ids.json", [{"id": 0}]),
            "top_20",
        ),
    ],
)
def test_madial_folders_not_in_the_format_are_refused(tmp_path: Path, mutate, message) -> None:
    root = madial_folder(tmp_path)
    mutate(root)
    with pytest.raises(BenchmarkDataError, match=message):
        load_madial(root)


def test_madial_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkDataError, match="not a MADial-Bench folder"):
        load_madial(tmp_path / "nowhere")
    with pytest.raises(BenchmarkDataError, match="expected one"):
        load_madial(tmp_path)


# -- named configurations and the command --------------------------------------------------------


def test_the_rows_of_the_eval_command_come_from_configurations() -> None:
    assert [s.name for s in standard_scorers()] == list(DEFAULT_RUN)
    assert [n for n in CONFIGURATIONS if n not in DEFAULT_RUN] == ["hybrid"]  # needs a model
    assert all(s.policy is CONFIGURATIONS[s.name] for s in standard_scorers())
    assert CONFIGURATIONS["coverage"] == DEFAULT_POLICY
    assert set(CONFIGURATION_NOTES) <= set(CONFIGURATIONS)


def test_config_keeps_only_the_named_rows_of_the_course_eval(capsys) -> None:
    assert cli(["eval", "--split", "dev", "--config", "bm25"]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    expected = EXPECTED_TABLE.splitlines()
    assert [line.split() for line in table[2:]] == [expected[3].split()]  # dev bm25 alone
    assert table[0].split() == expected[0].split()


def test_the_benchmark_command_prints_every_category_for_every_configuration(
    locomo: Path, capsys
) -> None:
    assert cli(["eval", "--benchmark", "locomo", str(locomo)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("category"))
    assert head.split() == [
        "category",
        "configuration",
        "recall@5",
        "recall@10",
        "hit@10",
        "MRR",
        "nDCG@10",
        "n",
    ]
    table = lines[lines.index(head) + 2 : lines.index("configurations:")]
    rows = [line for line in table if line]
    assert len(rows) == 6 * len(DEFAULT_RUN)
    groups = ["multi-hop", "temporal", "open-domain", "single-hop", "overall (1-4)"]
    first = next(iter(CONFIGURATIONS))
    assert [" ".join(r.split()[:-6]) for r in rows[:: len(DEFAULT_RUN)]] == [
        f"{group} {first}" for group in [*groups, "adversarial (5)"]
    ]
    assert "skipped: 3 question(s)" in out and "repaired: 3" in out
    assert f"bm25: {CONFIGURATIONS['bm25']!r}" in out


def test_the_benchmark_command_json_and_config(tmp_path: Path, capsys) -> None:
    root = madial_folder(tmp_path)
    argv = ["eval", "--benchmark", "madial", str(root), "--config", "bm25", "--json"]
    assert cli([*argv, "--config", "coverage", "--per-query"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["configuration"] for r in payload["rows"]] == ["coverage", "bm25", "published:Toy"]
    assert set(payload["rows"][0]) == {
        "configuration",
        "category",
        "recall@5",
        "recall@10",
        "hit@10",
        "MRR",
        "nDCG@10",
        "n",
    }
    assert payload["configurations"] == {
        "coverage": repr(DEFAULT_POLICY),
        "bm25": repr(ScoringPolicy.bm25()),
    }
    assert payload["questions"] == 2 and len(payload["skipped"]) == 1
    assert len(payload["queries"]) == 2 * 3
    # the command is deterministic: the same folder, the same bytes
    done = subprocess.run(
        [sys.executable, "-m", "memorylib", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    again = json.loads(done.stdout)
    assert again["rows"] == [r for r in payload["rows"] if r["configuration"] != "coverage"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--benchmark", "nope", "."], "choose one of locomo, madial"),
        (
            ["--benchmark", "locomo", "{folder}", "--config", "nope"],
            "'nope' is not a configuration",
        ),
        (["--benchmark", "locomo", "{folder}", "--split", "dev"], "--split and --scorer"),
        (["--benchmark", "madial", "{folder}"], "expected one"),
    ],
)
def test_the_benchmark_command_refuses_bad_input(locomo: Path, capsys, extra, message) -> None:
    argv = ["eval", *(part.replace("{folder}", str(locomo)) for part in extra)]
    assert cli(argv) == 2
    assert message in capsys.readouterr().err


EXPECTED_LEGEND = (
    "queries: answerable queries (a record of grade >= 2); metrics are their means, a query "
    "with no hit counting 0.\n"
    "relevant = grade >= 2 (recall, MRR); nDCG@10 gain = grade (0-3), ideal = every judged "
    "record.\n"
    "abstain: no_relevant queries (nothing relevant) that got no hit; empty: answerable "
    "queries that got no hit.\n"
    "limit 10, each query's own as_of and query_id. coverage: the chapter's: matched / query "
    "terms; bm25: k1 1.2, b 0.75; bm25+recency: 0.85 BM25/best + 0.15 recency; bm25+evidence: "
    "min_evidence 0.4; bm25+recency+evidence: min_evidence 0.4; bm25-stem-stop: Snowball "
    "English stems and stopwords; bm25-zh-seg: jieba words and CJK characters beside the "
    "bigrams, Chinese stopwords; bm25-dialogue: a dialogue's turns weigh 0.9 per later turn "
    "less; bm25-context: neighbours in the same source at 0.4/0.25/0.1; bm25-full: all four.\n"
    "min_evidence 0.4 was chosen on dev only (tune_min_evidence); heldout is reported, never "
    "tuned on."
)


def test_the_course_eval_without_benchmark_prints_what_it_always_did(capsys) -> None:
    assert cli(["eval"]) == 0
    assert capsys.readouterr().out == f"{EXPECTED_TABLE}\n\n{EXPECTED_LEGEND}\n"


def test_config_hybrid_adds_its_row_to_the_course_eval(capsys) -> None:
    assert cli(["eval", "--split", "heldout", "--config", "bm25", "--config", "hybrid"]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert [line.split()[:2] for line in table[2:]] == [["heldout", "bm25"], ["heldout", "hybrid"]]
