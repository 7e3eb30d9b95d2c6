"""Reference solution for notebook 09 (live agent), "Your turn".

The student writes the ``query`` the model should send to ``recall_history`` for
"Which file format did we pick for saving session transcripts, and why?". Retrieval
cannot see the chat and matches words exactly (no stemming), so the query restates the
topic with the words the record uses: conversation-001 says "session transcripts".
It must not name the answer: the model recalls because it does not know the format, so a
query holding "JSONL" (or "append-only") is rejected. "what we said earlier" finds
nothing; "transcript format" finds nothing either ("transcript" is not "transcripts").
"""

my_query = "session transcripts storage format"
