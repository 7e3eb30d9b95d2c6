"""Notebook 02: the build-its ``normalize_text``, ``extract_terms``; ``check_predicted_terms``."""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Any

from hypothesis import strategies as st

from memorylib.checks import fold_whitespace
from memorylib.notebook import exercises as ex
from memorylib.notebook.messages import joined, say
from memorylib.query import extract_terms, is_cjk, is_word_char, normalize_text, term_occurrences

# every kind of character the contract folds, the simplest first (hypothesis shrinks towards
# them); ǰ casefolds to a text that is not NFKC; the last two become CJK under NFKC
ALPHABET = "ab _19ABC\t\n\u3000\u00a0-'.!?ＡｂＣ１分层记忆召回éÉßẞДдΣς\u0301ﬁ①ǰ\uf900\u2f00"
TEXTS = st.text(alphabet=ALPHABET, max_size=12)
_nfkc = functools.partial(unicodedata.normalize, "NFKC")


def _a_str(result: Any, call: ex.Call) -> str:
    if not isinstance(result, str):
        raise ex.Malformed(say("normalize.not_str", kind=type(result).__name__))
    return result


_TEXTS = {
    "chapter": "  LAYERED   Memory  ", "fullwidth": "ＬＡＹＥＲＥＤ　Ｍｅｍｏｒｙ",
    "sharp_s": "Straße", "tabs": "layered\tmemory\n\ndesign", "chinese": "分层记忆", "empty": "",
}  # fmt: skip
NORMALIZE_TEXT = ex.FunctionExercise(
    function="normalize_text",
    reference=normalize_text,
    examples=ex.named("normalize.example", _TEXTS),
    cases=TEXTS.map(ex.Call),
    read=_a_str,
    refuses=(normalize_text,),
    mistakes=ex.mistakes(
        "normalize.mistake",
        {
            "nfkc": lambda t: fold_whitespace(t.casefold()),
            "lower": lambda t: fold_whitespace(_nfkc(_nfkc(t).lower())),
            "nocase": lambda t: fold_whitespace(_nfkc(t)),
            "spaces": lambda t: _nfkc(_nfkc(t).casefold()),
            "only_spaces": lambda t: re.sub(" +", " ", _nfkc(_nfkc(t).casefold())).strip(" "),
            "ends": lambda t: re.sub(r"\s+", " ", _nfkc(_nfkc(t).casefold())),
            "nfkc_once": lambda t: fold_whitespace(_nfkc(t).casefold()),
        },
    ),
)
_bigrams = re.compile("(?=(..))").findall  # a run's overlapping character pairs


def _terms(text: str, chinese: Any = None, word: Any = is_word_char) -> tuple[str, ...]:
    """The contract's terms, or with Chinese runs cut by ``chinese``, or other ``word`` chars."""
    kinds = itertools.groupby(text, lambda c: "cjk" if is_cjk(c) else "word" if word(c) else "")
    runs = [(kind == "cjk", "".join(chars)) for kind, chars in kinds if kind]
    cut = chinese or (lambda run: _bigrams(run) or [run])  # a lone character stays a unigram
    return tuple(sorted({term for cjk, run in runs for term in (cut(run) if cjk else [run])}))


def _across_gaps(text: str) -> tuple[str, ...]:  # the Chinese characters as one run
    words = {term for term in _terms(text) if not is_cjk(term[0])}
    return tuple(sorted(words | set(_terms("".join(filter(is_cjk, text))))))


def _a_tuple(result: Any, call: ex.Call) -> tuple[str, ...]:
    if isinstance(result, list):
        raise ex.Malformed(say("normalize.terms.list"))
    if not isinstance(result, tuple) or not all(isinstance(term, str) for term in result):
        raise ex.Malformed(say("normalize.terms.not_tuple", kind=type(result).__name__))
    return result


_NORMALIZED = {
    "chapter": "layered memory", "bigrams": "分层记忆", "lone": "记",
    "once": "记忆 memory 记忆 layered memory", "punctuation": "append-only isn't",
    "identifier": "recall_history v2", "scripts": "café память", "next_to_word": "记忆v2",
    "punctuation_only": "?!...",
}  # fmt: skip
EXTRACT_TERMS = ex.FunctionExercise(
    function="extract_terms",
    reference=extract_terms,
    examples=ex.named("normalize.terms.example", _NORMALIZED),
    cases=TEXTS.map(normalize_text).map(ex.Call),
    read=_a_tuple,
    refuses=(extract_terms,),
    mistakes=ex.mistakes(
        "normalize.terms.mistake",
        {
            "repeats": lambda t: tuple(sorted(term_occurrences(t))),
            "unsorted": lambda t: tuple(dict.fromkeys(term_occurrences(t))),
            "whole": lambda t: _terms(t, lambda run: [run]),
            "single": lambda t: _terms(t, list),
            "no_overlap": lambda t: _terms(t, lambda run: re.findall("..?", run)),
            "lone": lambda t: _terms(t, _bigrams),
            "backslash_w": lambda t: tuple(sorted(set(re.findall(r"\w+", t)))),
            "ascii": lambda t: _terms(t, word=re.compile(r"\w", re.ASCII).match),
            "spaces": lambda t: tuple(sorted(set(t.split()))),
            "marks": lambda t: _terms(t, word=lambda c: c.isalnum() or c == "_"),
            "underscore": lambda t: _terms(t, word=lambda c: is_word_char(c) and c != "_"),
            "digits": lambda t: _terms(t, word=lambda c: is_word_char(c) and not c.isdigit()),
            "gap": _across_gaps,
        },
    ),
)
EXERCISE_TEXT = "ＳＱＬｉｔｅ  WAL 持久化方案"  # fullwidth Latin, upper case, a Chinese run


def check_predicted_terms(answer: object, text: str = EXERCISE_TEXT) -> ex.CheckResult:
    """Right when ``answer`` holds exactly stage 1's terms of ``text``, each once, in any order."""

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_sequence(answer, say("normalize.predict.described"), item=str)
        expected = extract_terms(normalize_text(text))
        if sorted(given) == list(expected):
            return ex.right(say("normalize.predict.right", expected=expected))
        if sorted(set(given)) == list(expected):
            return ex.wrong(say("normalize.predict.repeat"))
        seen = {
            "casefold": any(t != t.casefold() for t in given),
            "nfkc": any("\uff01" <= c <= "\uff5e" for t in given for c in t),
            "bigrams": any(len(t) > 2 and all(map(is_cjk, t)) for t in given),
        }
        hints = [say(f"normalize.predict.{key}") for key, found in seen.items() if found]
        missing = sum(t not in given for t in expected)
        extra = sum(t not in expected for t in given)
        hints = hints or [say("normalize.predict.counts", missing=missing, extra=extra)]
        return ex.wrong(say("normalize.predict.wrong", hints=joined(hints)))

    return ex.check_value(answer, judge, placeholder=say("normalize.predict.placeholder"))
