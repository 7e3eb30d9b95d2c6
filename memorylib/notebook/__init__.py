"""Helpers for the course notebooks: pure functions returning DataFrames, Figures and text.

Nothing here is imported by ``import memorylib``: pandas, matplotlib and ipywidgets
load only when a notebook imports one of these modules.

* Modules per notebook topic: ``records_exercises`` (01's checks; 00 and 01 draw in their
  own cells), ``failure_views`` (07), ``retraction_views`` (07b), ``playground`` (08: its
  state -> view function and the widget box), ``live_agent`` (09), ``ranker_exercises``
  (10's check; 10 draws in its own cells) and ``service_views`` (11: its PostgreSQL set-up
  and its check; 11 draws in its own cells).
  None imports another (import-linter's independence contract in ``pyproject.toml``).
* Shared helpers, which import no view module: ``common`` (notebook set-up and its one
  chart style with the font family list, the course clocks, ``figure_png``, styled
  tables with a text form (``styled_table``), the temporary ``Workspace``, the course
  order and its navigation line), ``charts`` (what several notebooks draw: contribution
  bars, recency curves, bump charts, the funnel, one colour per meaning), ``exercises``
  (the one exercise engine: every "Your turn" check, its verdicts, their text and HTML,
  function exercises checked on worked examples and generated cases, value checks and
  quiz questions), ``buildit`` (the build-it exercises of 02-06 on that engine, the
  "Your turn" checks of 02, 03, 04, 05, 06, 06b and 06c, and the capstone's pipeline of
  them) and ``failure_race`` (the multi-process race of 07 and 11; standard library and
  memorylib only, because every spawned contender imports it).

Imports follow one convention: pandas and matplotlib at module level, always as
``import pandas as pd`` and ``import matplotlib.pyplot as plt`` (plus ``import matplotlib``
for ``rcParams`` and ``from matplotlib... import`` for the odd class); ipywidgets (and
IPython) only inside the function or class that builds a widget, so a model or view
function runs, and is tested, without a front end.
"""
