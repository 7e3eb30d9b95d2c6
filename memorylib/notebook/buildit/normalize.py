"""Stage 1 exercises (notebook 02), checked against ``memorylib.query``: the build-it
``normalize_text`` and ``extract_terms``, on texts that mix what the contract must fold, and
the "Your turn" ``check_predicted_terms``: the terms of ``EXERCISE_TEXT`` (never normalized
in the notebook), each once, in any order (nobody sorts by code point by eye). ``catalogue``
and ``named`` write an exercise's mistakes and worked examples as tables.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from memorylib.checks import fold_whitespace
from memorylib.notebook import exercises as ex
from memorylib.query import extract_terms, is_cjk, is_word_char, normalize_text, term_occurrences

__all__ = ["EXERCISE_TEXT", "EXTRACT_TERMS", "NORMALIZE_TEXT", "catalogue", "check_predicted_terms"]
_Variants = Mapping[str, Callable[..., Any]] | Callable[[str], Callable[..., Any]]


def catalogue(text: str, variants: _Variants) -> tuple[ex.Mistake, ...]:
    """The mistakes of ``text``, one per line "name: hint" (indented lines go on with the
    hint), each run as ``variants[name]`` (or ``variants(name)``)."""
    found = [" ".join(entry.split()).split(": ", 1) for entry in re.split(r"\n(?! )", text)]
    variant = variants.__getitem__ if isinstance(variants, Mapping) else variants
    return tuple(ex.Mistake(name, hint, variant(name)) for name, hint in found)


def named(examples: dict[str, Any]) -> tuple[ex.Named, ...]:
    """Worked examples: what a student recognises -> the argument (a tuple: the arguments)."""
    calls = {name: a if isinstance(a, tuple) else (a,) for name, a in examples.items()}
    return tuple(ex.Named(name, ex.Call(*arguments)) for name, arguments in calls.items())


# both cases, digits and _, every kind of space, punctuation, fullwidth forms, Chinese, accents,
# ß, Cyrillic, Greek (final sigma), a combining mark, a ligature, a circled digit, ǰ (casefold
# leaves it un-normalized), the simplest first (hypothesis shrinks towards them); the last two,
# a CJK compatibility ideograph and a Kangxi radical, become CJK under NFKC
ALPHABET = "ab _19ABC\t\n\u3000\u00a0-'.!?ＡｂＣ１分层记忆召回éÉßẞДдΣς\u0301ﬁ①ǰ\uf900\u2f00"
TEXTS = st.text(alphabet=ALPHABET, max_size=12)
_nfkc = functools.partial(unicodedata.normalize, "NFKC")


def _a_str(result: Any, call: ex.Call) -> str:
    if not isinstance(result, str):
        raise ex.Malformed(f"normalize_text must return a str, not {type(result).__name__}")
    return result


NORMALIZE_HINTS = """\
no NFKC: Start with unicodedata.normalize('NFKC', text): fullwidth letters, the ideographic space,
  ligatures and circled digits become their plain forms.
lower() instead of casefold(): Use str.casefold(), a stronger lower(): 'ß' becomes 'ss' and a final
  'ς' becomes 'σ', so both spellings match.
no case folding: Fold the case with str.casefold(): 'LAYERED' and 'layered' must give the same text.
whitespace not folded: Fold every run of whitespace (spaces, tabs, newlines, the ideographic space)
  into one space and trim the ends: ' '.join(text.split()).
only spaces folded: Tabs, newlines and the ideographic space are whitespace too: text.split() with
  no argument splits on every kind.
the ends are not trimmed: Folding also trims: no space at the start or the end
  (' '.join(text.split()) does both).
