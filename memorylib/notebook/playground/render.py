"""The playground's rendering: a ``PlaygroundView`` as plain text, HTML and one SVG chart.

Pure functions of a view (no widgets, no recall): ``summary_text`` / ``summary_html``
(the normalized query, the policy and the funnel), ``hits_table_html`` (the hits with
their breakdown and provenance), ``context_html`` (the rendered XML context) and
``playground_svg`` (the funnel and each hit's stacked score contributions). Every value
that comes from a query or a record is HTML-escaped.
"""

from __future__ import annotations

import html

from memorylib.notebook.playground.catalog import DATASETS
from memorylib.notebook.playground.model import HIT_COLUMNS, PlaygroundView

__all__ = [
    "LEXICAL_COLOR",
    "RECENCY_COLOR",
    "context_html",
    "hits_table_html",
    "playground_svg",
    "summary_html",
    "summary_text",
]


def summary_text(view: PlaygroundView) -> str:
    """The normalized query, the policy and the funnel as plain lines."""
    s = view.state
    spec = DATASETS.get(s.dataset)
    lines = [
        f"dataset    {spec.label if spec else s.dataset} · user {s.user} "
        f"(user_scope {view.user_scope})",
    ]
    if view.error:
        lines.append(f"rejected   {view.error}")
        return "\n".join(lines)
    assert view.query is not None and view.result is not None and view.policy is not None
    p = view.policy
    result = view.result
    lines += [
        f"text       {view.query.text!r}",
        f"normalized {view.query.normalized_text!r}",
        f"terms      {list(view.query.terms)}",
        f"scoring    {s.scorer} · as_of {result.query.issued_at} · lexical "
        f"{p.lexical_weight:g} · recency {p.recency_weight:g} · window "
        f"{p.recency_window_days:g} days · limit {s.limit}",
        f"funnel     searched {result.searched_records} -> candidates "
        f"{result.candidate_records} -> hits {len(result.hits)}"
        + (
            f" ({result.retracted_records} retracted, not searched)"
            if result.retracted_records
            else ""
        ),
    ]
    if result.empty_reason:
        lines.append(f"empty      empty_reason = {result.empty_reason!r}; nothing is rendered")
    return "\n".join(lines)


def summary_html(view: PlaygroundView) -> str:
    """``summary_text`` in a ``<pre class="playground-summary">`` (escaped)."""
    css = "playground-summary" + (" playground-error" if view.error else "")
    return (
        f'<pre class="{css}" style="{_PRE_STYLE};font-size:12px">'
        f"{html.escape(summary_text(view))}</pre>"
    )


# The widgets' HTML boxes set a 28 px line height and a proportional font: reset both here.
_PRE_STYLE = "margin:0;line-height:1.35;font-family:monospace;white-space:pre-wrap"
_TABLE_CSS = (
    "<style>.playground-hits{border-collapse:collapse;font-size:12px;line-height:1.35}"
    ".playground-hits th,.playground-hits td{border:1px solid #ddd;padding:2px 6px;"
    "text-align:left;vertical-align:top;white-space:nowrap}"
    ".playground-hits th{background:#f3f3f3}.playground-hits caption{text-align:left}"
    ".playground-hits td.title,.playground-hits td.snippet,.playground-hits td.matched-terms"
    "{white-space:normal;min-width:120px}.playground-hits td.snippet{min-width:280px}</style>"
)


def _cell(column: str, value: object) -> str:
    if isinstance(value, float):
        text = f"{value:.6f}" if column != "age_days" else f"{value:.2f}"
    else:
        text = str(value)
    css = column.replace("_", "-")
    return f'<td class="{css}">{html.escape(text)}</td>'


