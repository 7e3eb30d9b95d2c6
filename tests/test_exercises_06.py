"""The exercises of notebooks 06 (what reaches the model) and 06b (which snapshot is
injected): each scenario teaches what it claims, its checker accepts the reference
solution in any accepted spelling and rejects each typical mistake with its hint, and no
answer is on screen before the attempt."""

from __future__ import annotations

import ast
import json
import re
import runpy
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from memorylib import (
    TEACHING_AS_OF,
    MemoryKind,
    RecallEngine,
    RecallResult,
    RemoteMemoryError,
    RemoteMemoryStore,
    build_system_prompt,
    recall_history,
    render_recall_context,
    seed_teaching_store,
)
from memorylib.notebook.buildit.profile import (
    PROFILE_SCENARIOS,
    check_profile_predictions,
    profile_exercise_truth,
)
from memorylib.notebook.buildit.render import (
    RENDER_CALLS,
    RENDER_RECORD,
    check_render_predictions,
    render_exercise_truth,
)
from memorylib.query import extract_terms, normalize_text
from memorylib.seed import TEACHING_RECORDS

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "notebooks" / "solutions"
RENDER_ANSWER = runpy.run_path(str(SOLUTIONS / "06_render.py"))["my_prediction"]
PROFILE_ANSWER = runpy.run_path(str(SOLUTIONS / "06b_profile.py"))["my_prediction"]


def before_your_turn(stem: str) -> str:
    """Every source and text output of a notebook before its "## Your turn" heading."""
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    shown = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "## Your turn" in cell.source:
            return "\n".join(shown)
        shown.append(cell.source)
        for output in cell.get("outputs", []):
            shown.append(output.get("text", ""))
            shown += [v for k, v in output.get("data", {}).items() if k.startswith("text/")]
    raise AssertionError(f"{stem} has no Your turn")


# -- notebook 06 -----------------------------------------------------------------------------


def test_the_snippet_answers_are_what_each_path_really_carries() -> None:
    truth = render_exercise_truth()
    stored = RENDER_RECORD["summary"]
    # A is element text of the block: a parser reads the stored summary back from it ...
    assert ET.fromstring(f"<snippet>{truth['A']}</snippet>").text == stored
    assert truth["A"] != stored and '"' in truth["A"]  # entities for < > &, quotes kept
    # ... and B the inside of a JSON string literal: json.loads reads it back
    assert json.loads(f'"{truth["B"]}"') == stored
    assert truth["B"] != stored and "<code>" in truth["B"]  # backslashes, no entities


def _matching(tmp_path: Path, query: str, *, titles: bool) -> set[str]:
    """The conversation records sharing a term with ``query``, titles searched or not."""
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl")
    seed_teaching_store(store)
    store.append(**RENDER_RECORD)
    wanted = set(extract_terms(normalize_text(query)))
    found = set()
    for record in store.read_all():
        text = f"{record.summary} {record.content}"
        text += f" {record.source.title}" if titles else ""
        if record.kind is MemoryKind.CONVERSATION and wanted & set(
            extract_terms(normalize_text(text))
        ):
            found.add(record.memory_id)
    return found


def test_the_render_truth_is_what_recall_history_sends_from_a_real_store(tmp_path: Path) -> None:
    # the checker runs the pipeline on records in memory; the notebook's run_call goes
    # through a store on disk, recall_history and the block rendered from its JSON
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl")
    seed_teaching_store(store)
    store.append(**RENDER_RECORD)
    engine, seen = RecallEngine(store), {}
    for label, (_, text, limit) in RENDER_CALLS.items():
        try:
            tool = recall_history(text, limit, engine=engine, as_of=TEACHING_AS_OF)
        except RemoteMemoryError:
            seen[label] = "rejected"
            continue
        block = render_recall_context(RecallResult.from_dict(json.loads(tool)))
        seen[label] = len(ET.fromstring(block).findall("hit")) if block else 0
        if label == "A":
            seen[label] = re.search(r"<snippet>(.*?)</snippet>", block)[1]
        if label == "B":
            hit = json.loads(tool)["hits"][0]
            seen[label] = json.dumps(hit["snippet"], ensure_ascii=False)[1:-1]
            assert f'"snippet": "{seen[label]}"' in tool
    assert seen == render_exercise_truth()


def test_the_hit_counts_teach_what_the_notebook_says(tmp_path: Path) -> None:
    truth = render_exercise_truth()
    assert truth["C"] == 2  # one of the two matches is in a record's content, not its summary
    _, d_query, _ = RENDER_CALLS["D"]
    assert truth["D"] == len(_matching(tmp_path / "d", d_query, titles=False)) == 1
    # a student who thinks titles are searched answers differently: the rule is tested
    assert len(_matching(tmp_path / "t", d_query, titles=True)) == 2
    assert truth["E"] == "rejected" and RENDER_CALLS["E"][2] == 11  # the limit, not the query


