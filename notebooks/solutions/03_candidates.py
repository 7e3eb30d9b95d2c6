"""Reference solution for notebook 03 (candidates), "Your turn".

"what is the status of the recall index" makes 40 of Mei's 69 searched records
candidates, mostly through the/is/of/what and the project-wide word "recall".
Keeping only the two words that are specific to the record wanted (mei-conv-056,
"Recall index status: ...") leaves 4 candidates, the status record among them.
"""

quiet_query = "index status"
