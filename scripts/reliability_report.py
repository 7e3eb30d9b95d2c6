"""Print the figures the reliability suite measured (artifacts/reliability.json).

    .venv/bin/python -m pytest tests/test_reliability*.py tests/test_secrets.py -q
    .venv/bin/python scripts/reliability_report.py            # plain text
    .venv/bin/python scripts/reliability_report.py --markdown # the tables of RELIABILITY.md

The JSON is written by the tests themselves (one section per test module or test);
a section missing here means that test did not run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FIGURES = Path(__file__).resolve().parents[1] / "artifacts" / "reliability.json"


def _get(data: dict, section: str, key: str) -> int:
    value = data.get(section, {}).get(key, 0)
    return value if isinstance(value, int) else 0


def summary(data: dict) -> dict[str, int]:
    """The headline figures, summed over the sections."""
    return {
        "writer/reader processes started": _get(data, "concurrency", "processes")
        + _get(data, "concurrent_readers", "writer_processes")
        + _get(data, "concurrent_readers", "reader_processes")
        + _get(data, "crash", "writer_processes")
        + _get(data, "crash", "exec_writer_kills"),
        "appends attempted concurrently": _get(data, "concurrency", "appends_attempted")
        + _get(data, "concurrent_readers", "appends")
        + _get(data, "threads_own_store", "appends_attempted")
        + _get(data, "threads_shared_store", "appends_attempted"),
        "duplicate ids rejected (one winner each)": _get(data, "concurrency", "duplicates_rejected")
        + _get(data, "threads_own_store", "duplicates_rejected")
        + _get(data, "threads_shared_store", "duplicates_rejected"),
        "recalls during writes": _get(data, "concurrent_readers", "recalls_indexed")
        + _get(data, "concurrent_readers", "recalls_teaching"),
        "writers killed with SIGKILL": _get(data, "crash", "sigkills_sent")
        + _get(data, "crash", "partial_writes_injected")
        + _get(data, "crash", "exec_writer_kills"),
        "partial writes injected": _get(data, "crash", "partial_writes_injected")
        + _get(data, "crash", "short_writes_injected"),
        "acknowledged records checked after crashes": _get(data, "crash", "acknowledged_records")
        + _get(data, "crash", "exec_writer_acknowledged_records"),
        "hostile strings in the corpus": _get(data, "hostile", "corpus_strings"),
        "hostile field values tried": _get(data, "hostile", "store_attempts"),
        "rendered XML blocks parsed": _get(data, "hostile", "renders_parsed")
        + _get(data, "hostile", "profile_blocks_parsed")
        + _get(data, "hostile", "hostile_queries_rendered")
        + _get(data, "hostile", "foreign_values_rendered"),
        "bad-input cases (typed error naming the field)": _get(data, "bad_input", "typed_errors"),
        "known contract bugs found (strict xfail)": _get(data, "bad_input", "cases")
        - _get(data, "bad_input", "typed_errors"),
        "fuzzed append->recall->render examples": _get(data, "bad_input", "fuzz_examples"),
        "PostgreSQL crashes (pg_ctl stop -m immediate) under writers": _get(
            data, "postgres_restart", "immediate_stops"
        ),
        "PostgreSQL appends acknowledged across those crashes": _get(
            data, "postgres_restart", "acknowledged"
        ),
        "hostile SQL statements from a scope-bound role": _get(
            data, "postgres_rls", "hostile_statements"
        ),
        "rows of another scope leaked": _get(data, "postgres_rls", "rows_leaked"),
        "migrations killed with SIGKILL, then resumed": _get(data, "migrate", "kills"),
        "I/O faults injected into writes (write, fsyncs, cuts, quarantine)": _get(
            data, "faults", "faults_injected"
        ),
        "failed writes (injected faults, a real full disk), each a typed error": _get(
            data, "faults", "calls_failed"
        )
        + _get(data, "faults", "full disk: calls failed (ENOSPC)")
        + _get(data, "faults", "sqlite full disk: calls failed"),
        "unacknowledged records visible after a failed write": _get(
            data, "faults", "unacknowledged_records_visible_after_the_call"
        ),
        "records lost": _get(data, "concurrency", "records_lost")
        + _get(data, "crash", "acknowledged_records_lost")
        + _get(data, "postgres_restart", "records_lost")
        + _get(data, "faults", "records_lost"),
    }


def render_text(data: dict) -> str:
    lines = ["summary"]
    lines += [f"  {name}: {value}" for name, value in summary(data).items()]
    for section in sorted(data):
        lines.append(section)
        for key, value in sorted(data[section].items()):
            lines.append(f"  {key}: {value}")
    return "\n".join(lines)


def render_markdown(data: dict) -> str:
    lines = ["| figure | value |", "|---|---:|"]
    lines += [f"| {name} | {value} |" for name, value in summary(data).items()]
    for section in sorted(data):
        lines += ["", f"**{section}**", "", "| figure | value |", "|---|---:|"]
        for key, value in sorted(data[section].items()):
            if key != "recorded_at":
                lines.append(f"| {key} | {value} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--path", type=Path, default=FIGURES)
    args = parser.parse_args(argv)
    try:
        data = json.loads(args.path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(
            f"{args.path} does not exist: run the reliability suite first "
            "(.venv/bin/python -m pytest tests/test_reliability*.py tests/test_secrets.py -q)",
            file=sys.stderr,
        )
        return 1
    print(render_markdown(data) if args.markdown else render_text(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
