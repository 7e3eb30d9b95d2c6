"""``scripts/course.py``, the README's two commands without make, and the Makefile that calls it.

Every test runs the script for real, with ``--dry-run`` (it prints each command it would run
and runs none) and a venv of its own in ``tmp_path`` (a folder with a ``bin/python`` file in
it is all the script looks for): which set it installs follows the stamps, and ``make``
prints exactly what the script prints, so the two cannot drift. tests/test_course_command.py
starts the course both ways for real.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "course.py"
MAKE = shutil.which("make")


def _older_python() -> str | None:
    """A working interpreter older than 3.11 on this machine (PATH or pyenv), or None."""
    pyenv = Path.home() / ".pyenv" / "versions"
    for minor in (10, 9, 8):
        candidates = [shutil.which(f"python3.{minor}")]
        candidates += [str(p) for p in sorted(pyenv.glob(f"3.{minor}.*/bin/python3"))]
        for candidate in filter(None, candidates):
            probe = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info < (3, 11))"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            if probe.returncode == 0 and probe.stdout.strip() == "True":
                return candidate
    return None


def fake_venv(tmp_path: Path, *stamps: str) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    for which in stamps:
        (venv / f".installed-{which}").touch()
    return venv


def script(*args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def dry_run(venv: Path, *args: str) -> list[str]:
    result = script("--venv", str(venv), "--dry-run", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def installs(lines: list[str]) -> list[str]:
    """The extra each ``pip install -e`` line installs."""
    return [line.rsplit(" ", 1)[1].strip("'") for line in lines if " -e " in line]


def test_a_fresh_machine_gets_a_venv_and_the_light_set(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    lines = dry_run(venv, "course")
    assert lines[0].endswith(f"-m venv {venv}")
    assert lines[1] == f"{venv}/bin/python -m pip install --quiet --upgrade pip"
    assert lines[2] == f"{venv}/bin/python -m pip install --quiet -c constraints.txt -e '.[course]'"
    assert lines[3] == "bash scripts/ensure-fonts.sh"  # a CJK font for the charts, when missing
    assert lines[4].startswith(f"env -u MPLBACKEND {venv}/bin/jupyter lab ")
    assert len(lines) == 5
    assert not venv.exists()  # a dry run creates nothing


def test_test_installs_the_dev_set_over_the_light_one(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, "course")
    assert installs(dry_run(venv, "course")) == []  # the light set is there
    assert installs(dry_run(venv, "test")) == [".[dev]"]  # make course, then make test
    assert installs(dry_run(venv, "install", "dev")) == [".[dev]"]
    assert not any("-m venv" in line for line in dry_run(venv, "test"))  # the venv stays


def test_course_after_test_installs_nothing(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, "dev")
    assert installs(dry_run(venv, "course")) == []
    assert installs(dry_run(venv, "test")) == []


def test_a_stamp_older_than_the_pins_reinstalls(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, "course", "dev")
    newest = max((ROOT / n).stat().st_mtime for n in ("pyproject.toml", "constraints.txt"))
    for which in ("course", "dev"):
        os.utime(venv / f".installed-{which}", (newest - 60, newest - 60))
    assert installs(dry_run(venv, "course")) == [".[course]"]
    assert installs(dry_run(venv, "test")) == [".[dev]"]


def test_no_install_never_installs(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path)  # no stamp at all
    lines = dry_run(venv, "--no-install", "test")
    assert installs(lines) == [] and not any("-m venv" in line for line in lines)
    result = script("--venv", str(tmp_path / "none"), "--no-install", "course")
    assert result.returncode != 0 and "there is no venv" in result.stderr


def test_course_passes_jupyter_options_and_allow_root_only_for_uid_0(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, "course")
    fonts, line = dry_run(venv, "course", "--ip", "0.0.0.0", "--no-browser")
    assert fonts == "bash scripts/ensure-fonts.sh"
    root = ["--allow-root"] if os.geteuid() == 0 else []
    words = ["env", "-u", "MPLBACKEND", f"{venv}/bin/jupyter", "lab", *root]
    assert line.split() == [*words, "--ip", "0.0.0.0", "--no-browser", "notebooks/00_index.ipynb"]


def test_test_runs_the_steps_of_make_test_in_order(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, "dev")
    assert dry_run(venv, "test") == [
        "bash scripts/ensure-fonts.sh",
        "bash scripts/ensure-chromium.sh",
        "bash scripts/ensure-postgres.sh",
        f"{venv}/bin/ruff check .",
        f"{venv}/bin/ruff format --check .",
        f"{venv}/bin/lint-imports",
        f"env -u MPLBACKEND {venv}/bin/python -m pytest",
        # then the slide limits (issue 23) over every deck, exported to a scratch folder
        f"{venv}/bin/python scripts/export_slides.py --out artifacts/slide_check",
        f"env -u MPLBACKEND {venv}/bin/python scripts/measure_slides.py "
        "--decks artifacts/slide_check/slides --check",
    ]


def test_check_runs_every_notebook_without_saving_it(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, "course")
    command = f"env -u MPLBACKEND {venv}/bin/python scripts/run_notebooks.py --check"
    assert dry_run(venv, "check") == [command]
    assert installs(dry_run(fake_venv(tmp_path / "new"), "check")) == [".[course]"]


def test_a_wrong_command_prints_the_usage(tmp_path: Path) -> None:
    for args in (["serve"], ["install", "everything"], ["test", "extra"], ["--verbose", "test"]):
        result = script("--venv", str(tmp_path), "--dry-run", *args)
        assert result.returncode == 2 and "usage: python scripts/course.py" in result.stderr


def test_a_python_older_than_3_11_is_told_so() -> None:
    old = _older_python()
    if old is None:
        pytest.skip("no Python older than 3.11 on this machine")
    result = script("--dry-run", "course", python=old)
    assert result.returncode == 1 and result.stdout == ""
    assert "memorylib needs Python 3.11+, and this is Python 3." in result.stderr


@pytest.mark.skipif(MAKE is None, reason="`make` is not installed")
@pytest.mark.parametrize(
    ("target", "stamps"),
    [
        ("course", ()),
        ("course", ("dev",)),
        ("check", ("course",)),
        ("test", ("course",)),
        ("test", ("dev",)),
    ],
)
def test_make_runs_exactly_what_the_script_runs(
    tmp_path: Path, target: str, stamps: tuple[str, ...]
) -> None:
    venv = fake_venv(tmp_path, *stamps) if stamps else tmp_path / "venv"
    extra = ["ARGS=--port 8899 --no-browser"] if target == "course" else []
    drop = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARGS", "COURSE_FLAGS"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    made = subprocess.run(
        [MAKE, "-s", f"VENV={venv}", f"PYTHON={sys.executable}", "COURSE_FLAGS=--dry-run",
         target, *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    by_hand = ["course", "--port", "8899", "--no-browser"] if target == "course" else [target]
    assert made.stdout.splitlines() == dry_run(venv, *by_hand)


def _load_script():
    spec = importlib.util.spec_from_file_location("course_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_on_windows_the_venv_has_scripts_and_test_skips_the_installers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The Windows branch, run here with the module's flag turned on: the venv's
    ``Scripts\\*.exe``, no uid check (``os.geteuid`` does not exist there), no bash."""
    course = _load_script()
    monkeypatch.setattr(course, "WINDOWS", True)
    monkeypatch.delattr(os, "geteuid", raising=False)
    venv = tmp_path / "venv"
    (venv / "Scripts").mkdir(parents=True)
    (venv / "Scripts" / "python.exe").touch()
    (venv / ".installed-dev").touch()
    assert course.main(["--venv", str(venv), "--dry-run", "course", "--no-browser"]) == 0
    assert course.main(["--venv", str(venv), "--dry-run", "test"]) == 0
    scripts = venv / "Scripts"
    assert capsys.readouterr().out.splitlines() == [
        f"env -u MPLBACKEND {scripts / 'jupyter.exe'} lab --no-browser notebooks/00_index.ipynb",
        "note: no Chromium or PostgreSQL set-up on Windows; those suites will skip",
        f"{scripts / 'ruff.exe'} check .",
        f"{scripts / 'ruff.exe'} format --check .",
        f"{scripts / 'lint-imports.exe'}",
        f"env -u MPLBACKEND {scripts / 'python.exe'} -m pytest",
    ]
