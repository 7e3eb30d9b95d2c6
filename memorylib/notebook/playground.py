"""Notebook 08's playground: a frozen state in, a view out, and the widgets around them."""

from __future__ import annotations

import html
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import date, datetime
from itertools import zip_longest
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from memorylib import datasets
from memorylib.datasets import CHAPTER_USER, COURSE_AS_OF, COURSE_USERS
from memorylib.engine import RecallEngine
from memorylib.errors import RemoteMemoryError, RemoteMemoryValidationError
from memorylib.interface import user_scope_for
from memorylib.notebook.buildit import Pipeline
from memorylib.notebook.charts import COLOURS
from memorylib.notebook.exercises import CheckResult, Question, check_value, right, wrong
from memorylib.notebook.messages import Said, said, say
from memorylib.query import extract_terms, normalize_text
from memorylib.ranking import ScoreFunction
from memorylib.records import RecallHit, RecallQuery, RecallResult, StoredMemory
from memorylib.render import render_recall_context
from memorylib.scoring import SCORERS, ScoringPolicy
from memorylib.store import RemoteMemoryStore
from memorylib.synthetic import write_synthetic_store
from memorylib.timestamps import TEACHING_AS_OF, age_in_days, parse_timestamp

GENERATED_RECORDS = 10_000
USERS: tuple[str, ...] = (CHAPTER_USER, *COURSE_USERS)


class DatasetSpec(NamedTuple):
    as_of: str  # the dataset's clock: the playground's default as_of for it
    default_user: str
    label: Said  # said when shown: the notebook's language
    about: Said


# memorylib.synthetic's newest capture is a day and a half before TEACHING_AS_OF
_CLOCKS = {"chapter": TEACHING_AS_OF, "course": COURSE_AS_OF, "generated": TEACHING_AS_OF}
DATASETS: dict[str, DatasetSpec] = {
    key: DatasetSpec(
        as_of,
        CHAPTER_USER if key == "chapter" else COURSE_USERS[0],
        said(f"playground.dataset.{key}", records=GENERATED_RECORDS),
        said(f"playground.about.{key}", records=GENERATED_RECORDS),
    )
    for key, as_of in _CLOCKS.items()
}


class PlaygroundCatalog:
    """One read-only ``RecallEngine`` per (dataset, user), built on first use and kept."""

    def __init__(
        self, root: str | Path | None = None, *, generated_records: int = GENERATED_RECORDS
    ):
        if root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="memorylib-playground-")
            root = self._tmp.name
        self.root, self.generated_records = Path(root), generated_records
        self._engines: dict[tuple[str, str], RecallEngine] = {}
        self._records: dict[tuple[str, str], tuple[StoredMemory, ...]] = {}
        self.build_seconds: dict[tuple[str, str], float] = {}
        self.own_scorer: ScoreFunction | None = None  # the "yours" scorer

    def use_scorer(self, score: ScoreFunction | None) -> None:
        """Register a scoring function of yours as the "yours" scorer; ``None`` removes it."""
        if score is not None and not callable(score):
            raise TypeError(say("playground.not_a_scorer", kind=type(score).__name__))
        self.own_scorer = score

    def is_built(self, dataset: str, user: str) -> bool:
        return (dataset, user) in self._engines

    def engine(self, dataset: str, user: str) -> RecallEngine:
        if (dataset, user) not in self._engines:
            if dataset not in DATASETS:
                names = sorted(DATASETS)
                raise KeyError(say("playground.no_dataset", datasets=names, dataset=dataset))
            start = time.perf_counter()
            engine = RecallEngine(self._build(dataset, user))
            # warm the inverted index, so later recalls measure recall, not indexing
            engine.recall("warm up", limit=1, as_of=DATASETS[dataset].as_of, query_id="warm")
            self._engines[dataset, user] = engine
            self.build_seconds[dataset, user] = time.perf_counter() - start
        return self._engines[dataset, user]

    def store(self, dataset: str, user: str) -> RemoteMemoryStore:
        return self.engine(dataset, user).store

    def records(self, dataset: str, user: str) -> tuple[StoredMemory, ...]:
        """Every record of the (read-only) store, read once."""
        if (dataset, user) not in self._records:
            self._records[dataset, user] = tuple(self.store(dataset, user).read_all())
        return self._records[dataset, user]

    def _build(self, dataset: str, user: str) -> RemoteMemoryStore:
        # a user who owns nothing in a dataset gets an empty store
        folder = self.root / dataset
        folder.mkdir(parents=True, exist_ok=True)
        empty = RemoteMemoryStore(folder / f"{user_scope_for(user)}.jsonl", user_id=user)
        if dataset == "chapter":
            return datasets.build_chapter_store(folder) if user == CHAPTER_USER else empty
        if dataset == "course":
            return datasets.build_course_store(folder, user) if user in COURSE_USERS else empty
        seed = USERS.index(user) if user in USERS else 0
        return write_synthetic_store(
            empty.path, self.generated_records, seed=seed, user_id=user, bulk=True
        )


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
    scorer: str = "coverage"  # coverage, bm25, bm25+recency, or "yours" (catalog.use_scorer)


