"""Reference solution for notebook 06c's "Your turn" (for instructors).

The first stage where each broken pipeline differs from the library's on the chapter's
example ("  LAYERED   Memory  ", teaching store, the chapter's as_of, query_id "query-1"):

A  normalize_keeps_case -> normalize: without casefold the normalized text is
   "LAYERED Memory" and the terms differ.
B  candidates_with_profiles -> candidate: the profile has none of the two terms, so the
   candidates are the same (conversation-003), but 7 records are searched instead of 6.
C  score_with_a_week_window -> score: conversation-003 is one day old; its recency is
   1 / (1 + 1/7) = 0.875 instead of 0.967742, total 0.98125 instead of 0.995161.
D  rank_ignoring_the_limit -> none: the chapter's query has one candidate, so a limit of 5
   cuts nothing (on the corpus it differs at stable rank on 21 of 36 queries).
E  render_with_empty_wrapper -> none: the chapter's query has a hit, and the broken part
   only runs for an empty result (on the corpus it differs at render on 4 queries).
"""

my_prediction = {
    "A": "normalize",
    "B": "candidate",
    "C": "score",
    "D": "none",
    "E": "none",
}
