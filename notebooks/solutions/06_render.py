"""Reference solution for notebook 06's "Your turn" (for instructors).

Each call runs on a fresh copy of the course's teaching store plus conversation-007
(summary: Wrap ids in <code> & "quote" them.) at the course's teaching clock
(TEACHING_AS_OF: the chapter gives no as_of value).

A  "quote ids" -> conversation-007 is the only hit; in the block its snippet is element
   text, so &, < and > become entities and the double quotes stay as they are.
B  "quote ids" -> in the tool's JSON text (json.dumps, ensure_ascii=False) the snippet is a
   JSON string: each double quote is written \\" ; <, > and & are left alone. This is what
   the model reads; json.loads would give back the stored summary.
C  "sqlite jsonl wal" -> 2 hits: conversation-004 (sqlite, wal) and conversation-001
   (sqlite and jsonl, in its content).
D  "shell decision" -> 1 hit: conversation-002 says "shell" in its content; "decision" is
   only in conversation-004's provenance title, which is never searched (searching titles
   would give 2).
E  "layered memory", limit 11 -> rejected: the limit must be 1 to 10 (the chapter's rule,
   stated in notebook section 1 and shown there for limit=0), so recall raises
   RemoteMemoryValidationError in stage 1 (the library's error), before anything is read or
   rendered.
"""

my_prediction = {
    "A": 'Wrap ids in &lt;code&gt; &amp; "quote" them.',
    "B": r"Wrap ids in <code> & \"quote\" them.",
    "C": 2,
    "D": 1,
    "E": "rejected",
}
