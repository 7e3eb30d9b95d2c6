"""The colours that mean one thing in every chart (03's funnel, 04's bars, 08's playground SVG)."""

COLOURS = {
    "lexical": "#3182bd",  # the lexical contribution, everywhere
    "recency": "#fd8d3c",  # the recency contribution, everywhere
    "searched": "#c6dbef",
    "candidates": "#9ecae1",
    "hits": "#3182bd",
}