def hits_table_html(view: PlaygroundView) -> str:
    """The hits as ``<table class="playground-hits">``, one ``td.memory-id`` per hit.

    The table's ``data-*`` attributes repeat the state it shows (query, limit, user
    scope, dataset), so a browser test can wait for exactly that state. A rejected
    query gives ``<div class="playground-error">`` instead.
    """
    s = view.state
    attrs = (
        f'data-query="{html.escape(s.query)}" data-limit="{s.limit}" '
        f'data-user-scope="{view.user_scope}" data-dataset="{html.escape(s.dataset)}" '
        f'data-scorer="{html.escape(s.scorer)}"'
    )
    if view.error:
        return (
            f'<div class="playground-error" {attrs} style="color:#a61b1b;padding:6px 0">'
            f"Query rejected — {html.escape(view.error)}</div>"
        )
    assert view.result is not None
    head = "".join(f"<th>{html.escape(c)}</th>" for c in HIT_COLUMNS)
    body = "".join(
        f'<tr data-memory-id="{html.escape(str(row["memory_id"]))}">'
        + "".join(_cell(c, row[c]) for c in HIT_COLUMNS)
        + "</tr>"
        for row in view.hits.to_dict("records")
    )
    caption = (
        f"{len(view.result.hits)} hit(s) of {view.result.candidate_records} candidate(s)"
        if view.result.hits
        else f"no hits: empty_reason = {view.result.empty_reason}"
    )
    return (
        f'{_TABLE_CSS}<div style="overflow-x:auto">'
        f'<table class="playground-hits" {attrs} data-hits="{len(view.result.hits)}">'
        f"<caption>{html.escape(caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def context_html(view: PlaygroundView) -> str:
    """The rendered XML context, escaped, in a ``<details class="playground-context">``."""
    text = view.context or "(nothing rendered: no hits, so no <recalled_context> block)"
    return (
        '<details class="playground-context" open><summary>rendered context '
        "(what the model would see)</summary>"
        f'<pre style="{_PRE_STYLE};font-size:11px">{html.escape(text)}</pre></details>'
    )


# -- the chart --------------------------------------------------------------------------------

LEXICAL_COLOR = "#3182bd"
RECENCY_COLOR = "#fd8d3c"
_FUNNEL_COLORS = {"searched": "#c6dbef", "candidates": "#9ecae1", "hits": "#3182bd"}


def playground_svg(view: PlaygroundView) -> str:
    """The chart: the funnel and each hit's stacked score, as ``<svg class="playground-chart">``.

    The one chart of the playground, live and static: the app puts it in an HTML widget,
    a notebook shows a fixed state with ``display(HTML(playground_svg(view)))``. Built as
    a string (no matplotlib), so it takes about a millisecond and is byte-identical
    from run to run.

    Funnel bars are ``rect.funnel`` (``data-stage``, ``data-records``); each hit is a
    ``g.hit`` (``data-memory-id``) holding ``rect.lexical`` and ``rect.recency``, whose
    widths are the contributions on a scale where a score of 1.0 is 360 px (or, when a
    total is above 1, as BM25's can be, where the highest total is 360 px).
    """
    rows = len(view.hits)
    height = max(120, 40 + 22 * rows)
    parts = [
        f'<svg class="playground-chart" xmlns="http://www.w3.org/2000/svg" width="900" '
        f'height="{height}" viewBox="0 0 900 {height}" font-family="sans-serif" '
        'font-size="12">',
        '<text x="0" y="14" font-weight="bold">funnel</text>',
    ]
    counts = [int(n) for n in view.funnel["records"]]
    top = max(counts) or 1
    for i, (stage, n) in enumerate(zip(view.funnel["stage"], counts, strict=True)):
        y = 28 + 26 * i
        width = max(1.0, 170 * n / top) if n else 0.0
        parts += [
            f'<text x="0" y="{y + 14}">{html.escape(stage)}</text>',
            f'<rect class="funnel" data-stage="{html.escape(stage)}" data-records="{n}" '
            f'x="80" y="{y}" width="{width:.1f}" height="18" fill="{_FUNNEL_COLORS[stage]}"/>',
            f'<text x="{84 + width:.1f}" y="{y + 14}">{n:,}</text>',
        ]
    x0 = 500
    scale = 360 / max([1.0, *(float(t) for t in view.hits["total"])])
    parts.append(
        '<text x="300" y="14" font-weight="bold">score contributions per hit'
        + ("" if view.state.scorer == "coverage" else f" · {html.escape(view.state.scorer)}")
        + "</text>"
        f'<rect x="560" y="4" width="10" height="10" fill="{LEXICAL_COLOR}"/>'
        '<text x="574" y="14">lexical</text>'
        f'<rect x="640" y="4" width="10" height="10" fill="{RECENCY_COLOR}"/>'
        '<text x="654" y="14">recency</text>'
    )
    if view.error or not rows:
        reason = view.result.empty_reason if view.result is not None else None
        message = "query rejected" if view.error else f"no hits ({reason})"
        parts.append(f'<text x="300" y="60" fill="#666">{message}</text>')
    for i, row in enumerate(view.hits.to_dict("records")):
        y = 28 + 22 * i
        lexical = scale * float(row["lexical_contribution"])
        recency = scale * float(row["recency_contribution"])
        memory_id = html.escape(str(row["memory_id"]))
        parts += [
            f'<g class="hit" data-memory-id="{memory_id}">',
            f'<text x="300" y="{y + 13}" font-size="11">#{row["rank"]} {memory_id}</text>',
            f'<rect class="lexical" x="{x0}" y="{y}" width="{lexical:.1f}" height="16" '
            f'fill="{LEXICAL_COLOR}"><title>lexical {row["lexical_contribution"]:.6f}</title>'
            "</rect>",
            f'<rect class="recency" x="{x0 + lexical:.1f}" y="{y}" width="{recency:.1f}" '
            f'height="16" fill="{RECENCY_COLOR}"><title>recency '
            f"{row['recency_contribution']:.6f}</title></rect>",
            f'<text x="{x0 + lexical + recency + 4:.1f}" y="{y + 13}" font-size="11">'
            f"{float(row['total']):.3f}</text>",
            "</g>",
        ]
    parts.append("</svg>")
    return "".join(parts)
