"""Read and check the slide structure of the course notebooks (``metadata.slideshow``).

    .venv/bin/python scripts/slide_metadata.py                 # every notebook: one line each
    .venv/bin/python scripts/slide_metadata.py 08 --cells      # one notebook, cell by cell
    .venv/bin/python scripts/slide_metadata.py --check         # exit 1 if a rule is broken
    .venv/bin/python scripts/slide_metadata.py 08 --save-spec  # the slide types -> a spec
    .venv/bin/python scripts/slide_metadata.py 08 --apply      # a spec -> the notebook

A spec (``scripts/slide_specs/<stem>.json``) is the hand-chosen slide structure of one
notebook, kept beside the code so it survives prose edits on other branches::

    {"notebook": "08_query_playground", "default": "-",
     "slide_types": {"388868ff": "slide", "b76af5f8": "skip", ...}}

Keys are cell ids (``--cells`` lists them); a cell the spec does not name gets
``default``. ``--apply`` never overwrites a choice silently: when a cell already carries
a different slide_type it changes nothing and lists every such cell (``--force`` to
replace them); an id the notebook no longer has is an error (the spec is stale). Only
``metadata.slideshow`` changes: sources, outputs and the rest of the file stay as they are.

A cell's ``metadata.slideshow.slide_type`` is one of ``slide`` (a new horizontal slide),
``subslide`` (a new vertical slide under the current one), ``fragment`` (appears on the
current slide at the next key press), ``skip`` (not shown), ``notes`` (speaker notes) or
``-`` (continues the current slide); a cell without it counts as ``-``. RISE and
nbconvert's reveal exporter read the same field. Set it in JupyterLab with the property
inspector (gear icon, "Slide Type") or RISE's shortcuts (Shift-I slide, Shift-B subslide,
Shift-G fragment), never by editing sources.

Rules for a notebook that has been given slide metadata (any cell has a slide_type):

1. the first cell is a ``slide``;
2. every pure-plumbing code cell is ``skip``: a cell whose statements are only imports,
   or the set-up cell that calls ``common.setup_notebook()`` (AUTHORING.md, step 2);
3. no slide of two or more cells (a ``slide`` or ``subslide`` with the ``-`` and
   ``fragment`` cells under it) is estimated at more than ``LINE_BUDGET`` lines of source
   plus output (a single cell cannot be split by metadata: ``tall_single_cells`` lists
   those as notes);
4. a cell with a live widget output starts its own slide or subslide (one output
   cannot be split, so it must not share a slide it would push off the screen).

The line estimate (rule 3) is a heuristic calibrated on notebook 08 in RISE at
1280x720 (tests/test_slides_browser.py measures the real heights and is the authority):
one unit is about one line of body text; measured slides came to 17-23 px a unit, so the
budget of 32 units is about 550-740 px against the 720 px screen. Markdown paragraphs
reflow at ``MARKDOWN_WIDTH`` characters, code and text output wrap at ``CODE_WIDTH``;
headings count extra; a table row counts ``TABLE_ROW`` units plus ``TABLE_COLUMN`` per
column past three (wide tables wrap their cells); a PNG counts its height over
``LINE_PX``. A widget output counts as its text fallback: its live height cannot be
budgeted from the file (tests/test_slides_browser.py measures it where it renders).

Notebooks without any slide metadata are not checked; ``provisional_types`` gives the
exporter (scripts/export_slides.py) a stand-in structure for them: a new slide at every
markdown cell with a ``#``/``##`` heading, the set-up cell skipped, a widget on its own
subslide, and a new subslide before a cell that would push a slide past the budget.
"""

from __future__ import annotations

import argparse
import ast
import base64
import json
import math
import re
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SPECS = ROOT / "scripts" / "slide_specs"

SLIDE_TYPES = ("slide", "subslide", "fragment", "skip", "notes", "-")
HIDDEN = ("skip", "notes")
LINE_BUDGET = 32
LINE_PX = 21
MARKDOWN_WIDTH = 150
CODE_WIDTH = 140
TABLE_ROW = 1.25
TABLE_COLUMN = 0.15
HEADING_LINES = {1: 3.0, 2: 2.2, 3: 1.6}
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SETUP_CALL = "setup_notebook"


@dataclass
class Slide:
    """One slide as a presenter sees it: horizontal index ``h``, vertical index ``v``."""

    h: int
    v: int
    cells: list[int] = field(default_factory=list)
    lines: float = 0.0
    fragments: int = 0

    @property
    def label(self) -> str:
        return f"{self.h}.{self.v}"


def slide_type(cell) -> str:
    value = cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
    return value or "-"


def has_slide_metadata(nb) -> bool:
    return any("slide_type" in c.get("metadata", {}).get("slideshow", {}) for c in nb.cells)


