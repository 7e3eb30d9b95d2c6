"""Shared set-up for every course notebook: one style, one clock, stable output.

``setup_notebook()`` is the first code cell of each notebook. It fixes what would
otherwise make committed outputs differ from run to run or machine to machine:
matplotlib style, size and dpi (inline PNG only), pandas display precision, and
Styler ids (``style_frame`` gives each styled table a fixed id; ``styled_table`` also
gives it a readable text form).

Also here, because more than one view module needs them (a view module never imports
another one): the course clocks, chart fonts (``chart_fonts`` / ``with_chart_fonts``),
a figure as PNG bytes for an ipywidgets ``Image`` (``figure_png``), the pipeline
banner, a candidate set as a plain tuple (``candidate_pool``), a call's typed outcome as
data (``typed_attempt``), the temporary ``Workspace`` every notebook's stores live in, and
the course's order with its one navigation line (``COURSE``, ``navigation_line``).
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import font_manager
from matplotlib.figure import Figure

from memorylib.candidates import CandidateSet
from memorylib.datasets import COURSE_AS_OF
from memorylib.errors import RemoteMemoryError
from memorylib.records import RecallCandidate

__all__ = [
    "CHART_FONTS",
    "COURSE",
    "COURSE_AS_OF",
    "NO_ERROR",
    "PIPELINE",
    "CourseNotebook",
    "StyledTable",
    "Workspace",
    "candidate_pool",
    "chart_fonts",
    "course_notebook",
    "error_name",
    "figure_png",
    "navigation_line",
    "pipeline_banner",
    "setup_notebook",
    "style_frame",
    "styled_table",
    "typed_attempt",
    "with_chart_fonts",
]

P = ParamSpec("P")
R = TypeVar("R")

# The two clocks of the course, never ``now()``: the teaching store is read at
# ``memorylib.TEACHING_AS_OF`` (conversation-003 is one day old), the course corpus at
# COURSE_AS_OF.
PIPELINE = ("normalize", "candidate", "score", "stable rank", "render")


# The chart fonts, in order of preference: matplotlib draws each character with the first
# installed family that has it. DejaVu Sans ships with matplotlib; a CJK family goes here
# (before it) for charts that must draw Chinese.
CHART_FONTS: tuple[str, ...] = ("DejaVu Sans",)


def setup_notebook(*, fonts: Sequence[str] = CHART_FONTS) -> None:
    """Inline PNG figures in the course's one chart style (size, dpi, ``fonts``: the font
    family list every chart uses); pandas shows 6 decimals (the contract's rounding)."""
    os.environ.pop("MPLBACKEND", None)
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # plain Python: nothing to configure for display
        shell = None
    if shell is not None:
        shell.run_line_magic("matplotlib", "inline")
        shell.run_line_magic("config", "InlineBackend.figure_formats = ['png']")
    plt.style.use("default")
    matplotlib.rcParams.update(
        {
            "figure.figsize": (7.0, 3.6),
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "svg.hashsalt": "memorylib",
            "font.family": list(fonts),
        }
    )
    pd.set_option("display.precision", 6)
    pd.set_option("display.max_colwidth", 80)
    pd.set_option("display.width", 120)


def pipeline_banner(stage: str) -> str:
    """Markdown-free text showing where ``stage`` sits: normalize -> ... with it in [brackets]."""
    if stage not in PIPELINE:
        raise ValueError(f"stage must be one of {PIPELINE}, got {stage!r}")
    return " -> ".join(f"[{s}]" if s == stage else s for s in PIPELINE)


def style_frame(frame: Any, uuid: str, *, precision: int = 6, gradient: str | None = None) -> Any:
    """A pandas Styler with a FIXED id (a random one would change every run).

    ``gradient`` names a numeric column to shade, to draw the eye to a score.
    """
    # escape="html": stored text is data, never markup (a memory may contain "<hit>").
    styler = frame.style.set_uuid(uuid).format(precision=precision, escape="html")
    if gradient is not None and gradient in frame.columns and len(frame):
        styler = styler.bar(subset=[gradient], color="#9ecae1", vmin=0)
    return styler.hide(axis="index")


class StyledTable:
    """A styled table with two renderings: the Styler's HTML, and the frame as text.

    A bare ``Styler`` as a cell's value stores ``<pandas.io.formats.style.Styler at
    0x...>`` as its ``text/plain``: useless where HTML is not shown (a terminal, a diff,
    nbval) and different on every run. Wrapped, the cell stores the same ``text/html``
    and, as ``text/plain``, the underlying frame (index shown only if the Styler shows it).
    """

    def __init__(self, styler: Any) -> None:
        self.styler = styler

    @property
    def data(self) -> pd.DataFrame:
        """The frame behind the Styler."""
        return self.styler.data

    @property
    def text(self) -> str:
        show_index = not all(getattr(self.styler, "hide_index_", [False]))
        return self.styler.data.to_string(
            index=show_index,
            max_colwidth=pd.get_option("display.max_colwidth"),
            line_width=pd.get_option("display.width"),
        )

    def _repr_html_(self) -> str:
        return self.styler.to_html()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text/plain
        printer.text(self.text)

    def __repr__(self) -> str:
        return self.text


def styled_table(
    frame: Any, uuid: str, *, precision: int = 6, gradient: str | None = None
) -> StyledTable:
    """``style_frame(...)`` with a readable text fallback: what a notebook cell should show.

    Same arguments as ``style_frame``; the HTML is identical. To wrap a Styler built
    some other way, use ``StyledTable(styler)`` (give the Styler a fixed uuid first).
    """
    return StyledTable(style_frame(frame, uuid, precision=precision, gradient=gradient))


NO_ERROR = "no error"


def typed_attempt(action: Callable[[], object]) -> tuple[str, str]:
    """Run ``action``: (error type name, message), or ("no error", str(result)).

    Only memorylib's typed errors are caught (they are the rejections a course shows);
    anything else is a bug and propagates.
    """
    try:
        value = action()
    except RemoteMemoryError as exc:
        return type(exc).__name__, str(exc)
    return NO_ERROR, str(value)


def error_name(value: object, *, no_error: tuple[str, ...] = ()) -> object:
    """A predicted outcome as the checkers compare it: an exception class as its name, a
    string stripped, and None for "no error" ("", "none", "no error", any case, or one of
    ``no_error``); anything else unchanged."""
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, str):
        text = value.strip()
        return None if text.lower() in ("", "none", NO_ERROR, *no_error) else text
    return value


