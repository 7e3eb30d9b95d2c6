"""Reference solution for notebook 08 (query playground), "Your turn".

1. A query that Mei's store answers and Omar's cannot: "pgvector". Only Mei discussed
   pgvector (her July plan and its September reversal), so her store has candidates and
   Omar's 46 searched records share no term with it. "JSONL", "transcripts" or "向量检索"
   work too; "cache TTL", "recall" or "memory" do not: Omar's own records contain them.
   Nor do Mei-only words of a record whose text the notebook prints before the exercise
   ("bigram", "课程试讲", "caching", "上下文预算"): the self-check refuses them
   (``printed_words``), since the exercise asks for a word found in the playground.
   (tests/test_notebooks_structure.py checks that none of the accepted answers below
   appears in notebook 08 before its "Your turn", and that the checker accepts each of
   them.)
2. Mei's line appended to Omar's file: C. The store checks every line's user_scope
   against its own as it reads the file, so Omar's recall raises RemoteMemoryScopeError
   for line 53 (his file held 52 records) before any term is compared. Not A: a copied
   line keeps Mei's user_scope, the file does not make it Omar's; not B: nothing of
   another scope is skipped silently; not D: the candidate stage would refuse it too, but
   never receives it. tests/test_playground.py checks the numbers and the error behind
   each choice.
"""

my_isolation_query = "pgvector"
ALSO_ACCEPTED = ("JSONL", "transcripts", "向量检索")
my_isolation_why = "C"
