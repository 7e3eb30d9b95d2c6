"""Lesson plans for instructors (instructors/): one per course notebook, complete, and
their minutes add up.

Which plans must exist is derived, not listed: every notebook of ``COURSE`` and of the
notebooks folder has a plan of the same stem, checked against that notebook.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from .course import COURSE

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PLANS = ROOT / "instructors"
REQUIRED = (
    "## Learning goals",
    "## Timing",
    "## Questions for the room",
    "## Misconceptions to expect",
    "## Live widget",
    "## How to present",
)
SESSION_MINUTES = 90
ROW = re.compile(r"^\| (?P<section>.+?) \| (?P<minutes>\*\*)?(?P<value>\d+)(?P=minutes)? \|")


def course_stems() -> list[str]:
    stems = [n.stem for n in COURSE]
    stems += [p.stem for p in sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")) if p.stem not in stems]
    return stems


PLAN_NOTEBOOKS = {stem: NOTEBOOKS / f"{stem}.ipynb" for stem in course_stems()}


def headings(path: Path, levels: str = "1,3") -> list[str]:
    """The markdown headings of a notebook whose level is in ``levels`` ("1,3": #, ##, ###)."""
    nb = nbformat.read(path, as_version=4)
    pattern = re.compile(rf"(?m)^#{{{levels}}} (.+)$")
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found += [m.group(1).strip() for m in pattern.finditer(cell.source)]
    return found


def part(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    end = rest.find("\n## ")
    return rest if end < 0 else rest[:end]


def timing(
    text: str, heading: str = "## Timing", total_row: str = "**Total**"
) -> tuple[list[tuple[str, int]], int]:
    """The (section, minutes) rows of a plan's timing table and its total (the Chinese plans
    name the two ``## 时间安排`` and ``**合计**``)."""
    rows, total = [], None
    for line in part(text, heading).splitlines():
        match = ROW.match(line)
        if not match:
            continue
        if match["section"] == total_row:
            total = int(match["value"])
        else:
            rows.append((match["section"], int(match["value"])))
    assert total is not None, f"the timing table has no {total_row} row"
    return rows, total


# Files of instructors/ that are not lesson plans (quiz_answers.md is written beside them).
NOT_PLANS = {
    "README",
    "PREFLIGHT",
    "sessions",
    "homework",
    "project",
    "prerequisites",
    "quiz_answers",
}
# Headings of a notebook that take no class time of their own: the objectives (read on the
# title slide), the stretches (for fast students, inside Your turn's minutes) and 00's note
# for instructors (not shown to the room). The # title is not a section.
UNTIMED = {"Learning objectives", "Optional stretch (for fast students)", "For instructors"}
# The quiz that ends each notebook is the exit ticket of the session's Closing block (or
# homework): sessions.md says so, and its minutes are the closing's.
UNTIMED |= {"Check your understanding"}
PLANNED_MAX = 75
BUFFER_BLOCKS = {"Opening", "Break", "Switch", "Closing"}
PLANNED_BLOCKS = {"Plan", "Hook", "Project"}
AGENDA_ROW = re.compile(
    r"^\| (?P<start>\d:\d\d) \| (?P<minutes>\d+) \| (?P<block>\w+) \| (?P<what>.*) \|$"
)
PLAN_ITEM = re.compile(
    r'^\[(?P<plan>[^\]]+)\]\((?P=plan)\.md\)(?: from "(?P<first>.+?)" to "(?P<last>.+?)")?$'
)


def notebook_sections(path: Path) -> list[str]:
    """The ## and ### headings of a notebook, in order."""
    return headings(path, "2,3")


def plan_rows(plan: str) -> list[tuple[str, int]]:
    return timing((PLANS / f"{plan}.md").read_text(encoding="utf-8"))[0]


def sessions() -> dict[int, tuple[str, list[dict[str, str]]]]:
    """Session number -> (its part of sessions.md, its agenda rows)."""
    text = (PLANS / "sessions.md").read_text(encoding="utf-8")
    found = {}
    for block in re.split(r"(?m)^## Session ", text)[1:]:
        number = int(block.split(" ", 1)[0])
        rows = [m.groupdict() for line in block.splitlines() if (m := AGENDA_ROW.match(line))]
        found[number] = (block, rows)
    return found


def test_every_course_notebook_has_a_plan_and_nothing_else_does() -> None:
    assert (PLANS / "README.md").exists()
    written = {p.stem for p in PLANS.glob("*.md")} - NOT_PLANS
    assert written == set(PLAN_NOTEBOOKS), (
        f"missing plans: {sorted(set(PLAN_NOTEBOOKS) - written)}; "
        f"plans for no notebook: {sorted(written - set(PLAN_NOTEBOOKS))}"
    )


@pytest.mark.parametrize("plan", sorted(PLAN_NOTEBOOKS))
def test_every_section_of_the_notebook_has_minutes_in_its_plan(plan: str) -> None:
    timed = [s for s, _ in plan_rows(plan)]
    wanted = [h for h in notebook_sections(PLAN_NOTEBOOKS[plan]) if h not in UNTIMED]
    assert [h for h in wanted if h not in timed] == [], f"{plan}.md: sections without minutes"
    in_order = [h for h in notebook_sections(PLAN_NOTEBOOKS[plan]) if h in timed]
    assert timed == in_order, f"{plan}.md: rows not in the notebook's order"


def test_every_plan_links_its_quiz_answers() -> None:
    for plan in PLAN_NOTEBOOKS:
        text = (PLANS / f"{plan}.md").read_text(encoding="utf-8")
        assert f"Quiz answers: [quiz_answers.md#{plan}](quiz_answers.md#{plan})" in text, plan
    assert "(quiz_answers.md)" in (PLANS / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("plan", sorted(PLAN_NOTEBOOKS))
def test_plan_is_complete_and_its_minutes_add_up(plan: str) -> None:
    text = (PLANS / f"{plan}.md").read_text(encoding="utf-8")
    for heading in REQUIRED:
        assert f"\n{heading}\n" in text, f"{plan}.md has no '{heading}'"
        assert part(text, heading).strip(), f"{plan}.md: '{heading}' is empty"
    rows, total = timing(text)
    assert rows and all(minutes > 0 for _, minutes in rows)
    assert sum(m for _, m in rows) == total, f"{plan}.md: the sections add up to another total"
    stated = re.search(r"Total: \*\*(\d+) minutes\*\*", text)
    assert stated and int(stated.group(1)) == total, f"{plan}.md: the header states another total"
    notebook = PLAN_NOTEBOOKS[plan]
    unknown = [s for s, _ in rows if s not in headings(notebook)]
    assert not unknown, (
        f"{plan}.md names sections that are not headings of {notebook.name}: {unknown}"
    )
    questions = part(text, "## Questions for the room")
    assert questions.count("*Answer:*") >= 3, f"{plan}.md: at least 3 questions, each answered"
    assert questions.count("*Answer:*") == len(re.findall(r"(?m)^\d+\. \*\*", questions))


def test_every_session_has_an_agenda_of_90_minutes_with_at_most_75_planned() -> None:
    found = sessions()
    assert found and sorted(found) == list(range(1, len(found) + 1))
    for number, (text, rows) in found.items():
        assert rows, f"session {number} has no agenda"
        assert rows[0]["block"] == "Opening" and rows[-1]["block"] == "Closing", number
        clock = 0
        for row in rows:
            assert row["block"] in BUFFER_BLOCKS | PLANNED_BLOCKS, (number, row)
            hours, minutes = row["start"].split(":")
            assert int(hours) * 60 + int(minutes) == clock, f"session {number}: {row}"
            clock += int(row["minutes"])
        assert clock == SESSION_MINUTES, f"session {number} lasts {clock} minutes"
        planned = sum(int(r["minutes"]) for r in rows if r["block"] in PLANNED_BLOCKS)
        assert planned <= PLANNED_MAX, f"session {number} plans {planned} minutes"
        assert f"Planned: **{planned} of {SESSION_MINUTES} minutes**" in text, number
        assert f"the other {SESSION_MINUTES - planned} are" in text, number
    assert found[1][1][1]["block"] == "Hook", "session 1 opens with the hook"


def test_the_agendas_cover_every_plan_section_once_with_its_minutes() -> None:
    covered: dict[str, list[str]] = {plan: [] for plan in PLAN_NOTEBOOKS}
    summary = (PLANS / "sessions.md").read_text(encoding="utf-8")
    for number, (_, rows) in sessions().items():
        for row in (r for r in rows if r["block"] == "Plan"):
            item = PLAN_ITEM.match(row["what"])
            assert item, f"session {number}: {row['what']}"
            rows_of_plan = plan_rows(item["plan"])
            names = [s for s, _ in rows_of_plan]
            first, last = item["first"] or names[0], item["last"] or names[-1]
            assert first in names and last in names, f"session {number}: {row['what']}"
            taught = rows_of_plan[names.index(first) : names.index(last) + 1]
            assert taught and sum(m for _, m in taught) == int(row["minutes"]), (number, row)
            covered[item["plan"]] += [s for s, _ in taught]
            plan_text = (PLANS / f"{item['plan']}.md").read_text(encoding="utf-8")
            header = plan_text.splitlines()[2]
            assert re.search(rf"· Sessions? (\d+, )*{number}(, \d+)* ·", header), header
        planned = sum(int(r["minutes"]) for r in rows if r["block"] in PLANNED_BLOCKS)
        assert re.search(rf"(?m)^\| {number} \| \w+ \| {planned} \|", summary), number
    for plan, names in covered.items():
        # in any order (the optional track comes last), but each section exactly once
        assert sorted(names) == sorted(s for s, _ in plan_rows(plan)), f"{plan}: {names}"
    assert f"**{len(sessions())} sessions of {SESSION_MINUTES} minutes" in summary


@pytest.mark.parametrize("name", ["homework", "project", "prerequisites", "sessions", "README"])
def test_instructor_files_name_only_headings_and_files_that_exist(name: str) -> None:
    text = (PLANS / f"{name}.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", text):
        assert target == "quiz_answers.md" or (PLANS / target).exists(), f"{name}.md: {target}"
    for path in re.findall(r"`((?:notebooks|memorylib|data|tests|scripts)/[^`\s*<]+)`", text):
        assert (ROOT / path).exists(), f"{name}.md names {path}"
    for stem, heading in re.findall(r'(\d\d[a-c]?)\'s section "([^"]+)"', text):
        (notebook,) = [p for s, p in PLAN_NOTEBOOKS.items() if s.split("_")[0] == stem]
        assert heading in notebook_sections(notebook), f"{name}.md: {stem} has no {heading!r}"


def test_homework_project_and_prerequisites_have_their_parts() -> None:
    homework = (PLANS / "homework.md").read_text(encoding="utf-8")
    for number in range(1, 7):
        assert f"\n## H{number} · " in homework
    assert homework.count("\n### Rubric\n") == 6
    project = (PLANS / "project.md").read_text(encoding="utf-8")
    for milestone in ("M1", "M2", "M3"):
        assert f"\n### {milestone} · " in project
    assert "\n## Rubric\n" in project
    prerequisites = (PLANS / "prerequisites.md").read_text(encoding="utf-8")
    for heading in ("## Python", "## Mathematics", "## Setup"):
        assert f"\n{heading}\n" in prerequisites


def test_design_questions_come_with_the_points_of_a_good_answer() -> None:
    asked = 0
    for plan in PLAN_NOTEBOOKS:
        text = (PLANS / f"{plan}.md").read_text(encoding="utf-8")
        if "\n## Design questions for the room\n" not in text:
            continue
        questions = part(text, "## Design questions for the room")
        count = len(re.findall(r"(?m)^\d+\. \*\*", questions))
        assert count and questions.count("*A good answer:*") == count, plan
        asked += count
    assert asked >= 3
