"""The check-your-understanding quiz at the end of every notebook (memorylib/notebook/quiz.py):
its answer key agrees with instructors/quiz_answers.md, every notebook ends with
its quiz committed unanswered (then its recap and navigation), and the engine accepts each
right letter and refuses each wrong one with that choice's hint."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from memorylib.notebook import messages
from memorylib.notebook.exercises import Verdict
from memorylib.notebook.quiz import KEY, check_quiz, questions, quiz

from .course import COURSE, in_language, navigation_line

ROOT = Path(__file__).resolve().parents[1]
# Each edition's answers: (file, its plans' folder, its notebooks' folder from there, "Why").
EDITIONS = {
    "en": (ROOT / "instructors", "../notebooks", "Why:"),
    "zh": (ROOT / "instructors" / "zh", "../../notebooks/zh", "理由："),
}
STEMS = {n.stem.split("_")[0]: n.stem for n in COURSE}  # every notebook, the index too
SECTION = re.compile(r"^## (\S+) · ", re.M)


def answer_lines(why: str) -> re.Pattern[str]:
    """``1. prompt``, then ``   **B**: choice *Why:* reason`` (zh: ``**B**：`` and ``*理由：*``)."""
    return re.compile(rf"^(\d+)\. (.+)\n   \*\*([A-E])\*\*(?:: |：)(.+?) \*{why}\* (.+)$", re.M)


def right_letters(number: str) -> dict[str, str]:
    return {n: q.accepted[0] for n, q in questions(number).items()}


def test_every_notebook_has_a_quiz_of_three_or_four_questions() -> None:
    assert set(KEY) == set(STEMS)
    for number in KEY:
        asked = questions(number)
        assert 3 <= len(asked) <= 4, number
        for q in asked.values():
            assert len(q.choices) >= 3 and q.accepted[0] in q.labels, (number, q.prompt)
    right = [letter for letters in KEY.values() for letter in letters]
    assert len(set(right)) >= 3, "the right letters should not all sit in one place"


def test_the_catalogue_holds_exactly_the_entries_the_quiz_reads() -> None:
    """A hint for the right choice, or a choice past the labels, would never be shown."""
    entries = {k for k in messages.catalogue("en", "quiz") if k.startswith("n")}
    expected = set()
    for number, letters in KEY.items():
        for n, q in questions(number).items():
            key = f"n{number}.{n}"
            expected |= {key, f"{key}.why"} | {f"{key}.{label}" for label in q.labels}
            expected |= {
                f"{key}.hint.{label}" for label in q.labels if label != letters[int(n) - 1]
            }
    assert entries == expected, sorted(entries ^ expected)


@pytest.mark.parametrize("language", EDITIONS)
def test_the_instructors_answers_agree_with_the_key(language: str) -> None:
    folder, _, why = EDITIONS[language]
    text = (folder / "quiz_answers.md").read_text(encoding="utf-8")
    sections = dict(zip(SECTION.findall(text), SECTION.split(text)[2::2], strict=True))
    assert list(sections) == list(KEY), list(sections)
    for number, section in sections.items():
        with in_language(language):
            asked = questions(number)
        found = answer_lines(why).findall(section)
        assert [n for n, *_ in found] == list(asked), number
        for n, prompt, letter, choice, reason in found:
            q = asked[n]
            assert letter == KEY[number][int(n) - 1], (number, n)
            assert q.prompt == f"{n}. {prompt}" and q.why == reason, (number, n)
            assert q.choices[q.labels.index(letter)] == choice, (number, n)


@pytest.mark.parametrize("number", list(KEY))
def test_each_right_letter_is_accepted_and_each_wrong_one_refused_with_its_hint(
    number: str,
) -> None:
    asked = questions(number)
    for n, q in asked.items():
        right = q.accepted[0]
        for given in (right, right.lower(), f" {right} "):
            result = q.check(given)
            assert result.is_right and q.why in result.message, (number, n, given)
        for label in q.labels:
            if label == right:
                continue
            result = q.check(label)
            assert result.verdict is Verdict.WRONG, (number, n, label)
            assert q.hints[label] in result.message, (number, n, label)
            assert q.why not in result.message
            hint = q.hints[label].casefold()  # a hint teaches; it never names the answer
            assert q.choices[q.labels.index(right)].casefold() not in hint
            assert not re.search(rf"\b(choose|pick|answer is)\b|\b{right}\)", q.hints[label], re.I)
    letters = right_letters(number)
    assert check_quiz(number, letters).is_right
    everything = check_quiz(number, letters).text
    assert all(q.why in everything for q in asked.values())
    first = next(iter(asked))
    wrong_label = next(label for label in asked[first].labels if label != letters[first])
    result = check_quiz(number, {**letters, first: wrong_label})
    assert result.verdict is Verdict.WRONG and f"1 of {len(asked)} wrong" in result.message
    assert asked[first].hints[wrong_label] in result.text
    assert all(q.why not in result.text for q in asked.values())


def test_an_incomplete_or_malformed_answer_is_not_graded() -> None:
    letters = right_letters("04")
    assert check_quiz("04", ...).verdict is Verdict.NOT_ANSWERED
    partial = check_quiz("04", {**letters, "3": ...})
    assert partial.verdict is Verdict.NOT_ANSWERED and "3" in partial.message
    assert check_quiz("04", {**letters, "2": "Z"}).verdict is Verdict.WRONG
    assert check_quiz("04", {**letters, "2": 2}).verdict is Verdict.WRONG
    assert check_quiz("04", "BCAB").verdict is Verdict.WRONG


def test_the_shown_questions_hold_every_choice_and_no_answer() -> None:
    for number in KEY:
        shown = quiz(number)
        flat = " ".join(shown.split())
        for q in questions(number).values():
            assert " ".join(q.prompt.split()) in flat
            assert all(" ".join(c.split()) in flat for c in q.choices)
            assert q.why not in flat
        assert all(len(line) <= 92 for line in shown.splitlines()), number


def cell_output(cell) -> str:
    return "\n".join(
        output.get("text", "") + "".join(output.get("data", {}).get("text/plain", ""))
        for output in cell.get("outputs", [])
    )


@pytest.mark.parametrize("number", list(KEY))
def test_the_notebook_ends_with_its_quiz_committed_unanswered(number: str) -> None:
    path = ROOT / "notebooks" / f"{STEMS[number]}.ipynb"
    nb = nbformat.read(path, as_version=4)
    heading = next(
        i for i, c in enumerate(nb.cells) if c.source.startswith("## Check your understanding")
    )
    # the quiz comes before the recap, which would otherwise answer it
    shown, check, recap, closing = (
        nb.cells[i] for i in (heading + 1, heading + 2, heading + 3, -1)
    )
    assert "## Recap" in recap.source and heading + 4 == len(nb.cells) - 1
    assert closing.source.splitlines()[-1] == navigation_line(STEMS[number])
    assert f'quiz("{number}")' in shown.source and cell_output(shown).strip() == quiz(number)
    assert f'check_quiz("{number}", my_quiz)' in check.source
    template = re.search(r"^my_quiz = (\{.*\})", check.source, re.M)
    assert template and set(re.findall(r'"\d+": (\S+?)[,}]', template.group(1))) == {"..."}
    (output,) = check.outputs
    assert 'data-verdict="not answered"' in output["data"]["text/html"]
    assert output["data"]["text/plain"].startswith("⏳ Not answered yet")
    text = "\n".join(c.source + "\n" + cell_output(c) for c in nb.cells)
    for q in questions(number).values():
        assert q.why not in " ".join(text.split()), "an answer's reason is in the notebook"


@pytest.mark.parametrize("language", EDITIONS)
def test_every_plans_quiz_link_lands_on_its_notebooks_answers(language: str) -> None:
    """A lesson plan links its edition's quiz_answers.md#<notebook>: the anchor is there, above
    the section that links the notebook of that edition."""
    plans, notebooks, _ = EDITIONS[language]
    text = (plans / "quiz_answers.md").read_text(encoding="utf-8")
    for stem in STEMS.values():
        plan = (plans / f"{stem}.md").read_text(encoding="utf-8")
        assert f"](quiz_answers.md#{stem})" in plan, stem
        anchor = f'<a id="{stem}"></a>'
        assert anchor in text, stem
        after = text.split(anchor, 1)[1].lstrip()
        assert after.startswith("## ") and f"({notebooks}/{stem}.ipynb)" in after.split("\n", 1)[0]


def test_a_chinese_line_wraps_at_92_columns_and_keeps_every_character() -> None:
    from memorylib.notebook.quiz import WIDTH, columns, fill

    line = "  B) " + "召回结果，只在这一次 query 里有意义。" * 8
    rows = fill(line, "     ").splitlines()
    assert len(rows) > 1 and all(columns(row) <= WIDTH for row in rows)
    assert all(row.startswith("     ") for row in rows[1:])
    assert not any(row.strip().startswith(("，", "。")) for row in rows)
    assert "".join(r.strip() for r in rows).replace(" ", "") == line.strip().replace(" ", "")
    assert fill("plain English " * 3) == ("plain English " * 3).strip()
