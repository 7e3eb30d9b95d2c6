"""The course in reading order, and the navigation line each notebook carries (the tests'
one source for both: no notebook imports them)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memorylib.notebook import messages
from memorylib.notebook.messages import say


@dataclass(frozen=True)
class CourseNotebook:
    """A notebook: its file name without ``.ipynb``; its label is in the catalogue."""

    stem: str

    @property
    def label(self) -> str:
        """Its ``# NN · Title`` heading up to the colon ("Index" for the index)."""
        return say(f"common.course.{self.stem}")

    @property
    def file(self) -> str:
        return f"{self.stem}.ipynb"


# The course in reading order: a new notebook goes here (and its label into the catalogue),
# and its neighbours' navigation lines become ``navigation_line(...)`` (tests check both).
_ORDER = (
    "00_index 01_stored_records 02_normalize 03_candidates 04_scoring 05_stable_rank 06_render "
    "06b_profile 06c_capstone 07_failures_and_recovery 07b_retraction 08_query_playground "
    "09_live_agent 10_beyond_the_teaching_ranker 11_from_file_to_service"
)
COURSE: tuple[CourseNotebook, ...] = tuple(map(CourseNotebook, _ORDER.split()))


def course_notebook(stem: str) -> CourseNotebook:
    """The ``COURSE`` entry of ``stem``."""
    if CourseNotebook(stem) not in COURSE:
        raise ValueError(say("common.not_in_course", stem=stem, stems=[n.stem for n in COURSE]))
    return CourseNotebook(stem)


def navigation_line(stem: str) -> str:
    """``← [previous](prev.ipynb) · [Index](00_index.ipynb) · [next](next.ipynb) →``."""
    position = COURSE.index(course_notebook(stem))
    index, parts = COURSE[0], []
    if position > 0:
        previous = COURSE[position - 1]
        parts.append(f"← [{previous.label}]({previous.file})")
    if position != 1:
        parts.append(index.label if position == 0 else f"[{index.label}]({index.file})")
    if position < len(COURSE) - 1:
        following = COURSE[position + 1]
        parts.append(f"[{following.label}]({following.file}) →")
    return " · ".join(parts)


@contextmanager
def in_language(language: str) -> Iterator[None]:
    """The catalogue of ``language`` inside the block (an edition's labels), then the old one."""
    before = messages.language()
    messages.set_language(language)
    try:
        yield
    finally:
        messages.set_language(before)
