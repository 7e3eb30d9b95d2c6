"""Lay a course notebook out as a projector deck (used by scripts/export_slides.py).

The notebook a student reads keeps its prose; the deck is built from an in-memory copy:

- speaker notes: every ``<aside class="notes">`` block of a markdown cell becomes a cell of
  its own with ``slide_type`` ``notes`` (nbconvert's reveal template turns it into real
  reveal.js notes, press S), and the visible rest stays a markdown cell, order kept. The
  reading page keeps every word (:func:`page_markdown` only drops the aside tags);
- every slide fits 1280x720 at the deck's sizes: a code cell too tall or too wordy for one
  slide is shown over consecutive subslides, its code in chunks cut at top-level
  statements (at nested ones, then lines, only when one statement is too big alone), then
  its outputs; long text outputs are cut at blank lines or lines, HTML tables by rows (the
  header repeated) and, when too wide, by column groups (the index repeated);
- every slide opens with a heading: one that does not gets a small (h3) heading made from
  the current section's heading and what the slide shows (``code 2/3``, ``output``);
- one figure per slide, scaled (up or down, aspect kept) into a ``FIGURE_BOX`` box;
- a title slide (the notebook's title, the agenda made from its numbered ``##`` sections,
  the first visible lead) and a closing slide (the recap cell's visible part, then the
  notebook's closing navigation).

Sizes are estimated in the deck's CSS pixels (scale 1 on a 1280x720 screen);
scripts/measure_slides.py measures the real layout in Chromium and is the authority.
"""

from __future__ import annotations

import ast
import base64
import copy
import itertools
import math
import re
import struct
import textwrap
from dataclasses import dataclass, field

import nbformat
from bs4 import BeautifulSoup, Tag

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTES_BLOCK = re.compile(r'<aside class="notes">(.*?)</aside>', re.S)
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
NUMBERED = re.compile(r"^\d+\.\s")
NUMBER_DOT = re.compile(r"^(\d+)\.")  # escaped in a bullet: not a nested ordered list
WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W]+")
NAV = re.compile(r"^\s*(?:←|Index\b).*(?:\.ipynb\)|→)|^\s*\[[^\]]+\]\(\d\d\w*[\w-]*\.ipynb\)")

# Budgets, in the deck's CSS px at scale 1 and in words as measure_slides counts them.
FIGURE_BOX = (1200, 560)
SLIDE_HEIGHT = 640  # of the 720 px canvas: room for reveal's centring and rounding
WORDS_MAX = 105  # measure_slides' limit is 120
WORDS_JOIN = 70  # units share a slide only while the slide stays at most this wordy
CHUNK_WORDS = 66  # a chunk of code or text (the injected heading adds about 8)
CHUNK_LINES = 18
TABLE_WORDS = 76
CODE_CHARS = 92  # a code line wraps past this many characters (20 px monospace)
TEXT_CHARS = 88  # a markdown line at 24 px
CODE_LINE_PX = 27
TEXT_LINE_PX = 38
ROW_PX = 40
CELL_GAP_PX = 18
HEADING_PX = {1: 96, 2: 78, 3: 62}
TABLE_WIDTH_PX = 1180
TABLE_CHAR_PX = 11.5


def words(text: str) -> int:
    return len(WORD.findall(text))


# --- speaker notes ----------------------------------------------------------------------


def split_notes(source: str) -> list[tuple[str, str]]:
    """A markdown cell's parts in order: ``("visible", md)`` and ``("notes", md)``, the
    notes being the inner markdown of each aside block; empty parts are left out."""
    parts: list[tuple[str, str]] = []
    position = 0
    for match in NOTES_BLOCK.finditer(source):
        parts.append(("visible", source[position : match.start()]))
        parts.append(("notes", match.group(1)))
        position = match.end()
    parts.append(("visible", source[position:]))
    return [(kind, text.strip()) for kind, text in parts if text.strip()]


def page_markdown(source: str) -> str:
    """A markdown cell as the reading page shows it: every word, the aside tags gone."""
    return NOTES_BLOCK.sub(lambda m: "\n\n" + m.group(1).strip() + "\n\n", source).strip()


