"""Import laziness, the lazy runtime, the live-client checks and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memorylib
from memorylib.runtime import ConfigurationError, default_runtime, reset_runtime, runtime_client

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC", "MODEL_ID", "WORKBUDDY"))
    }
    env["HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_import_is_light_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    code = (
        "import sys, memorylib\n"
        "names = ('anthropic', 'pandas', 'matplotlib', 'ipywidgets')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = run_python(code, clean_env(tmp_path), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert list((tmp_path / "home").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_public_api_is_exported() -> None:
    for name in memorylib.__all__:
        assert hasattr(memorylib, name), name
    for name in (
        "RemoteMemoryStore",
        "RecallEngine",
        "normalize_recall_query",
        "build_recall_candidates",
        "score_recall_candidate",
        "stable_rank_recall_candidates",
        "render_recall_context",
        "build_system_prompt",
        "recall_history",
        "default_runtime",
        "runtime_client",
        "ScoringPolicy",
        "RemoteMemoryError",
        "RemoteMemoryValidationError",
        "RemoteMemoryDuplicateError",
        "RemoteMemoryScopeError",
        "RemoteMemoryCorruptionError",
    ):
        assert name in memorylib.__all__


def test_error_hierarchy() -> None:
    assert issubclass(memorylib.RemoteMemoryDuplicateError, memorylib.RemoteMemoryValidationError)
    for cls in (
        memorylib.RemoteMemoryValidationError,
        memorylib.RemoteMemoryScopeError,
        memorylib.RemoteMemoryCorruptionError,
    ):
        assert issubclass(cls, memorylib.RemoteMemoryError)


@pytest.fixture
def runtime_env(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBUDDY_HOME", str(tmp_path / "wb"))
    monkeypatch.delenv("WORKBUDDY_USER_ID", raising=False)
    reset_runtime()
    yield tmp_path / "wb"
    reset_runtime()


def test_default_runtime_seeds_on_first_use_only(runtime_env, monkeypatch) -> None:
    assert not runtime_env.exists()
    runtime = default_runtime()
    assert runtime.home == runtime_env / "remote-memory"
    assert runtime.store.path.parent == runtime.home
    records = runtime.store.read_all()
    assert [r.memory_id for r in records][:2] == ["profile-001", "conversation-001"]
    assert len(records) == 7
    assert default_runtime() is runtime
    reset_runtime()
    assert len(default_runtime().store.read_all()) == 7  # not seeded twice


def test_user_id_from_environment_picks_the_scope(runtime_env, monkeypatch) -> None:
    monkeypatch.setenv("WORKBUDDY_USER_ID", "dana")
    runtime = default_runtime()
    assert runtime.store.user_scope == memorylib.user_scope_for("dana")
    for path in runtime.home.iterdir():
        assert b"dana" not in path.read_bytes()


def test_the_tools_default_engine_can_be_replaced_and_must_exist(runtime_env, tmp_path) -> None:
    from memorylib.tool import set_default_engine

    other = memorylib.RemoteMemoryStore(tmp_path / "other.jsonl", user_id="erin")
    memorylib.seed_teaching_store(other)
    engine = memorylib.RecallEngine(other)
    try:
        set_default_engine(lambda: engine)
        payload = json.loads(
            memorylib.recall_history("layered memory", as_of=memorylib.TEACHING_AS_OF)
        )
        assert payload["query"]["user_scope"] == memorylib.user_scope_for("erin")
        assert not runtime_env.exists()  # the teaching runtime was never created
        set_default_engine(None)
        with pytest.raises(RuntimeError, match="set_default_engine"):
            memorylib.recall_history("layered memory")
    finally:
        set_default_engine(lambda: default_runtime().engine)  # what import memorylib sets


def test_recall_history_without_engine_uses_the_runtime(runtime_env) -> None:
    payload = json.loads(memorylib.recall_history("layered memory", as_of=memorylib.TEACHING_AS_OF))
    assert payload["hits"][0]["memory_id"] == "conversation-003"


def test_runtime_client_needs_model_id_then_key(monkeypatch) -> None:
    monkeypatch.delenv("MODEL_ID", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ConfigurationError, match="MODEL_ID"):
        runtime_client()
    monkeypatch.setenv("MODEL_ID", "some-model")
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        runtime_client()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-000")
    client, model = runtime_client()
    assert model == "some-model"
    assert "sk-ant-test" not in repr(client)


def test_demo_cli_works_without_a_key(tmp_path) -> None:
    env = clean_env(tmp_path)
    env["WORKBUDDY_HOME"] = str(tmp_path / "wb")
    result = subprocess.run(
        [sys.executable, "-m", "memorylib", "--demo"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert '<remote_profile memory_id="profile-001"' in out
    assert '"memory_id": "conversation-003"' in out
    assert '"total": 0.995161' in out
    assert "<recalled_context" in out
    assert "anthropic" not in result.stderr


def test_interactive_cli_fails_clearly_without_configuration(tmp_path) -> None:
    env = clean_env(tmp_path)
    env["WORKBUDDY_HOME"] = str(tmp_path / "wb")
    result = subprocess.run(
        [sys.executable, "-m", "memorylib"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "MODEL_ID is not set" in result.stderr
    assert "Traceback" not in result.stderr