NFKC only before casefold: casefold can leave text that is no longer NFKC ('ǰ' casefolds to 'j' + a
  combining caron): apply NFKC again after casefold, as the contract says."""
NORMALIZE_VARIANTS = {
    "no NFKC": lambda t: fold_whitespace(t.casefold()),
    "lower() instead of casefold()": lambda t: fold_whitespace(_nfkc(_nfkc(t).lower())),
    "no case folding": lambda t: fold_whitespace(_nfkc(t)),
    "whitespace not folded": lambda t: _nfkc(_nfkc(t).casefold()),
    "only spaces folded": lambda t: re.sub(" +", " ", _nfkc(_nfkc(t).casefold())).strip(" "),
    "the ends are not trimmed": lambda t: re.sub(r"\s+", " ", _nfkc(_nfkc(t).casefold())),
    "NFKC only before casefold": lambda t: fold_whitespace(_nfkc(t).casefold()),
}
NORMALIZE_TEXT = ex.FunctionExercise(
    function="normalize_text",
    reference=normalize_text,
    examples=named(
        {
            "the chapter's example '  LAYERED   Memory  '": "  LAYERED   Memory  ",
            "fullwidth letters, an ideographic space (NFKC)": "ＬＡＹＥＲＥＤ　Ｍｅｍｏｒｙ",
            "German sharp s folds to ss (casefold, not lower)": "Straße",
            "tabs and newlines are whitespace too": "layered\tmemory\n\ndesign",
            "Chinese text passes through: 分层记忆": "分层记忆",
            "empty text stays empty": "",
        }
    ),
    cases=TEXTS.map(ex.Call),
    read=_a_str,
    refuses=(normalize_text,),
    mistakes=catalogue(NORMALIZE_HINTS, NORMALIZE_VARIANTS),
)


_bigrams = re.compile("(?=(..))").findall  # a run's overlapping character pairs


def _terms(text: str, chinese: Any = None, word: Any = is_word_char) -> tuple[str, ...]:
    """The contract's terms (``_terms(text)``), or with one rule changed: what a run of
    Chinese characters gives (``chinese(run)``), what makes a word character."""
    kinds = itertools.groupby(text, lambda c: "cjk" if is_cjk(c) else "word" if word(c) else "")
    runs = [(kind == "cjk", "".join(chars)) for kind, chars in kinds if kind]
    cut = chinese or (lambda run: _bigrams(run) or [run])  # a lone character stays a unigram
    return tuple(sorted({term for cjk, run in runs for term in (cut(run) if cjk else [run])}))


def _across_gaps(text: str) -> tuple[str, ...]:  # the Chinese characters as one run
    words = {term for term in _terms(text) if not is_cjk(term[0])}
    return tuple(sorted(words | set(_terms("".join(filter(is_cjk, text))))))


def _a_tuple(result: Any, call: ex.Call) -> tuple[str, ...]:
    if isinstance(result, list):
        raise ex.Malformed(
            "extract_terms must return a tuple, not a list (sorted(...) gives a list: wrap it "
            "in tuple(...))"
        )
    if not isinstance(result, tuple) or not all(isinstance(term, str) for term in result):
        raise ex.Malformed(f"extract_terms must return a tuple of str, not {type(result).__name__}")
    return result


EXTRACT_HINTS = r"""sorted but not unique: Terms are unique: a word that occurs twice is one term.
  sorted(set(...)) does both.
unique but not sorted: Terms are sorted (by code point), not in the order they occur:
  sorted(set(...)).
a Chinese run kept whole: A run of Chinese characters gives its overlapping bigrams, not the run
  itself: 分层记忆 -> 分层, 层记, 记忆.
Chinese cut into single characters: Cut a Chinese run into overlapping character PAIRS (bigrams),
  not single characters; only a run of one character stays a unigram.
bigrams that do not overlap: Bigrams overlap: start one at every character but the last
  (range(len(run) - 1)), so 分层记忆 also gives 层记.
a lone Chinese character dropped: A run of ONE Chinese character has no bigram: it stays a term of
  its own (记 -> 记).
\w+ also matches Chinese characters: re.findall(r'\w+') puts Chinese characters inside words (they
  are letters to \w); treat U+4E00..U+9FFF as a class of its own and cut those runs into bigrams.
only ASCII letters make words: Letters and digits of other scripts are word characters too
  (str.isalnum()): 'café' is one term, not 'caf', and 'память' stays whole.
split on spaces only: Punctuation separates words too: cut runs of word characters (letters,
  digits, _, combining marks), so "isn't" gives 'isn' and 't'.
combining marks split words: A combining mark (category M, like U+0301) belongs to the word it
  follows: test unicodedata.category(char).startswith('M') as well as isalnum().
