"""Secrets: no API key or secret environment value in a notebook output, log or error.

* Every ``notebooks/*.ipynb`` output (stream text, display data, tracebacks) is
  scanned for ``sk-ant-``, ``ANTHROPIC_API_KEY=<value>`` and the value of every
  environment variable whose name contains KEY, TOKEN, SECRET or PASSWORD (8+
  characters). With no notebooks the suite still runs (and the scanner is proven
  on a planted notebook). Failure messages name the variable, never the value.
* ``runtime_client()`` and the command line fail with clear messages that never
  contain a planted key; memorylib logs nothing that contains it either.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import traceback
import uuid
from pathlib import Path

import pytest

from memorylib import ConfigurationError, RecallEngine, default_runtime, reset_runtime
from memorylib.runtime import runtime_client

from ._reliability import PROCESS_TIMEOUT, REPO, python_env, record_figures

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
KEY_ASSIGNMENT = re.compile(r"ANTHROPIC_API_KEY\s*[=:]\s*['\"]?([^\s'\"<>$`)]+)")
PLACEHOLDERS = {"...", "…", "xxx", "your-key", "your_key", "YOUR_KEY", "sk-ant-..."}


def secret_env_values(environ: dict[str, str] | None = None) -> dict[str, str]:
    """name -> value of every secret-looking environment variable worth scanning for."""
    env = os.environ if environ is None else environ
    return {
        name: value
        for name, value in env.items()
        if SECRET_NAME.search(name) and len(value.strip()) >= 8
    }


def output_texts(notebook: dict) -> list[tuple[int, str]]:
    """(cell index, text) for every output of every cell."""
    texts = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []) or []:
            parts: list[str] = []
            text = output.get("text")
            parts.append("".join(text) if isinstance(text, list) else str(text or ""))
            for value in (output.get("data") or {}).values():
                if isinstance(value, list):
                    parts.append("".join(map(str, value)))
                elif isinstance(value, str):
                    parts.append(value)
                else:
                    parts.append(json.dumps(value))
            parts.append(str(output.get("ename", "")) + " " + str(output.get("evalue", "")))
            parts.extend(str(line) for line in output.get("traceback", []) or [])
            texts.append((index, "\n".join(parts)))
    return texts


def leaks(notebook_path: Path, environ: dict[str, str] | None = None) -> list[str]:
    """Descriptions of every leak in one notebook's outputs (never the secret itself)."""
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    secrets = secret_env_values(environ)
    found = []
    for index, text in output_texts(notebook):
        where = f"{notebook_path.name} cell {index}"
        if "sk-ant-" in text:
            found.append(f"{where}: an sk-ant- key")
        for match in KEY_ASSIGNMENT.finditer(text):
            if match.group(1) not in PLACEHOLDERS:
                found.append(f"{where}: an ANTHROPIC_API_KEY= value")
        for name, value in secrets.items():
            if value in text:
                found.append(f"{where}: the value of ${name}")
    raw = notebook_path.read_text(encoding="utf-8")  # sources and metadata too
    for name, value in secrets.items():
        if value in raw:
            found.append(f"{notebook_path.name}: the value of ${name} (anywhere in the file)")
    return found


