"""The package's structure, as rules a test can hold (the layers are import-linter's).

* No module imports another module's private names (``_name``), from inside the
  package or from the notebooks' helpers: a private name may change without notice.
* The reference modules stay plain and short: each is readable in one sitting.
* ``import memorylib`` loads only the reference layer, the engine, tool and runtime:
  no numpy (the fast path loads it on the first indexed recall), no notebook stack,
  no database driver (``memorylib.backends`` is imported explicitly), no filelock (the
  first write imports it), nothing of asyncio, sqlite3 or xml.sax, and no analyzer
  package (the first analysis that needs one imports it), even with the evaluation's
  named configurations built.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memorylib"
REFERENCE = [
    "errors",
    "checks",
    "timestamps",
    "decoding",
    "records",
    "explanation",
    "files",
    "interface",
    "store",
    "query",
    "analysis",
    "candidates",
    "scoring",
    "ranking",
    "render",
    "pipeline",
]
MAX_REFERENCE_LINES = 400  # the store, the longest, holds the commit-point recovery


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_private_names_of_another(path: Path) -> None:
    own = _module_name(path)
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(path, node)
            if not source.startswith("memorylib") or source == own:
                continue
            bad += [f"{source}.{a.name}" for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") and part != "__main__" for part in source.split(".")):
                bad.append(source)
    assert bad == [], f"{own} imports private names: {bad}"


@pytest.mark.parametrize("name", REFERENCE)
def test_reference_modules_are_short_and_documented(name: str) -> None:
    source = (PACKAGE / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert ast.get_docstring(tree), f"{name}.py opens with its contract"
    assert len(source.splitlines()) <= MAX_REFERENCE_LINES, name
    imported = {
        _resolve(PACKAGE / f"{name}.py", node)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert not any(module.startswith("memorylib.fast") for module in imported), name


def test_import_memorylib_loads_neither_filelock_nor_asyncio_nor_sqlite3() -> None:
    """filelock (which imports asyncio, and sqlite3 in newer versions) is imported by the
    first write, and the renderer escapes without xml.sax (which imports urllib, http,
    email and ssl): together they were about half of what ``import memorylib`` cost."""
    code = (  # what the interpreter had loaded before (urllib.parse, by site) does not count
        "import sys; before = set(sys.modules); "
        "from memorylib import RecallEngine, RemoteMemoryStore, recall_history, "
        "render_recall_context; "
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in "
        "('filelock', 'asyncio', 'sqlite3', 'xml', 'urllib', 'http', 'email', 'ssl')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_the_first_write_imports_filelock_and_locks(tmp_path: Path) -> None:
    code = (
        "import sys, memorylib; "
        "store = memorylib.RemoteMemoryStore(sys.argv[1], user_id='u'); "
        "store.read_all(); before = 'filelock' in sys.modules; "
        "store.append(kind='conversation', content='c', summary='s', "
        "source=memorylib.MemorySource('s', 't', 't', '2026-08-01T00:00:00Z')); "
        "print(before, 'filelock' in sys.modules, store.lock_path.exists())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.jsonl")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout.split() == ["False", "True", "True"]  # reading never needs the lock


def test_import_memorylib_loads_no_fast_path_and_no_notebook_stack() -> None:
    code = (
        "import sys, memorylib; from memorylib import *; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'pandas', 'matplotlib', 'ipywidgets', 'anthropic', 'sqlite3', 'psycopg', "
        "'psycopg_pool', 'stopwords', 'snowballstemmer', 'Stemmer', 'jieba') "
        "or m.startswith('memorylib.fast') or m.startswith('memorylib.notebook') "
        "or m.startswith('memorylib.backends')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_the_named_configurations_load_no_analyzer_package_until_used() -> None:
    code = (
        "import sys; from memorylib.evaluation import CONFIGURATIONS; "
        "from memorylib.candidates import searchable_terms; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('stopwords', 'snowballstemmer', 'Stemmer', 'jieba')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_a_bare_import_memorylib_loads_only_the_package_and_its_wiring() -> None:
    """Every public name is imported on first use (PEP 562), so ``import memorylib``, which
    every command-line call and many notebook cells pay, loads two small files; the names
    themselves are all there, the tool's default engine is wired, and ``dir`` lists them."""
    code = (
        "import sys, memorylib; "
        "print(sorted(m for m in sys.modules if m.startswith('memorylib'))); "
        "print(memorylib.wiring.engine_factory is not None); "
        "print(all(getattr(memorylib, n) is not None for n in memorylib.__all__)); "
        "print(set(memorylib.__all__) <= set(dir(memorylib)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split("\n")[:4] == [
        "['memorylib', 'memorylib.wiring']",
        "True",
        "True",
        "True",
    ]


def test_every_public_name_comes_from_the_module_the_package_says() -> None:
    import memorylib

    assert set(memorylib.__all__) == set(memorylib._EXPORTS)
    for name, module in memorylib._EXPORTS.items():
        assert getattr(memorylib, name) is getattr(
            importlib.import_module(f"memorylib.{module}"), name
        )
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        memorylib.nonsense  # noqa: B018


def test_the_layer_contract_holds() -> None:
    """``lint-imports`` (import-linter) with the contract in pyproject.toml."""
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:]
    assert "0 broken" in out.stdout


def test_import_memorylib_backends_loads_no_postgres_driver() -> None:
    code = (
        "import sys, memorylib.backends; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
