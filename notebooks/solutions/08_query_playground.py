"""Reference solution for notebook 08 (query playground), "Your turn".

1. A query that Mei's store answers and Omar's cannot: "pgvector". Only Mei discussed
   pgvector (her July plan and its September reversal), so her store has candidates and
   Omar's 46 searched records share no term with it. "JSONL", "transcripts" or "上下文预算"
   work too; "cache TTL", "recall" or "memory" do not: Omar's own records contain them.
   (tests/test_notebooks_structure.py checks that none of the accepted answers below
   appears in notebook 08 before its "Your turn", and that the checker accepts each of
   them.)
2. Why Omar never sees Mei's records: C. His engine is bound to his own file and the query
   takes that store's user_scope, so his recall searches his 46 conversations whatever the
   text, limit or weights; Mei's records are never read (not read and filtered: that would
   make `searched` 184, choice A). tests/test_playground.py checks the numbers behind each
   choice.
"""

my_isolation_query = "pgvector"
ALSO_ACCEPTED = ("JSONL", "transcripts", "上下文预算")
my_isolation_why = "C"