def headings(source: str) -> list[tuple[int, str]]:
    found, fenced = [], False
    for line in source.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append((len(match.group(1)), match.group(2)))
    return found


# --- sizes ------------------------------------------------------------------------------


def rendered_markdown_text(source: str) -> str:
    text = re.sub(r"\]\([^)]*\)", "]", source)
    text = re.sub(r"<[^>]+>", " ", text)
    return text


def markdown_px(source: str) -> float:
    total, paragraph = 0.0, ""

    def flush() -> float:
        return TEXT_LINE_PX * math.ceil(len(paragraph) / TEXT_CHARS) + 16 if paragraph else 0

    for line in source.splitlines():
        stripped = line.strip()
        block = not stripped or re.match(r"([-*+]|\d+\.)\s|#|\||```|>", stripped)
        if block:
            total += flush()
            paragraph = ""
        if match := HEADING.match(stripped):
            total += HEADING_PX.get(len(match.group(1)), 56)
        elif stripped.startswith("|"):
            total += 0 if set(stripped) <= set("|-: ") else ROW_PX
        elif stripped.startswith("```"):
            total += 8
        elif block and stripped:
            paragraph = stripped
        elif stripped:
            paragraph = f"{paragraph} {stripped}" if paragraph else stripped
    return total + flush() + CELL_GAP_PX


def text_lines(text: str, chars: int = CODE_CHARS) -> int:
    return sum(max(1, math.ceil(len(line) / chars)) for line in text.splitlines() or [""])


def code_px(text: str) -> float:
    return CODE_LINE_PX * text_lines(text) + 24 + CELL_GAP_PX


def png_size(data: str) -> tuple[int, int]:
    raw = base64.b64decode(data.strip()[:64] + "=" * (-len(data.strip()[:64]) % 4))
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return struct.unpack(">II", raw[16:24])


def fitted(width: int, height: int, box: tuple[int, int] = FIGURE_BOX) -> tuple[int, int]:
    """A picture's size scaled (up or down, aspect kept) to fit ``box``."""
    scale = min(box[0] / width, box[1] / height)
    return round(width * scale), round(height * scale)


# --- units: what a slide can hold ---------------------------------------------------------


@dataclass
class Unit:
    kind: str  # markdown, code, output, figure
    cells: list  # notebook cells to show
    words: int
    px: float
    label: str = ""  # what an injected heading says the slide shows
    headed: bool = False  # opens with a heading of its own
    alone: bool = False  # must have a slide of its own (a figure, a chunk)
    after_text: bool = False  # alone, but may follow the markdown of its slide
    widget: bool = False  # a live widget's static state


def typed(cell, kind: str):
    cell.metadata["slideshow"] = {"slide_type": kind}
    return cell


def markdown_unit(text: str) -> Unit:
    cell = nbformat.v4.new_markdown_cell(text)
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return Unit(
        "markdown",
        [cell],
        words(rendered_markdown_text(text)),
        markdown_px(text),
        headed=bool(HEADING.match(first)),
    )


def code_cell(source: str, outputs: list, *, show_source: bool = True):
    cell = nbformat.v4.new_code_cell(source if show_source else "", outputs=outputs)
    if not show_source:
        cell.metadata["transient"] = {"remove_source": True}
    return cell