DEFAULT_STATE = PlaygroundState()
YOURS = "yours"
# The weights a scorer starts with when it is picked (the sliders stay free afterwards):
# BM25 alone is lexical only, as in ScoringPolicy.bm25(); the others keep the chapter's.
SCORER_PRESETS = {"coverage": (0.85, 0.15), "bm25": (1.0, 0.0), "bm25+recency": (0.85, 0.15)}
SCORER_PRESETS[YOURS] = (0.85, 0.15)


def _preset(scorer: str) -> dict[str, float]:
    return dict(zip(("lexical_weight", "recency_weight"), SCORER_PRESETS[scorer], strict=True))


def scorer_options(catalog: PlaygroundCatalog) -> list[tuple[str, str]]:
    """(label, key) for the scorer dropdown; "yours" only once a function is registered."""
    keys = [*SCORERS, YOURS] if catalog.own_scorer is not None else list(SCORERS)
    return [(say("playground.coverage") if k == "coverage" else k, k) for k in keys]


HIT_COLUMNS = tuple(
    "rank memory_id total lexical_contribution recency_contribution lexical_score "  # noqa: SIM905
    "lexical_coverage matched_terms recency age_days captured_at source_id source_type "
    "title user_scope snippet".split()
)
_STAGES = ("searched", "candidates", "hits")


@dataclass(frozen=True)
class PlaygroundView:
    """Everything one state produced. ``error`` is set (and the rest empty) on rejection."""

    state: PlaygroundState
    user_scope: str
    query: RecallQuery | None
    result: RecallResult | None
    hits: pd.DataFrame  # one row per hit, HIT_COLUMNS
    funnel: pd.DataFrame  # stage (searched, candidates, hits), records
    context: str
    error: str | None = None
    policy: ScoringPolicy | None = None

    @property
    def hit_ids(self) -> list[str]:
        return [] if self.result is None else [hit.memory_id for hit in self.result.hits]


def _hit_row(hit: RecallHit, moment: datetime) -> dict[str, Any]:
    """The breakdown's and the provenance's fields, the hit's own, and three made here (the
    frame keeps ``HIT_COLUMNS`` of them)."""
    b, source = hit.score_breakdown, hit.provenance
    age = age_in_days(parse_timestamp(source.captured_at, "captured_at"), moment)
    return {
        **asdict(b),
        **asdict(source),
        "rank": hit.rank,
        "memory_id": hit.memory_id,
        "user_scope": hit.scope.user_scope,
        "snippet": hit.snippet,
        # the scorer's own lexical number: coverage, BM25, or BM25 / the best BM25
        "lexical_score": b.lexical_coverage if b.lexical_score is None else b.lexical_score,
        "matched_terms": f"{len(b.matched_terms)}/{b.query_term_count}: "
        + ", ".join(b.matched_terms),
        "age_days": round(age, 2),
    }


