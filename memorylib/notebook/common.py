"""What every notebook shares: set-up, chart fonts, tables, outcomes, workspace."""

from __future__ import annotations

import io
import logging
import os
import tempfile
import weakref
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import font_manager
from matplotlib.figure import Figure

from memorylib.errors import RemoteMemoryError
from memorylib.notebook.messages import said, say, set_language

PIPELINE = ("normalize", "candidate", "score", "stable rank", "render")
# Chart fonts, by preference: matplotlib draws each character with the first installed
# family that has it, so Latin text is DejaVu Sans (it ships with matplotlib) and Chinese the
# first CJK family found: WenQuanYi Micro Hei is what scripts/ensure-fonts.sh installs; the
# others are what Debian's Noto package, macOS and Windows carry.
CHART_FONTS: tuple[str, ...] = (
    "DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei",
)  # fmt: skip
# Where those installers put the files: registered at set-up, so a font installed after
# matplotlib built its font cache is found without rebuilding the cache.
CJK_FONT_FILES: tuple[str, ...] = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
)
NO_ERROR = said("common.no_error")


def setup_notebook(*, fonts: Sequence[str] = CHART_FONTS, language: str | None = None) -> None:
    """Inline PNG charts in the course's one style; pandas shows 6 decimals (the contract's).
    ``language`` ("en", "zh") chooses the catalogue every helper's sentence comes from."""
    if language is not None:
        set_language(language)
    register_fonts()
    # a CJK font has no bold face: matplotlib logs each fallback to its regular weight into the
    # cell's output; a glyph missing from every family still warns (a warning, not this log)
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    os.environ.pop("MPLBACKEND", None)
    with suppress(ImportError, NotImplementedError):  # plain Python, or a test's bare shell
        from IPython import get_ipython

        if (shell := get_ipython()) is not None:
            shell.run_line_magic("matplotlib", "inline")
            shell.run_line_magic("config", "InlineBackend.figure_formats = ['png']")
    plt.style.use("default")
    matplotlib.rcParams.update(
        {
            "figure.figsize": (7.0, 3.6),
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "font.size": 12,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "svg.hashsalt": "memorylib",
            "font.family": chart_fonts(fonts),
        }
    )
    pd.set_option("display.precision", 6, "display.max_colwidth", 80, "display.width", 120)


def register_fonts(files: Sequence[str] = CJK_FONT_FILES) -> list[str]:
    """Add each installed font file matplotlib does not know yet; the families added."""
    known = {font.fname for font in font_manager.fontManager.ttflist}
    added = []
    for path in files:
        if Path(path).is_file() and path not in known:
            font_manager.fontManager.addfont(path)
            added.append(font_manager.FontProperties(fname=path).get_name())
    return added


def chart_fonts(fonts: Sequence[str] = CHART_FONTS) -> list[str]:
    """The families of ``fonts`` installed here, in order (matplotlib logs a warning for each
    family it cannot find, so the list names only installed ones)."""
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return [family for family in fonts if family in installed] or ["DejaVu Sans"]


def pipeline_banner(stage: str) -> str:
    """normalize -> candidate -> ... with ``stage`` in [brackets]."""
    if stage not in PIPELINE:
        raise ValueError(say("common.stage", stages=PIPELINE, stage=stage))
    return " -> ".join(f"[{s}]" if s == stage else s for s in PIPELINE)


class StyledTable:
    """A Styler's HTML, with its frame as ``text/plain`` (a bare Styler's is its address)."""

    def __init__(self, styler: Any) -> None:
        self.styler = styler
        self.data: pd.DataFrame = styler.data

    @property
    def text(self) -> str:
        return self.data.to_string(
            index=not all(getattr(self.styler, "hide_index_", [False])),
            max_colwidth=pd.get_option("display.max_colwidth"),
            line_width=pd.get_option("display.width"),
        )

    def _repr_html_(self) -> str:
        return self.styler.to_html()

    def __repr__(self) -> str:  # IPython's text/plain
        return self.text


def styled_table(
    frame: Any, uuid: str, *, precision: int = 6, gradient: str | None = None
) -> StyledTable:
    """A Styler with a FIXED id (a random one changes every run), HTML-escaped, index hidden,
    ``gradient`` a bar column; with a readable text form: what a notebook cell shows."""
    styler = frame.style.set_uuid(uuid).format(precision=precision, escape="html")
    if gradient is not None and gradient in frame.columns and len(frame):
        styler = styler.bar(subset=[gradient], color="#9ecae1", vmin=0)
    return StyledTable(styler.hide(axis="index"))


def typed_attempt(action: Callable[[], object]) -> tuple[str, str]:
    """(error type name, message) of memorylib's typed error, or (``NO_ERROR``, the result)."""
    try:
        return str(NO_ERROR), str(action())
    except RemoteMemoryError as exc:
        return type(exc).__name__, str(exc)


def error_name(value: object, *, no_error: tuple[str, ...] = ()) -> object:
    """A predicted outcome as compared: a class as its name, a str stripped, None for no error."""
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, str):
        text = value.strip()
        return None if text.lower() in ("", "none", str(NO_ERROR), *no_error) else text
    return value


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, then closed (for an ipywidgets ``Image``)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


class Workspace:
    """A notebook's temporary folder; ``show`` gives paths relative (no machine's path shown)."""

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
