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

from memorylib.notebook.common import COURSE

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


def headings(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found += [m.group(1).strip() for m in re.finditer(r"(?m)^#{1,3} (.+)$", cell.source)]
    return found


def part(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    end = rest.find("\n## ")
    return rest if end < 0 else rest[:end]


def timing(text: str) -> tuple[list[tuple[str, int]], int]:
    rows, total = [], None
    for line in part(text, "## Timing").splitlines():
        match = ROW.match(line)
        if not match:
            continue
        if match["section"] == "**Total**":
            total = int(match["value"])
        else:
            rows.append((match["section"], int(match["value"])))
    assert total is not None, "the timing table has no **Total** row"
    return rows, total


def test_every_course_notebook_has_a_plan_and_nothing_else_does() -> None:
    assert (PLANS / "README.md").exists()
    written = {p.stem for p in PLANS.glob("*.md")} - {"README", "quiz_answers"}  # quizzes
    assert written == set(PLAN_NOTEBOOKS), (
        f"missing plans: {sorted(set(PLAN_NOTEBOOKS) - written)}; "
        f"plans for no notebook: {sorted(written - set(PLAN_NOTEBOOKS))}"
    )


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


def test_sessions_cover_every_plan_once_and_the_minutes_add_up() -> None:
    readme = (PLANS / "README.md").read_text(encoding="utf-8")
    plan_totals = {
        plan: timing((PLANS / f"{plan}.md").read_text(encoding="utf-8"))[1]
        for plan in PLAN_NOTEBOOKS
    }
    seen: list[str] = []
    course_total = None
    for line in readme.splitlines():
        session = re.match(r"^\| (\d+) \| (.+) \| (\d+) \|$", line)
        if session:
            listed = re.findall(r"\[([^\]]+)\]\(\1\.md\) \((\d+)\)", session.group(2))
            assert listed, line
            for plan, minutes in listed:
                assert int(minutes) == plan_totals[plan], (
                    f"README: {plan} is {plan_totals[plan]} min"
                )
            minutes = sum(int(m) for _, m in listed)
            assert minutes == int(session.group(3)) <= SESSION_MINUTES, line
            seen += [plan for plan, _ in listed]
        total = re.match(r"^\| \*\*Total\*\* \| \| \*\*(\d+)\*\* \|$", line)
        if total:
            course_total = int(total.group(1))
    assert sorted(seen) == sorted(PLAN_NOTEBOOKS), "every plan in exactly one session"
    assert course_total == sum(plan_totals.values())
    sessions = len(
        {line.split("|")[1] for line in readme.splitlines() if re.match(r"^\| \d+ \|", line)}
    )
    assert f"**{sessions} sessions of {SESSION_MINUTES} minutes.**" in readme
    assert f"**{course_total} minutes**" in readme
