"""Notebook 08 helpers: the query playground, as a pure view model plus a thin widget layer.

``playground_view(state, catalog)`` turns one frozen ``PlaygroundState`` (query, limit,
as_of, weights, window, user, dataset) into a ``PlaygroundView``: the normalized query,
the funnel searched -> candidates -> hits, the hits with their full score breakdown and
provenance, and the rendered XML context. A rejected input becomes ``view.error``, a
one-line message naming the typed error. ``playground_figure(view)`` draws the funnel and
the stacked score contributions; ``hits_table_html(view)`` is the hits table the app shows
(``<table class="playground-hits">``, one ``td.memory-id`` per hit). All of these are pure:
the same state and stores give the same output, and nothing is written.

``PlaygroundApp`` only wires ipywidgets inputs to them (and times each refresh).
``PlaygroundCatalog`` builds each (dataset, user) store once per kernel, on first use, in a
temporary directory: the chapter's records, the course corpus, and a generated
10,000-record store per user (bulk-written by ``memorylib.synthetic``).
"""

from __future__ import annotations

import html
import statistics
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..datasets import (
    CHAPTER_USER,
    COURSE_AS_OF,
    COURSE_USERS,
    build_chapter_store,
    build_course_store,
)
from ..engine import RecallEngine
from ..errors import RemoteMemoryError
from ..interface import user_scope_for
from ..records import RecallQuery, RecallResult
from ..render import render_recall_context
from ..scoring import ScoringPolicy
from ..seed import TEACHING_AS_OF
from ..store import RemoteMemoryStore
from ..timestamps import parse_timestamp

__all__ = [
    "DATASETS",
    "DEFAULT_STATE",
    "GENERATED_RECORDS",
    "HIT_COLUMNS",
    "USERS",
    "DatasetSpec",
    "PlaygroundApp",
    "PlaygroundCatalog",
    "PlaygroundState",
    "PlaygroundView",
    "as_of_on",
    "check_isolation_query",
    "compare_rankings",
    "compare_users",
    "context_html",
    "hits_table_html",
    "measure_refresh",
    "playground_figure",
    "playground_svg",
    "playground_view",
    "summary_html",
    "summary_text",
]

GENERATED_RECORDS = 10_000
GENERATED_AS_OF = "2026-08-02T12:00:00Z"  # a day after memorylib.synthetic's newest capture
USERS: tuple[str, ...] = (CHAPTER_USER, *COURSE_USERS)


@dataclass(frozen=True)
class DatasetSpec:
    key: str
    label: str
    as_of: str  # the dataset's clock: the playground's default as_of for it
    default_user: str
    about: str


DATASETS: dict[str, DatasetSpec] = {
    spec.key: spec
    for spec in (
        DatasetSpec(
            "chapter",
            "chapter demo (7 records)",
            TEACHING_AS_OF,
            CHAPTER_USER,
            "the chapter's teaching store: one profile and six conversations of local-user",
        ),
        DatasetSpec(
            "course",
            "course corpus (Northwind Labs)",
            COURSE_AS_OF,
            COURSE_USERS[0],
            "a year of four engineers' memories, English and Chinese, with retractions",
        ),
        DatasetSpec(
            "generated",
            f"generated ({GENERATED_RECORDS:,} records)",
            GENERATED_AS_OF,
            COURSE_USERS[0],
            f"{GENERATED_RECORDS:,} seeded synthetic records per user (memorylib.synthetic)",
        ),
    )
}


# -- stores -------------------------------------------------------------------------------


