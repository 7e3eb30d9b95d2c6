"""Helpers for the course notebooks: pure functions returning DataFrames, Figures and text.

Nothing here is imported by ``import memorylib``: pandas, matplotlib and ipywidgets
load only when a notebook imports one of these modules.

* View modules, one per notebook topic: ``records_views`` (00, 01), ``normalize_views``
  (02), ``candidate_views`` and ``scaling`` (03), ``scoring_views`` (04), ``rank_views``
  (05), ``render_views`` (06, 06b), ``failure_views`` (07), ``retraction_views`` (07b),
  ``playground`` (08, a package: catalog, model, render, app), ``live_agent`` (09),
  ``ranker_views`` (10) and ``service_views`` (11). A view module never imports another
  one (import-linter's independence contract in ``pyproject.toml``).
* Shared helpers, which import no view module: ``common`` (notebook set-up, the course
  clocks, chart fonts, ``figure_png``, styled tables with a text form (``styled_table``),
  the temporary ``Workspace``, the course order and its navigation line), ``exercises``
  (the ``CheckResult`` every "Your turn" checker returns, its text and HTML rendering,
  and the parsing of answers), ``buildit`` (the build-it exercises of 02-06: a student's
  stage function checked against the library's, and notebook 06's pipeline of them),
  ``analysis`` (language and label statistics of the course data) and ``failure_race``
  (the multi-process race; standard library and memorylib only, because every spawned
  contender imports it).

Imports follow one convention: pandas and matplotlib at module level, always as
``import pandas as pd`` and ``import matplotlib.pyplot as plt`` (plus ``import matplotlib``
for ``rcParams`` and ``from matplotlib... import`` for the odd class); ipywidgets (and
IPython) only inside the function or class that builds a widget, so a model or view
function runs, and is tested, without a front end.
"""
