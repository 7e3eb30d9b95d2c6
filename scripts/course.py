"""The README's two commands without `make` (Windows), and what the Makefile runs:

    python scripts/course.py course [JUPYTER-LAB-OPTIONS...]   # = make course ARGS="..."
    python scripts/course.py test                              # = make test
    python scripts/course.py check                             # = make check (pre-flight)
    python scripts/course.py install course|dev                # the venv alone

Standard library only, so it runs before any venv exists. `course` creates the venv (when
needed) with the light set, `.[course]`: what notebooks 00-11 run on their default path;
`test` and `install dev` add the rest, `.[dev]`. Both install with `-c constraints.txt`.
A stamp per set in the venv (`.installed-course`, `.installed-dev`) records an install
newer than pyproject.toml and constraints.txt: a fresh dev stamp satisfies `course` too,
so `test` then `course` installs nothing, and `course` then `test` installs the dev set.

`--dry-run` prints every command it would run, one a line, and runs none;
`--no-install` uses the venv as it is (it must exist) and never installs: the tests run
the commands with the venv that runs them. The Makefile calls
this script, so the two cannot drift; tests/test_course_command.py runs it through make.
"""

from __future__ import annotations  # the version check must run on older Pythons too

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDS = (3, 11)
SETS = ("course", "dev")
WINDOWS = os.name == "nt"
SLIDE_CHECK = "artifacts/slide_check"  # the decks `make test` measures (artifacts/ is ignored)


def too_old() -> str | None:
    if sys.version_info >= NEEDS:
        return None
    found = ".".join(map(str, sys.version_info[:3]))
    return (
        f"memorylib needs Python 3.11+, and this is Python {found} ({sys.executable}): "
        "run this script with a newer one (make: set PYTHON=python3.11)"
    )


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if WINDOWS else "bin/python")


def venv_tool(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if WINDOWS else "bin") / (f"{name}.exe" if WINDOWS else name)


def stamp(venv: Path, which: str) -> Path:
    return venv / f".installed-{which}"


def is_fresh(venv: Path, which: str) -> bool:
    """An install of ``which`` newer than both files that decide what it holds."""
    mark = stamp(venv, which)
    if not (mark.exists() and venv_python(venv).exists()):
        return False
    newest = max((ROOT / n).stat().st_mtime for n in ("pyproject.toml", "constraints.txt"))
    return mark.stat().st_mtime >= newest


def satisfied(venv: Path, which: str) -> bool:
    return is_fresh(venv, "dev") or (which == "course" and is_fresh(venv, "course"))


def show(command: list[str], unset: str = "") -> str:
    text = shlex.join(command)
    return f"env -u {unset} {text}" if unset else text


class Runner:
    def __init__(self, dry_run: bool) -> None:
        self.dry_run = dry_run

    def run(self, command: list[str], unset: str = "", check: bool = True) -> int:
        """Runs ``command`` in the repository (``unset`` dropped from its environment)."""
        print(show(command, unset), flush=True)
        if self.dry_run:
            return 0
        env = {k: v for k, v in os.environ.items() if k != unset}
        process = subprocess.Popen(command, cwd=ROOT, env=env)
        while True:
            try:  # Ctrl-C reaches the child too (same terminal): wait for it to finish
                code = process.wait()
                break
            except KeyboardInterrupt:
                continue
        if check and code != 0:
            raise SystemExit(code)
        return code


def install(runner: Runner, venv: Path, which: str, allowed: bool) -> None:
    if not allowed:
        if not venv_python(venv).exists():
            raise SystemExit(f"--no-install: there is no venv at {venv}")
        return
    if satisfied(venv, which):
        return
    if not venv_python(venv).exists():
        runner.run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv_python(venv))
    runner.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    spec = f".[{which}]"
    runner.run([python, "-m", "pip", "install", "--quiet", "-c", "constraints.txt", "-e", spec])
    if not runner.dry_run:
        stamp(venv, which).touch()