class PlaygroundCatalog:
    """One read-only ``RecallEngine`` per (dataset, user), built on first use and kept.

    A user who owns nothing in a dataset (every course user in the chapter demo, for
    instance) gets an empty store of their own: recall searches 0 records. Stores live
    in ``root`` (default: a temporary directory removed with the catalog).
    """

    def __init__(
        self, root: str | Path | None = None, *, generated_records: int = GENERATED_RECORDS
    ) -> None:
        if root is None:  # removed when the catalog is garbage-collected or the kernel exits
            self._tmp = tempfile.TemporaryDirectory(prefix="memorylib-playground-")
            self.root = Path(self._tmp.name)
        else:
            self.root = Path(root)
        self.generated_records = generated_records
        self._engines: dict[tuple[str, str], RecallEngine] = {}
        self.build_seconds: dict[tuple[str, str], float] = {}

    def is_built(self, dataset: str, user: str) -> bool:
        return (dataset, user) in self._engines

    def engine(self, dataset: str, user: str) -> RecallEngine:
        key = (dataset, user)
        if key not in self._engines:
            if dataset not in DATASETS:
                raise KeyError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
            start = time.perf_counter()
            engine = RecallEngine(self._build(dataset, user))
            # warm the inverted index, so later recalls measure recall, not indexing
            engine.recall("warm up", limit=1, as_of=DATASETS[dataset].as_of, query_id="warm")
            self._engines[key] = engine
            self.build_seconds[key] = time.perf_counter() - start
        return self._engines[key]

    def store(self, dataset: str, user: str) -> RemoteMemoryStore:
        return self.engine(dataset, user).store

    def _build(self, dataset: str, user: str) -> RemoteMemoryStore:
        folder = self.root / dataset
        folder.mkdir(parents=True, exist_ok=True)
        empty = RemoteMemoryStore(folder / f"{user_scope_for(user)}.jsonl", user_id=user)
        if dataset == "chapter":
            return build_chapter_store(folder) if user == CHAPTER_USER else empty
        if dataset == "course":
            return build_course_store(folder, user) if user in COURSE_USERS else empty
        from ..synthetic import write_synthetic_store

        return write_synthetic_store(
            empty.path,
            self.generated_records,
            seed=USERS.index(user) if user in USERS else 0,
            user_id=user,
            bulk=True,
        )


# -- state -> view --------------------------------------------------------------------------


@dataclass(frozen=True)
class PlaygroundState:
    """Everything the student can change. Frozen: a new state per change."""

    query: str = "recall cache"
    limit: int = 5
    as_of: str = COURSE_AS_OF
    lexical_weight: float = 0.85
    recency_weight: float = 0.15
    recency_window_days: float = 30.0
    user: str = COURSE_USERS[0]
    dataset: str = "course"
    query_id: str = "q-08-playground"


DEFAULT_STATE = PlaygroundState()

HIT_COLUMNS = (
    "rank",
    "memory_id",
    "total",
    "lexical_contribution",
    "recency_contribution",
    "lexical_coverage",
    "matched_terms",
    "recency",
    "age_days",
    "captured_at",
    "source_id",
    "source_type",
    "title",
    "user_scope",
    "snippet",
)


@dataclass(frozen=True)
class PlaygroundView:
    """Everything one state produced. ``error`` is set (and the rest empty) on rejection."""

    state: PlaygroundState
    user_scope: str
    query: RecallQuery | None
    result: RecallResult | None
    hits: Any  # pandas DataFrame with HIT_COLUMNS
    funnel: Any  # pandas DataFrame: stage, records
    context: str
    error: str | None = None
    policy: ScoringPolicy | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def hit_ids(self) -> list[str]:
        return [] if self.result is None else [hit.memory_id for hit in self.result.hits]


def _empty_frames() -> tuple[Any, Any]:
    import pandas as pd

    return (
        pd.DataFrame(columns=list(HIT_COLUMNS)),
        pd.DataFrame({"stage": ["searched", "candidates", "hits"], "records": [0, 0, 0]}),
    )


def _age_days(captured_at: str, as_of: datetime) -> float:
    seconds = (as_of - parse_timestamp(captured_at, "captured_at")).total_seconds()
    return round(max(0.0, seconds / 86_400), 2)


