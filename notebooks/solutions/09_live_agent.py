"""Reference solution for notebook 09 (live agent), "Your turn".

The chat first names the topic ("the recorder that saves each session's transcripts"),
then asks: "remind me which file format we settled on for those, and why?". The student
writes the ``query`` a model that has read the chat should send to ``recall_history``.
Retrieval cannot see the chat and matches words exactly (no stemming), so the query
restates what "those" stands for, in words the conversation gives: the chat says "each
session's transcripts", and conversation-001 says "session transcripts". It must not name
the answer: the model recalls because it does not know the format, so a query holding
"JSONL" or "append-only", or another form of an answer word ("json", "appended", "torn"), is
rejected. The stand-in model's own query ("file format
settled", from the last message alone) ranks the layered memory record first;
"transcript" and "transcript format" find nothing and "transcript file format" ranks the
layered memory record ("transcript" is not "transcripts"); "saving transcripts",
"transcripts" or "session" alone rank first here but lose to one of two records the checker
adds that the notebook never shows (support call transcripts, session tokens): a query must
name the whole topic.
"""

my_query = "session transcripts file format"
