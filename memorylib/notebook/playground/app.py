"""The playground's widget app: ipywidgets inputs wired to the model and the rendering.

``PlaygroundApp`` holds no logic of its own: every change reads the inputs into a new
``PlaygroundState``, calls the view model, and puts the rendered summary, SVG chart,
hits table and context into HTML widgets (no Output widget, whose routed display
messages can stall headless runs). ``measure_refresh`` times it. The inputs carry CSS
classes (``playground-query``, ``playground-limit``, ...) the browser tests select.
"""

from __future__ import annotations

import html
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import pandas as pd

from memorylib.interface import user_scope_for
from memorylib.notebook.playground.catalog import DATASETS, USERS, PlaygroundCatalog
from memorylib.notebook.playground.model import (
    DEFAULT_STATE,
    SCORER_PRESETS,
    YOURS,
    PlaygroundState,
    PlaygroundView,
    as_of_on,
    playground_view,
    scorer_options,
)
from memorylib.notebook.playground.render import (
    context_html,
    hits_table_html,
    playground_svg,
    summary_html,
)
from memorylib.ranking import ScoreFunction
from memorylib.timestamps import parse_timestamp

__all__ = ["PlaygroundApp", "measure_refresh"]

ViewModel = Callable[[PlaygroundState, PlaygroundCatalog], PlaygroundView]


class PlaygroundApp:
    """ipywidgets inputs wired to ``playground_view``; every change redraws every output.

    ``app.widget`` is the box to display. ``app.timings`` holds the last refresh's
    ``recall_view_ms`` (recall + view model) and ``refresh_ms`` (view model, then the
    summary, SVG chart, hits table and context rendered and pushed to the widgets).
    ``view`` is the view model (``playground_view``; a test passes a failing one).
    """

    def __init__(
        self,
        catalog: PlaygroundCatalog,
        state: PlaygroundState = DEFAULT_STATE,
        *,
        view: ViewModel = playground_view,
    ) -> None:
        import ipywidgets as w

        self.catalog = catalog
        self.view_model = view
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
        self.scorer = w.Dropdown(
            options=scorer_options(catalog),
            value=state.scorer,
            description="scorer",
            style=wide,
        )
        self.status = w.HTML(layout=w.Layout(min_height="20px"))
        self.summary = w.HTML()
        self.chart = w.HTML()
        self.table = w.HTML()
        self.context = w.HTML()
        # stable CSS hooks for the browser tests (and for anyone styling the app)
        hooks = (
            "query",
            "dataset",
            "user",
            "limit",
            "as_of",
            "scorer",
            "status",
            "summary",
            "chart",
        )
        for name in (*hooks, "table", "context"):
            getattr(self, name).add_class(f"playground-{name.replace('_', '-')}")
        inputs = (
            self.query,
            self.dataset,
            self.user,
            self.limit,
            self.as_of,
            self.scorer,
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
                w.HBox([self.scorer, self.lexical, self.recency, self.window]),
                self.status,
                self.summary,
                self.chart,
                self.table,
                self.context,
            ]
        )
        self.widget.add_class("memorylib-playground")
        # called with the app after every successful refresh (e.g. playground.yours' panel)
        self.after_refresh: list[Callable[[PlaygroundApp], None]] = []
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
            scorer=str(self.scorer.value),
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
        if change["owner"] is self.scorer:
            self._quiet = True  # a scorer starts from its own weights: one refresh
            try:
                self.lexical.value, self.recency.value = SCORER_PRESETS[self.scorer.value]
            finally:
                self._quiet = False
        self.refresh()

    def use_scorer(self, score: ScoreFunction | None) -> PlaygroundView:
        """Register ``score`` (your scoring function) as the "yours" scorer and show it;
        ``None`` removes it and goes back to coverage."""
        self.catalog.use_scorer(score)
        self._quiet = True
        try:
            self.scorer.options = scorer_options(self.catalog)
            self.scorer.value = YOURS if score is not None else "coverage"
            self.lexical.value, self.recency.value = SCORER_PRESETS[self.scorer.value]
        finally:
            self._quiet = False
        self.refresh()
        assert self.view is not None
        return self.view

    def set(self, **changes: Any) -> PlaygroundView:
        """Change inputs from code (``app.set(query="...", limit=3)``) and refresh once."""
        controls = {
            "query": self.query,
            "dataset": self.dataset,
            "user": self.user,
            "limit": self.limit,
            "scorer": self.scorer,
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
            view = self.view_model(state, self.catalog)
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
        for hook in self.after_refresh:
            hook(self)


# -- measuring ------------------------------------------------------------------------------------


def measure_refresh(
    app: PlaygroundApp,
    states: Iterable[dict[str, Any]],
    *,
    repeat: int = 3,
) -> pd.DataFrame:
    """Drive ``app`` through ``states`` (``app.set(**changes)``) ``repeat`` times per state.

    Returns one row per (dataset, measure): median, p95 and max in ms over every refresh.
    ``recall + view model`` is ``playground_view`` alone; ``full refresh`` adds the summary,
    SVG chart, hits table and context HTML, handed to the widgets (which send them to the
    browser). The browser's own drawing is measured by the browser tests.
    """
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
