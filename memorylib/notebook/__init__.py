"""The course's notebook layer; ``import memorylib`` loads none of it (nor pandas,
matplotlib or ipywidgets).

Shared, importing no per-notebook module: ``common`` (set-up, chart style, styled tables,
the ``Workspace``, the course order and navigation), ``charts`` (what several notebooks
draw), ``exercises`` (the one exercise engine), ``buildit`` (the build-it exercises of 02-06,
their checks, the capstone's pipeline) and ``failure_race`` (07's and 11's race; standard
library and memorylib only). One module per notebook for what stays in the package (its
checks, a widget): ``records_exercises`` (01), ``failure_views`` (07), ``retraction_views``
(07b), ``playground`` (08), ``live_agent`` (09), ``ranker_exercises`` (10), ``service_views``
(11); none imports another (import-linter's contracts in ``pyproject.toml``). pandas and
matplotlib are imported at module level as ``pd`` and ``plt``; ipywidgets only inside the
function that builds a widget, so every view runs, and is tested, without a front end.
"""
