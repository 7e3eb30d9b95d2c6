"""Stage 1 exercises (notebook 02): the build-it ``normalize_text`` and ``extract_terms``,
and the "Your turn" check ``check_predicted_terms``.

Checked against ``memorylib.query``. Generated texts mix what the contract must fold:
ASCII in both cases, digits and ``_``, spaces, tabs, newlines, the ideographic and
no-break spaces, punctuation, fullwidth forms, a ligature, a circled digit, Chinese, an
accented letter, a combining mark, ß, Cyrillic and Greek (final sigma), and ǰ (which
casefolding leaves un-normalized). ``extract_terms`` gets already-normalized text, as
its contract says.

"Your turn" asks for the terms of ``EXERCISE_TEXT``, a text the notebook never
normalizes: right only if the answer holds exactly stage 1's terms (none missing, none
extra, none repeated), in any order (the contract sorts by code point, which nobody does
by eye).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Malformed,
    Mistake,
    Named,
    check_value,
    expect_sequence,
    right,
    wrong,
)
from memorylib.query import char_class, extract_terms, is_cjk, normalize_text

__all__ = ["EXERCISE_TEXT", "EXTRACT_TERMS", "NORMALIZE_TEXT", "check_predicted_terms"]

# the simplest characters first: hypothesis shrinks a character towards the start
ALPHABET = (
    "ab _19"
    "ABC\t\n\u3000\u00a0-'.!?ＡｂＣ１分层记忆召回éÉßẞДдΣς\u0301ﬁ①ǰ"
    "\uf900\u2f00"  # a CJK compatibility ideograph, a Kangxi radical: NFKC makes them CJK
)
TEXTS = st.text(alphabet=ALPHABET, max_size=12)


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _fold(text: str) -> str:
    return " ".join(text.split())


def _a_str(result: Any, call: Call) -> str:
    if not isinstance(result, str):
        raise Malformed(f"normalize_text must return a str, not {type(result).__name__}")
    return result


NORMALIZE_TEXT = FunctionExercise(
    function="normalize_text",
    reference=normalize_text,
    examples=(
        Named("the chapter's example '  LAYERED   Memory  '", Call("  LAYERED   Memory  ")),
        Named(
            "fullwidth letters, an ideographic space (NFKC)", Call("ＬＡＹＥＲＥＤ　Ｍｅｍｏｒｙ")
        ),
        Named("German sharp s folds to ss (casefold, not lower)", Call("Straße")),
        Named("tabs and newlines are whitespace too", Call("layered\tmemory\n\ndesign")),
        Named("Chinese text passes through: 分层记忆", Call("分层记忆")),
        Named("empty text stays empty", Call("")),
    ),
    cases=TEXTS.map(Call),
    read=_a_str,
    refuses=(normalize_text,),
    mistakes=(
        Mistake(
            "no NFKC",
            "Start with unicodedata.normalize('NFKC', text): fullwidth letters, the ideographic "
            "space, ligatures and circled digits become their plain forms.",
            lambda text: _fold(text.casefold()),
        ),
        Mistake(
            "lower() instead of casefold()",
            "Use str.casefold(), a stronger lower(): 'ß' becomes 'ss' and a final 'ς' becomes "
            "'σ', so both spellings match.",
            lambda text: _fold(_nfkc(_nfkc(text).lower())),
        ),
        Mistake(
            "no case folding",
            "Fold the case with str.casefold(): 'LAYERED' and 'layered' must give the same text.",
            lambda text: _fold(_nfkc(text)),
        ),
        Mistake(
            "whitespace not folded",
            "Fold every run of whitespace (spaces, tabs, newlines, the ideographic space) into "
            "one space and trim the ends: ' '.join(text.split()).",
            lambda text: _nfkc(_nfkc(text).casefold()),
        ),
        Mistake(
            "only spaces folded",
            "Tabs, newlines and the ideographic space are whitespace too: text.split() with no "
            "argument splits on every kind.",
            lambda text: re.sub(" +", " ", _nfkc(_nfkc(text).casefold())).strip(" "),
        ),
        Mistake(
            "the ends are not trimmed",
            "Folding also trims: no space at the start or the end "
            "(' '.join(text.split()) does both).",
            lambda text: re.sub(r"\s+", " ", _nfkc(_nfkc(text).casefold())),
        ),
        Mistake(
            "NFKC only before casefold",
            "casefold can leave text that is no longer NFKC ('ǰ' casefolds to 'j' + a combining "
            "caron): apply NFKC again after casefold, as the contract says.",
            lambda text: _fold(_nfkc(text).casefold()),
        ),
    ),
)


# -- extract_terms ----------------------------------------------------------------------------

WordRule = Callable[[str], bool]


def _terms(
    normalized: str, *, word: WordRule | None = None, cjk: str = "bigrams", order: str = "sorted"
) -> tuple[str, ...]:
    """The contract's rule with one knob turned: how words are cut, what a Chinese run
    gives, how the result is ordered. ``_terms(text)`` is the contract itself."""

    def kind(char: str) -> str:
        if is_cjk(char):
            return "cjk"
        if word is None:
            return char_class(char)
        return "word" if word(char) else "other"

    found: list[str] = []
    for key, chars in itertools.groupby(normalized, key=kind):
        run = "".join(chars)
        if key == "word":
            found.append(run)
        elif key == "cjk":
            if cjk == "whole" or (len(run) == 1 and cjk != "drop-single"):
                found.append(run)
            elif cjk == "unigrams":
                found.extend(run)
            elif cjk == "pairs":  # 分层记忆 -> 分层, 记忆: no overlap
                found.extend(run[i : i + 2] for i in range(0, len(run), 2))
            else:  # bigrams (and drop-single: a lone character gives nothing)
                found.extend(run[i : i + 2] for i in range(len(run) - 1))
    if order == "sorted":
        return tuple(sorted(set(found)))
    if order == "sorted-repeats":
        return tuple(sorted(found))
    return tuple(dict.fromkeys(found))  # text order


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def _cjk_across_gaps(normalized: str) -> tuple[str, ...]:
    words = [t for t in _terms(normalized) if not is_cjk(t[0])]
    chinese = "".join(char for char in normalized if is_cjk(char))
    if len(chinese) == 1:
        words.append(chinese)
    words += [chinese[i : i + 2] for i in range(len(chinese) - 1)]
    return tuple(sorted(set(words)))


def _a_tuple(result: Any, call: Call) -> tuple[str, ...]:
    if isinstance(result, list):
        raise Malformed(
            "extract_terms must return a tuple, not a list (sorted(...) gives a list: wrap it "
            "in tuple(...))"
        )
    if not isinstance(result, tuple) or not all(isinstance(term, str) for term in result):
        raise Malformed(f"extract_terms must return a tuple of str, not {type(result).__name__}")
    return result


EXTRACT_TERMS = FunctionExercise(
    function="extract_terms",
    reference=extract_terms,
    examples=(
        Named(
            "the chapter's example: 'layered memory' gives layered, memory", Call("layered memory")
        ),
        Named("分层记忆 gives 分层/层记/记忆", Call("分层记忆")),
        Named("a lone Chinese character stays a unigram: 记", Call("记")),
        Named(
            "each term once, words before Chinese terms", Call("记忆 memory 记忆 layered memory")
        ),
        Named("punctuation separates words: append-only isn't", Call("append-only isn't")),
        Named("an identifier keeps its _ and digits: recall_history v2", Call("recall_history v2")),
        Named("letters of other scripts make words: café память", Call("café память")),
        Named("a Chinese run next to a word is a run of its own: 记忆v2", Call("记忆v2")),
        Named("only punctuation gives no term", Call("?!...")),
    ),
    cases=TEXTS.map(normalize_text).map(Call),
    read=_a_tuple,
    refuses=(extract_terms,),
    mistakes=(
        Mistake(
            "sorted but not unique",
            "Terms are unique: a word that occurs twice is one term. sorted(set(...)) does both.",
            lambda text: _terms(text, order="sorted-repeats"),
        ),
        Mistake(
            "unique but not sorted",
            "Terms are sorted (by code point), not in the order they occur: sorted(set(...)).",
            lambda text: _terms(text, order="text"),
        ),
        Mistake(
            "a Chinese run kept whole",
            "A run of Chinese characters gives its overlapping bigrams, not the run itself: "
            "分层记忆 -> 分层, 层记, 记忆.",
            lambda text: _terms(text, cjk="whole"),
        ),
        Mistake(
            "Chinese cut into single characters",
            "Cut a Chinese run into overlapping character PAIRS (bigrams), not single "
            "characters; only a run of one character stays a unigram.",
            lambda text: _terms(text, cjk="unigrams"),
        ),
        Mistake(
            "bigrams that do not overlap",
            "Bigrams overlap: start one at every character but the last (range(len(run) - 1)), "
            "so 分层记忆 also gives 层记.",
            lambda text: _terms(text, cjk="pairs"),
        ),
        Mistake(
            "a lone Chinese character dropped",
            "A run of ONE Chinese character has no bigram: it stays a term of its own (记 -> 记).",
            lambda text: _terms(text, cjk="drop-single"),
        ),
        Mistake(
            "\\w+ also matches Chinese characters",
            "re.findall(r'\\w+') puts Chinese characters inside words (they are letters to \\w); "
            "treat U+4E00..U+9FFF as a class of its own and cut those runs into bigrams.",
            lambda text: tuple(sorted(set(re.findall(r"\w+", text)))),
        ),
        Mistake(
            "only ASCII letters make words",
            "Letters and digits of other scripts are word characters too (str.isalnum()): "
            "'café' is one term, not 'caf', and 'память' stays whole.",
            lambda text: _terms(text, word=lambda c: c.isascii() and (c.isalnum() or c == "_")),
        ),
        Mistake(
            "split on spaces only",
            "Punctuation separates words too: cut runs of word characters (letters, digits, _, "
            "combining marks), so \"isn't\" gives 'isn' and 't'.",
            lambda text: tuple(sorted(set(text.split()))),
        ),
        Mistake(
            "combining marks split words",
            "A combining mark (category M, like U+0301) belongs to the word it follows: test "
            "unicodedata.category(char).startswith('M') as well as isalnum().",
            lambda text: _terms(text, word=lambda c: (c.isalnum() or c == "_") and not is_cjk(c)),
        ),
        Mistake(
            "underscore splits words",
            "'_' is a word character (the contract's ASCII words are runs of [a-z0-9_]): "
            "recall_history is one term.",
            lambda text: _terms(
                text, word=lambda c: (c.isalnum() or _is_mark(c)) and not is_cjk(c)
            ),
        ),
        Mistake(
            "digits dropped",
            "Digits are word characters: 'v2' is one term and '300' is a term.",
            lambda text: _terms(
                text, word=lambda c: (c.isalpha() or c == "_" or _is_mark(c)) and not is_cjk(c)
            ),
        ),
        Mistake(
            "bigrams across a gap",
            "Cut each run of Chinese characters on its own: characters separated by a space or "
            "a word do not form a bigram.",
            _cjk_across_gaps,
        ),
    ),
)


# -- "Your turn": predict the terms ------------------------------------------------------------

EXERCISE_TEXT = "ＳＱＬｉｔｅ  WAL 持久化方案"  # fullwidth Latin, upper case, a Chinese run


def check_predicted_terms(answer: object, text: str = EXERCISE_TEXT) -> CheckResult:
    """Predicted terms of ``text``: right when they are exactly stage 1's terms, each once,
    in any order; a subset, a superset or a repeat is wrong, with a hint."""

    def judge(answer: object) -> CheckResult:
        given = expect_sequence(answer, "a tuple (or list) of str, one per term", item=str)
        expected = extract_terms(normalize_text(text))
        if sorted(given) == list(expected):
            return right(
                f"Right: {expected} (NFKC, casefold, words + Chinese bigrams; the contract "
                "lists them sorted by code point)."
            )
        if sorted(set(given)) == list(expected):
            return wrong("The right terms, but terms are unique: list each term only once.")
        hints = []
        if any(t != t.casefold() for t in given):
            hints.append("casefold: every term is lower case")
        if any(any(0xFF01 <= ord(c) <= 0xFF5E for c in t) for t in given):
            hints.append("NFKC turns fullwidth letters like Ｓ into plain ASCII")
        if any(len(t) > 2 and all(is_cjk(c) for c in t) for t in given):
            hints.append("a run of Chinese characters becomes overlapping 2-character bigrams")
        if not hints:
            missing = sum(t not in given for t in expected)
            extra = sum(t not in expected for t in given)
            hints.append(f"{missing} term(s) missing, {extra} term(s) that are not terms")
        return wrong("Not yet: " + "; ".join(hints) + ".")

    return check_value(answer, judge, placeholder="a tuple of terms, e.g. ('a', 'b')")
