"""How scripts/deck_layout.py lays a notebook out as a projector deck (no browser here:
tests/test_slides_export.py measures a tiny deck in Chromium, and scripts/measure_slides.py
every course deck in `make test`)."""

from __future__ import annotations

import ast

import pandas as pd
from bs4 import BeautifulSoup
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from .test_slides_export import png, typed
from .test_slides_structure import load_script

layout = load_script("deck_layout")


def test_a_cell_splits_at_its_asides_in_order_and_the_page_keeps_every_word() -> None:
    source = (
        '## 2. A section\n\nThe lead.\n\n<aside class="notes">\n\nFirst note.\n\n</aside>\n\n'
        'Shown again.\n\n<aside class="notes">\n\n## 3. Next\n\nSecond note.\n\n</aside>'
    )
    assert layout.split_notes(source) == [
        ("visible", "## 2. A section\n\nThe lead."),
        ("notes", "First note."),
        ("visible", "Shown again."),
        ("notes", "## 3. Next\n\nSecond note."),
    ]
    page = layout.page_markdown(source)
    assert "<aside" not in page and "</aside>" not in page
    for text in ("The lead.", "First note.", "Shown again.", "## 3. Next", "Second note."):
        assert text in page


def long_source() -> str:
    functions = [
        f"def step_{n}(records, query):\n"
        f'    """Step {n} of a made-up pipeline, long enough to need its own chunk."""\n'
        + "".join(f"    value_{i} = records[{i}] + query.terms[{i}] * {n}\n" for i in range(6))
        + "    return value_0\n"
        for n in range(5)
    ]
    return "\n\n".join(functions) + "\n\nresult = [step_0(r, q) for r, q in pairs]\n"


def test_long_code_is_cut_at_top_level_statements_within_the_budget() -> None:
    source = long_source()
    chunks = layout.code_chunks(source)
    assert len(chunks) > 1
    for chunk in chunks:
        assert layout.words(chunk) <= layout.CHUNK_WORDS
        assert layout.text_lines(chunk) <= layout.CHUNK_LINES
        assert not chunk[0].isspace()  # a chunk opens with a top-level statement
        ast.parse(chunk)  # never cut inside a statement: each chunk parses alone
    kept = [line for chunk in chunks for line in chunk.splitlines() if line.strip()]
    assert kept == [line for line in source.splitlines() if line.strip()]


def test_one_statement_too_big_alone_is_cut_at_its_nested_statements() -> None:
    body = "".join(
        f"    total_{i} = compute(records, index={i}, weight=0.{i})\n" for i in range(30)
    )
    chunks = layout.code_chunks(f"def big(records):\n{body}    return total_0\n")
    assert len(chunks) > 1
    assert all(layout.words(c) <= layout.CHUNK_WORDS for c in chunks)
    # every cut falls between two of the body's statements, never inside a line
    assert [line for c in chunks for line in c.splitlines()][1:-1] == body.rstrip().split("\n")


def test_a_long_line_of_text_output_is_wrapped_into_chunks() -> None:
    text = ", ".join(f'"key_{i}": "value number {i}"' for i in range(60))
    chunks = layout.text_chunks(text)
    assert len(chunks) > 1
    assert all(layout.words(c) <= layout.CHUNK_WORDS for c in chunks)
    assert " ".join(" ".join(chunks).split()) == " ".join(text.split())


def test_a_long_table_is_cut_by_rows_with_its_header_repeated() -> None:
    frame = pd.DataFrame(
        {"memory_id": [f"mei-conv-{i:03d}" for i in range(40)], "total": [0.5] * 40}
    )
    chunks = layout.table_chunks(frame.to_html())
    assert len(chunks) > 1
    ids = []
    for chunk in chunks:
        table = BeautifulSoup(chunk, "html.parser").find("table")
        header = [th.get_text() for th in table.find("thead").find_all("th")]
        assert header == ["", "memory_id", "total"]
        ids += [tr.find_all("td")[0].get_text() for tr in table.find("tbody").find_all("tr")]
        assert layout.html_words(chunk) <= layout.TABLE_WORDS + 10
    assert ids == list(frame["memory_id"])  # every row once, in order