def statement_starts(source: str) -> list[list[int]]:
    """Line indices (0-based) where statements start, by depth: ``[top, nested, ...]``;
    a statement's decorators and the comment lines right above it belong to it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    by_depth: list[set[int]] = []

    def visit(body, depth: int) -> None:
        while len(by_depth) <= depth:
            by_depth.append(set())
        for node in body:
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            start -= 1
            while start > 0 and lines[start - 1].strip().startswith("#"):
                start -= 1
            by_depth[depth].add(start)
            for name in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.AST):
                    visit(inner, depth + 1)

    visit(tree.body, 0)
    return [sorted(s) for s in by_depth]


def pieces(lines: list[str], starts: list[list[int]], depth: int = 0) -> list[list[str]]:
    """``lines`` cut at statement starts of ``depth``; a piece still too big is cut at the
    next depth, then at blank lines, then line by line."""
    cuts = [i for i in (starts[depth] if depth < len(starts) else []) if 0 < i < len(lines)]
    if depth >= len(starts):
        cuts = [i for i in range(1, len(lines)) if not lines[i - 1].strip()] or list(
            range(1, len(lines))
        )
    bounds = [0, *cuts, len(lines)]
    result = []
    for a, b in itertools.pairwise(bounds):
        piece = lines[a:b]
        if too_big(piece) and len(piece) > 1:
            shifted = [[i - a for i in level if a < i < b] for level in starts]
            if depth + 1 < len(starts):
                result += pieces(piece, shifted, depth + 1)
            elif depth < len(starts):
                result += pieces(piece, [], 0) if shifted else single_lines(piece)
            else:
                result += single_lines(piece)
        elif too_big(piece):
            result += single_lines(piece)
        else:
            result.append(piece)
    return result


def single_lines(lines: list[str]) -> list[list[str]]:
    """One piece a line; a line too big even alone is wrapped at spaces into lines of
    ``CODE_CHARS`` (what the slide's wrapping would show anyway, cut where it wraps)."""
    result = []
    for line in lines:
        if too_big([line]):
            indent = line[: len(line) - len(line.lstrip())]
            parts = textwrap.wrap(
                line,
                CODE_CHARS,
                subsequent_indent=indent,
                break_on_hyphens=False,
                drop_whitespace=True,
            )
            result += [[part] for part in parts]
        else:
            result.append([line])
    return result


def too_big(lines: list[str]) -> bool:
    text = "\n".join(lines)
    return words(text) > CHUNK_WORDS or text_lines(text) > CHUNK_LINES


def grouped(parts: list[list[str]]) -> list[str]:
    """Consecutive pieces joined into chunks of about equal size, each within the chunk
    budget when its pieces allow it."""

    def size(text: str) -> tuple[int, int]:
        return words(text), text_lines(text)

    joined = ["\n".join(p) for p in parts]
    total_words = sum(size(t)[0] for t in joined)
    total_lines = sum(size(t)[1] for t in joined)
    count = max(1, math.ceil(total_words / CHUNK_WORDS), math.ceil(total_lines / CHUNK_LINES))
    soft_words = min(CHUNK_WORDS, math.ceil(total_words / count * 1.15))
    soft_lines = min(CHUNK_LINES, math.ceil(total_lines / count * 1.15))
    chunks: list[list[str]] = []
    for text in joined:
        if chunks:
            merged = "\n".join([*chunks[-1], text])
            w, n = size(merged)
            if w <= soft_words and n <= soft_lines:
                chunks[-1].append(text)
                continue
        chunks.append([text])
    return ["\n".join(c).strip("\n") for c in chunks if "\n".join(c).strip()]


def code_chunks(source: str) -> list[str]:
    source = source.strip("\n")
    lines = source.splitlines()
    if not too_big(lines):
        return [source]
    return grouped(pieces(lines, statement_starts(source)))


def text_chunks(text: str) -> list[str]:
    lines = text.rstrip("\n").splitlines()
    if not too_big(lines):
        return [text.rstrip("\n")]
    return grouped(pieces(lines, []))


# --- outputs ------------------------------------------------------------------------------


def merged_streams(outputs: list) -> list:
    result = []
    for output in outputs:
        last = result[-1] if result else None
        if (
            output.get("output_type") == "stream"
            and last is not None
            and last.get("output_type") == "stream"
            and last.get("name") == output.get("name")
        ):
            last["text"] = last["text"] + output["text"]
        else:
            result.append(copy.deepcopy(output))
    return result


def output_text(output) -> str | None:
    """A text output's text (None for pictures and HTML)."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    if any(k in data for k in ("text/html", "image/png", "image/svg+xml", WIDGET_MIME)):
        return None
    return data.get("text/plain")


def with_text(output, text: str):
    part = copy.deepcopy(output)
    if part.get("output_type") == "stream":
        part["text"] = text + "\n"
    else:
        part["data"] = {"text/plain": text}
    return part


def with_html(output, markup: str):
    part = copy.deepcopy(output)
    part["data"] = {"text/html": markup}
    part.pop("metadata", None)
    part["metadata"] = {}
    return part


def html_words(markup: str) -> int:
    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(["style", "script"]):
        tag.decompose()
    return words(soup.get_text(" "))


def table_px(table: Tag) -> float:
    rows = table.find_all("tr")
    px = 0.0
    widths = column_chars(table)
    for row in rows:
        tallest = 1
        for index, cell in enumerate(row.find_all(["td", "th"])):
            share = widths[index] if index < len(widths) else 10
            fit = max(1.0, TABLE_WIDTH_PX / TABLE_CHAR_PX * share / max(1, sum(widths)))
            tallest = max(tallest, math.ceil(len(cell.get_text(" ").strip()) / fit))
        px += ROW_PX + (tallest - 1) * 28
    return px + 24


def column_chars(table: Tag) -> list[int]:
    widths: list[int] = []
    for row in table.find_all("tr"):
        for index, cell in enumerate(row.find_all(["td", "th"])):
            longest = max((len(w) for w in cell.get_text(" ").split()), default=1)
            text = min(len(cell.get_text(" ").strip()), 28)
            if index >= len(widths):
                widths.append(0)
            widths[index] = max(widths[index], longest, text)
    return [w + 2 for w in widths]


def table_chunks(markup: str) -> list[str] | None:
    """A pandas table's HTML cut by rows (header repeated) and, when too wide, by column
    groups (the index column repeated); None when ``markup`` is not one simple table."""
    soup = BeautifulSoup(markup, "html.parser")
    tables = soup.find_all("table")
    if len(tables) != 1:
        return None
    table = tables[0]
    body = table.find("tbody") or table
    rows = body.find_all("tr", recursive=False)
    if not rows:
        return None
    spans = any(c.get("colspan") or c.get("rowspan") for c in table.find_all(["td", "th"]))
    groups = [None]
    widths = column_chars(table)
    if not spans and sum(widths) * TABLE_CHAR_PX > TABLE_WIDTH_PX and len(widths) > 2:
        index_cols = len(rows[0].find_all("th", recursive=False)) or 1
        groups, current, used = [], [], sum(widths[:index_cols])
        for col in range(index_cols, len(widths)):
            if current and (used + widths[col]) * TABLE_CHAR_PX > TABLE_WIDTH_PX:
                groups.append(list(range(index_cols)) + current)
                current, used = [], sum(widths[:index_cols])
            current.append(col)
            used += widths[col]
        groups.append(list(range(index_cols)) + current)
    chunks = []
    for columns in groups:
        row_words = []
        for row in rows:
            cells = row.find_all(["td", "th"], recursive=False)
            chosen = cells if columns is None else [cells[i] for i in columns if i < len(cells)]
            row_words.append(sum(words(c.get_text(" ")) for c in chosen))
        head_words = 0
        head = table.find("thead")
        if head is not None:
            for row in head.find_all("tr"):
                cells = row.find_all(["td", "th"], recursive=False)
                chosen = cells if columns is None else [cells[i] for i in columns if i < len(cells)]
                head_words += sum(words(c.get_text(" ")) for c in chosen)
        budget = max(1, TABLE_WORDS - head_words)
        total = sum(row_words)
        count = max(1, math.ceil(total / budget), math.ceil(table_px(table) / 470))
        per = math.ceil(len(rows) / count)
        for start in range(0, len(rows), per):
            chunks.append(table_part(markup, columns, range(start, min(len(rows), start + per))))
    return chunks


def table_part(markup: str, columns: list[int] | None, keep: range) -> str:
    soup = BeautifulSoup(markup, "html.parser")
    table = soup.find("table")
    body = table.find("tbody") or table
    for index, row in enumerate(body.find_all("tr", recursive=False)):
        if index not in keep:
            row.decompose()
    if columns is not None:
        for row in table.find_all("tr"):
            for index, cell in enumerate(row.find_all(["td", "th"], recursive=False)):
                if index not in columns:
                    cell.decompose()
    return str(soup)


def html_px(markup: str) -> float:
    soup = BeautifulSoup(markup, "html.parser")
    px = 0.0
    for table in soup.find_all("table"):
        px += table_px(table)
    for pre in soup.find_all("pre"):
        px += code_px(pre.get_text())
    for img in soup.find_all("img"):
        px += float(img.get("height") or 300) + 10
    if not px:
        for tag in soup(["style", "script"]):
            tag.decompose()
        text = soup.get_text("\n")
        px = TEXT_LINE_PX * sum(
            math.ceil(len(line) / TEXT_CHARS) for line in text.splitlines() if line.strip()
        )
    return px + CELL_GAP_PX


def sized_pictures(markup: str, box: tuple[int, int]) -> str:
    """Every PNG inside an HTML output given its fitted size (the widget's static state)."""
    if "<img" not in markup:
        return markup
    soup = BeautifulSoup(markup, "html.parser")
    for img in soup.find_all("img"):
        src = img.get("src", "")
        if src.startswith("data:image/png;base64,"):
            width, height = fitted(*png_size(src.split(",", 1)[1]), box)
            img["width"], img["height"] = str(width), str(height)
            img["style"] = f"width:{width}px;height:{height}px;max-width:none;max-height:none"
    return str(soup)


SVG_ROOT = re.compile(r"\A\s*<svg\b[^>]*>", re.S)
VIEWBOX = re.compile(r'\bviewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"')
SIZE_ATTRIBUTE = re.compile(r'\s(?:width|height)="[^"]*"')


def sized_svg(markup: str) -> tuple[str, int] | None:
    """An output that is one SVG chart, scaled into ``FIGURE_BOX`` like a PNG (by its
    viewBox), and its new height; None for any other HTML."""
    root = SVG_ROOT.match(markup)
    if root is None or markup.count("<svg") != 1 or not markup.rstrip().endswith("</svg>"):
        return None
    box = VIEWBOX.search(root.group(0))
    if box is None:
        return None
    width, height = fitted(float(box.group(1)), float(box.group(2)))
    tag = SIZE_ATTRIBUTE.sub("", root.group(0))
    tag = tag[:-1].rstrip("/ ") + f' width="{width}" height="{height}">'
    return tag + markup[root.end() :], height


def widget_chunks(markup: str) -> list[str]:
    """A widget's static state (scripts/export_slides.py) cut like any table or text; the
    widget's note stays on the first part, the others continue it."""
    soup = BeautifulSoup(markup, "html.parser")
    tables, pres = soup.find_all("table"), soup.find_all("pre")
    if len(tables) == 1 and not pres:
        chunks = table_chunks(markup) or [markup]
    elif len(pres) == 1 and not tables:
        chunks = []
        for text in text_chunks(pres[0].get_text()):
            pres[0].string = text
            chunks.append(str(soup))
    else:
        chunks = [markup]
    result = chunks[:1]
    for chunk in chunks[1:]:
        soup = BeautifulSoup(chunk, "html.parser")
        for note in soup.select(".memorylib-widget-fallback, .memorylib-widget-caption"):
            note.decompose()
        for wrapper in soup.select(".memorylib-widget-static"):
            wrapper["class"] = "memorylib-widget-static-more"
        result.append(str(soup))
    return result


def output_units(outputs: list) -> list[Unit]:
    units = []
    for output in merged_streams(outputs):
        data = output.get("data", {})
        text = output_text(output)
        if text is not None:
            if not text.strip():
                continue
            chunks = text_chunks(text)
            for chunk in chunks:
                units.append(
                    Unit(
                        "output",
                        [code_cell("", [with_text(output, chunk)], show_source=False)],
                        words(chunk),
                        code_px(chunk),
                        alone=len(chunks) > 1,
                    )
                )
        elif "image/png" in data:
            width, height = fitted(*png_size(data["image/png"]))
            part = copy.deepcopy(output)
            part["data"] = {"image/png": data["image/png"], "text/plain": "<Figure>"}
            part["metadata"] = {"image/png": {"width": width, "height": height}}
            units.append(
                Unit(
                    "figure",
                    [code_cell("", [part], show_source=False)],
                    0,
                    height + CELL_GAP_PX,
                    alone=True,
                )
            )
        elif "text/html" in data:
            markup = data["text/html"]
            if "memorylib-widget-static" in markup:
                chunks = widget_chunks(sized_pictures(markup, FIGURE_BOX))
            elif (svg := sized_svg(markup)) is not None:
                units.append(
                    Unit(
                        "figure",
                        [code_cell("", [with_html(output, svg[0])], show_source=False)],
                        html_words(svg[0]),
                        svg[1] + CELL_GAP_PX,
                        alone=True,
                    )
                )
                continue
            else:
                chunks = table_chunks(markup) or [markup]
            for chunk in chunks:
                units.append(
                    Unit(
                        "output",
                        [code_cell("", [with_html(output, chunk)], show_source=False)],
                        html_words(chunk),
                        html_px(chunk),
                        alone=len(chunks) > 1 or "memorylib-widget-" in chunk,
                        widget="memorylib-widget-" in chunk,
                    )
                )
        else:
            units.append(Unit("output", [code_cell("", [output], show_source=False)], 0, 60.0))
    return units


def code_units(cell) -> list[Unit]:
    """A code cell as one unit when it fits a slide, else its code chunks and outputs."""
    outputs = output_units(cell.get("outputs", []))
    source = cell.source.strip("\n")
    whole_words = words(source) + sum(u.words for u in outputs)
    whole_px = code_px(source) + sum(u.px for u in outputs)
    simple = all(u.kind == "output" and not u.alone for u in outputs)
    if simple and whole_words <= CHUNK_WORDS + 10 and whole_px <= SLIDE_HEIGHT - 70:
        shown = copy.deepcopy(cell)
        shown.outputs = merged_streams(cell.get("outputs", []))
        return [Unit("code", [shown], whole_words, whole_px, label="code")]
    units = []
    chunks = code_chunks(source) if source.strip() else []
    for number, chunk in enumerate(chunks, 1):
        label = "code" if len(chunks) == 1 else f"code {number}/{len(chunks)}"
        unit = Unit("code", [code_cell(chunk, [])], words(chunk), code_px(chunk), label, alone=True)
        unit.after_text = number == 1
        units.append(unit)
    for number, unit in enumerate(outputs, 1):
        unit.label = "output" if len(outputs) == 1 else f"output {number}/{len(outputs)}"
        if unit.widget:
            unit.label = unit.label.replace("output", "widget, static state")
        if unit.kind == "figure":
            unit.label = "figure" if len(outputs) == 1 else f"figure ({number}/{len(outputs)})"
        units.append(unit)
    return units


# --- slides ---------------------------------------------------------------------------------


@dataclass
class Slide:
    start: str  # slide or subslide
    section: str
    units: list[Unit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def words(self) -> int:
        return sum(u.words for u in self.units)

    @property
    def px(self) -> float:
        return sum(u.px for u in self.units)


def agenda(nb) -> list[str]:
    """The notebook's numbered ``##`` sections (all its ``##`` sections but the recap and
    the quiz when none is numbered), from every markdown cell, notes included."""
    found = [
        text
        for c in nb.cells
        if c.cell_type == "markdown"
        for level, text in headings(c.source)
        if level == 2
    ]
    numbered = [t for t in found if NUMBERED.match(t)]
    return numbered or [t for t in found if t not in ("Recap", "Check your understanding")]


def title_markdown(nb, visible: str) -> str:
    """The title slide: the title, the first visible lead and the session's agenda."""
    lines = visible.splitlines()
    title = next((line for line in lines if HEADING.match(line)), "")
    paragraphs = re.split(r"\n\s*\n", visible.replace(title, "", 1).strip())
    lead = next((p for p in paragraphs if p.strip() and not NAV.search(p)), "")
    items = ["- " + NUMBER_DOT.sub(r"\1\\.", text) for text in agenda(nb)]
    parts = [title, lead]
    if items:
        parts.append('<p class="memorylib-agenda-title">Today</p>\n\n' + "\n".join(items))
    return "\n\n".join(p for p in parts if p)


def is_recap(cell) -> bool:
    visible = "\n".join(t for k, t in split_notes(cell.source) if k == "visible")
    first = visible.strip().splitlines()[0] if visible.strip() else ""
    return bool(re.match(r"^##\s+Recap\b", first))


def layout(nb):
    """The deck's copy of ``nb`` (already prepared: no plumbing, widget states): every
    cell replaced by the cells its slides show, with their slide types."""
    nb = copy.deepcopy(nb)
    cells = nb.cells
    closing: list = []
    last = cells[-1] if cells else None
    if last is not None and last.cell_type == "markdown" and not headings(last.source):
        closing.append(last)
        cells = cells[:-1]
    recap = [c for c in cells if c.cell_type == "markdown" and is_recap(c)]
    cells = [c for c in cells if not any(c is r for r in recap)]
    slides: list[Slide] = []
    section = ""

    def new_slide(start: str) -> Slide:
        slides.append(Slide("slide" if not slides else start, section))
        return slides[-1]

    def place(unit: Unit, start: str | None) -> Slide:
        """``start``: the cell's own slide type for its first unit, else None."""
        current = slides[-1] if slides else None
        if current is None or start in ("slide", "subslide"):
            current = new_slide(start or "slide")
        elif (
            (
                unit.alone
                and not (unit.after_text and all(u.kind == "markdown" for u in current.units))
            )
            or any(u.alone for u in current.units)
            or current.words + unit.words > WORDS_JOIN
            or current.px + unit.px > SLIDE_HEIGHT - 70
        ):
            current = new_slide("subslide")
        current.units.append(unit)
        return current

    def add_cell(cell, kind: str, *, first: bool = False) -> None:
        nonlocal section
        start = kind if kind in ("slide", "subslide") else None
        if cell.cell_type == "markdown":
            pending: list[str] = []
            placed = None
            for part, text in split_notes(cell.source):
                for level, heading in headings(text):
                    if level <= 2 and part == "visible":
                        section = heading
                if part == "notes":
                    (placed.notes if placed is not None else pending).append(text)
                else:
                    if first:
                        text = title_markdown(nb, text)
                    placed = place(markdown_unit(text), start)
                    start = None
                    placed.notes += pending
                    pending = []
                for level, heading in headings(text):
                    if level <= 2 and part == "notes":
                        section = heading
            if pending:
                (slides[-1] if slides else new_slide(kind)).notes += pending
            return
        if cell.cell_type != "code":
            return
        for unit in code_units(cell):
            place(unit, start)
            start = None

    for index, cell in enumerate(cells):
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-") or "-"
        if kind == "skip":
            continue
        if kind == "notes":
            (slides[-1] if slides else new_slide("slide")).notes.append(cell.source)
            continue
        add_cell(cell, kind, first=index == 0)
    if recap or closing:
        section = "Recap"
        for number, cell in enumerate([*recap, *closing]):
            add_cell(cell, "slide" if number == 0 else "-")
    nb.cells = list(deck_cells(slides))
    return nb


def deck_cells(slides: list[Slide]):
    for slide in slides:
        first = slide.units[0] if slide.units else None
        cells = [c for u in slide.units for c in u.cells]
        if first is None or not first.headed:
            label = f" · {first.label}" if first is not None and first.label else ""
            title = slide.section or "Slides"
            cells.insert(0, nbformat.v4.new_markdown_cell(f"### {title}{label}"))
        for number, cell in enumerate(cells):
            yield typed(cell, slide.start if number == 0 else "-")
        for text in slide.notes:
            yield typed(nbformat.v4.new_markdown_cell(text), "notes")
