"""Export every course notebook, with its committed outputs, to files that open offline.

    .venv/bin/python scripts/export_slides.py              # all notebooks (make slides)
    .venv/bin/python scripts/export_slides.py 08 --out DIR  # those whose name starts so

writes, for each ``notebooks/NN_*.ipynb``:

- ``exports/slides/NN_*.html``: a reveal.js deck (nbconvert's slides exporter);
- ``exports/pages/NN_*.html``: one plain page to read (nbconvert's HTML exporter, lab look);
- ``exports/index.html``: links to both.

Every file is self-contained: reveal.js 5 (script, CSS, the white theme and the speaker
notes plugin) is inlined from the ``sphinx-revealjs`` package, which ships reveal.js's
``dist/`` and ``plugin/`` files (a PyPI package, so ``pip install`` brings it; no npm and no
CDN). The templates in ``scripts/export_templates/`` drop nbconvert's CDN scripts
(require.js, jQuery, MathJax, mermaid): the course has no math or diagrams, and a
notebook that gains some is refused here until the export handles it. The theme's web
font is not embedded; text uses the same system fonts as the notebook. Images are already
inline (PNG outputs are base64). After writing, each file is scanned for anything that
would load a remote URL, and the export fails if one is found.

Slide structure starts from each cell's ``metadata.slideshow.slide_type`` (see
scripts/slide_metadata.py; a notebook without any gets a provisional one there), and the
deck is then laid out for the projector by scripts/deck_layout.py on the export's
in-memory copy (the notebook, the reading page and the live RISE view do not change):
speaker notes split off, code and outputs too big for one slide over consecutive
subslides, a heading on every slide, one fitted figure a slide, a title slide with the
agenda and the recap last. A slide still taller than the screen would scroll (and
scripts/measure_slides.py would report it).
Live widgets cannot run in a static file: their output (the widget view, whose text form
is an unreadable ``VBox(...)`` repr) is replaced by a note. In the deck the note is
followed by the widget's static state: the outputs of the next code cell that has some
(every course notebook runs the widget's view function statically right below it), its
pictures if it draws any, else its tables, else its text. The page keeps only the note,
since the next cell follows it there anyway.
Cells whose ``slideshow.slide_type`` is ``notes`` become reveal.js speaker notes
(``<aside class="notes">``, nbconvert's reveal template; press S in the deck), and so do
the ``<aside class="notes">`` blocks inside markdown cells: nbconvert would render such a
raw block alone, empty, with its prose visible after it, so the deck splits each cell at
its asides into the visible part and notes cells. The reading page keeps all the prose,
the aside tags dropped.
Code shown in the deck loses the test plumbing the notebook needs (nbval's ``# NBVAL_*``
lines, ``# noqa`` and ``# fmt: skip`` comments, ``uuid=`` arguments that only pin a
table's HTML id); the notebook and the reading page keep the code as it is.
The deck is laid out on a ``WIDTH`` x ``HEIGHT`` canvas, 1280x720 with no margin, so a
1280x720 screen shows it at scale 1: body text at ``BODY_PX`` (24) and code, outputs and
tables at ``CODE_PX`` (20) CSS pixels, issue 23's projector sizes (scripts/measure_slides.py
measures them, and `make test` checks every deck against its limits). In the deck only,
prompts are hidden and long lines wrap instead of scrolling.
Links between notebooks (``NN_x.ipynb``) point at the sibling export.
"""

from __future__ import annotations