def playground_view(state: PlaygroundState, catalog: PlaygroundCatalog) -> PlaygroundView:
    """Recall ``state.query`` for ``state.user`` in ``state.dataset`` and describe every step.

    Typed rejections (``RemoteMemoryError``: empty or punctuation-only query, limit out
    of range, a bad as_of, both weights 0, ...) become ``view.error``; other exceptions
    are bugs and propagate.
    """
    import pandas as pd

    scope = user_scope_for(state.user)
    try:
        policy = ScoringPolicy(
            lexical_weight=state.lexical_weight,
            recency_weight=state.recency_weight,
            recency_window_days=state.recency_window_days,
        )
        engine = catalog.engine(state.dataset, state.user)
        result = engine.recall(
            state.query,
            limit=state.limit,
            as_of=state.as_of,
            query_id=state.query_id,
            policy=policy,
        )
    except RemoteMemoryError as exc:
        hits, funnel = _empty_frames()
        message = f"{type(exc).__name__}: {exc}"
        return PlaygroundView(state, scope, None, None, hits, funnel, "", error=message)
    moment = parse_timestamp(state.as_of, "as_of")
    rows = []
    for hit in result.hits:
        b = hit.score_breakdown
        rows.append(
            {
                "rank": hit.rank,
                "memory_id": hit.memory_id,
                "total": b.total,
                "lexical_contribution": b.lexical_contribution,
                "recency_contribution": b.recency_contribution,
                "lexical_coverage": b.lexical_coverage,
                "matched_terms": f"{len(b.matched_terms)}/{b.query_term_count}: "
                + ", ".join(b.matched_terms),
                "recency": b.recency,
                "age_days": _age_days(hit.provenance.captured_at, moment),
                "captured_at": hit.provenance.captured_at,
                "source_id": hit.provenance.source_id,
                "source_type": hit.provenance.source_type,
                "title": hit.provenance.title,
                "user_scope": hit.scope.user_scope,
                "snippet": hit.snippet,
            }
        )
    hits = pd.DataFrame(rows, columns=list(HIT_COLUMNS))
    funnel = pd.DataFrame(
        {
            "stage": ["searched", "candidates", "hits"],
            "records": [result.searched_records, result.candidate_records, len(result.hits)],
        }
    )
    return PlaygroundView(
        state=state,
        user_scope=scope,
        query=result.query,
        result=result,
        hits=hits,
        funnel=funnel,
        context=render_recall_context(result),
        policy=policy,
    )


def as_of_on(day: date, dataset: str) -> str:
    """``day`` at the time of day of the dataset's clock (the picker chooses only a date)."""
    clock = parse_timestamp(DATASETS[dataset].as_of, "as_of")
    return f"{day.isoformat()}T{clock.strftime('%H:%M:%S')}Z"


# -- text and HTML ----------------------------------------------------------------------------


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
        f"scoring    as_of {result.as_of} · lexical {p.lexical_weight:g} · recency "
        f"{p.recency_weight:g} · window {p.recency_window_days:g} days · limit {s.limit}",
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
        f'data-user-scope="{view.user_scope}" data-dataset="{html.escape(s.dataset)}"'
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
    text = view.context or "(nothing rendered: no hits, so no <recalled_context> block)"
    return (
        '<details class="playground-context" open><summary>rendered context '
        "(what the model would see)</summary>"
        f'<pre style="{_PRE_STYLE};font-size:11px">{html.escape(text)}</pre></details>'
    )


def compare_users(state: PlaygroundState, users: Iterable[str], catalog: PlaygroundCatalog) -> Any:
    """One row per user for the same state: their scope, funnel, hits and the hits' scopes."""
    import pandas as pd

    rows = []
    for user in users:
        view = playground_view(replace(state, user=user), catalog)
        result = view.result
        rows.append(
            {
                "user": user,
                "user_scope": view.user_scope,
                "searched": result.searched_records if result else 0,
                "candidates": result.candidate_records if result else 0,
                "hits": ", ".join(view.hit_ids) or "-",
                "scopes of the hits": ", ".join(sorted(set(view.hits["user_scope"]))) or "-",
            }
        )
    return pd.DataFrame(rows)


def compare_rankings(states: dict[str, PlaygroundState], catalog: PlaygroundCatalog) -> Any:
    """Side-by-side rankings: one column per labelled state, one row per rank.

    Each cell reads ``memory_id (matched/terms, age in days)``.
    """
    import pandas as pd

    columns = {}
    for label, state in states.items():
        hits = playground_view(state, catalog).hits
        columns[label] = [
            f"{row['memory_id']} ({row['matched_terms'].split(':')[0]}, {row['age_days']:g} d)"
            for row in hits.to_dict("records")
        ]
    depth = max((len(c) for c in columns.values()), default=0)
    padded = {k: v + [""] * (depth - len(v)) for k, v in columns.items()}
    return pd.DataFrame(padded, index=pd.RangeIndex(1, depth + 1, name="rank"))


# -- the figure -------------------------------------------------------------------------------


