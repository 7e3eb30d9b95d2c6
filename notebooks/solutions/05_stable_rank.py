"""Reference solution for notebook 05's "Your turn" (for instructors).

Five rows, query "harbor recall latency budget", as_of 2026-11-30T09:00:00Z:

* note-d matches 4/4 terms: the highest total (0.887487) wins outright;
* note-a, note-b and note-c match 3/4 and share the total 0.750117 and the coverage
  0.75, so the third key decides: note-c was captured 5 seconds later
  (10:00:05 > 10:00:00) and goes first;
* note-a and note-b are equal on all three score keys: memory_id ASC puts note-a first;
* note-e matches 2/4: lowest total, last.
"""

my_order = ["note-d", "note-c", "note-a", "note-b", "note-e"]
