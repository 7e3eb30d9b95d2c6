"""Stage 1 build-it (notebook 02): ``normalize_text`` and ``extract_terms``.

Checked against ``memorylib.query``. Generated inputs mix what the contract must fold:
ASCII in both cases, digits and ``_``, spaces, tabs, newlines, the ideographic and
no-break spaces, punctuation, fullwidth forms, ligatures, circled digits, Chinese, an
accented letter, a combining mark, ß, Cyrillic and Greek (final sigma), and one letter
(ǰ) that casefolding leaves un-normalized. ``extract_terms`` gets already-normalized text
(the reference's ``normalize_text`` of a generated string), as its contract says.
"""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from memorylib.notebook.buildit.engine import Example, Exercise, Malformed, Mistake, shown
from memorylib.notebook.buildit.generate import shrink_text, weighted_text
from memorylib.query import char_class, extract_terms, is_cjk, normalize_text

__all__ = ["EXTRACT_TERMS", "NORMALIZE_TEXT"]

ALPHABET: tuple[tuple[str, float], ...] = (
    ("abc", 10),
    ("ABC", 3),
    ("019", 2),
    ("_", 1),
    (" ", 8),
    ("\t\n", 1.5),
    ("\u3000\u00a0", 1),  # ideographic space, no-break space
    ("-'.!?", 2),
    ("ＡｂＣ１", 2),  # fullwidth
    ("分层记忆召回", 6),
    ("éÉ", 1),
    ("ßẞ", 1),
    ("ДдΣς", 1),
    ("\u0301", 1),  # a combining acute accent
    ("ﬁ①", 1),  # a ligature, a circled digit
    ("ǰ", 0.4),  # casefold leaves it decomposed: NFKC again composes it
    ("\uf900\u2f00", 0.4),  # a CJK compatibility ideograph, a Kangxi radical: NFKC -> CJK
)


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _fold(text: str) -> str:
    return " ".join(text.split())


# -- normalize_text ---------------------------------------------------------------------------


def _differences_text(expected: str, got: str, case: Any) -> list[str]:
    for position, (a, b) in enumerate(zip(expected, got, strict=False)):
        if a != b:
            return [
                f"first difference at character {position}: the contract has {shown(a)} "
                f"(U+{ord(a):04X}), yours {shown(b)} (U+{ord(b):04X})"
            ]
    if len(expected) != len(got):
        return [f"the contract's text has {len(expected)} characters, yours {len(got)}"]
    return []


def _project_text(result: Any, case: Any) -> Any:
    if not isinstance(result, str):
        return Malformed(f"normalize_text must return a str, not {type(result).__name__}")
    return result


NORMALIZE_MISTAKES = (
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
        "Folding also trims: no space at the start or the end (' '.join(text.split()) does both).",
        lambda text: re.sub(r"\s+", " ", _nfkc(_nfkc(text).casefold())),
    ),
    Mistake(
        "NFKC only before casefold",
        "casefold can leave text that is no longer NFKC ('ǰ' casefolds to 'j' + a combining "
        "caron): apply NFKC again after casefold, as the contract says.",
        lambda text: _fold(_nfkc(text).casefold()),
    ),
)

NORMALIZE_TEXT = Exercise(
    function="normalize_text",
    reference=normalize_text,
    call=lambda function, text: function(text),
    examples=(
        Example("the chapter's example '  LAYERED   Memory  '", "  LAYERED   Memory  "),
        Example("fullwidth letters, an ideographic space (NFKC)", "ＬＡＹＥＲＥＤ　Ｍｅｍｏｒｙ"),
        Example("German sharp s folds to ss (casefold, not lower)", "Straße"),
        Example("tabs and newlines are whitespace too", "layered\tmemory\n\ndesign"),
        Example("Chinese text passes through: 分层记忆", "分层记忆"),
        Example("empty text stays empty", ""),
    ),
    generate=lambda rng: weighted_text(rng, ALPHABET),
    shrink=shrink_text,
    show_call=lambda name, text: f"{name}({shown(text)})",
    project=_project_text,
    show=lambda value: shown(value),
    differences=_differences_text,
    mistakes=NORMALIZE_MISTAKES,
    generated=300,
)


# -- extract_terms ----------------------------------------------------------------------------

WordRule = Callable[[str], bool]


def _ascii_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


def _alnum_underscore(char: str) -> bool:  # no combining marks
    return (char.isalnum() or char == "_") and not is_cjk(char)


def _alnum(char: str) -> bool:  # no underscore
    return char.isalnum() and not is_cjk(char)


def _letters_underscore(char: str) -> bool:  # no digits
    return (char.isalpha() or char == "_" or unicodedata.category(char).startswith("M")) and not (
        is_cjk(char)
    )