def playground_view(state: PlaygroundState, catalog: PlaygroundCatalog) -> PlaygroundView:
    """Recall ``state.query``; a typed rejection or a failing function of yours -> ``error``."""
    scope = user_scope_for(state.user)
    try:
        scorer = "coverage" if state.scorer == YOURS else state.scorer
        weights = (state.lexical_weight, state.recency_weight, state.recency_window_days)
        policy = ScoringPolicy(*weights, scorer=scorer)
        engine = catalog.engine(state.dataset, state.user)
        if state.scorer == YOURS:  # the taught path, with the registered function
            if catalog.own_scorer is None:
                raise RemoteMemoryValidationError(say("playground.no_scorer"))
            engine = RecallEngine(engine.store, score=catalog.own_scorer)
        result = engine.recall(
            state.query, limit=state.limit, as_of=state.as_of, query_id=state.query_id,
            policy=policy,
        )  # fmt: skip
    except Exception as exc:
        if isinstance(exc, RemoteMemoryError):
            error = f"{type(exc).__name__}: {exc}"
        elif state.scorer == YOURS:  # only a student's function gets here; ours: a bug
            error = say("playground.scorer_failed", error=f"{type(exc).__name__}: {exc}")
        else:
            raise
        empty = pd.DataFrame({"stage": _STAGES, "records": [0, 0, 0]})
        hits = pd.DataFrame(columns=list(HIT_COLUMNS))
        return PlaygroundView(state, scope, None, None, hits, empty, "", error=error)
    moment = parse_timestamp(state.as_of, "as_of")
    rows = [_hit_row(hit, moment) for hit in result.hits]
    counts = [result.searched_records, result.candidate_records, len(result.hits)]
    return PlaygroundView(
        state, scope, result.query, result, pd.DataFrame(rows, columns=list(HIT_COLUMNS)),
        pd.DataFrame({"stage": _STAGES, "records": counts}), render_recall_context(result),
        policy=policy,
    )  # fmt: skip


def as_of_on(day: date, dataset: str) -> str:
    """``day`` at the time of day of the dataset's clock (the picker chooses only a date)."""
    clock = parse_timestamp(DATASETS[dataset].as_of, "as_of")
    return f"{day.isoformat()}T{clock.strftime('%H:%M:%S')}Z"


def summary_text(view: PlaygroundView) -> str:
    """The dataset and user, then the normalized query, the policy and the funnel."""
    s = view.state
    label = DATASETS[s.dataset].label if s.dataset in DATASETS else s.dataset
    lines = [say("playground.summary.dataset", label=label, user=s.user, scope=view.user_scope)]
    if view.error:
        return "\n".join([*lines, say("playground.summary.rejected", error=view.error)])
    assert view.query is not None and view.result is not None and view.policy is not None
    p, r, q = view.policy, view.result, view.query
    retracted = r.retracted_records and say("playground.summary.retracted", n=r.retracted_records)
    lines.append(say(
        "playground.summary.query", text=q.text, normalized=q.normalized_text, terms=list(q.terms),
        scorer=s.scorer, as_of=q.issued_at, lexical=p.lexical_weight, recency=p.recency_weight,
        window=p.recency_window_days, limit=s.limit, searched=r.searched_records,
        candidates=r.candidate_records, hits=len(r.hits), retracted=retracted or "",
    ))  # fmt: skip
    if r.empty_reason:
        lines.append(say("playground.summary.empty", reason=r.empty_reason))
    return "\n".join(lines)


# The widgets' HTML boxes set a 28 px line height and a proportional font: reset both here.
_PRE = "margin:0;line-height:1.35;font-family:monospace;white-space:pre-wrap"
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
        value = f"{value:.2f}" if column == "age_days" else f"{value:.6f}"
    return f'<td class="{column.replace("_", "-")}">{html.escape(str(value))}</td>'


