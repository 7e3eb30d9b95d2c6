"""The Chinese course-wide instructor materials (instructors/zh/: sessions, homework, project,
prerequisites, PREFLIGHT) are twins of the English ones: the same sessions with the same agenda
rows, each lesson-plan row teaching the same rows of the Chinese plan as the English row teaches
of the English plan, the same summary numbers, the same parts and commands, and every link and
repository path resolving from instructors/zh/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .test_lesson_plans import (
    PLAN_ITEM,
    PLANNED_BLOCKS,
    PLANS,
    ROOT,
    SESSION_MINUTES,
    notebook_sections,
    plan_rows,
    sessions,
)
from .test_lesson_plans_zh import ZH_NOTEBOOKS, ZH_PLANS, zh_timing

ZH = PLANS / "zh"
# The agenda's block column, English -> Chinese.
BLOCKS = {
    "Opening": "开场",
    "Hook": "引子",
    "Plan": "教案",
    "Break": "休息",
    "Switch": "切换",
    "Closing": "收尾",
    "Project": "项目",
}
TRACKS = {"core": "核心", "optional": "选修"}
ZH_HEADER = "| 开始 | 分钟 | 环节 | 内容 |\n|---|---:|---|---|\n"
ZH_AGENDA_ROW = re.compile(
    r"^\| (?P<start>\d:\d\d) \| (?P<minutes>\d+) \| (?P<block>[^|\s]+) \| (?P<what>.*) \|$"
)
ZH_PLAN_ITEM = re.compile(
    r"^\[(?P<plan>[^\]]+)\]\((?P=plan)\.md\)(?: 从“(?P<first>.+?)”到“(?P<last>.+?)”)?$"
)
EN_SUMMARY_ROW = re.compile(r"(?m)^\| (\d+) \| (\w+) \| (\d+) \| .+ \|$")
ZH_SUMMARY_HEADER = "| 次课 | 课程线 | 计划 | 笔记本 |\n|---|---|---:|---|\n"
ZH_SUMMARY_ROW = re.compile(r"(?m)^\| (\d+) \| (\S+) \| (\d+) \| .+ \|$")
# A Chinese notebook section named in prose: 10 的“6. 差异是真的吗？”.
ZH_SECTION_REF = re.compile(r"(\d\d[a-c]?) 的“([^”]+)”")
FILES = ("sessions", "homework", "project", "prerequisites", "PREFLIGHT", "README")


def read(name: str) -> str:
    return (ZH / f"{name}.md").read_text(encoding="utf-8")


def zh_sessions() -> dict[int, tuple[str, str, list[dict[str, str]]]]:
    """Session number -> (its title, its part of zh/sessions.md, its agenda rows)."""
    found = {}
    for block in re.split(r"(?m)^## 第 (?=\d+ 次课 · )", read("sessions"))[1:]:
        number, title = re.match(r"(\d+) 次课 · (.*)\n", block).groups()
        rows = [m.groupdict() for line in block.splitlines() if (m := ZH_AGENDA_ROW.match(line))]
        found[int(number)] = (title.strip(), block, rows)
    return found


def planned(rows: list[dict[str, str]]) -> int:
    return sum(int(r["minutes"]) for r in rows if r["block"] in PLANNED_BLOCKS)


def taught(rows: list[tuple[str, int]], first: str | None, last: str | None) -> range:
    """The indices of a plan's timing rows that an agenda row teaches (all without from/to)."""
    names = [s for s, _ in rows]
    assert (first is None or first in names) and (last is None or last in names), (first, last)
    start = names.index(first) if first else 0
    end = names.index(last) if last else len(names) - 1
    return range(start, end + 1)


def test_every_session_has_its_chinese_twin_with_the_same_agenda_rows() -> None:
    english, chinese = sessions(), zh_sessions()
    assert sorted(chinese) == sorted(english), "the Chinese sessions are not the English ones"
    for number, (_, rows) in english.items():
        title, block, zh_rows = chinese[number]
        assert title, f"第 {number} 次课 has no title"
        assert block.count(ZH_HEADER) == 1, f"第 {number} 次课: one agenda, with the header"
        assert [(r["start"], r["minutes"], BLOCKS[r["block"]]) for r in rows] == [
            (r["start"], r["minutes"], r["block"]) for r in zh_rows
        ], f"第 {number} 次课: the agenda rows differ from session {number}'s"
        p = planned(rows)
        stated = f"计划：**{p} / {SESSION_MINUTES} 分钟**；其余 {SESSION_MINUTES - p} 分钟是"
        assert stated in block, f"第 {number} 次课 does not state {stated!r}"