import argparse
import base64
import copy
import html
import importlib.util
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import deck_layout  # sibling scripts (scripts/ is not a package)
import slide_metadata
from slide_metadata import shown

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "export_templates"
DEFAULT_OUT = ROOT / "exports"
# reveal.js lays every slide out on this canvas and scales it to the window; with no
# margin a 1280x720 screen shows it at scale 1: 24 px text and 20 px code.
WIDTH, HEIGHT = 1280, 720
BODY_PX, CODE_PX = 24, 20
THEME = "white"
WIDGET_NOTE = (
    "[live widget: it runs in JupyterLab (or Voila); this export shows its static state "
    "in the cells below]"
)
WIDGET_HTML = f'<div class="memorylib-widget-fallback">{html.escape(WIDGET_NOTE)}</div>'
WIDGET_STATIC = "static state (the next cell's output):"
EXTRA_CSS = """
.memorylib-widget-fallback { color: #555; font-style: italic; }
.memorylib-widget-caption { color: #555; font-style: italic; margin-bottom: 0.3em; }
.reveal .slides section.memorylib-scrolls { scrollbar-width: thin; }
/* reveal's theme sets <pre> to 0.55em: code in markdown and HTML outputs keeps code size */
.reveal .jp-RenderedHTMLCommon pre { font-size: var(--jp-code-font-size); }
"""
# Only in the deck: no prompts (the width goes to the code), long lines wrap instead of
# scrolling, outputs' text and tables at code size at least, pictures at the size the
# export gives them, the injected headings smaller than the notebook's own.
DECK_CSS = """
.reveal .jp-InputPrompt, .reveal .jp-OutputPrompt { display: none; }
.reveal .jp-InputArea-editor, .reveal .jp-OutputArea-output { box-sizing: border-box;
  width: auto; flex: 1 1 auto; min-width: 0; }
.reveal pre, .reveal .highlight pre { white-space: pre-wrap; overflow-wrap: anywhere;
  overflow: visible; font-size: var(--jp-code-font-size); line-height: 1.3;
  width: auto; margin: 0; box-shadow: none; box-sizing: border-box; }
.reveal .jp-OutputArea-output, .reveal .jp-OutputArea-output pre,
.reveal .jp-RenderedHTMLCommon table, .reveal .jp-RenderedText pre {
  font-size: var(--jp-code-font-size); }
.reveal .jp-RenderedHTMLCommon td, .reveal .jp-RenderedHTMLCommon th {
  font-size: var(--jp-code-font-size); padding: 0.2em 0.45em; }
.reveal .jp-RenderedMarkdown td, .reveal .jp-RenderedMarkdown th {
  font-size: var(--jp-content-font-size1); }
.reveal .jp-RenderedHTMLCommon table { table-layout: auto; max-width: 100%; }
.reveal .jp-OutputArea-output { overflow: visible; }
.reveal .jp-RenderedImage img, .reveal .memorylib-widget-static img {
  max-width: none; max-height: none; }
.reveal .jp-RenderedMarkdown h3 { font-size: 32px; margin: 0 0 0.3em 0; }
.reveal h1, .reveal h2, .reveal h3 { text-transform: none; }
.reveal .memorylib-agenda-title { font-weight: bold; margin-bottom: 0; }
/* the widget note and caption in two short lines: its picture keeps the full figure box */
.reveal .memorylib-widget-fallback, .reveal .memorylib-widget-caption {
  font-size: var(--jp-code-font-size); line-height: 1.25; margin: 0; display: inline; }
.reveal .memorylib-widget-caption::before { content: " "; }
.reveal .memorylib-widget-static { line-height: 1.25; }
.reveal .memorylib-widget-static img { display: block; margin: 0.2em 0 0 0; }
.reveal .jp-OutputArea-output:has(> .memorylib-widget-static) { padding-top: 0; padding-bottom: 0; }
"""
# Test plumbing in code cells, removed from the code a deck shows (the notebook keeps it).
PLUMBING_LINE = re.compile(r"^[ \t]*# *NBVAL_\w+[^\n]*(?:\n|$)", re.M)
PLUMBING_COMMENT = re.compile(r"[ \t]*# *(?:noqa\b[^\n]*|fmt: *(?:skip|off|on)\b)[ \t]*$", re.M)
QUOTED = r"""(?:"[^"\n]*"|'[^'\n]*')"""
UUID_ARGUMENT = re.compile(rf",\s*uuid={QUOTED}|uuid={QUOTED},\s*")
LINK = re.compile(r"\]\((\d\d_[\w-]+)\.ipynb(#[^)]*)?\)")
MATH = re.compile(r"(?<!\\)\$[^$\n]+\$|\\\(|\\\[|```mermaid")
REMOTE_LOADS = (
    re.compile(
        r"<(?:script|img|iframe|source|video|audio|embed|track)\b[^>]*?\ssrc\s*=\s*"
        r"[\"']?(?:https?:)?//[^\s\"'>]+",
        re.I,
    ),
    re.compile(r"<link\b[^>]*?\shref\s*=\s*[\"']?(?:https?:)?//[^\s\"'>]+", re.I),
    re.compile(r"url\(\s*[\"']?(?:https?:)?//[^)\"']+", re.I),
    re.compile(r"@import\s+(?:url\()?\s*[\"']?(?:https?:)?//[^\s\"');]+", re.I),
    re.compile(r"\bimport\s*\(\s*[\"'](?:https?:)?//[^\"']+", re.I),
)