def read(path: Path):
    return nbformat.read(path, as_version=4)


# --- plumbing -------------------------------------------------------------------------


def _statements(source: str) -> list[ast.stmt] | None:
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines)).body
    except SyntaxError:
        return None


def _calls_setup(statement: ast.stmt) -> bool:
    return any(
        isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == SETUP_CALL)
            or (isinstance(node.func, ast.Name) and node.func.id == SETUP_CALL)
        )
        for node in ast.walk(statement)
    )


def is_plumbing(cell) -> bool:
    """Imports only, or the set-up cell (imports plus ``common.setup_notebook()``)."""
    if cell.cell_type != "code":
        return False
    body = _statements(cell.source)
    if not body:
        return False
    imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    if len(imports) == len(body):
        return True
    return bool(imports) and any(_calls_setup(s) for s in body)


# --- line estimate --------------------------------------------------------------------


def _wrapped(text: str, width: int) -> float:
    return float(sum(max(1, math.ceil(len(line) / width)) for line in text.splitlines()))


NOTES = re.compile(r'<aside class="notes">.*?</aside>', re.DOTALL)


def on_slide(source: str) -> str:
    """A markdown cell's text as its slide shows it: speaker notes (``<aside
    class="notes">`` blocks, which reveal.js hides) left out."""
    return NOTES.sub("", source)


def markdown_lines(source: str) -> float:
    """Rendered lines on a slide: paragraphs reflow to ``MARKDOWN_WIDTH``, blocks count as
    they are, speaker notes count nothing."""
    total = 0.0
    paragraph = ""
    in_fence = False

    def flush() -> float:
        return max(1, math.ceil(len(paragraph) / MARKDOWN_WIDTH)) if paragraph else 0

    for line in on_slide(source).splitlines():
        stripped = line.strip()
        starts_block = (
            not stripped
            or stripped.startswith(("```", "|", "#", ">"))
            or re.match(r"([-*+]|\d+\.)\s", stripped)
        )
        if in_fence or starts_block:
            total += flush()
            paragraph = ""
        if stripped.startswith("```"):
            in_fence = not in_fence
            total += 0.5
        elif in_fence:
            total += 1
        elif not stripped:
            total += 0.5
        elif match := re.match(r"(#{1,6})\s", stripped):
            total += HEADING_LINES.get(len(match.group(1)), 1.3)
        elif stripped.startswith("|"):
            total += 0 if set(stripped) <= set("|-: ") else TABLE_ROW
        else:
            paragraph = f"{paragraph} {stripped}" if paragraph else stripped
    return total + flush()


def _png_height(data: str) -> int:
    raw = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        return 300
    _width, height = struct.unpack(">II", raw[16:24])
    return height


def output_lines(output) -> float:
    if output.get("output_type") == "stream":
        return _wrapped(output.get("text", ""), CODE_WIDTH)
    if output.get("output_type") == "error":
        return _wrapped("\n".join(output.get("traceback", [])), CODE_WIDTH)
    data = output.get("data", {})
    if WIDGET_MIME in data:
        return _wrapped(data.get("text/plain", ""), CODE_WIDTH)
    if "image/png" in data:
        return _png_height(data["image/png"]) / LINE_PX
    if "text/html" in data:
        html = data["text/html"]
        rows = re.findall(r"<tr[\s>].*?</tr>", html, re.S)
        if not rows:
            return max(1.0, html.count("<br") + html.count("<p"))
        columns = max(len(re.findall(r"<t[hd][\s>]", row)) for row in rows)
        return len(rows) * (TABLE_ROW + TABLE_COLUMN * max(0, columns - 3)) + 1
    if "text/plain" in data:
        return _wrapped(data["text/plain"], CODE_WIDTH)
    return 1.0


def cell_lines(cell) -> float:
    if cell.cell_type == "markdown":
        return markdown_lines(cell.source)
    if cell.cell_type != "code":
        return _wrapped(cell.source, CODE_WIDTH)
    total = len(cell.source.splitlines()) + 1.0  # + the editor's padding
    return total + sum(output_lines(o) for o in cell.get("outputs", []))


# --- structure ------------------------------------------------------------------------


def slides(nb, types: Sequence[str] | None = None) -> list[Slide]:
    """The slides in order; ``types`` overrides the cells' own slide types."""
    kinds = list(types) if types is not None else [slide_type(c) for c in nb.cells]
    result: list[Slide] = []
    for index, (cell, kind) in enumerate(zip(nb.cells, kinds, strict=True)):
        if kind in HIDDEN:
            continue
        if not result or kind == "slide":
            result.append(Slide(h=result[-1].h + 1 if result else 0, v=0))
        elif kind == "subslide":
            result.append(Slide(h=result[-1].h, v=result[-1].v + 1))
        current = result[-1]
        current.cells.append(index)
        current.lines += cell_lines(cell)
        current.fragments += kind == "fragment"
    return result