def test_the_render_checker_accepts_the_solution_in_any_accepted_spelling() -> None:
    assert check_render_predictions(RENDER_ANSWER).is_right
    spelled = {
        **RENDER_ANSWER,
        "A": f"  {RENDER_ANSWER['A']} ",
        "B": f'"{RENDER_ANSWER["B"]}"',  # the JSON string's own quotes copied too
        "E": " Rejected ",
    }
    assert check_render_predictions(spelled).is_right


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"A": RENDER_RECORD["summary"]}, "A: you said"),
        ({"A": "Wrap ids in &lt;code&gt; &amp; &quot;quote&quot; them."}, "attribute values"),
        ({"B": RENDER_RECORD["summary"]}, "json.loads gives back"),
        ({"A": RENDER_ANSWER["B"], "B": RENDER_ANSWER["A"]}, "the block uses entities"),
        ({"C": 1}, "content column"),
        ({"D": 2}, "title is never searched"),
        ({"E": 0}, "the limit"),
        ({"C": "2"}, "C: you said"),
        ({"D": True}, "D: you said"),
    ],
)
def test_the_render_checker_names_each_mistake(change: dict, fragment: str) -> None:
    result = check_render_predictions({**RENDER_ANSWER, **change})
    assert not result.is_right and fragment in str(result)


@pytest.mark.parametrize(
    ("label", "part"),
    [
        ("A", "Wrap ids"),  # a prefix
        ("A", "them"),  # a word of it
        ("A", "&lt;code&gt; &amp;"),  # the escaped middle
        ("B", "Wrap ids"),
        ("B", '"them"'),  # a word, in the JSON string's own quotes
        ("B", r"\"quote\""),
    ],
)
def test_the_render_checker_rejects_a_prefix_or_a_part_of_a_snippet(label: str, part: str) -> None:
    assert part.strip('"') in RENDER_ANSWER[label]
    for given in (part, RENDER_ANSWER[label][:-1], RENDER_ANSWER[label][1:]):
        result = check_render_predictions({**RENDER_ANSWER, label: given})
        assert not result.is_right and "only part of it" in str(result)


def test_no_placeholder_of_06_carries_a_part_of_an_answer() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "06_render.ipynb", as_version=4)
    (answer_cell,) = [c for c in nb.cells if "my_prediction = ..." in c.source]
    truth = render_exercise_truth()
    quoted = re.findall(r'"[A-E]": "([^"]*)"', answer_cell.source)
    assert len(quoted) >= 2  # the example's text values are there ...
    for text in quoted:  # ... and none of them is a piece of a real A or B
        assert text not in truth["A"] and text not in truth["B"], text


def test_the_render_checker_placeholder_and_partial_answers() -> None:
    assert str(check_render_predictions(...)).startswith("⏳ Not answered yet")
    assert "B, C, D, E" in str(check_render_predictions({"A": "x"}))
    assert "dict" in str(check_render_predictions(["x"]))


def test_no_answer_of_06_is_on_screen_before_the_exercise() -> None:
    shown = before_your_turn("06_render")
    truth = render_exercise_truth()
    for label in ("A", "B"):
        assert truth[label] not in shown, f"{label}'s answer is on screen"
    for label, (_, text, limit) in RENDER_CALLS.items():
        if limit <= 10:  # E's query is section 3's; its limit is what E is about
            assert f'"{text}"' not in shown, f"{label}'s query {text!r} runs before it"
    assert "limit=11" not in shown and ", 11," not in shown
    assert RENDER_RECORD["memory_id"] not in shown
    # the rules C, D and E ask about are on screen before the exercise
    assert "never searched" in shown and "1 到 10" in shown and "outside 1 to 10" in shown


