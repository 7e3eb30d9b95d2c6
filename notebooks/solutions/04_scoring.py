"""Reference solution for notebook 04's "Your turn" (for instructors).

q-11 "what is the status of the recall index" has 7 terms (index, is, of, recall,
status, the, what). mei-conv-056 ("Recall index status: rebuilt for all users, p95
latency 38 ms.") matches 3 of them: index, recall, status. It was captured on
2026-09-23 at 07:00 and the query runs at 2026-11-30 09:00, 68 days and 2 hours later.
"""

from datetime import datetime

as_of = datetime.fromisoformat("2026-11-30T09:00:00Z")
captured_at = datetime.fromisoformat("2026-09-23T07:00:00Z")
age_days = (as_of - captured_at).total_seconds() / 86_400  # 68.083333...

coverage = 3 / 7
recency = 1 / (1 + age_days / 30)
my_total = 0.85 * coverage + 0.15 * recency  # 0.410165 after rounding to 6 places