def shape(slide_list: Sequence[Slide]) -> list[int]:
    """Subslides per horizontal slide, as reveal.js nests them: ``[1, 1, 4, ...]``."""
    counts: dict[int, int] = {}
    for s in slide_list:
        counts[s.h] = counts.get(s.h, 0) + 1
    return [counts[h] for h in sorted(counts)]


def widget_cells(nb) -> list[int]:
    return [
        i
        for i, c in enumerate(nb.cells)
        if any(WIDGET_MIME in o.get("data", {}) for o in c.get("outputs", []))
    ]


def check(nb, budget: float = LINE_BUDGET) -> list[str]:
    """The broken rules (module docstring), as messages; empty when the notebook is fine."""
    if not has_slide_metadata(nb):
        return []
    problems = []
    kinds = [slide_type(c) for c in nb.cells]
    for index, kind in enumerate(kinds):
        if kind not in SLIDE_TYPES:
            problems.append(f"cell {index}: unknown slide_type {kind!r}")
    if kinds and kinds[0] != "slide":
        problems.append(f"cell 0: the first cell must be a 'slide', not {kinds[0]!r}")
    for index, cell in enumerate(nb.cells):
        if is_plumbing(cell) and kinds[index] != "skip":
            problems.append(f"cell {index}: plumbing (imports/set-up) must be 'skip'")
    for index in widget_cells(nb):
        if kinds[index] not in ("slide", "subslide"):
            problems.append(f"cell {index}: a live widget must start its own slide or subslide")
    for s in slides(nb):
        if s.lines > budget and len(s.cells) > 1:
            problems.append(
                f"slide {s.label} (cells {s.cells[0]}-{s.cells[-1]}): about {s.lines:.0f} "
                f"lines > {budget}: split it with a 'subslide'"
            )
    return problems


def tall_single_cells(nb, budget: float = LINE_BUDGET) -> list[str]:
    """Slides that are one cell estimated past ``budget``: metadata cannot split them.

    Not a broken rule (the estimate is pessimistic for tables and JSON; the browser test
    measures), but listed by the command line so a presenter knows where a slide may
    scroll, and the cell can be shortened or skipped on slides.
    """
    return [
        f"slide {s.label} is one cell (cell {s.cells[0]}) of about {s.lines:.0f} lines"
        for s in slides(nb)
        if s.lines > budget and len(s.cells) == 1
    ]


def provisional_types(nb, budget: float = LINE_BUDGET) -> list[str]:
    """A stand-in structure for a notebook without slide metadata (exports only).

    A new slide at every markdown cell with a ``#``/``##`` heading, the set-up cell
    skipped, a live widget on a subslide of its own, and a new subslide whenever the
    next cell would push the current one past ``budget`` lines.
    """
    widgets = set(widget_cells(nb))
    kinds: list[str] = []
    running = 0.0
    for index, cell in enumerate(nb.cells):
        lines = cell_lines(cell)
        heading = cell.cell_type == "markdown" and re.search(r"(?m)^#{1,2}\s", cell.source)
        if index == 0 or heading:
            kind = "slide"
        elif is_plumbing(cell):
            kind = "skip"
        elif index in widgets or (running and running + lines > budget):
            kind = "subslide"
        else:
            kind = "-"
        if kind in ("slide", "subslide"):
            running = lines
        elif kind != "skip":
            running += lines
        kinds.append(kind)
    return kinds


# --- specs ----------------------------------------------------------------------------


class SpecError(ValueError):
    """A spec that cannot be applied as it is (stale ids, conflicts, unknown types)."""


def spec_path(stem: str) -> Path:
    return SPECS / f"{stem}.json"


def save_spec(path: Path) -> Path:
    """Write the notebook's current slide types as its spec (cells with ``-`` left out)."""
    nb = read(path)
    if not has_slide_metadata(nb):
        raise SpecError(f"{path.name} has no slide metadata to save")
    spec = {
        "notebook": path.stem,
        "default": "-",
        "slide_types": {c.id: slide_type(c) for c in nb.cells if slide_type(c) != "-"},
    }
    target = spec_path(path.stem)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return target


def planned_types(nb, spec: dict) -> list[str]:
    """The slide type the spec gives each cell; SpecError for unknown ids or types."""
    chosen = spec.get("slide_types", {})
    default = spec.get("default", "-")
    ids = {c.id for c in nb.cells}
    stale = sorted(set(chosen) - ids)
    if stale:
        raise SpecError(f"the spec names cells the notebook does not have: {stale}")
    bad = sorted({t for t in [*chosen.values(), default] if t not in SLIDE_TYPES})
    if bad:
        raise SpecError(f"unknown slide types {bad}; use one of {SLIDE_TYPES}")
    return [chosen.get(c.id, default) for c in nb.cells]