def test_each_plan_row_teaches_the_same_rows_of_the_chinese_plan() -> None:
    chinese = zh_sessions()
    for number, (_, rows) in sessions().items():
        en_plans = [r for r in rows if r["block"] == "Plan"]
        zh_plans = [r for r in chinese[number][2] if r["block"] == BLOCKS["Plan"]]
        assert len(zh_plans) == len(en_plans), number
        for en_row, zh_row in zip(en_plans, zh_plans, strict=True):
            en_item = PLAN_ITEM.match(en_row["what"])
            zh_item = ZH_PLAN_ITEM.match(zh_row["what"])
            assert en_item, en_row
            assert zh_item, f"第 {number} 次课: {zh_row['what']}"
            assert zh_item["plan"] == en_item["plan"], f"第 {number} 次课: {zh_row['what']}"
            assert (ZH / f"{zh_item['plan']}.md").exists(), zh_item["plan"]
            en_rows = plan_rows(en_item["plan"])
            zh_rows = zh_timing(read(zh_item["plan"]))[0]
            en_taught = taught(en_rows, en_item["first"], en_item["last"])
            zh_taught = taught(zh_rows, zh_item["first"], zh_item["last"])
            zh_minutes = [zh_rows[i][1] for i in zh_taught]
            assert sum(zh_minutes) == int(zh_row["minutes"]), (number, zh_row["what"])
            assert zh_taught == en_taught, (
                f"第 {number} 次课 teaches rows {list(zh_taught)} of zh/{zh_item['plan']}.md, "
                f"session {number} rows {list(en_taught)} of {en_item['plan']}.md"
            )
            assert zh_minutes == [en_rows[i][1] for i in en_taught], (number, zh_row["what"])


def test_the_summary_table_has_the_same_numbers() -> None:
    text, english = read("sessions"), (PLANS / "sessions.md").read_text(encoding="utf-8")
    assert text.count(ZH_SUMMARY_HEADER) == 1, "the summary table's header"
    wanted = [(n, TRACKS[t], p) for n, t, p in EN_SUMMARY_ROW.findall(english)]
    found = ZH_SUMMARY_ROW.findall(text)
    assert wanted and found == wanted, f"the summary rows differ: {found} != {wanted}"
    count = len(sessions())
    assert f"**{count} 次课，每次 {SESSION_MINUTES} 分钟" in text


def test_homework_project_and_prerequisites_have_their_parts() -> None:
    homework = read("homework")
    for number in range(1, 7):
        assert f"\n## H{number} · " in homework, f"H{number}"
    assert homework.count("\n### 评分标准\n") == 6, "six ### 评分标准, one per assignment"
    project = read("project")
    for milestone in ("M1", "M2", "M3"):
        assert f"\n### {milestone} · " in project, milestone
    assert "\n## 评分标准\n" in project, "the project has no ## 评分标准"
    prerequisites = read("prerequisites")
    for heading in ("## Python", "## 数学", "## 环境准备"):
        assert f"\n{heading}\n" in prerequisites, heading


@pytest.mark.parametrize("name", ["homework", "project", "prerequisites", "PREFLIGHT"])
def test_the_commands_and_sections_are_the_english_ones(name: str) -> None:
    """Every fenced block of the English file (commands, code, printed lines) is in the
    Chinese one unchanged, and the two have as many ## and ### sections."""
    text, english = read(name), (PLANS / f"{name}.md").read_text(encoding="utf-8")
    for block in re.findall(r"(?ms)^ *```.*?^ *```$", english):
        assert block in text, f"zh/{name}.md lacks the English block {block[:60]!r}"
    for level in ("## ", "### "):
        count = len(re.findall(rf"(?m)^{level}", english))
        assert len(re.findall(rf"(?m)^{level}", text)) == count, f"zh/{name}.md: {level}"


@pytest.mark.parametrize("name", FILES)
def test_links_paths_and_sections_resolve_from_instructors_zh(name: str) -> None:
    text = read(name)
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (ZH / target).exists(), f"zh/{name}.md: broken link {target}"
    for path in re.findall(r"`((?:notebooks|memorylib|data|tests|scripts)/[^`\s*<]+)`", text):
        assert (ROOT / path).exists(), f"zh/{name}.md names {path}"
    for stem, heading in ZH_SECTION_REF.findall(text):
        (notebook,) = ZH_NOTEBOOKS.glob(f"{stem}_*.ipynb")
        sections = notebook_sections(notebook)
        assert heading in sections, f"zh/{name}.md: notebooks/zh/{notebook.name} has no {heading!r}"


@pytest.mark.parametrize("plan", ZH_PLANS, ids=[p.stem for p in ZH_PLANS])
def test_every_chinese_plan_links_the_chinese_sessions(plan: Path) -> None:
    text = plan.read_text(encoding="utf-8")
    assert "[sessions.md](sessions.md)" in text, f"{plan.name} does not link sessions.md"
    assert "](../sessions.md)" not in text, f"{plan.name} still links the English sessions.md"


def test_the_readme_links_the_five_chinese_files() -> None:
    text = read("README")
    for name in FILES[:-1]:
        assert f"]({name}.md)" in text, name
    assert "目前只有英文版" not in text