def playground_figure(view: PlaygroundView) -> Any:
    """Left: the funnel searched -> candidates -> hits. Right: each hit's total, stacked
    as lexical + recency contribution. A plain ``matplotlib.figure.Figure`` (no pyplot),
    used for the static rendering; the live app draws the same panels as SVG
    (``playground_svg``), because rasterising this figure alone can exceed the refresh
    budget on a slow machine."""
    import matplotlib
    from matplotlib.figure import Figure

    # every label is ASCII: one installed family, so no lookup of missing CJK fonts
    with matplotlib.rc_context({"font.family": ["DejaVu Sans"]}):
        fig = Figure(figsize=(9.0, 3.2), dpi=100, layout="constrained")
        _draw_figure(view, fig)
    return fig


def _draw_figure(view: PlaygroundView, fig: Any) -> None:
    funnel_ax, score_ax = fig.subplots(1, 2, width_ratios=(1, 1.6))
    stages = list(view.funnel["stage"])[::-1]
    counts = [int(n) for n in view.funnel["records"]][::-1]
    funnel_ax.barh(stages, counts, color=[_FUNNEL_COLORS[s] for s in stages])
    top = max(counts) or 1
    for y, n in enumerate(counts):
        funnel_ax.text(n + top * 0.02, y, f"{n:,}", va="center", fontsize=9)
    funnel_ax.set_xlim(0, top * 1.25)
    funnel_ax.set_title("funnel", fontsize=10)
    funnel_ax.set_xlabel("records")
    if view.error or view.hits.empty:
        score_ax.set_axis_off()
        message = "query rejected" if view.error else "no hits (no_matching_terms)"
        score_ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="#666")
        return
    frame = view.hits.iloc[::-1]
    labels = [f"#{r} {m}" for r, m in zip(frame["rank"], frame["memory_id"], strict=True)]
    lexical = frame["lexical_contribution"].astype(float)
    recency = frame["recency_contribution"].astype(float)
    score_ax.barh(labels, lexical, color=LEXICAL_COLOR, label="lexical contribution")
    score_ax.barh(labels, recency, left=lexical, color=RECENCY_COLOR, label="recency contribution")
    for y, total in enumerate(frame["total"].astype(float)):
        score_ax.text(total + 0.01, y, f"{total:.3f}", va="center", fontsize=8)
    score_ax.set_xlim(0, 1.12)
    score_ax.set_xlabel("score (total = lexical + recency)")
    score_ax.set_title("score contributions per hit", fontsize=10)
    score_ax.tick_params(axis="y", labelsize=8)
    score_ax.legend(loc="lower right", fontsize=8, frameon=False)


LEXICAL_COLOR = "#3182bd"
RECENCY_COLOR = "#fd8d3c"
_FUNNEL_COLORS = {"searched": "#c6dbef", "candidates": "#9ecae1", "hits": "#3182bd"}