def apply_spec(path: Path, spec: dict, *, force: bool = False) -> list[str]:
    """Set every cell's slide type from ``spec``; return the changes made.

    A cell that already has a slide_type other than the planned one is a conflict: without
    ``force`` nothing is written and SpecError lists every conflict.
    """
    nb = read(path)
    planned = planned_types(nb, spec)
    conflicts, changes = [], []
    for index, (cell, kind) in enumerate(zip(nb.cells, planned, strict=True)):
        current = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
        if current == kind:
            continue
        if current is not None:
            conflicts.append(f"cell {index} ({cell.id}): {current!r} -> {kind!r}")
        changes.append(f"cell {index} ({cell.id}): {current or 'none'} -> {kind}")
    if conflicts and not force:
        raise SpecError(
            f"{path.name}: {len(conflicts)} cell(s) already have another slide type "
            "(nothing written; --force replaces them):\n  " + "\n  ".join(conflicts)
        )
    if changes:
        for cell, kind in zip(nb.cells, planned, strict=True):
            cell.metadata.setdefault("slideshow", {})["slide_type"] = kind
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return changes


# --- command line ---------------------------------------------------------------------


def notebook_paths(prefixes: Sequence[str] = (), *, chinese: bool = False) -> list[Path]:
    """The English notebooks (``07b_retraction`` too), then, with ``chinese``, their twins in
    ``notebooks/zh/``; a prefix matches the path under ``notebooks/`` (``08``, ``zh/08``)."""
    pattern = "[0-9][0-9]*_*.ipynb"
    paths = sorted(NOTEBOOKS.glob(pattern))
    if chinese:
        paths += sorted((NOTEBOOKS / "zh").glob(pattern))
    if prefixes:
        paths = [p for p in paths if any(shown(p).startswith(x) for x in prefixes)]
    return paths


def shown(path: Path) -> str:
    """A notebook, or a file named after it (a deck): ``08_query_playground``, or for the
    Chinese edition (a ``zh/`` folder) ``zh/08_query_playground``."""
    return f"zh/{path.stem}" if path.parent.name == "zh" else path.stem


def describe(path: Path, *, cells: bool) -> list[str]:
    nb = read(path)
    if not has_slide_metadata(nb):
        return [f"{path.name:40s} no slide metadata (export uses a provisional structure)"]
    found = slides(nb)
    tallest = max(found, key=lambda s: s.lines)
    lines = [
        f"{path.name:40s} {len(found):3d} slides, shape {shape(found)}, "
        f"tallest {tallest.label} ~{tallest.lines:.0f} lines (budget {LINE_BUDGET})"
    ]
    if cells:
        where = {i: s.label for s in found for i in s.cells}
        for index, cell in enumerate(nb.cells):
            first = (cell.source.splitlines() or [""])[0][:60]
            lines.append(
                f"  {index:3d} {cell.id:>10s} {cell.cell_type:8s} {slide_type(cell):8s} "
                f"{where.get(index, '-'):>5s} {cell_lines(cell):5.1f}  {first}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", help="notebook name prefixes, e.g. 08")
    parser.add_argument("--cells", action="store_true", help="list every cell")
    parser.add_argument("--check", action="store_true", help="exit 1 when a rule is broken")
    parser.add_argument("--save-spec", action="store_true", help="write scripts/slide_specs/")
    parser.add_argument("--apply", action="store_true", help="set slide types from the spec")
    parser.add_argument("--force", action="store_true", help="with --apply: replace choices")
    args = parser.parse_args(argv)
    paths = notebook_paths(args.prefixes)
    if not paths:
        print("no notebook matched", file=sys.stderr)
        return 1
    if args.save_spec or args.apply:
        try:
            for path in paths:
                if args.save_spec:
                    print(f"{path.name}: wrote {save_spec(path).relative_to(ROOT)}")
                elif spec_path(path.stem).exists():
                    spec = json.loads(spec_path(path.stem).read_text(encoding="utf-8"))
                    changes = apply_spec(path, spec, force=args.force)
                    print(f"{path.name}: {len(changes)} cell(s) changed")
                    print("".join(f"  {c}\n" for c in changes), end="")
                else:
                    print(f"{path.name}: no spec at {spec_path(path.stem).relative_to(ROOT)}")
        except SpecError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    failed = False
    for path in paths:
        print("\n".join(describe(path, cells=args.cells)))
        for problem in check(read(path)):
            failed = True
            print(f"  ! {problem}")
        for note in tall_single_cells(read(path)):
            print(f"  ~ {note}")
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
