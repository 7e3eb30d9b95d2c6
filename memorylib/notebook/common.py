"""What every course notebook shares: one set-up, one chart style, stable output.

``setup_notebook()`` is each notebook's first code cell: inline PNG charts in one style,
pandas showing 6 decimals. Also here: styled tables with a fixed id and a text form
(``styled_table``), chart fonts (``chart_fonts``), a figure as PNG bytes (``figure_png``),
the pipeline banner, a call's typed outcome (``typed_attempt``), the temporary
``Workspace`` every store lives in, and the course's order with its one navigation line.
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import font_manager
from matplotlib.figure import Figure

from memorylib.errors import RemoteMemoryError

P = ParamSpec("P")
R = TypeVar("R")

PIPELINE = ("normalize", "candidate", "score", "stable rank", "render")
# Chart fonts, by preference: matplotlib draws each character with the first installed
# family that has it (DejaVu Sans ships with matplotlib; a CJK family would go first).
CHART_FONTS: tuple[str, ...] = ("DejaVu Sans",)
NO_ERROR = "no error"


def setup_notebook(*, fonts: Sequence[str] = CHART_FONTS) -> None:
    """Inline PNG figures in the course's one chart style (size, dpi, the ``fonts`` every
    chart uses); pandas shows 6 decimals (the contract's rounding)."""
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
    """normalize -> candidate -> ... with ``stage`` in [brackets]."""
    if stage not in PIPELINE:
        raise ValueError(f"stage must be one of {PIPELINE}, got {stage!r}")
    return " -> ".join(f"[{s}]" if s == stage else s for s in PIPELINE)


def style_frame(frame: Any, uuid: str, *, precision: int = 6, gradient: str | None = None) -> Any:
    """A Styler with a FIXED id (a random one changes every run), text escaped as HTML (a
    memory may hold "<hit>"), the index hidden; ``gradient`` shades a numeric column."""
    styler = frame.style.set_uuid(uuid).format(precision=precision, escape="html")
    if gradient is not None and gradient in frame.columns and len(frame):
        styler = styler.bar(subset=[gradient], color="#9ecae1", vmin=0)
    return styler.hide(axis="index")


class StyledTable:
    """A Styler's HTML, and its frame as ``text/plain`` (a bare Styler stores ``<pandas...
    Styler at 0x...>``: useless outside a browser, and different on every run)."""

    def __init__(self, styler: Any) -> None:
        self.styler = styler

    @property
    def data(self) -> pd.DataFrame:
        return self.styler.data

    @property
    def text(self) -> str:
        return self.styler.data.to_string(
            index=not all(getattr(self.styler, "hide_index_", [False])),
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
    """``style_frame(...)`` with a readable text form: what a notebook cell shows."""
    return StyledTable(style_frame(frame, uuid, precision=precision, gradient=gradient))


def typed_attempt(action: Callable[[], object]) -> tuple[str, str]:
    """(error type name, message) of memorylib's typed error, or ("no error", str(result));
    any other exception is a bug and propagates."""
    try:
        value = action()
    except RemoteMemoryError as exc:
        return type(exc).__name__, str(exc)
    return NO_ERROR, str(value)


def error_name(value: object, *, no_error: tuple[str, ...] = ()) -> object:
    """A predicted outcome as checkers compare it: an exception class as its name, a str
    stripped, None for "no error" ("", "none", "no error", any case, or one of
    ``no_error``); anything else unchanged."""
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, str):
        text = value.strip()
        return None if text.lower() in ("", "none", NO_ERROR, *no_error) else text
    return value


@contextmanager
def chart_fonts() -> Iterator[None]:
    """Draw with only the installed families of ``rcParams["font.family"]``: a missing one
    makes matplotlib log "findfont: ..." into the output for every text."""
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


class Workspace:
    """A temporary folder for a notebook's stores, removed when the kernel exits; paths in
    it are shown relative (``ws.show(path)``), so no machine's path reaches an output."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="memorylib-course-")
        self.root = Path(self._tmp.name)
        self._finalizer = weakref.finalize(self, self._tmp.cleanup)

    def path(self, name: str) -> Path:
        return self.root / name

    def fresh_path(self, name: str) -> Path:
        """``name`` in a new empty folder at each call (a cell re-run starts clean)."""
        return Path(tempfile.mkdtemp(prefix="run-", dir=self.root)) / name

    def show(self, path: str | os.PathLike[str]) -> str:
        relative = Path(path).resolve().relative_to(self.root.resolve())
        return f"<workspace>/{relative.as_posix()}"

    def cleanup(self) -> None:
        self._finalizer()


@dataclass(frozen=True)
class CourseNotebook:
    """A notebook: its file name without ``.ipynb``, and its label (its ``# NN · Title``
    heading up to the colon; the index is "Index")."""

    stem: str
    label: str

    @property
    def file(self) -> str:
        return f"{self.stem}.ipynb"


# The course in reading order: a new notebook goes here, and its neighbours' navigation
# lines become ``navigation_line(...)`` (tests check both).
COURSE: tuple[CourseNotebook, ...] = tuple(
    CourseNotebook(stem, label)
    for stem, label in (
        ("00_index", "Index"),
        ("01_stored_records", "01 · Stored records"),
        ("02_normalize", "02 · Normalize"),
        ("03_candidates", "03 · Candidates"),
        ("04_scoring", "04 · Score"),
        ("05_stable_rank", "05 · Stable rank"),
        ("06_render", "06 · Render"),
        ("06b_profile", "06b · Profile"),
        ("06c_capstone", "06c · Capstone"),
        ("07_failures_and_recovery", "07 · Failures and recovery"),
        ("07b_retraction", "07b · Retraction"),
        ("08_query_playground", "08 · Query playground"),
        ("09_live_agent", "09 · Live agent"),
        ("10_beyond_the_teaching_ranker", "10 · Beyond the teaching ranker"),
        ("11_from_file_to_service", "11 · From file to service"),
    )
)


def course_notebook(stem: str) -> CourseNotebook:
    """The ``COURSE`` entry of ``stem``."""
    for notebook in COURSE:
        if notebook.stem == stem:
            return notebook
    raise ValueError(f"{stem!r} is not in COURSE: {[n.stem for n in COURSE]}")


def navigation_line(stem: str) -> str:
    """``← [previous](prev.ipynb) · [Index](00_index.ipynb) · [next](next.ipynb) →``: the
    line under a notebook's title and its last line. The index has no previous part and
    shows "Index" unlinked; the notebook after it links the index once, as its previous
    part; the last notebook has no next part."""
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
