"""Helpers for the course notebooks: pure functions returning DataFrames and Figures.

Nothing here is imported by ``import memorylib``: pandas, matplotlib and ipywidgets
load only when a notebook imports one of these modules. One module per notebook
topic; ``common`` holds the shared style and the fixed course clock.
"""
