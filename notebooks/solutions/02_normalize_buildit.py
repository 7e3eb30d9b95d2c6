"""Reference solution for notebook 02's build-it exercise (for instructors).

Written the way a student would, from the contract alone (not copied from
``memorylib.query``): NFKC, casefold, NFKC again, whitespace folded; then terms cut
character by character into runs of word characters and runs of Chinese characters.
The notebook's template cell is this file without the function bodies.
"""

# build-it: normalize (notebook 06c runs this cell, as saved, in your pipeline)
import unicodedata


def my_normalize_text(text: str) -> str:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


def my_extract_terms(normalized: str) -> tuple[str, ...]:
    def kind(char: str) -> str:
        if "\u4e00" <= char <= "\u9fff":
            return "cjk"
        if char.isalnum() or char == "_" or unicodedata.category(char).startswith("M"):
            return "word"
        return "other"

    terms = set()
    run, run_kind = "", "other"
    for char in normalized + " ":  # a trailing space closes the last run
        if kind(char) == run_kind:
            run += char
            continue
        if run_kind == "word" or (run_kind == "cjk" and len(run) == 1):
            terms.add(run)
        elif run_kind == "cjk":
            terms.update(run[i : i + 2] for i in range(len(run) - 1))
        run, run_kind = char, kind(char)
    return tuple(sorted(terms))
