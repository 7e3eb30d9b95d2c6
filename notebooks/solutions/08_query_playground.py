"""Reference solution for notebook 08 (query playground), "Your turn".

1. A query that Mei's store answers and Omar's cannot: "jieba". Only Mei discussed the
   jieba segmenter (her record on Chinese bigram segmentation, mei-conv-022), so her store
   has a candidate and Omar's 46 searched records share no term with it. "upsert", "对拍"
   or "东八区" work too; "cache TTL", "recall" or "memory" do not: Omar's own records
   contain them. Nor do Mei-only words of a record the course showed before the exercise,
   in notebook 08 above or in an earlier notebook ("bigram", "课程试讲", "caching",
   "上下文预算" from 08; "pgvector", "architecture sync", "pull" from 06b, 07b and 03):
   the self-check refuses them (``printed_words``, ``SHOWN_BEFORE``), since the exercise
   asks for a word found in the playground. (tests/test_notebooks_structure.py checks that
   none of the accepted answers below appears in the course before 08's "Your turn", and
   that the checker accepts each of them.)
2. Mei's line appended to Omar's file: C. The store checks every line's user_scope
   against its own as it reads the file, so Omar's recall raises RemoteMemoryScopeError
   for line 53 (his file held 52 records) before any term is compared. Not A: a copied
   line keeps Mei's user_scope, the file does not make it Omar's; not B: nothing of
   another scope is skipped silently; not D: the candidate stage would refuse it too, but
   never receives it. tests/test_playground.py checks the numbers and the error behind
   each choice.
"""

my_isolation_query = "jieba"
ALSO_ACCEPTED = ("upsert", "对拍", "东八区")
my_isolation_why = "C"