def course(runner: Runner, venv: Path, jupyter_args: list[str]) -> int:
    """JupyterLab on the index notebook; ``--allow-root`` only when the uid is 0 (POSIX)."""
    as_root = not WINDOWS and os.geteuid() == 0
    if not WINDOWS:  # a CJK font for the charts of both editions (a note when it cannot)
        runner.run(["bash", "scripts/ensure-fonts.sh"], check=False)
    command = [str(venv_tool(venv, "jupyter")), "lab"]
    command += ["--allow-root"] if as_root else []
    command += [*jupyter_args, "notebooks/00_index.ipynb"]
    return runner.run(command, unset="MPLBACKEND", check=False)


def check(runner: Runner, venv: Path) -> int:
    """Every notebook top to bottom on a fresh kernel of the light set; writes nothing."""
    command = [str(venv_python(venv)), "scripts/run_notebooks.py", "--check"]
    return runner.run(command, unset="MPLBACKEND", check=False)


def test(runner: Runner, venv: Path) -> int:
    """The steps of `make test`, in its order; the first failing one stops it."""
    if WINDOWS:  # both installers need root and apt-get: their suites skip with a message
        print("note: no Chromium or PostgreSQL set-up on Windows; those suites will skip")
    else:
        runner.run(["bash", "scripts/ensure-fonts.sh"])
        runner.run(["bash", "scripts/ensure-chromium.sh"])
        runner.run(["bash", "scripts/ensure-postgres.sh"])
    runner.run([str(venv_tool(venv, "ruff")), "check", "."])
    runner.run([str(venv_tool(venv, "ruff")), "format", "--check", "."])
    runner.run([str(venv_tool(venv, "lint-imports"))])
    python = str(venv_python(venv))
    code = runner.run([python, "-m", "pytest"], unset="MPLBACKEND", check=False)
    if code or WINDOWS:  # the slide check needs the Chromium the installer sets up
        return code
    # issue 23's slide limits over every deck, exported afresh into a scratch folder
    # (exports/, what `make slides` writes for the room, is left alone)
    runner.run([python, "scripts/export_slides.py", "--out", SLIDE_CHECK])
    measure = [python, "scripts/measure_slides.py", "--decks", f"{SLIDE_CHECK}/slides", "--check"]
    return runner.run(measure, unset="MPLBACKEND", check=False)


USAGE = """usage: python scripts/course.py [--venv DIR] [--dry-run] [--no-install] COMMAND
  course [OPTIONS...]   install the light set when needed, open the course in JupyterLab
                        (OPTIONS go to `jupyter lab`, e.g. --ip 0.0.0.0 --no-browser)
  check                 install the light set when needed, run every notebook top to
                        bottom without saving it (the pre-flight check)
  test                  install the dev set when needed, run every check of `make test`
  install course|dev    install that set when needed, nothing else"""


def main(argv: list[str]) -> int:
    problem = too_old()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    venv, dry_run, allowed = ROOT / ".venv", False, True
    while argv and argv[0].startswith("--"):
        option = argv.pop(0)
        if option == "--venv" and argv:
            venv = Path(argv.pop(0))
        elif option == "--dry-run":
            dry_run = True
        elif option == "--no-install":
            allowed = False
        else:
            print(USAGE, file=sys.stderr)
            return 2
    venv = venv if venv.is_absolute() else ROOT / venv
    runner = Runner(dry_run)
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "course":
        install(runner, venv, "course", allowed)
        return course(runner, venv, rest)
    if command == "check" and not rest:
        install(runner, venv, "course", allowed)
        return check(runner, venv)
    if command == "test" and not rest:
        install(runner, venv, "dev", allowed)
        return test(runner, venv)
    if command == "install" and len(rest) == 1 and rest[0] in SETS:
        install(runner, venv, rest[0], allowed)
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