underscore splits words: '_' is a word character (the contract's ASCII words are runs of
  [a-z0-9_]): recall_history is one term.
digits dropped: Digits are word characters: 'v2' is one term and '300' is a term.
bigrams across a gap: Cut each run of Chinese characters on its own: characters separated by a
  space or a word do not form a bigram."""
EXTRACT_VARIANTS = {
    "sorted but not unique": lambda t: tuple(sorted(term_occurrences(t))),
    "unique but not sorted": lambda t: tuple(dict.fromkeys(term_occurrences(t))),
    "a Chinese run kept whole": lambda t: _terms(t, lambda run: [run]),
    "Chinese cut into single characters": lambda t: _terms(t, list),
    "bigrams that do not overlap": lambda t: _terms(t, lambda run: re.findall("..?", run)),
    "a lone Chinese character dropped": lambda t: _terms(t, _bigrams),
    r"\w+ also matches Chinese characters": lambda t: tuple(sorted(set(re.findall(r"\w+", t)))),
    "only ASCII letters make words": lambda t: _terms(t, word=re.compile(r"\w", re.ASCII).match),
    "split on spaces only": lambda t: tuple(sorted(set(t.split()))),
    "combining marks split words": lambda t: _terms(t, word=lambda c: c.isalnum() or c == "_"),
    "underscore splits words": lambda t: _terms(t, word=lambda c: is_word_char(c) and c != "_"),
    "digits dropped": lambda t: _terms(t, word=lambda c: is_word_char(c) and not c.isdigit()),
    "bigrams across a gap": _across_gaps,
}
EXTRACT_TERMS = ex.FunctionExercise(
    function="extract_terms",
    reference=extract_terms,
    examples=named(
        {
            "the chapter's example: 'layered memory' gives layered, memory": "layered memory",
            "分层记忆 gives 分层/层记/记忆": "分层记忆",
            "a lone Chinese character stays a unigram: 记": "记",
            "each term once, words before Chinese terms": "记忆 memory 记忆 layered memory",
            "punctuation separates words: append-only isn't": "append-only isn't",
            "an identifier keeps its _ and digits: recall_history v2": "recall_history v2",
            "letters of other scripts make words: café память": "café память",
            "a Chinese run next to a word is a run of its own: 记忆v2": "记忆v2",
            "only punctuation gives no term": "?!...",
        }
    ),
    cases=TEXTS.map(normalize_text).map(ex.Call),
    read=_a_tuple,
    refuses=(extract_terms,),
    mistakes=catalogue(EXTRACT_HINTS, EXTRACT_VARIANTS),
)

EXERCISE_TEXT = "ＳＱＬｉｔｅ  WAL 持久化方案"  # fullwidth Latin, upper case, a Chinese run


def check_predicted_terms(answer: object, text: str = EXERCISE_TEXT) -> ex.CheckResult:
    """Predicted terms of ``text``: right when they are exactly stage 1's terms, each once,
    in any order; a subset, a superset or a repeat is wrong, with a hint."""

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_sequence(answer, "a tuple (or list) of str, one per term", item=str)
        expected = extract_terms(normalize_text(text))
        if sorted(given) == list(expected):
            return ex.right(
                f"Right: {expected} (NFKC, casefold, words + Chinese bigrams; the contract "
                "lists them sorted by code point)."
            )
        if sorted(set(given)) == list(expected):
            return ex.wrong("The right terms, but terms are unique: list each term only once.")
        hints = []
        if any(t != t.casefold() for t in given):
            hints.append("casefold: every term is lower case")
        if any("\uff01" <= c <= "\uff5e" for t in given for c in t):
            hints.append("NFKC turns fullwidth letters like Ｓ into plain ASCII")
        if any(len(t) > 2 and all(map(is_cjk, t)) for t in given):
            hints.append("a run of Chinese characters becomes overlapping 2-character bigrams")
        missing = sum(t not in given for t in expected)
        extra = sum(t not in expected for t in given)
        hints = hints or [f"{missing} term(s) missing, {extra} term(s) that are not terms"]
        return ex.wrong("Not yet: " + "; ".join(hints) + ".")

    return ex.check_value(answer, judge, placeholder="a tuple of terms, e.g. ('a', 'b')")
