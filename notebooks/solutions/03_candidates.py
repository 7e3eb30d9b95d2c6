"""Reference solution for notebook 03 (candidates), "Your turn".

"how did we make the lock file work on windows" makes 34 of Mei's 69 searched records
candidates: "the" alone is in 32, "on" in 12, "file" in 11, and "work" is in no record
(mei-conv-067 says "works": terms are whole words). The two words that are rare and in
mei-conv-067 ("The store's lock file now works on Windows too.") are "lock" (3 records)
and "windows" (3: one of them speaks of recency windows): together 4 candidates, the
lock-file record among them, sharing both terms. "windows" alone makes 3 but is one lucky
word, which the check refuses; "lock file windows" makes 12 ("file" is everywhere).
"""

my_quiet_query = "lock windows"

# Optional stretch: keep mei-conv-035 (the result cache, "召回结果按 query 和 store 版本缓存，
# 文件一追加缓存就失效。") among at most 2 candidates, sharing at least two of its Chinese
# words. 召回 (15 records) and 结果 (13) are this team's project-wide words; 缓存 (cache) is
# in no other record, 版本 in one more: 版本缓存 (terms 版本 / 本缓 / 缓存) gives 2. Its
# content's 减少 and 自动 are in no other record either ("缓存 减少" gives 1). 缓存 alone is
# one word, and 件一 / 一追 are rare only because they straddle two words: the check refuses
# both. The second stretch has no check: 召 alone is the unigram 召, and a record holding
# 召回 has the bigram 召回, never 召, so none of the 15 is a candidate (0 in all).
my_cache_query = "版本缓存"