def _terms(
    normalized: str,
    *,
    word: WordRule | None = None,
    cjk: str = "bigrams",
    order: str = "sorted",
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


def _cjk_across_gaps(normalized: str) -> tuple[str, ...]:
    words = [t for t in _terms(normalized) if not is_cjk(t[0])]
    chinese = "".join(char for char in normalized if is_cjk(char))
    if len(chinese) == 1:
        words.append(chinese)
    words += [chinese[i : i + 2] for i in range(len(chinese) - 1)]
    return tuple(sorted(set(words)))


def _regex_words(normalized: str) -> tuple[str, ...]:
    return tuple(sorted(set(re.findall(r"\w+", normalized))))


def _split_on_spaces(normalized: str) -> tuple[str, ...]:
    return tuple(sorted(set(normalized.split())))


EXTRACT_MISTAKES = (
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
        "Cut a Chinese run into overlapping character PAIRS (bigrams), not single characters; "
        "only a run of one character stays a unigram.",
        lambda text: _terms(text, cjk="unigrams"),
    ),
    Mistake(
        "bigrams that do not overlap",
        "Bigrams overlap: start one at every character but the last (range(len(run) - 1)), so "
        "分层记忆 also gives 层记.",
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
        _regex_words,
    ),
    Mistake(
        "only ASCII letters make words",
        "Letters of every script are word characters (str.isalnum()): 'café' is one term, "
        "not 'caf', and 'память' stays whole.",
        lambda text: _terms(text, word=_ascii_word),
    ),
    Mistake(
        "split on spaces only",
        "Punctuation separates words too: cut runs of word characters (letters, digits, _, "
        "combining marks), so \"isn't\" gives 'isn' and 't'.",
        _split_on_spaces,
    ),
    Mistake(
        "combining marks split words",
        "A combining mark (category M, like U+0301) belongs to the word it follows: test "
        "unicodedata.category(char).startswith('M') as well as isalnum().",
        lambda text: _terms(text, word=_alnum_underscore),
    ),
    Mistake(
        "underscore splits words",
        "'_' is a word character (the chapter's words are runs of [a-z0-9_]): "
        "recall_history is one term.",
        lambda text: _terms(text, word=_alnum),
    ),
    Mistake(
        "digits dropped",
        "Digits are word characters: 'v2' is one term and '300' is a term.",
        lambda text: _terms(text, word=_letters_underscore),
    ),
    Mistake(
        "bigrams across a gap",
        "Cut each run of Chinese characters on its own: characters separated by a space or "
        "a word do not form a bigram.",
        _cjk_across_gaps,
    ),
)


def _project_terms(result: Any, case: Any) -> Any:
    if isinstance(result, list):
        return Malformed(
            "extract_terms must return a tuple, not a list (sorted(...) gives a list: wrap it "
            "in tuple(...))"
        )
    if not isinstance(result, tuple):
        return Malformed(f"extract_terms must return a tuple of str, not {type(result).__name__}")
    if not all(isinstance(term, str) for term in result):
        return Malformed("every term must be a str")
    return result


def _show_terms(terms: tuple[str, ...]) -> str:
    return "(" + ", ".join(shown(t) for t in terms) + ("," if len(terms) == 1 else "") + ")"


def _differences_terms(expected: tuple[str, ...], got: tuple[str, ...], case: Any) -> list[str]:
    lines = []
    missing = [t for t in expected if t not in got]
    extra = sorted(set(t for t in got if t not in expected))
    if missing:
        lines.append("missing: " + ", ".join(shown(t) for t in missing))
    if extra:
        lines.append("not terms of this text: " + ", ".join(shown(t) for t in extra))
    if not missing and not extra:
        if len(got) != len(set(got)):
            lines.append("a term appears more than once")
        elif list(got) != sorted(got):
            lines.append("the same terms, in another order: the contract sorts them")
    return lines


def _normalized_shrinks(text: str) -> Iterator[str]:
    seen = {text}
    for smaller in shrink_text(text):
        candidate = normalize_text(smaller)
        if candidate not in seen:
            seen.add(candidate)
            yield candidate


def _generate_normalized(rng: random.Random) -> str:
    return normalize_text(weighted_text(rng, ALPHABET, longest=12))


EXTRACT_TERMS = Exercise(
    function="extract_terms",
    reference=extract_terms,
    call=lambda function, text: function(text),
    examples=(
        Example("the chapter's example: 'layered memory' gives layered / memory", "layered memory"),
        Example("分层记忆 gives 分层/层记/记忆", "分层记忆"),
        Example("a lone Chinese character stays a unigram: 记", "记"),
        Example("each term once, words before Chinese terms", "记忆 memory 记忆 layered memory"),
        Example("punctuation separates words: append-only isn't", "append-only isn't"),
        Example("an identifier keeps its _ and digits: recall_history v2", "recall_history v2"),
        Example("letters of other scripts make words: café память", "café память"),
        Example("only punctuation gives no term", "?!..."),
    ),
    generate=_generate_normalized,
    shrink=_normalized_shrinks,
    show_call=lambda name, text: f"{name}({shown(text)})",
    project=_project_terms,
    show=_show_terms,
    differences=_differences_terms,
    mistakes=EXTRACT_MISTAKES,
    generated=300,
)
