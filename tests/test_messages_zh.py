"""Every catalogue beside the English one (catalogue/zh/) says the same things: the same topics,
the same keys in the same order, the same placeholders; and a helper's module-level text
follows the language chosen after it was made."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from memorylib.notebook import messages

ROOT = Path(messages.__file__).parent / "catalogue"
OTHERS = [language for language in messages.languages() if language != "en"]
CJK = re.compile(r"[\u4e00-\u9fff]")


def entries(language: str, topic: str) -> dict[str, str]:
    return messages.parse((ROOT / language / f"{topic}.txt").read_text("utf-8"), topic)


def placeholders(text: str) -> list[tuple[str, str, str | None]]:
    fields = string.Formatter().parse(text)
    return sorted((name, spec or "", conv) for _, name, spec, conv in fields if name is not None)


def test_the_chinese_edition_has_a_catalogue() -> None:
    assert "zh" in messages.languages()


@pytest.mark.parametrize("language", OTHERS)
def test_the_same_topics_keys_and_placeholders_as_english(language: str) -> None:
    topics = sorted(p.stem for p in (ROOT / "en").glob("*.txt"))
    assert sorted(p.stem for p in (ROOT / language).glob("*.txt")) == topics
    for topic in topics:
        en, other = entries("en", topic), entries(language, topic)
        assert list(other) == list(en), f"{language}/{topic}.txt: keys differ from en/"
        wrong = [k for k in en if placeholders(en[k]) != placeholders(other[k])]
        assert not wrong, f"{language}/{topic}.txt: placeholders differ: {wrong}"


def test_the_chinese_catalogue_is_written_in_chinese() -> None:
    """Most entries with English words have Chinese in zh/ (names and labels may stay Latin)."""
    for path in sorted((ROOT / "en").glob("*.txt")):
        en, zh = entries("en", path.stem), entries("zh", path.stem)
        prose = [k for k, v in en.items() if len(re.findall(r"[A-Za-z]{3,}", v)) >= 4]
        untranslated = [k for k in prose if not CJK.search(zh[k])]
        assert len(untranslated) <= len(prose) // 10, f"zh/{path.name}: {untranslated}"


def test_a_text_made_at_import_is_said_in_the_language_chosen_later() -> None:
    label = messages.said("common.course.01_stored_records")
    before = messages.language()
    try:
        messages.set_language("zh")
        assert str(label) == "01 · 存储记录"
        assert f"{label}" == messages.say("common.course.01_stored_records")
        messages.set_language("en")
        assert str(label) == "01 · Stored records"
    finally:
        messages.set_language(before)
