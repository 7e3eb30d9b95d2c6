"""Reference solution for notebook 04's "Your turn" (for instructors).

q-11 "what is the status of the recall index" has 7 terms (index, is, of, recall,
status, the, what). Mei's note (memorylib.notebook.buildit.scoring.Q11_NOTE: "Recall
index green again" / "Checked on Friday: every shard answers, p95 latency back under
40 ms.") holds 2 of them: index and recall (no "status", and none of what, is, the, of).
It was captured on 2026-11-27 at 15:20 and the query runs at 2026-11-30 09:00, 2 days and
17 h 40 min later; the note's stored_at (2026-11-28 08:05) plays no part in its age.
"""

from datetime import datetime

as_of = datetime.fromisoformat("2026-11-30T09:00:00Z")
captured_at = datetime.fromisoformat("2026-11-27T15:20:00Z")
age_days = (as_of - captured_at).total_seconds() / 86_400  # 2.736111...

# q-11's terms: index, is, of, recall, status, the, what; the note holds two of them
matched_terms = ("index", "recall")
coverage = len(matched_terms) / 7  # kept as 2/7 until the end
recency = 1 / (1 + age_days / 30)
my_breakdown = {
    "matched_terms": matched_terms,
    "lexical_coverage": coverage,  # 0.285714
    "age_days": age_days,
    "recency": recency,  # 0.916419
    "lexical_contribution": 0.85 * coverage,  # 0.242857
    "recency_contribution": 0.15 * recency,  # 0.137463
    # 0.380320: 15 of q-11's 40 candidates score higher (mei-conv-056 too, 0.410165), so
    # the note misses the five hits (the fifth scores 0.508776)
    "total": 0.85 * coverage + 0.15 * recency,
}