def candidate_pool(
    candidates: CandidateSet | Iterable[RecallCandidate],
) -> tuple[RecallCandidate, ...]:
    """The candidates of a ``CandidateSet`` (stage 2's result) or of any iterable, as a tuple."""
    if isinstance(candidates, CandidateSet):
        return candidates.candidates
    return tuple(candidates)


# -- charts ---------------------------------------------------------------------------------


@contextmanager
def chart_fonts() -> Iterator[None]:
    """Create a figure with only the installed fonts of ``rcParams["font.family"]``.

    When a configured family is not installed, matplotlib logs "findfont: Font family
    ... not found" for every text it draws, and those lines land in the notebook's
    output (and in nbval's comparison). Texts keep the family they were created with,
    so creating a figure inside this context is enough.
    """
    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    families = [
        family
        for family in matplotlib.rcParams["font.family"]
        if family in installed or family in font_manager.font_family_aliases
    ]
    with matplotlib.rc_context({"font.family": families or ["sans-serif"]}):
        yield


def with_chart_fonts(draw: Callable[P, R]) -> Callable[P, R]:
    """Decorator: run a chart function inside ``chart_fonts()``."""

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with chart_fonts():
            return draw(*args, **kwargs)

    return wrapper


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, then closed (for an ipywidgets ``Image``)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