def hits_table_html(view: PlaygroundView) -> str:
    """``table.playground-hits`` (its ``data-*`` repeat the state), or ``div.playground-error``."""
    s = view.state
    attrs = (
        f'data-query="{html.escape(s.query)}" data-limit="{s.limit}" '
        f'data-user-scope="{view.user_scope}" data-dataset="{html.escape(s.dataset)}" '
        f'data-scorer="{html.escape(s.scorer)}"'
    )
    if view.error or view.result is None:
        rejected = html.escape(say("playground.rejected", error=view.error or ""))
        style = "color:#a61b1b;padding:6px 0"
        return f'<div class="playground-error" {attrs} style="{style}">{rejected}</div>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in HIT_COLUMNS)
    body = "".join(
        f'<tr data-memory-id="{html.escape(str(row["memory_id"]))}">'
        + "".join(_cell(c, row[c]) for c in HIT_COLUMNS)
        + "</tr>"
        for row in view.hits.to_dict("records")
    )
    result = view.result
    caption = (
        say("playground.caption.hits", hits=len(result.hits), candidates=result.candidate_records)
        if result.hits
        else say("playground.caption.none", reason=result.empty_reason)
    )
    return (
        f'{_TABLE_CSS}<div style="overflow-x:auto">'
        f'<table class="playground-hits" {attrs} data-hits="{len(result.hits)}">'
        f"<caption>{html.escape(caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def context_html(view: PlaygroundView) -> str:
    """The rendered XML context, escaped, in a ``<details class="playground-context">``."""
    text = view.context or say("playground.context.none")
    summary = html.escape(say("playground.context.summary"))
    return (
        f'<details class="playground-context" open><summary>{summary}</summary>'
        f'<pre style="{_PRE};font-size:11px">{html.escape(text)}</pre></details>'
    )


def playground_svg(view: PlaygroundView) -> str:
    """``svg.playground-chart``: the funnel, then each hit's stacked score (360 px for 1.0).
    Drawn at 4/3 of its 900-unit layout (1200 px wide, narrower if its column is): 15-unit text
    is 20 px, 15 pt, on a 1280x720 slide."""
    height = max(120, 40 + 22 * len(view.hits))
    lexical, recency = COLOURS["lexical"], COLOURS["recency"]
    words = {part: say(f"playground.chart.{part}") for part in ("lexical", "recency")}
    parts = [
        f'<svg class="playground-chart" xmlns="http://www.w3.org/2000/svg" width="1200" '
        f'height="{-(-height * 4 // 3)}" viewBox="0 0 900 {height}" style="max-width:100%;'
        f'height:auto" font-family="sans-serif" font-size="15">'
        f'<text x="0" y="14" font-weight="bold">{say("playground.chart.funnel")}</text>'
    ]
    counts = [int(n) for n in view.funnel["records"]]
    for i, (stage, n) in enumerate(zip(view.funnel["stage"], counts, strict=True)):
        y, width = 28 + 26 * i, max(1.0, 170 * n / (max(counts) or 1)) if n else 0.0
        parts.append(
            f'<text x="0" y="{y + 14}">{html.escape(stage)}</text><rect class="funnel" '
            f'data-stage="{html.escape(stage)}" data-records="{n}" x="90" y="{y}" '
            f'width="{width:.1f}" height="18" fill="{COLOURS[stage]}"/>'
            f'<text x="{94 + width:.1f}" y="{y + 14}">{n:,}</text>'
        )
    scorer = "" if view.state.scorer == "coverage" else f" · {html.escape(view.state.scorer)}"
    parts.append(
        f'<text x="300" y="14" font-weight="bold">{say("playground.chart.scores")}{scorer}</text>'
    )
    for x, part in ((620, "lexical"), (710, "recency")):  # the legend
        parts.append(
            f'<rect x="{x}" y="4" width="10" height="10" fill="{COLOURS[part]}"/>'
            f'<text x="{x + 14}" y="14">{words[part]}</text>'
        )
    if view.error:
        parts.append(f'<text x="300" y="60" fill="#666">{say("playground.chart.rejected")}</text>')
    elif view.hits.empty:
        reason = view.result.empty_reason if view.result is not None else None
        message = say("playground.chart.none", reason=reason)
        parts.append(f'<text x="300" y="60" fill="#666">{message}</text>')
    scale = 360 / max([1.0, *(float(t) for t in view.hits["total"])])
    for i, row in enumerate(view.hits.to_dict("records")):
        y, lex, rec = 28 + 22 * i, row["lexical_contribution"], row["recency_contribution"]
        left, right_part = scale * float(lex), scale * float(rec)
        memory_id = html.escape(str(row["memory_id"]))
        parts.append(
            f'<g class="hit" data-memory-id="{memory_id}"><text x="300" y="{y + 13}">'
            f"#{row['rank']} {memory_id}</text>"
            f'<rect class="lexical" x="480" y="{y}" width="{left:.1f}" height="16" '
            f'fill="{lexical}"><title>{words["lexical"]} {lex:.6f}</title></rect>'
            f'<rect class="recency" x="{480 + left:.1f}" y="{y}" width="{right_part:.1f}" '
            f'height="16" fill="{recency}"><title>{words["recency"]} {rec:.6f}</title></rect>'
            f'<text x="{480 + left + right_part + 4:.1f}" y="{y + 13}">'
            f"{float(row['total']):.3f}</text></g>"
        )
    return "".join([*parts, "</svg>"])


class PlaygroundApp:
    """ipywidgets inputs wired to ``playground_view`` (HTML outputs: an Output widget's routed
    messages can stall headless runs); every change redraws every output."""

    def __init__(self, catalog: PlaygroundCatalog, state: PlaygroundState = DEFAULT_STATE) -> None:
        import ipywidgets as w

        self.catalog, self.state = catalog, state
        self.view: PlaygroundView | None = None
        self.timings: dict[str, float] = {}
        self.after_refresh: list[Callable[[PlaygroundApp], None]] = []  # use_pipeline's panel
        self._quiet = False
        wide = {"style": {"description_width": "initial"}}
        slider = {"continuous_update": False, **wide}
        self.query = w.Text(layout=w.Layout(width="420px"), **wide)
        self.dataset = w.Dropdown(options=[(str(s.label), k) for k, s in DATASETS.items()], **wide)
        self.user = w.Dropdown(
            options=[(f"{u} · {user_scope_for(u)}", u) for u in USERS],
            layout=w.Layout(width="440px"),
            **wide,
        )
        self.limit = w.IntSlider(min=1, max=10)
        self.as_of = w.DatePicker(**wide)
        self.scorer = w.Dropdown(options=scorer_options(catalog), **wide)
        self.lexical, self.recency = (
            w.FloatSlider(min=0, max=1, step=0.05, **slider) for _ in "lr"
        )
        self.window = w.IntSlider(min=1, max=365, step=1, **slider)
        self.status = w.HTML(layout=w.Layout(min_height="20px"))
        self.summary, self.chart, self.table, self.context = (w.HTML() for _ in range(4))
        for name, widget in list(vars(self).items()):  # playground-query, ... for the tests
            if isinstance(widget, w.DOMWidget) and name not in ("lexical", "recency", "window"):
                widget.add_class(f"playground-{name.replace('_', '-')}")
        self._controls = {
            "query": self.query, "dataset": self.dataset, "user": self.user,
            "limit": self.limit, "as_of": self.as_of, "scorer": self.scorer,
            "lexical_weight": self.lexical, "recency_weight": self.recency,
            "recency_window_days": self.window,
        }  # fmt: skip
        for field, control in self._controls.items():
            control.description = say(f"playground.widget.{field}")
            control.observe(self._on_change, names="value")
        self._quietly(**{field: getattr(state, field) for field in self._controls})
        self.widget = w.VBox(
            [
                w.HBox([self.query, self.dataset]),
                w.HBox([self.user, self.limit, self.as_of]),
                w.HBox([self.scorer, self.lexical, self.recency, self.window]),
                *(self.status, self.summary, self.chart, self.table, self.context),
            ]
        )
        self.widget.add_class("memorylib-playground")
        self.refresh()

    def _read_state(self) -> PlaygroundState:
        values = {field: control.value for field, control in self._controls.items()}
        day = values["as_of"]
        # no date picked: an empty as_of, which recall rejects with a typed error
        values["as_of"] = as_of_on(day, values["dataset"]) if day is not None else ""
        values["recency_window_days"] = float(values["recency_window_days"])
        return replace(self.state, **values)

    def _quietly(self, options: list[tuple[str, str]] | None = None, **values: Any) -> None:
        """Set inputs by state field (the scorer menu's ``options`` first), not refreshing."""
        self._quiet = True
        try:
            if options is not None:
                self.scorer.options = options
            for name, value in values.items():
                if name == "as_of" and isinstance(value, str):
                    value = parse_timestamp(value, "as_of").date()
                self._controls[name].value = value
        finally:
            self._quiet = False

    def _on_change(self, change: dict[str, Any]) -> None:
        if self._quiet:
            return
        if change["owner"] is self.dataset:  # a dataset brings its own clock and user
            spec = DATASETS[self.dataset.value]
            self._quietly(as_of=spec.as_of, user=spec.default_user)
        if change["owner"] is self.scorer:  # a scorer starts from its own weights
            self._quietly(**_preset(self.scorer.value))
        self.refresh()

    def use_scorer(self, score: ScoreFunction | None) -> PlaygroundView:
        """Register and show ``score`` as the "yours" scorer; ``None`` goes back to coverage."""
        self.catalog.use_scorer(score)
        key = YOURS if score is not None else "coverage"
        self._quietly(scorer_options(self.catalog), scorer=key, **_preset(key))
        return self.set()

    def set(self, **changes: Any) -> PlaygroundView:
        """Change inputs from code (``app.set(query="...", limit=3)``) and refresh once."""
        self._quietly(**changes)
        self.refresh()
        assert self.view is not None
        return self.view

    def refresh(self) -> None:
        state = self._read_state()
        if not self.catalog.is_built(state.dataset, state.user):
            label = DATASETS[state.dataset].label
            building = html.escape(say("playground.building", label=label, user=state.user))
            self.status.value = f"<i>{building}</i>"
        try:
            self.catalog.engine(state.dataset, state.user)  # builds it now if needed
            start = time.perf_counter()
            view = playground_view(state, self.catalog)
            middle = time.perf_counter()
            css = "playground-summary" + (" playground-error" if view.error else "")
            summary = html.escape(summary_text(view))
            self.summary.value = f'<pre class="{css}" style="{_PRE};font-size:12px">{summary}</pre>'
            self.chart.value = playground_svg(view)
            self.table.value = hits_table_html(view)
            self.context.value = context_html(view)
        except Exception as exc:  # a bug must not show the student a traceback
            internal = say("playground.internal", error=f"{type(exc).__name__}: {exc}")
            self.table.value = f'<div class="playground-error">{html.escape(internal)}</div>'
            self.status.value = ""
            return
        end = time.perf_counter()
        self.state, self.view = state, view
        recall, refresh = (middle - start) * 1e3, (end - start) * 1e3
        self.timings = {"recall_view_ms": recall, "refresh_ms": refresh}
        timing = say("playground.timing", recall=recall, refresh=refresh)
        self.status.value = f'<span class="playground-timing">{html.escape(timing)}</span>'
        for hook in self.after_refresh:
            hook(self)


AUTO_RECORDS = 2_000  # your pipeline reads every record per query: larger stores are skipped


def _yours_cells(hit: RecallHit | None) -> str:
    if hit is None:
        return "<td></td><td></td>"
    return f"<td>{html.escape(hit.memory_id)}</td><td>{hit.score_breakdown.total:.6f}</td>"


def yours_html(state: PlaygroundState, catalog: PlaygroundCatalog, pipeline: Pipeline) -> str:
    """Your pipeline beside the library's (the taught path, the chapter's weights whatever the
    sliders say: your scorer implements the chapter's formula), and where they first differ."""
    records = catalog.records(state.dataset, state.user)
    names = ", ".join(pipeline.yours) or say("playground.yours.none")
    head = "<b>" + say("playground.yours.head") + "</b> · "
    head += html.escape(say("playground.yours.functions", names=names))

    def refused(note: str) -> str:
        return (
            f'<div class="playground-yours-view" data-same="no">{head}<br>{html.escape(note)}</div>'
        )

    if len(records) > AUTO_RECORDS:
        return refused(say("playground.yours.skipped", records=len(records)))
    try:
        comparison = pipeline.compare(
            state.query, records, user_scope=user_scope_for(state.user), as_of=state.as_of,
            limit=state.limit, query_id=state.query_id,
        )  # fmt: skip
    except RemoteMemoryError as exc:
        return refused(say("playground.rejected", error=f"{type(exc).__name__}: {exc}"))
    runs = [
        run.result.hits if run.result else () for run in (comparison.reference, comparison.yours)
    ]
    rows = "".join(
        f"<tr><td>{n}</td>{_yours_cells(ours)}{_yours_cells(theirs)}</tr>"
        for n, (ours, theirs) in enumerate(zip_longest(*runs), 1)
    )
    fields = ("scorer", "lexical_weight", "recency_weight", "recency_window_days")
    chapter = ScoringPolicy()  # the policy your scorer implements
    same = all(getattr(state, field) == getattr(chapter, field) for field in fields)
    policy = "" if same else "<br>" + say("playground.yours.policy")
    difference = comparison.difference
    verdict = say("playground.yours.same") if difference is None else say(
        "playground.yours.differs", stage=f"<b>{html.escape(difference[0])}</b>",
        detail=html.escape(difference[1]),
    )  # fmt: skip
    names = ("rank", "library", "total", "yours", "total")
    columns = "".join("<th>" + say(f"playground.yours.{name}") + "</th>" for name in names)
    return (
        f'<div class="playground-yours-view" data-query="{html.escape(state.query)}" '
        f'data-same="{"yes" if difference is None else "no"}" style="font-size:12px">{head}{policy}'
        f'<table class="playground-yours-hits"><tr>{columns}</tr>{rows}</table>'
        f'<div class="playground-yours-verdict">{verdict}</div></div>'
    )


def use_pipeline(app: PlaygroundApp, pipeline: Pipeline) -> Any:
    """Show ``pipeline`` beside the library's under ``app`` after every refresh; the panel."""
    import ipywidgets as w

    def show(app: PlaygroundApp) -> None:
        app.yours_panel.value = yours_html(app.state, app.catalog, app.yours_pipeline)

    if getattr(app, "yours_panel", None) is None:
        app.yours_panel = w.HTML()
        app.yours_panel.add_class("playground-yours")
        app.widget.children = (*app.widget.children, app.yours_panel)
        app.after_refresh.append(show)
    app.yours_pipeline = pipeline
    show(app)
    return app.yours_panel


# The exercise asks for a word found in the playground, so a word of any record the course
# printed before it is refused (the whole record: a superset of what is printed, and a rule a
# student can read): first the hits of 08's opening state for Mei and of "cache TTL" for
# each course user...
PRINTED_HITS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (DEFAULT_STATE.query, (COURSE_USERS[0],)),
    ("cache TTL", COURSE_USERS),
)


