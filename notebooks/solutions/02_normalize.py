"""Reference solution for notebook 02 (normalize), "Your turn".

Predict the terms of ``EXERCISE_TEXT = "ＳＱＬｉｔｅ  WAL 持久化方案"``:
NFKC turns the fullwidth ``ＳＱＬｉｔｅ`` into ``SQLite``, casefold makes it
``sqlite``, ``WAL`` becomes ``wal``, and the Chinese run 持久化方案 gives its four
overlapping bigrams. Any order is accepted; the contract lists them sorted by code
point (ASCII before CJK), as here.
"""

my_predicted_terms = ("sqlite", "wal", "久化", "化方", "持久", "方案")
