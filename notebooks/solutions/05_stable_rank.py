"""Reference solution for notebook 05's "Your turn" (for instructors).

Six rows, query "harbor recall latency budget review notes" (six terms), as_of
2026-11-30T09:00:00Z, default policy (weights 0.85 / 0.15, 30-day window). Each of the four
keys decides once:

* note-d matches 6/6 and is 90 days old: the highest total (0.887487) wins outright (key 1);
* note-f (6/6, captured 510 days earlier) and note-e (5/6, captured at as_of) tie at
  0.858333: the one-term gap 0.85 / 6 equals the recency note-f has lost,
  0.15 * (1 - 1/18) (notebook 04's overtake table: 510 days at n = 6). Key 2,
  lexical_coverage DESC, puts note-f (1.0) before note-e (0.833333);
* note-a, note-b and note-c match 5/6 and share the total 0.820951 and the coverage
  0.833333. note-c was captured 5 seconds later (10:00:05 > 10:00:00); its unrounded total
  is higher by about 2e-7, which rounding to 6 places removes, so key 3, captured_at DESC,
  decides and note-c goes first;
* note-a and note-b are equal on the first three keys: key 4, memory_id ASC, puts note-a
  first.
"""

my_order = ["note-d", "note-f", "note-e", "note-c", "note-a", "note-b"]