def _ids(listed: str) -> tuple[str, ...]:
    """ "mei-conv-002 003 omar-conv-006" -> the ids; a bare number keeps the prefix before."""
    ids: list[str] = []
    for word in listed.split():
        ids.append(ids[-1].rsplit("-", 1)[0] + "-" + word if word.isdigit() else word)
    return tuple(ids)


# ...then every course record shown on screen before 08's exercise, by the first notebook
# that names one or prints its text, 08's own cells included: 07b, for one, prints
# mei-conv-053 in full, and "pgvector" would otherwise pass. tests/test_notebooks_structure.py
# fails when a saved notebook shows a record this table does not list.
SHOWN_BEFORE: dict[str, tuple[str, ...]] = {
    "00": _ids("mei-conv-001"),
    "01": _ids("mei-prof-01 omar-prof-01 sam-conv-018 sam-prof-01 02 03"),
    "03": _ids(
        "mei-conv-002 003 005 007 008 009 011 012 014 015 016 017 019 023 026 027 028 030 033 "
        "034 035 037 038 039 040 043 044 047 048 049 052 053 056 058 059 063 064 067 069 070 "
        "mei-prof-03 omar-conv-006"
    ),
    "05": _ids("mei-conv-018 omar-conv-001 005 010 012 014 015 020 023 025 031 042"),
    "06": _ids("mei-conv-057"),
    "06b": _ids("mei-conv-041 mei-prof-02 mei-retr-01"),
    "06c": _ids("omar-conv-007 sam-conv-003 wen-conv-012"),
    "08": _ids("omar-conv-003 omar-prof-03 sam-conv-007 013 026 wen-conv-025"),
}