def test_the_calls_on_screen_are_the_checked_calls() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "06_render.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("CALLS = {")]
    assignment = next(n for n in ast.parse(cell.source).body if isinstance(n, ast.Assign))
    shown = ast.literal_eval(assignment.value)
    assert shown == {label: (text, limit) for label, (_, text, limit) in RENDER_CALLS.items()}
    printed = "".join(output.get("text", "") for output in cell.get("outputs", []))
    assert RENDER_RECORD["summary"] in printed  # the record is shown as stored ...
    truth = render_exercise_truth()
    assert truth["A"] not in printed and truth["B"] not in printed  # ... no call's answer


# -- notebook 06b ----------------------------------------------------------------------------


def test_each_profile_scenario_teaches_its_rule() -> None:
    truth = profile_exercise_truth()
    assert truth == PROFILE_ANSWER
    _, _, tied = PROFILE_SCENARIOS["B"]
    assert {r["source"].captured_at for r in tied} == {"2026-07-31T09:00:00Z"}  # a real tie
    assert truth["B"] == max(r["memory_id"] for r in tied)  # text order: "profile-9" wins
    _, _, (singapore,) = PROFILE_SCENARIOS["D"]
    assert singapore["source"].captured_at > "2026-07-30T09:00:00Z"  # as text it would win
    assert truth["D"] == "profile-001"  # as an instant it is one hour older
    # E and F share the same unusual store, so None is not found by elimination; in F a
    # newer conversation saying the profile changed (on the last line) is still not injected
    (e_store, _, e_records), (f_store, _, f_records) = (
        PROFILE_SCENARIOS["E"],
        PROFILE_SCENARIOS["F"],
    )
    assert e_store == f_store and "profile-001" not in str(e_store)
    assert [r["kind"] for r in e_records] == [MemoryKind.CONVERSATION]
    snapshot, newer = f_records
    assert newer["kind"] is MemoryKind.CONVERSATION and snapshot["kind"] is MemoryKind.PROFILE
    assert newer["source"].captured_at > snapshot["source"].captured_at
    assert newer["stored_at"] > snapshot["stored_at"]
    assert truth["E"] is None and truth["F"] == snapshot["memory_id"]


def test_the_profile_truth_is_the_block_build_system_prompt_injects(tmp_path: Path) -> None:
    for label, (holds, _, appended) in PROFILE_SCENARIOS.items():
        store = RemoteMemoryStore(tmp_path / f"{label}.jsonl")
        if str(holds).startswith("profile-001"):
            seed_teaching_store(store)
        else:
            store.append_many(r for r in TEACHING_RECORDS if r["kind"] is MemoryKind.CONVERSATION)
        store.append_many(appended)
        prompt = build_system_prompt(store)
        block = re.match(r'<remote_profile memory_id="([^"]+)"', prompt)
        assert (block and block[1]) == profile_exercise_truth()[label], label


def test_the_profile_table_shows_the_records_as_given_and_no_answer() -> None:
    # the table is built in 06b's cell from PROFILE_SCENARIOS: one store per call, each
    # call's store named the same way, captured_at as given to append, no "injected" column
    assert [label for label, (_, _, records) in PROFILE_SCENARIOS.items() for _ in records] == [
        *"ABBCDEFF"
    ]
    assert len({holds for holds, _, _ in PROFILE_SCENARIOS.values()}) == 2
    nb = nbformat.read(ROOT / "notebooks" / "06b_profile.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.get("id") == "nb06b-your-turn-calls"]
    assert "PROFILE_SCENARIOS.items()" in cell.source
    (output,) = cell.outputs
    table = output["data"]["text/plain"]
    assert "injected" not in table and "2026-07-30T16:00:00+08:00" in table  # not converted


def test_the_profile_checker_accepts_the_solution_in_any_accepted_spelling() -> None:
    assert check_profile_predictions(PROFILE_ANSWER).is_right
    spelled = {**PROFILE_ANSWER, "C": " profile-001 ", "E": "None"}
    assert check_profile_predictions(spelled).is_right


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"A": "profile-001"}, "newest captured_at wins"),
        ({"B": "profile-10"}, "not as a number"),
        ({"B": "profile-001"}, "max() takes the larger"),
        ({"C": "profile-imported"}, "file line"),
        ({"D": "profile-sg"}, "convert the offset to UTC"),
        ({"E": "conversation-007"}, "only PROFILE records"),
        ({"E": ""}, "E: you said"),
        ({"F": "conversation-008"}, "however new a conversation is"),
        ({"F": None}, "only PROFILE records"),
    ],
)
def test_the_profile_checker_names_each_mistake(change: dict, fragment: str) -> None:
    result = check_profile_predictions({**PROFILE_ANSWER, **change})
    assert not result.is_right and fragment in str(result)


def test_the_profile_checker_placeholder() -> None:
    assert str(check_profile_predictions(...)).startswith("⏳ Not answered yet")
    assert "dict" in str(check_profile_predictions(["profile-000"]))


def _candidates() -> set[str]:
    """Every memory_id a student could answer with: the appended records and profile-001."""
    ids = {r["memory_id"] for _, _, records in PROFILE_SCENARIOS.values() for r in records}
    return ids | {"profile-001"}


def test_the_06b_placeholder_and_its_message_carry_no_candidate_value() -> None:
    nb = nbformat.read(ROOT / "notebooks" / "06b_profile.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "my_prediction = ..." in c.source]
    shape = [line for line in cell.source.splitlines() if line.startswith("# {")]
    assert len(shape) == 1, cell.source  # the shape is shown once, as a dict literal
    shown = ast.literal_eval(shape[0].removeprefix("# ").strip())
    assert sorted(shown) == sorted(PROFILE_SCENARIOS)
    assert all(value is Ellipsis for value in shown.values()), shown  # keys only, no value
    messages = [str(check_profile_predictions(...))]
    messages.append(str(check_profile_predictions(dict.fromkeys(PROFILE_SCENARIOS, ...))))
    for text in [cell.source, *messages]:
        assert not [c for c in _candidates() if c in text], text
        assert not re.search(r"""['"][A-E]['"]\s*:(?!\s*\.\.\.)""", text), text


def test_no_answer_of_06b_is_on_screen_before_the_exercise() -> None:
    shown = before_your_turn("06b_profile")
    for label, (_, _, records) in PROFILE_SCENARIOS.items():
        for record in records:
            assert record["memory_id"] not in shown, f"{label}: {record['memory_id']} is shown"
    # the rules are taught before they are asked: text order on a tie, and the instant
    assert "max" in shown and "ascending" in shown and "compared as text" in shown
    assert "+08:00" in shown and "16:00:00+08:00" not in shown
