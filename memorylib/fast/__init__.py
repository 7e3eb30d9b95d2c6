"""The fast path: everything here exists only for speed, and is proven equal.

The reference modules (``memorylib.query``, ``store``, ``records``, ``candidates``,
``ranking``, ...) are the contract as a student reads it. This subpackage answers
the same questions quicker at 100,000 records:

* ``tokenizer``: ``extract_terms(normalize_text(text))`` for one text by regex, and for
  thousands of texts at once with numpy;
* ``codec``: a store line -> ``StoredMemory`` without the generic JSON decoder, for
  lines exactly as ``store.encode_line`` writes them (anything else takes the
  reference path), and thousands of capture times at once;
* ``log``: an incremental view of a store file (only the bytes it gained are read);
* ``state``: the inverted index's arrays, and how records join them (where text
  enters the index: the place an analyzer changes; one state per analyzer in use);
* ``context``: a record counted with its neighbours in the same source (a policy's
  ``context``): neighbour slots, lengths and postings in context;
* ``shortlist``: the coverage scorer's shortlist, proven to hold the top ``limit``
  (the database backends use it too);
* ``bm25``: the BM25 / bm25+recency / min_evidence shortlist with numpy (MaxScore);
* ``score``: ``score_recall_candidate`` for the shortlisted candidates of one query, the
  query's sums done once;
* ``persist``: the index saved beside a large store, and loaded back;
* ``index``: ``RecallIndex``, which keeps the state in step with the file and answers
  ``RecallEngine.recall``.

It imports the reference modules' public names only, and nothing in the reference
layer imports it (``make test`` checks both with import-linter). The engine chooses
the path. Differential property tests (``tests/test_fast_equivalence.py``,
``tests/test_index.py``) hold every function here equal to its reference.
"""
