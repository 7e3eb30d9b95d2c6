"""A seeded, realistic bilingual corpus for benchmarks, scaling charts and property tests.

Real memory stores are not uniform: a few words ("the", "memory", "记忆") appear in
almost every record and most words appear in very few. The generator draws English
words and Chinese words from Zipf distributions (rank ``r`` has weight ``1 / r**1.1``),
writes 1-4 sentences per record (English, Chinese or mixed), spreads ``captured_at``
over about two years and reuses some timestamps exactly, so ties on recency occur
and the ``memory_id`` tie-break of the stable rank is exercised.

* ``synthetic_entries(n, seed=...)``: keyword arguments for ``store.append``;
* ``write_synthetic_store(path, n, ...)``: a store holding them, written through
  ``store.append`` (the real, locked, fsynced path) or, with ``bulk=True``, as
  lines written directly (for benchmark fixtures only: see its docstring);
* ``synthetic_queries(k, seed=...)``: common-word, rare-word, Chinese and mixed queries.

The same ``seed`` always gives the same records and queries.
"""

from __future__ import annotations

import itertools
import os
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from .interface import MAX_CONTENT_CHARS, MAX_SUMMARY_CHARS
from .records import MemoryKind, MemorySource
from .store import RemoteMemoryStore

__all__ = [
    "SHAPES",
    "SYNTHETIC_END",
    "synthetic_entries",
    "synthetic_queries",
    "write_synthetic_store",
]

SYNTHETIC_END = datetime(2026, 8, 1, tzinfo=UTC)  # newest capture; a fixed clock, not now()
_SPAN_SECONDS = 730 * 86_400  # about two years of history
_ZIPF_EXPONENT = 1.1
_TIE_RATE = 0.08  # share of records that reuse an earlier record's captured_at exactly
_PROFILE_EVERY = 10_000  # one PROFILE snapshot per this many records (record 0 is one)


def _words(text: str) -> list[str]:
    return text.split()


# The most frequent English words of an engineering conversation, most frequent first.
_ENGLISH_HEAD = _words(
    """
the to and a of we in is for that it on with this be as are use not have or by from
memory agent user can file should at will when so one an if session recall store it's
tool record query but more each only all time how what model data context which new
test would was then need they our run code make no output first there its about also
prompt change just like read write index score rank term line lock search source do
append check list error keep same version plan cache token path log case task result
remote profile history step review design layer json jsonl sqlite python api build
state event update delete budget summary limit window failure retry timeout schema
workspace project branch commit merge deploy config server client request response
latency throughput batch stream queue worker thread process crash restore backup
snapshot migration field value key string number table column row filter sort order
stable fast slow small large empty full valid invalid exact partial shared private
local global default custom explicit implicit before after during between across
note decision reason evidence owner scope provenance captured stored ranked matched
"""
)

# Syllables for the long tail: rare, mostly project-specific words ("kelvaro", "tunsix").
_ONSETS = _words("b c d f g h j k l m n p r s t v w z br cl dr fl gr pl st tr ch sh th")
_VOWELS = _words("a e i o u ai ea io ou")
_CODAS = ["", "", "", "n", "r", "s", "x", "l", "m", "nd", "st"]

# Frequent Chinese words (two characters each), most frequent first.
_CHINESE_HEAD = _words(
    """
记忆 用户 我们 工具 文件 上下文 模型 会话 检索 存储 预算 输出 摘要 问题 需要 可以
没有 这个 因为 所以 但是 如果 已经 一个 时候 进行 使用 通过 实现 设计 分层 远程
本地 配置 测试 代码 数据 索引 排序 分数 来源 时间 结果 查询 路径 日志 错误 版本
计划 缓存 任务 历史 资料 偏好 工作 项目 提交 合并 部署 服务 请求 响应 延迟 批量
队列 线程 进程 崩溃 恢复 备份 快照 迁移 字段 表格 过滤 稳定 快速 缓慢 有效 无效
精确 共享 私有 全局 默认 明确 决定 原因 证据 范围 召回 匹配 边界 规则 提示 窗口
"""
)

# Common characters for the Chinese long tail (rare two-character words are pairs of them).
_CHINESE_CHARS = (
    "的一是在不了有和人这中大为上个页我以要他时来用们生到作地于出就分对成会可主发年动"
    "同工也能下过子说产种面而方后多定行学法所书得经十三之进着等部度家电力里如水化高自"
    "二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天云四日"
    "那窗键事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变"
    "条只没结解问意建月公无系表很情者最立代想已通并提直题库程展五果料象员桥位入常文总"
    "次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
)