def test_a_wide_table_is_cut_by_column_groups_with_its_index_repeated() -> None:
    frame = pd.DataFrame(
        [[f"omar-conv-{r:03d} 0.{c}5" for c in range(8)] for r in range(3)],
        columns=[f"rank {c}" for c in range(8)],
        index=["2026-06-30", "2026-07-31", "2026-08-31"],
    )
    chunks = layout.table_chunks(frame.to_html())
    assert len(chunks) > 1
    cells = set()
    for chunk in chunks:
        table = BeautifulSoup(chunk, "html.parser").find("table")
        header = [th.get_text() for th in table.find("thead").find_all("th")]
        assert 1 < len(header) < len(frame.columns) + 1  # a group of the columns
        for tr in table.find("tbody").find_all("tr"):  # each row keeps its index
            index = tr.find("th").get_text()
            cells |= {
                (index, col, td.get_text()) for col, td in zip(header[1:], tr("td"), strict=True)
            }
    every = {(i, c, frame.loc[i, c]) for i in frame.index for c in frame.columns}
    assert cells == every  # every cell shown once, under its own column and index


def test_figures_are_scaled_up_or_down_into_the_box() -> None:
    assert layout.fitted(40, 20) == (1120, 560)
    assert layout.fitted(2400, 800) == (1200, 400)
    assert layout.fitted(1000, 1000) == (560, 560)


def section_notebook():
    chart = new_output("display_data", data={"image/png": png(60, 30), "text/plain": "<Figure>"})
    cells = [
        typed(
            new_markdown_cell("# 42 · A test deck\n\n← [Index](00_index.ipynb) →\n\nThe lead."),
            "slide",
        ),
        typed(new_code_cell("import os", outputs=[]), "skip"),
        typed(new_markdown_cell("## 1. First part\n\nShort."), "slide"),
        typed(new_code_cell(long_source(), outputs=[chart]), "subslide"),
        typed(
            new_markdown_cell(
                'No heading here.\n\n<aside class="notes">\n\n'
                "## 2. Hidden section\n\nText.\n\n</aside>"
            ),
            "subslide",
        ),
        typed(new_code_cell("print(1)", outputs=[new_output("stream", text="1\n")]), "subslide"),
        typed(new_markdown_cell("## Recap\n\n- one point"), "slide"),
        typed(new_markdown_cell("## Check your understanding\n\nA quiz."), "slide"),
        typed(new_markdown_cell("← [Index](00_index.ipynb) →"), "-"),
    ]
    return new_notebook(cells=cells)


def deck_slides(nb) -> list[list]:
    slides: list[list] = []
    for cell in layout.layout(nb).cells:
        kind = cell.metadata["slideshow"]["slide_type"]
        if kind in ("slide", "subslide"):
            slides.append([])
        if kind != "notes":
            slides[-1].append(cell)
    return slides


def test_the_deck_has_a_title_an_agenda_headings_everywhere_and_the_recap_last() -> None:
    slides = deck_slides(section_notebook())
    title = slides[0][0].source
    assert title.startswith("# 42 · A test deck") and "The lead." in title
    assert "- 1\\. First part" in title and "- 2\\. Hidden section" in title  # from the notes
    assert "Recap" not in title and "00_index" not in title
    for slide in slides:
        first = slide[0]
        assert first.cell_type == "markdown" and first.source.startswith("#"), slide
    headings = [s[0].source for s in slides]
    chunks = [h for h in headings if h.startswith("### 1. First part · code ")]
    assert len(chunks) > 1 and chunks[0].endswith(f" 1/{len(chunks)}")  # code in chunks
    assert "### 1. First part · figure" in headings  # then its figure, alone
    figure = next(s for s in slides if s[0].source.endswith("· figure"))
    assert len(figure) == 2 and figure[1].outputs[0]["metadata"]["image/png"] == {
        "width": 1120,
        "height": 560,
    }
    # a markdown cell without a heading gets the section's; a section named in the notes
    # is current from there on
    assert "### 1. First part" in headings
    assert "### 2. Hidden section · code" in headings
    assert slides[-1][0].source.startswith("## Recap")  # moved after the quiz
    assert slides[-1][-1].source == "← [Index](00_index.ipynb) →"  # with the closing links
    assert slides[-2][0].source.startswith("## Check your understanding")
