"""The course's message catalogues: how a file reads, and that every sentence a helper
writes has exactly one entry (none missing, none left unused)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from memorylib.notebook import messages

PACKAGE = Path(messages.__file__).parent


def test_a_catalogue_file_reads_keys_continuations_and_comments() -> None:
    text = (
        "# a comment\nplain: one line\nlong: first half\n  second half\n"
        "poem: line one\n  | line two\n"
    )
    assert messages.parse(text) == {
        "plain": "one line",
        "long": "first half second half",
        "poem": "line one\nline two",
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [("a: one\na: two\n", "'a' is written twice"), ("no colon here\n", "not 'key: text'")],
)
def test_a_malformed_catalogue_says_where(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=f"x.txt:\\d+: {problem}"):
        messages.parse(text, "x.txt")


def test_say_fills_in_values_and_names_a_missing_entry() -> None:
    assert (
        messages.say("engine.function.raised", name="f", error="TypeError") == "f raised TypeError."
    )
    with pytest.raises(KeyError, match=r"no entry 'nope' in en/engine\.txt"):
        messages.say("engine.nope")


def test_an_unknown_language_is_refused_and_english_is_the_default() -> None:
    assert messages.language() == messages.DEFAULT_LANGUAGE == "en"
    assert "en" in messages.languages()
    with pytest.raises(ValueError, match="no catalogue for 'xx'"):
        messages.set_language("xx")
    assert messages.language() == "en"


def _keys_used() -> tuple[set[str], set[str]]:
    """Literal keys of every ``say("topic.key")`` in the notebook layer, tests/course.py and the
    code cells of the English notebooks,
    and the literal prefixes of ``say(f"topic.prefix{...}")`` and ``ex.named``/``ex.mistakes``.
    The engine's own ``say`` (in exercises.py, and ``ex.say`` elsewhere) prefixes ``engine.``."""
    literal: set[str] = set()
    prefixes: set[str] = set()
    notebooks = sorted(Path(__file__).resolve().parents[1].joinpath("notebooks").glob("*.ipynb"))
    for path in [*PACKAGE.rglob("*.py"), Path(__file__).with_name("course.py"), *notebooks]:
        source = path.read_text(encoding="utf-8")
        if path.name == "messages.py":  # its docstrings' examples are no keys; joined's mark is
            literal |= set(re.findall(r'say\("(common\.[\w.]+)"\)', source))
            continue
        if path.suffix == ".ipynb":  # a notebook's code cells (its chart and widget labels)
            cells = nbformat.reads(source, as_version=4).cells
            source = "\n".join(c.source for c in cells if c.cell_type == "code")
        engine = path.name == "exercises.py"
        for call, fmt, key, brace in re.findall(
            r'(ex\.say|\bsaid|\bsay)\(\s*(f?)["\']([\w.]*)(\{?)', source
        ):
            if engine or call == "ex.say":
                key = f"engine.{key}"
            (prefixes if fmt and brace else literal).add(key)
        # ex.named("topic.prefix", ...) and ex.mistakes(...) say "topic.prefix.<key>"
        prefixes |= {f"{p}." for p in re.findall(r'ex\.(?:named|mistakes)\(\s*"([\w.]+)"', source)}
    return literal, prefixes


def test_every_key_a_helper_says_is_in_the_english_catalogue() -> None:
    literal, _ = _keys_used()
    missing = {
        k
        for k in literal
        if k.partition(".")[2] not in messages.catalogue("en", k.partition(".")[0])
    }
    assert not missing, sorted(missing)


def test_every_english_entry_is_said_somewhere() -> None:
    literal, prefixes = _keys_used()
    unused = [
        f"{path.stem}.{key}"
        for path in sorted((PACKAGE / "catalogue" / "en").glob("*.txt"))
        for key in messages.catalogue("en", path.stem)
        if f"{path.stem}.{key}" not in literal
        and not any(f"{path.stem}.{key}".startswith(p) for p in prefixes)
    ]
    assert not unused, unused