def test_no_notebook_output_leaks_a_secret() -> None:
    """Passes with zero notebooks; checks every notebook when there are some."""
    problems = [problem for path in NOTEBOOKS for problem in leaks(path)]
    assert problems == [], problems
    record_figures(
        "secrets",
        notebooks_scanned=len(NOTEBOOKS),
        outputs_scanned=sum(
            len(output_texts(json.loads(p.read_text(encoding="utf-8")))) for p in NOTEBOOKS
        ),
        secret_env_vars_checked=len(secret_env_values()),
        leaks_found=0,
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_each_notebook_is_clean(notebook: Path) -> None:
    assert leaks(notebook) == []


def _planted_notebook(tmp_path: Path, output_text: str) -> Path:
    notebook = {
        "cells": [
            {"cell_type": "code", "source": "print('hi')", "outputs": []},
            {
                "cell_type": "code",
                "source": "x",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": [output_text]}],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / f"planted-{uuid.uuid4().hex[:6]}.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_the_scanner_finds_planted_leaks(tmp_path: Path) -> None:
    planted_value = "planted-" + uuid.uuid4().hex
    env = {"MY_SERVICE_TOKEN": planted_value, "SHORT_KEY": "abc", "PATH": "/usr/bin"}
    assert secret_env_values(env) == {"MY_SERVICE_TOKEN": planted_value}
    cases = {
        "key: sk-ant-api03-abcdef": "sk-ant-",
        "export ANTHROPIC_API_KEY=abcd1234efgh": "ANTHROPIC_API_KEY=",
        f"token is {planted_value}": "$MY_SERVICE_TOKEN",
    }
    for text, expected in cases.items():
        found = leaks(_planted_notebook(tmp_path, text), env)
        assert any(expected in problem for problem in found), (text, found)
        assert all(planted_value not in problem for problem in found)  # never echo it
    for harmless in ("export ANTHROPIC_API_KEY=<your key>", "set ANTHROPIC_API_KEY=$KEY", "ok"):
        assert leaks(_planted_notebook(tmp_path, harmless), env) == []


# -- the runtime and the command line --------------------------------------------------------

PLANTED_KEY = "sk-ant-api03-PLANTED-" + uuid.uuid4().hex


def _full_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + str(exc)


def test_runtime_client_errors_never_contain_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.delenv("MODEL_ID", raising=False)
    with pytest.raises(ConfigurationError, match="MODEL_ID") as missing_model:
        runtime_client()
    monkeypatch.setenv("MODEL_ID", "   ")
    with pytest.raises(ConfigurationError, match="MODEL_ID") as blank_model:
        runtime_client()
    monkeypatch.setenv("MODEL_ID", "claude-test-model")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY") as missing_key:
        runtime_client()
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.setitem(sys.modules, "anthropic", None)  # "not installed"
    with pytest.raises(ConfigurationError, match="anthropic") as missing_package:
        runtime_client()
    for info in (missing_model, blank_model, missing_key, missing_package):
        text = _full_text(info.value)
        assert PLANTED_KEY not in text
        assert "PLANTED" not in text


def test_memorylib_logs_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.setenv("WORKBUDDY_HOME", str(tmp_path))
    monkeypatch.delenv("MODEL_ID", raising=False)
    caplog.set_level(logging.DEBUG)
    reset_runtime()
    try:
        runtime = default_runtime()
        RecallEngine(runtime.store).recall("layered memory")
        with pytest.raises(ConfigurationError):
            runtime_client()
    finally:
        reset_runtime()
    assert PLANTED_KEY not in caplog.text
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert PLANTED_KEY.encode() not in file.read_bytes()


def test_the_command_line_never_prints_the_key(tmp_path: Path) -> None:
    env = python_env(
        ANTHROPIC_API_KEY=PLANTED_KEY,
        MY_SERVICE_PASSWORD="planted-password-" + uuid.uuid4().hex,
        WORKBUDDY_HOME=str(tmp_path),
        WORKBUDDY_USER_ID="secret-cli-user",
    )
    env.pop("MODEL_ID", None)
    runs = [
        subprocess.run(
            [sys.executable, "-m", "memorylib", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=PROCESS_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        for args in ([], ["--demo"], ["fsck", str(tmp_path / "missing.jsonl")])
    ]
    interactive, demo, fsck = runs
    assert interactive.returncode == 2 and "MODEL_ID" in interactive.stderr
    assert demo.returncode == 0 and "conversation-003" in demo.stdout
    assert fsck.returncode == 2
    for run in runs:
        for stream in (run.stdout, run.stderr):
            assert PLANTED_KEY not in stream
            assert env["MY_SERVICE_PASSWORD"] not in stream
            assert "secret-cli-user" not in stream  # the raw user id is never printed
    assert os.environ.get("ANTHROPIC_API_KEY") != PLANTED_KEY  # the test leaked nothing back
