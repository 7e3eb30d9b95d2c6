"""The course's notebook layer; ``import memorylib`` loads none of it (nor pandas, matplotlib
or ipywidgets). Shared modules (``common``, ``charts``, ``exercises``, ``messages``,
``buildit``, ``failure_race``) import no per-notebook one, and no per-notebook module imports
another (import-linter's contracts in ``pyproject.toml``). ipywidgets is imported only inside
the function that builds a widget, so every view runs, and is tested, without a front end.
"""
