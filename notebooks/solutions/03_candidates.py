"""Reference solution for notebook 03 (candidates), "Your turn".

"what is the status of the recall index" makes 40 of Mei's 69 searched records
candidates, mostly through the/is/of/what and the project-wide word "recall".
Keeping only the two words that are specific to the record wanted (mei-conv-056,
"Recall index status: ...") leaves 4 candidates, the status record among them.
"""

quiet_query = "index status"

# Optional stretch: keep mei-conv-035 (the result cache, "召回结果按 query 和 store 版本缓存，
# 文件一追加缓存就失效。") among at most 2 candidates. 召回 and 结果 are this team's "the";
# 缓存 (cache) is in no other record's Chinese. 版本缓存 gives 2 (版本 is in one more).
cache_query = "缓存"