_CONNECTORS_ZH = "，"
_LATIN = re.compile(r"[A-Za-z]+")
_HAN_CHARS = re.compile(r"[\u4e00-\u9fff]")


def _zipf_cumulative(size: int) -> list[float]:
    weights = [1.0 / (rank**_ZIPF_EXPONENT) for rank in range(1, size + 1)]
    return list(itertools.accumulate(weights))


def _tail_words(rng: random.Random, count: int, taken: set[str]) -> list[str]:
    words: list[str] = []
    while len(words) < count:
        syllables = rng.choice((2, 2, 2, 3))
        word = "".join(
            rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
        )
        if word not in taken:
            taken.add(word)
            words.append(word)
    return words


class _Vocabulary:
    """Both vocabularies, ranked, with cumulative Zipf weights; built from the seed."""

    def __init__(self, seed: int, english_size: int = 20_000, chinese_size: int = 6_000) -> None:
        rng = random.Random(f"memorylib-vocabulary-{seed}")
        head = list(dict.fromkeys(_ENGLISH_HEAD))
        self.english = head + _tail_words(rng, english_size - len(head), set(head))
        zh_head = list(dict.fromkeys(_CHINESE_HEAD))
        taken = set(zh_head)
        zh_tail: list[str] = []
        while len(zh_head) + len(zh_tail) < chinese_size:
            length = rng.choice((1, 2, 2, 2, 3))
            word = "".join(rng.choice(_CHINESE_CHARS) for _ in range(length))
            if word not in taken:
                taken.add(word)
                zh_tail.append(word)
        self.chinese = zh_head + zh_tail
        self.english_cum = _zipf_cumulative(len(self.english))
        self.chinese_cum = _zipf_cumulative(len(self.chinese))

    def english_words(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.english, cum_weights=self.english_cum, k=k)

    def chinese_words(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.chinese, cum_weights=self.chinese_cum, k=k)

    def english_sentence(self, rng: random.Random) -> str:
        words = self.english_words(rng, rng.randint(5, 16))
        return words[0].capitalize() + " " + " ".join(words[1:]) + "."

    def chinese_sentence(self, rng: random.Random) -> str:
        words = self.chinese_words(rng, rng.randint(4, 12))
        if len(words) > 6:
            words.insert(len(words) // 2, _CONNECTORS_ZH)
        return "".join(words) + "。"

    def mixed_sentence(self, rng: random.Random) -> str:
        if rng.random() < 0.5:  # Chinese sentence carrying English identifiers
            words: list[str] = self.chinese_words(rng, rng.randint(4, 10))
            for _ in range(rng.randint(1, 2)):
                english = self.english_words(rng, 1)[0]
                if rng.random() < 0.3:
                    english = english.upper()
                words.insert(rng.randrange(len(words) + 1), f" {english} ")
            return "".join(words).strip() + "。"
        words = self.english_words(rng, rng.randint(5, 12))
        words.insert(rng.randrange(1, len(words) + 1), "".join(self.chinese_words(rng, 2)))
        return words[0].capitalize() + " " + " ".join(words[1:]) + "."


_VOCABULARIES: dict[int, _Vocabulary] = {}


def _vocabulary(seed: int) -> _Vocabulary:
    if seed not in _VOCABULARIES:
        _VOCABULARIES[seed] = _Vocabulary(seed)
    return _VOCABULARIES[seed]


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


SHAPES = ("short", "long")


def _word_count(text: str) -> int:
    """English words plus Chinese words (about two characters each)."""
    return len(_LATIN.findall(text)) + len(_HAN_CHARS.findall(text)) // 2


def synthetic_entries(n: int, *, seed: int = 0, shape: str = "short") -> list[dict[str, Any]]:
    """``n`` keyword-argument dicts for ``store.append(**entry)``; deterministic for ``seed``.

    ``shape="short"``: 1-4 sentences of one style (English, Chinese or mixed).
    ``shape="long"``: 50-150 words per record, sentences of every style mixed in one
    record, so the commonest terms ("the", "memory", 记忆 ...) are in most records.

    Record ``i`` has memory_id ``conversation-{i:07d}`` (``profile-{i:07d}`` for the
    occasional PROFILE snapshot). About 45% are English, 30% Chinese and 25% mixed.
    ``captured_at`` grows with ``i`` (history is appended as it happens) with jitter,
    some late imports of old material, and ~8% exact repeats of an earlier timestamp.
    ``stored_at`` is a few minutes after ``captured_at``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
    vocab = _vocabulary(seed)
    rng = random.Random(f"memorylib-entries-{seed}" + ("" if shape == "short" else f"-{shape}"))
    start = SYNTHETIC_END - timedelta(seconds=_SPAN_SECONDS)
    entries: list[dict[str, Any]] = []
    times: list[datetime] = []
    for i in range(n):
        roll = rng.random()
        if times and roll < _TIE_RATE:
            captured = times[rng.randrange(max(0, len(times) - 50), len(times))]
        elif roll < _TIE_RATE + 0.04:  # a late import of older material
            captured = start + timedelta(seconds=rng.randrange(_SPAN_SECONDS))
        else:
            position = (i + rng.random()) / max(n, 1)
            captured = start + timedelta(seconds=int(position * _SPAN_SECONDS))
        times.append(captured)
        style = rng.random()
        make = (
            vocab.english_sentence
            if style < 0.45
            else vocab.chinese_sentence
            if style < 0.75
            else vocab.mixed_sentence
        )
        if shape == "long":
            target, sentences, words = rng.randint(50, 150), [], 0
            makers = (vocab.english_sentence, vocab.chinese_sentence, vocab.mixed_sentence)
            while words < target:
                sentences.append(rng.choice(makers)(rng))
                words += _word_count(sentences[-1])
            separator = " "
        else:
            sentences = [make(rng) for _ in range(rng.randint(1, 4))]
            separator = "" if make is vocab.chinese_sentence else " "
        content = separator.join(sentences)[:MAX_CONTENT_CHARS]
        summary = sentences[0][:MAX_SUMMARY_CHARS]
        title_words = (
            vocab.chinese_words(rng, 2)
            if make is vocab.chinese_sentence
            else vocab.english_words(rng, rng.randint(2, 4))
        )
        title = ("" if make is vocab.chinese_sentence else " ").join(title_words)
        is_profile = i % _PROFILE_EVERY == 0
        kind = MemoryKind.PROFILE if is_profile else MemoryKind.CONVERSATION
        entries.append(
            {
                "kind": kind,
                "memory_id": f"{kind.value}-{i:07d}",
                "content": content,
                "summary": summary,
                "source": MemorySource(
                    source_id=f"{'profile-snapshot' if is_profile else 'transcript'}-{i:07d}",
                    source_type="profile_snapshot" if is_profile else "conversation_transcript",
                    title=title,
                    captured_at=_stamp(captured),
                ),
                "stored_at": _stamp(captured + timedelta(seconds=rng.randrange(30, 900))),
            }
        )
    return entries


def write_synthetic_store(
    path: str | os.PathLike[str],
    n: int,
    *,
    seed: int = 0,
    user_id: str = "local-user",
    bulk: bool = False,
    shape: str = "short",
) -> RemoteMemoryStore:
    """A store at ``path`` holding ``synthetic_entries(n, seed=seed)``.

    Default: every entry goes through ``store.append`` one by one (validation, lock,
    duplicate check, one ``O_APPEND`` write, ``fsync``), the path a real writer takes.
    ``bulk=True`` writes them with ``store.append_many``: the same validation and
    duplicate rules, one lock, one write and one ``fsync`` for the whole batch.
    """
    store = RemoteMemoryStore(path, user_id=user_id)
    entries = synthetic_entries(n, seed=seed, shape=shape)
    if bulk:
        store.append_many(entries)
    else:
        for entry in entries:
            store.append(**entry)
    return store


def synthetic_queries(k: int, *, seed: int = 0) -> list[str]:
    """``k`` recall texts cycling through six kinds, deterministic for ``seed``.

    Kinds: a common English word; two or three English words mixing common and
    mid-frequency ones; a rare English word; a Chinese phrase (two frequent words);
    a rare Chinese word; a mixed phrase (English identifier + Chinese word).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    vocab = _vocabulary(seed)
    rng = random.Random(f"memorylib-queries-{seed}")
    english, chinese = vocab.english, vocab.chinese
    head = len(_ENGLISH_HEAD)
    makers = (
        lambda: rng.choice(english[:40]),
        lambda: " ".join(rng.sample(english[:30], 1) + rng.sample(english[30:600], 2)),
        lambda: rng.choice(english[2_000:]),
        lambda: "".join(rng.sample(chinese[:60], 2)),
        lambda: rng.choice(chinese[1_000:]),
        lambda: rng.choice(english[20:head]).upper() + " " + rng.choice(chinese[:100]),
    )
    return [makers[i % len(makers)]() for i in range(k)]