def shown_before(memory_id: str) -> str:
    """Where the course showed ``memory_id`` first: "in notebook NN" or "above"."""
    for notebook, shown in SHOWN_BEFORE.items():
        if memory_id in shown and notebook != "08":
            return say("playground.shown.notebook", notebook=notebook)
    return say("playground.shown.above")


def printed_records(catalog: PlaygroundCatalog) -> tuple[StoredMemory, ...]:
    """The records of ``PRINTED_HITS`` as the notebook shows them, then ``SHOWN_BEFORE``'s."""
    states = [replace(DEFAULT_STATE, query=q, user=u) for q, users in PRINTED_HITS for u in users]
    hits = [memory_id for state in states for memory_id in playground_view(state, catalog).hit_ids]
    stored = {r.memory_id: r for user in COURSE_USERS for r in catalog.records("course", user)}
    wanted = {memory_id for shown in SHOWN_BEFORE.values() for memory_id in shown}
    return tuple(stored[m] for m in dict.fromkeys([*hits, *(m for m in stored if m in wanted)]))


def printed_words(catalog: PlaygroundCatalog) -> dict[str, str]:
    """Each term of a ``printed_records`` record (title, summary, content) -> its first id."""
    words: dict[str, str] = {}
    for record in printed_records(catalog):
        text = f"{record.source.title} {record.summary} {record.content}"
        for term in extract_terms(normalize_text(text)):
            words.setdefault(term, record.memory_id)
    return words