def playground_svg(view: PlaygroundView) -> str:
    """The figure's two panels as an inline ``<svg class="playground-chart">`` (pure, ~1 ms).

    Funnel bars are ``rect.funnel`` (``data-stage``, ``data-records``); each hit is a
    ``g.hit`` (``data-memory-id``) holding ``rect.lexical`` and ``rect.recency``, whose
    widths are the contributions on a scale where a score of 1.0 is 360 px.
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
    x0, scale = 500, 360
    parts.append(
        '<text x="300" y="14" font-weight="bold">score contributions per hit</text>'
        f'<rect x="560" y="4" width="10" height="10" fill="{LEXICAL_COLOR}"/>'
        '<text x="574" y="14">lexical</text>'
        f'<rect x="640" y="4" width="10" height="10" fill="{RECENCY_COLOR}"/>'
        '<text x="654" y="14">recency</text>'
    )
    if view.error or not rows:
        message = "query rejected" if view.error else "no hits (no_matching_terms)"
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


# -- the widget layer ---------------------------------------------------------------------------


class PlaygroundApp:
    """ipywidgets inputs wired to ``playground_view``; every change redraws every output.

    ``app.widget`` is the box to display. ``app.timings`` holds the last refresh's
    ``recall_view_ms`` (recall + view model) and ``refresh_ms`` (view model, then the
    summary, SVG chart, hits table and context rendered and pushed to the widgets).
    """

    def __init__(self, catalog: PlaygroundCatalog, state: PlaygroundState = DEFAULT_STATE) -> None:
        import ipywidgets as w

        self.catalog = catalog
        self.state = state
        self.view: PlaygroundView | None = None
        self.timings: dict[str, float] = {}
        self._quiet = False
        wide = {"description_width": "initial"}
        self.query = w.Text(
            value=state.query,
            description="query",
            continuous_update=True,
            layout=w.Layout(width="420px"),
            style=wide,
        )
        self.dataset = w.Dropdown(
            options=[(spec.label, key) for key, spec in DATASETS.items()],
            value=state.dataset,
            description="dataset",
            style=wide,
        )
        self.user = w.Dropdown(
            options=[(f"{u} · {user_scope_for(u)}", u) for u in USERS],
            value=state.user,
            description="user",
            layout=w.Layout(width="440px"),
            style=wide,
        )
        self.limit = w.IntSlider(
            value=state.limit, min=1, max=10, description="limit", continuous_update=True
        )
        self.as_of = w.DatePicker(
            value=parse_timestamp(state.as_of, "as_of").date(),
            description="as_of",
            style=wide,
        )
        self.lexical = w.FloatSlider(
            value=state.lexical_weight,
            min=0,
            max=1,
            step=0.05,
            description="lexical weight",
            style=wide,
            continuous_update=False,
        )
        self.recency = w.FloatSlider(
            value=state.recency_weight,
            min=0,
            max=1,
            step=0.05,
            description="recency weight",
            style=wide,
            continuous_update=False,
        )
        self.window = w.IntSlider(
            value=int(state.recency_window_days),
            min=1,
            max=365,
            description="window (days)",
            style=wide,
            continuous_update=False,
        )
        self.status = w.HTML(layout=w.Layout(min_height="20px"))
        self.summary = w.HTML()
        self.chart = w.HTML()
        self.table = w.HTML()
        self.context = w.HTML()
        # stable CSS hooks for the browser tests (and for anyone styling the app)
        hooks = ("query", "dataset", "user", "limit", "as_of", "status", "summary", "chart")
        for name in (*hooks, "table", "context"):
            getattr(self, name).add_class(f"playground-{name.replace('_', '-')}")
        inputs = (
            self.query,
            self.dataset,
            self.user,
            self.limit,
            self.as_of,
            self.lexical,
            self.recency,
            self.window,
        )
        for control in inputs:
            control.observe(self._on_change, names="value")
        self.widget = w.VBox(
            [
                w.HBox([self.query, self.dataset]),
                w.HBox([self.user, self.limit, self.as_of]),
                w.HBox([self.lexical, self.recency, self.window]),
                self.status,
                self.summary,
                self.chart,
                self.table,
                self.context,
            ]
        )
        self.widget.add_class("memorylib-playground")
        self.refresh()

    def _read_state(self) -> PlaygroundState:
        day = self.as_of.value
        return replace(
            self.state,
            query=self.query.value,
            dataset=self.dataset.value,
            user=self.user.value,
            limit=int(self.limit.value),
            # no date picked: an empty as_of, which recall rejects with a typed error
            as_of=as_of_on(day, self.dataset.value) if day is not None else "",
            lexical_weight=float(self.lexical.value),
            recency_weight=float(self.recency.value),
            recency_window_days=float(self.window.value),
        )

    def _on_change(self, change: dict[str, Any]) -> None:
        if self._quiet:
            return
        if change["owner"] is self.dataset:
            spec = DATASETS[self.dataset.value]
            self._quiet = True  # switching dataset resets its clock and user: one refresh
            try:
                self.as_of.value = parse_timestamp(spec.as_of, "as_of").date()
                self.user.value = spec.default_user
            finally:
                self._quiet = False
        self.refresh()

    def set(self, **changes: Any) -> PlaygroundView:
        """Change inputs from code (``app.set(query="...", limit=3)``) and refresh once."""
        controls = {
            "query": self.query,
            "dataset": self.dataset,
            "user": self.user,
            "limit": self.limit,
            "lexical_weight": self.lexical,
            "recency_weight": self.recency,
            "recency_window_days": self.window,
        }
        self._quiet = True
        try:
            for name, value in changes.items():
                if name == "as_of":
                    self.as_of.value = parse_timestamp(value, "as_of").date()
                else:
                    controls[name].value = value
        finally:
            self._quiet = False
        self.refresh()
        assert self.view is not None
        return self.view

    def refresh(self) -> None:
        state = self._read_state()
        if not self.catalog.is_built(state.dataset, state.user):
            self.status.value = (
                f"<i>building the {html.escape(DATASETS[state.dataset].label)} store for "
                f"{html.escape(state.user)} (once per kernel)…</i>"
            )
        try:
            self.catalog.engine(state.dataset, state.user)  # builds it now if needed
            start = time.perf_counter()
            view = playground_view(state, self.catalog)
            middle = time.perf_counter()
            self.summary.value = summary_html(view)
            self.chart.value = playground_svg(view)
            self.table.value = hits_table_html(view)
            self.context.value = context_html(view)
        except Exception as exc:  # a bug must not show the student a traceback
            self.table.value = (
                f'<div class="playground-error">Internal error — {type(exc).__name__}: '
                f"{html.escape(str(exc))}</div>"
            )
            self.status.value = ""
            return
        end = time.perf_counter()
        self.state, self.view = state, view
        self.timings = {
            "recall_view_ms": (middle - start) * 1000,
            "refresh_ms": (end - start) * 1000,
        }
        self.status.value = (
            f'<span class="playground-timing">last update: recall + view model '
            f"{self.timings['recall_view_ms']:.1f} ms · full refresh "
            f"{self.timings['refresh_ms']:.1f} ms</span>"
        )


# -- measuring ------------------------------------------------------------------------------------


def measure_refresh(
    app: PlaygroundApp,
    states: Iterable[dict[str, Any]],
    *,
    repeat: int = 3,
) -> Any:
    """Drive ``app`` through ``states`` (``app.set(**changes)``) ``repeat`` times per state.

    Returns one row per (dataset, measure): median, p95 and max in ms over every refresh.
    ``recall + view model`` is ``playground_view`` alone; ``full refresh`` adds the summary,
    SVG chart, hits table and context HTML, handed to the widgets (which send them to the
    browser). The browser's own drawing is measured by the browser tests.
    """
    import pandas as pd

    samples: dict[tuple[str, str], list[float]] = {}
    for changes in states:
        for _ in range(repeat):
            app.set(**changes)
            dataset = app.state.dataset
            samples.setdefault((dataset, "recall + view model"), []).append(
                app.timings["recall_view_ms"]
            )
            samples.setdefault((dataset, "full refresh"), []).append(app.timings["refresh_ms"])
    rows = []
    for (dataset, measure), values in samples.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        rows.append(
            {
                "dataset": dataset,
                "measure": measure,
                "refreshes": len(values),
                "median_ms": round(statistics.median(values), 1),
                "p95_ms": round(p95, 1),
                "max_ms": round(max(values), 1),
                "budget_ms": 50 if measure == "recall + view model" else 300,
            }
        )
    return pd.DataFrame(rows)


# -- your turn ----------------------------------------------------------------------------------


def check_isolation_query(
    answer: object,
    catalog: PlaygroundCatalog,
    *,
    users: Sequence[str] = (COURSE_USERS[0], COURSE_USERS[1]),
    dataset: str = "course",
) -> str:
    """Self-check: a query that gives user A hits in ``dataset`` and user B none at all.

    Returns ``✅ ...``, ``❌ ...`` with a hint, or ``⏳ ...`` for the ``...`` placeholder.
    """
    if answer is ...:
        return "⏳ Not answered yet: replace ... with a query string."
    if not isinstance(answer, str):
        return f"❌ The query must be a str, got {type(answer).__name__}."
    first, second = users
    clock = DATASETS[dataset].as_of
    views = [
        playground_view(
            PlaygroundState(query=answer, user=user, dataset=dataset, as_of=clock), catalog
        )
        for user in users
    ]
    a, b = views
    if a.error:
        return f"❌ The query was rejected: {a.error}"
    if not a.hit_ids:
        return (
            f"❌ {first} gets no hits either (searched {a.result.searched_records}): pick words "
            f"from one of {first}'s records (try the playground with that user first)."
        )
    if b.hit_ids:
        return (
            f"❌ {second} also gets hits: {b.hit_ids} — records of {second}'s own that share a "
            f"term with {a.query.terms}. Pick words only {first} used."
        )
    scopes = {hit.scope.user_scope for hit in a.result.hits}
    assert scopes == {a.user_scope}, scopes  # isolation, checked rather than assumed
    return (
        f"✅ {first} gets {len(a.hit_ids)} hit(s) {a.hit_ids}, all in user_scope {a.user_scope}; "
        f"{second} searched {b.result.searched_records} of their own records and found none. "
        "Same query, same pipeline: the store a query may read is fixed by its user_scope."
    )