class ExportError(RuntimeError):
    pass


def revealjs_root() -> Path:
    """reveal.js's files inside the installed sphinx-revealjs (found without importing Sphinx)."""
    spec = importlib.util.find_spec("sphinx_revealjs")
    if spec is None or not spec.submodule_search_locations:
        raise ExportError(
            "sphinx-revealjs is not installed: run `make slides` (it installs the dev extras)"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / "_static" / "revealjs"
    if not (root / "dist" / "reveal.js").is_file():
        raise ExportError(f"no reveal.js dist files under {root}")
    return root


def revealjs_version(root: Path) -> str:
    script = (root / "dist" / "reveal.js").read_text(encoding="utf-8")
    found = re.search(r"\"(\d+\.\d+\.\d+)\"", script) or re.search(r"reveal\.js (\S+)", script)
    return found.group(1) if found else "unknown"


def offline_resources(root: Path) -> dict[str, str | int]:
    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode("ascii")

    theme = (root / "dist" / "theme" / f"{THEME}.css").read_text(encoding="utf-8")
    theme = re.sub(r"@import\s+url\([^)]*\);?", "", theme)  # the web font: not embedded
    return {
        "reveal_css": (root / "dist" / "reveal.css").read_text(encoding="utf-8"),
        "theme_css": theme,
        "reveal_js_base64": b64(root / "dist" / "reveal.js"),
        "notes_js_base64": b64(root / "plugin" / "notes" / "notes.js"),
        "extra_css": EXTRA_CSS,
        "deck_css": DECK_CSS,
        "body_px": BODY_PX,
        "code_px": CODE_PX,
        "width": WIDTH,
        "height": HEIGHT,
        "transition": "none",
    }


def remote_loads(text: str) -> list[str]:
    """Every place in an HTML file that would make the browser fetch a remote URL."""
    return [m.group(0)[:120] for pattern in REMOTE_LOADS for m in pattern.finditer(text)]


def without_plumbing(source: str) -> str:
    """Code as a slide shows it: no nbval lines, lint/format pragmas or pinned table ids."""
    source = PLUMBING_LINE.sub("", source)
    source = PLUMBING_COMMENT.sub("", source)
    return UUID_ARGUMENT.sub("", source)


def output_html(output) -> str | None:
    """One output as HTML for the widget's static state (None: nothing to draw)."""
    data = output.get("data", {})
    if slide_metadata.WIDGET_MIME in data:  # another live widget: no static state of its own
        return None
    if "image/png" in data:
        return f'<img src="data:image/png;base64,{data["image/png"].strip()}" alt="chart">'
    if "image/svg+xml" in data or "text/html" in data:
        return data.get("image/svg+xml") or data["text/html"]
    text = output.get("text") if output.get("output_type") == "stream" else None
    text = text or data.get("text/plain")
    return f"<pre>{html.escape(text)}</pre>" if text and text.strip() else None


def static_state(cells, index: int) -> str | None:
    """The widget's static state: what the next code cell with outputs draws (its pictures
    if any, else its tables, else its text), as HTML; None when no later cell has any."""
    for cell in cells[index + 1 :]:
        if cell.cell_type != "code" or not cell.get("outputs"):
            continue
        outputs = cell.outputs
        for wanted in ("image/png", "text/html"):
            chosen = [o for o in outputs if wanted in o.get("data", {})]
            if chosen:
                break
        else:
            chosen = outputs
        drawn = [part for part in map(output_html, chosen) if part]
        if drawn:
            return "".join(drawn)
    return None


def widget_output(cells, index: int, *, slides: bool) -> dict:
    if not slides or (state := static_state(cells, index)) is None:
        return {"text/html": WIDGET_HTML, "text/plain": WIDGET_NOTE}
    note = f'<div class="memorylib-widget-caption">{html.escape(WIDGET_STATIC)}</div>'
    return {
        "text/html": f'<div class="memorylib-widget-static">{WIDGET_HTML}{note}{state}</div>',
        "text/plain": WIDGET_NOTE,
    }


def prepared(nb, *, link_suffix: str, slides: bool = False):
    """A copy to export: provisional slide types if none, links to the sibling exports;
    for a deck (``slides``), code without test plumbing and widgets' static states."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    if not slide_metadata.has_slide_metadata(nb):
        for cell, kind in zip(nb.cells, slide_metadata.provisional_types(nb), strict=True):
            cell.metadata["slideshow"] = {"slide_type": kind}
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if slide_metadata.WIDGET_MIME in output.get("data", {}):
                output["data"] = widget_output(nb.cells, index, slides=slides)
        if cell.cell_type == "code" and slides:
            cell.source = without_plumbing(cell.source)
        if cell.cell_type == "markdown":
            cell.source = LINK.sub(
                lambda m: f"]({m.group(1)}{link_suffix}{m.group(2) or ''})", cell.source
            )
            if not slides:  # the reading page keeps every word, in plain markdown
                cell.source = deck_layout.page_markdown(cell.source)
    return deck_layout.layout(nb) if slides else nb


def exporters() -> tuple[SlidesExporter, HTMLExporter]:
    where = [str(TEMPLATES)]
    slides = SlidesExporter(template_name="memorylib_reveal", extra_template_basedirs=where)
    page = HTMLExporter(template_name="memorylib_page", extra_template_basedirs=where)
    for exporter in (slides, page):
        exporter.exclude_input_prompt = False
        exporter.embed_images = True
    return slides, page


def export(paths: Sequence[Path], out: Path) -> list[tuple[Path, Path]]:
    root = revealjs_root()
    offline = offline_resources(root)
    slides_exporter, page_exporter = exporters()
    (out / "slides").mkdir(parents=True, exist_ok=True)
    (out / "pages").mkdir(parents=True, exist_ok=True)
    written = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        if MATH.search(markdown):
            raise ExportError(
                f"{path.name} has math or a mermaid diagram: the offline "
                "export does not embed MathJax/mermaid yet"
            )
        pair = []
        for kind, exporter in (("slides", slides_exporter), ("pages", page_exporter)):
            resources = {
                "metadata": {"name": path.stem, "path": str(path.parent)},
                "offline": offline,
            }
            exporter.language_code = "zh" if path.parent.name == "zh" else "en"  # <html lang>
            copy_ = prepared(nb, link_suffix=".html", slides=kind == "slides")
            body, _ = exporter.from_notebook_node(copy_, resources)
            found = remote_loads(body)
            if found:
                raise ExportError(f"{path.name} ({kind}) would load remote URLs: {found[:3]}")
            edition = "zh" if path.parent.name == "zh" else ""  # a Chinese twin: zh/ beside
            target = out / kind / edition / f"{path.stem}.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
            pair.append(target)
        written.append((pair[0], pair[1]))
    write_index(out, [p for p, _ in written], revealjs_version(root))
    return written


def write_index(out: Path, decks: Sequence[Path], version: str) -> None:
    rows = "\n".join(
        f'<li>{html.escape(shown(d))}: <a href="slides/{shown(d)}.html">slides</a> · '
        f'<a href="pages/{shown(d)}.html">page</a></li>'
        for d in decks
    )
    (out / "index.html").write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>memorylib course exports</title></head><body>\n"
        "<h1>memorylib course: slides and pages</h1>\n"
        f"<p>Static exports with the committed outputs; reveal.js {html.escape(version)} "
        "inlined; open from disk, no network needed.</p>\n"
        f"<ul>\n{rows}\n</ul>\n</body></html>\n",
        encoding="utf-8",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", help="notebook name prefixes, e.g. 08")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: exports/")
    args = parser.parse_args(argv)
    paths = slide_metadata.notebook_paths(args.prefixes, chinese=True)  # both editions
    if not paths:
        print("no notebook matched", file=sys.stderr)
        return 1
    start = time.perf_counter()
    try:
        written = export(paths, args.out)
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for deck, page in written:
        nb = nbformat.read(slide_metadata.NOTEBOOKS / f"{shown(deck)}.ipynb", as_version=4)
        own = "own metadata" if slide_metadata.has_slide_metadata(nb) else "provisional"
        print(
            f"{shown(deck):37s} deck {deck.stat().st_size / 1024:6.0f} KiB ({own}) · "
            f"page {page.stat().st_size / 1024:6.0f} KiB"
        )
    where = args.out.resolve()
    print(
        f"{len(written)} notebooks -> {where}/slides and {where}/pages "
        f"in {time.perf_counter() - start:.1f} s; open {where}/index.html"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
