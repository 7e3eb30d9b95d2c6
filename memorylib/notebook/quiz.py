"""The check-your-understanding quiz that ends a notebook: the answer key here, every sentence
in ``catalogue/<language>/quiz.txt``, every answer checked by the exercise engine."""

from __future__ import annotations

import re
import textwrap
from typing import Any

from memorylib.notebook import exercises as ex
from memorylib.notebook.messages import WIDE, catalogue, columns, language, say

# The right letter of question 1, 2, ... of each notebook (instructors/quiz_answers.md).
KEY = {"00": "BBA", "01": "BAB", "02": "CBA", "03": "DAC", "04": "BCAB", "05": "CABB", "06": "BACA",
       "06b": "CAB", "06c": "BCA", "07": "CBA", "07b": "ACB", "08": "CAB", "09": "BCA",
       "10": "ACBC", "11": "BCA"}  # fmt: skip


def questions(notebook: str) -> dict[str, ex.Question]:
    """The notebook's questions by number ("1", "2", ...), with their choices, hints and why."""
    entries, found = catalogue(language(), "quiz"), {}
    for number, answer in enumerate(KEY[notebook], 1):
        key = f"n{notebook}.{number}"
        labels = [label for label in "ABCDE" if f"{key}.{label}" in entries]
        found[str(number)] = ex.Question(
            prompt=f"{number}. " + say(f"quiz.n{notebook}.{number}"),
            choices=tuple(entries[f"{key}.{label}"] for label in labels),
            accepted=(answer,),
            hints={label: entries[f"{key}.hint.{label}"] for label in labels if label != answer},
            why=entries[f"{key}.why"],
        )
    return found


class Quiz(str):
    """The questions as a cell shows them: plain text, each line wrapped under its indent."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text/plain
        printer.text(str(self))


WIDTH = 92  # columns
# a word, or one wide character with the closing punctuation that must not start a line
TOKEN = re.compile(rf"\s+|[{WIDE}][，。：；！？、）」』”]*|[^\s{WIDE}]+")


def fill(line: str, indent: str = "") -> str:
    """``line`` wrapped to ``WIDTH`` columns under ``indent``. textwrap counts characters and
    breaks only at spaces, so a line with Chinese is wrapped here, between any two characters."""
    if not re.search(f"[{WIDE}]", line):
        return textwrap.fill(line, WIDTH, subsequent_indent=indent)
    rows, row = [], line[: len(line) - len(line.lstrip())]
    for token in TOKEN.findall(line.lstrip()):
        if token.isspace():
            row += " "
        elif columns(row + token) > WIDTH and row.strip():
            rows.append(row.rstrip())
            row = indent + token
        else:
            row += token
    return "\n".join([*rows, row.rstrip()])


def quiz(notebook: str) -> Quiz:
    lines = [line for q in questions(notebook).values() for line in ["", *str(q).splitlines()]]
    indent = lambda line: " " * (len(line) - len(line.lstrip()) + 3)  # noqa: E731
    wrapped = [fill(line, indent(line)) for line in lines]
    return Quiz("\n".join([fill(say("quiz.intro")), *wrapped]))


def check_quiz(notebook: str, answers: object) -> ex.CheckResult:
    """⏳ until every question has a letter, then ❌ with a hint per wrong one, or ✅ and why."""
    asked = questions(notebook)

    def judge(given: object) -> ex.CheckResult:
        chosen = ex.expect_labels(given, asked, say("quiz.described"))
        hints = {number: q.check(chosen[number]).message for number, q in asked.items()}
        same = lambda letter, q: q.check(letter).is_right  # noqa: E731
        if (wrong := ex.grade_labels(asked, chosen, hints, same=same)) is not None:
            return wrong
        whys = tuple(say("quiz.why", number=n, why=q.why) for n, q in asked.items())
        return ex.CheckResult(ex.Verdict.RIGHT, say("quiz.right", total=len(asked)), whys)

    return ex.check_value(answers, judge, placeholder=say("quiz.placeholder"))