def check_isolation_query(answer: object, catalog: PlaygroundCatalog) -> CheckResult:
    """Self-check: a query that gives Mei hits and Omar none, with no word shown before."""
    first, second = COURSE_USERS[:2]

    def judge(query: str) -> CheckResult:
        a, b = (
            playground_view(replace(DEFAULT_STATE, query=query, user=user), catalog)
            for user in (first, second)
        )
        if a.error or a.result is None or a.query is None:
            return wrong(say("playground.iso.rejected", error=a.error))
        if not a.hit_ids:
            searched = a.result.searched_records
            return wrong(say("playground.iso.no_hits", first=first, searched=searched))
        names = {"first": first, "second": second}
        if b.hit_ids:
            return wrong(say("playground.iso.both", **names, hits=b.hit_ids, terms=a.query.terms))
        printed = printed_words(catalog)
        word = next((term for term in a.query.terms if term in printed), None)
        if word is not None:
            record, where = printed[word], shown_before(printed[word])
            return wrong(
                say("playground.iso.printed", **names, word=word, record=record, where=where)
            )
        assert b.result is not None  # the same query and clock as a's: accepted too
        scopes = {hit.scope.user_scope for hit in a.result.hits}
        assert scopes == {a.user_scope}, scopes  # isolation, checked rather than assumed
        return right(
            say(
                "playground.iso.right", **names, n=len(a.hit_ids), hits=a.hit_ids,
                scope=a.user_scope, searched=b.result.searched_records,
            )
        )  # fmt: skip

    return check_value(
        answer, judge, placeholder=say("playground.iso.placeholder"), kind=str,
        described=say("playground.iso.described"),
    )  # fmt: skip


ISOLATION_QUESTION = Question(
    prompt=said("playground.why.prompt"),
    choices=tuple(said(f"playground.why.{letter}") for letter in "ABCD"),
    accepted=("C",),
    hints={letter: said(f"playground.why.hint.{letter}") for letter in "ABD"},
    why=said("playground.why.why"),
)


check_isolation_why = ISOLATION_QUESTION.check  # the quiz's self-check: a letter, A to D
