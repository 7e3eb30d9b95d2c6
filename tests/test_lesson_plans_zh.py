"""The Chinese lesson plans (instructors/zh/): each is the twin of an English plan for a Chinese
twin notebook, with the same sections, the same minutes in the same order, each timing row named
by a heading of the Chinese notebook, and its questions answered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .test_lesson_plans import PLANS, headings, timing

ZH_PLANS = sorted((PLANS / "zh").glob("[0-9][0-9]*_*.md"))
ZH_NOTEBOOKS = PLANS.parent / "notebooks" / "zh"
REQUIRED = tuple(
    f"## {h}" for h in ("学习目标", "时间安排", "课堂提问", "预期的误解", "现场控件", "如何讲授")
)


def zh_timing(text: str) -> tuple[list[tuple[str, int]], int]:
    return timing(text, "## 时间安排", "**合计**")


@pytest.mark.parametrize("plan", ZH_PLANS, ids=[p.stem for p in ZH_PLANS])
def test_the_chinese_plan_follows_its_notebook_and_its_english_twin(plan: Path) -> None:
    text = plan.read_text(encoding="utf-8")
    notebook = ZH_NOTEBOOKS / f"{plan.stem}.ipynb"
    assert notebook.exists(), f"no Chinese twin notebook for {plan.name}"
    for heading in REQUIRED:
        assert f"\n{heading}\n" in text, f"{plan.name} has no {heading!r}"
    rows, total = zh_timing(text)
    english_rows, english_total = timing((PLANS / plan.name).read_text(encoding="utf-8"))
    assert [m for _, m in rows] == [m for _, m in english_rows], "minutes differ from English"
    assert total == english_total == sum(m for _, m in rows)
    assert f"**{total} 分钟**" in text.split("\n## ", 1)[0], "the header states another total"
    unknown = [s for s, _ in rows if s not in headings(notebook)]
    assert not unknown, f"not headings of notebooks/zh/{notebook.name}: {unknown}"
    questions = text[text.index("## 课堂提问\n") :].split("\n## ", 1)[0]
    asked = len(re.findall(r"(?m)^\d+\. \*\*", questions))
    assert questions.count("*答案：*") == asked >= 3
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        assert (plan.parent / target).exists(), f"{plan.name}: broken link {target}"


def test_every_chinese_twin_has_its_plan() -> None:
    twins = {p.stem for p in ZH_NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")}
    assert twins and {p.stem for p in ZH_PLANS} == twins
