"""Notebook 08: the query playground, split the way the ipywidgets tutorial splits an app.

* ``catalog``: the three datasets and one read-only engine per (dataset, user);
* ``model``: ``playground_view(state, catalog)``, pure state -> view data (testable
  without a browser), plus the comparisons and the exercise's checker;
* ``render``: a view as text, HTML and the one SVG chart (live and static alike);
* ``app``: ``PlaygroundApp``, widgets wired to the model and the rendering.

Everything a notebook or a test needs is importable from here.
"""

from memorylib.notebook.playground.app import PlaygroundApp, measure_refresh
from memorylib.notebook.playground.catalog import (
    DATASETS,
    GENERATED_AS_OF,
    GENERATED_RECORDS,
    USERS,
    DatasetSpec,
    PlaygroundCatalog,
)
from memorylib.notebook.playground.model import (
    DEFAULT_STATE,
    HIT_COLUMNS,
    SCORER_PRESETS,
    YOURS,
    PlaygroundState,
    PlaygroundView,
    as_of_on,
    check_isolation_query,
    compare_rankings,
    compare_users,
    playground_view,
    scorer_options,
)
from memorylib.notebook.playground.render import (
    LEXICAL_COLOR,
    RECENCY_COLOR,
    context_html,
    hits_table_html,
    playground_svg,
    summary_html,
    summary_text,
)

__all__ = [
    "DATASETS",
    "DEFAULT_STATE",
    "GENERATED_AS_OF",
    "GENERATED_RECORDS",
    "HIT_COLUMNS",
    "LEXICAL_COLOR",
    "RECENCY_COLOR",
    "SCORER_PRESETS",
    "USERS",
    "YOURS",
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
    "playground_svg",
    "playground_view",
    "scorer_options",
    "summary_html",
    "summary_text",
]