# -- where a notebook's stores live -----------------------------------------------------------


class Workspace:
    """A temporary directory for a notebook's stores, removed when the kernel exits.

    Paths inside it are shown relative (``ws.show(path)``) so no absolute or
    run-specific path reaches a committed output.
    """

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="memorylib-course-")
        self.root = Path(self._tmp.name)
        self._finalizer = weakref.finalize(self, self._tmp.cleanup)

    def path(self, name: str) -> Path:
        return self.root / name

    def fresh_path(self, name: str) -> Path:
        """``name`` inside a new, empty folder of the workspace, at each call: a cell that
        makes its store on it starts from a clean file every time it is run."""
        return Path(tempfile.mkdtemp(prefix="run-", dir=self.root)) / name

    def show(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the workspace, as ``<workspace>/...``."""
        relative = Path(path).resolve().relative_to(self.root.resolve())
        return f"<workspace>/{relative.as_posix()}"

    def cleanup(self) -> None:
        self._finalizer()


# -- the course: its order, and the one navigation line ------------------------------------------


@dataclass(frozen=True)
class CourseNotebook:
    """One notebook of the course: its file name without ``.ipynb``, and its label.

    The label is the notebook's ``# NN · Title`` heading up to the colon (the index is
    labelled ``Index``), and is what links to the notebook say.
    """

    stem: str
    label: str

    @property
    def file(self) -> str:
        return f"{self.stem}.ipynb"


# The course in reading order. A new notebook is added here, and the navigation lines of
# its neighbours are updated to ``navigation_line(...)`` (tests check both).
COURSE: tuple[CourseNotebook, ...] = (
    CourseNotebook("00_index", "Index"),
    CourseNotebook("01_stored_records", "01 · Stored records"),
    CourseNotebook("02_normalize", "02 · Normalize"),
    CourseNotebook("03_candidates", "03 · Candidates"),
    CourseNotebook("04_scoring", "04 · Score"),
    CourseNotebook("05_stable_rank", "05 · Stable rank"),
    CourseNotebook("06_render", "06 · Render"),
    CourseNotebook("06b_profile", "06b · Profile"),
    CourseNotebook("06c_capstone", "06c · Capstone"),
    CourseNotebook("07_failures_and_recovery", "07 · Failures and recovery"),
    CourseNotebook("07b_retraction", "07b · Retraction"),
    CourseNotebook("08_query_playground", "08 · Query playground"),
    CourseNotebook("09_live_agent", "09 · Live agent"),
    CourseNotebook("10_beyond_the_teaching_ranker", "10 · Beyond the teaching ranker"),
    CourseNotebook("11_from_file_to_service", "11 · From file to service"),
)


def course_notebook(stem: str) -> CourseNotebook:
    """The ``COURSE`` entry of ``stem`` (a notebook file name without ``.ipynb``)."""
    for notebook in COURSE:
        if notebook.stem == stem:
            return notebook
    raise ValueError(f"{stem!r} is not in COURSE: {[n.stem for n in COURSE]}")


def navigation_line(stem: str) -> str:
    """The one navigation line of a notebook: the line under its title and its last line.

    ``← [previous](prev.ipynb) · [Index](00_index.ipynb) · [next](next.ipynb) →``, with
    relative links labelled ``NN · Title``. The index has no previous part and shows
    ``Index`` without a link (it is the index); the notebook after it links the index once,
    as its previous part; the last notebook has no next part.
    """
    position = COURSE.index(course_notebook(stem))
    parts = []
    if position > 0:
        previous = COURSE[position - 1]
        parts.append(f"← [{previous.label}]({previous.file})")
    if position != 1:
        parts.append("Index" if position == 0 else f"[Index]({COURSE[0].file})")
    if position < len(COURSE) - 1:
        following = COURSE[position + 1]
        parts.append(f"[{following.label}]({following.file}) →")
    return " · ".join(parts)
