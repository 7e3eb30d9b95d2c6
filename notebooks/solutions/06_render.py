"""Reference solution for notebook 06's "Your turn" (for instructors).

What ``render_recall_context`` puts into the prompt for each call, on a fresh copy of
the chapter's teaching store at the chapter's as_of:

A  "  LAYERED   Memory  ", limit 5 -> 1 hit: normalization folds case and spaces; only
   conversation-003 holds both "layered" and "memory".
B  "backend engineer runnable examples" -> 0 hits (the empty string): every term is in
   the PROFILE snapshot, and recall searches CONVERSATION records only (the table of the
   teaching records shows no conversation holding any of the four words).
C  "?!  ...  !?" -> rejected: normalize finds no searchable term and raises
   RemoteMemoryValidationError before anything is read or rendered.
D  "memory recall transcript jsonl sqlite", limit 2 -> 2 hits: four records match
   (conversation-001, -003, -006, -004), the limit keeps the top two.
E  "the", limit 10 -> 3 hits: the word "the" (case folded) is in the summary or content
   of conversation-001 ("the last line"), -002 ("The agent", "the user") and -006 ("the
   recall tool"), all shown in the notebook's table of the teaching records; -003 says
   "their", -004 and -005 have no "the". Noise, but real matches; the limit cuts nothing.
"""

my_prediction = {"A": 1, "B": 0, "C": "rejected", "D": 2, "E": 3}
