"""Notebook 11's helpers (memorylib.notebook.service_views), on SQLite and a real PostgreSQL."""

from __future__ import annotations

import runpy
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest

from memorylib import TEACHING_AS_OF, RemoteMemoryDuplicateError
from memorylib.backends import SQLiteMemoryStore
from memorylib.notebook import service_views as views

from .backends_support import PostgresServer

SOLUTION = (
    Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "11_from_file_to_service.py"
)


def pairs(frame) -> dict:
    """A two-column frame as {first column: second column}."""
    return dict(zip(frame.iloc[:, 0], frame.iloc[:, 1], strict=True))


def test_without_a_server_the_service_explains_itself(monkeypatch) -> None:
    monkeypatch.delenv("MEMORYLIB_PG_DSN", raising=False)
    monkeypatch.setattr(views, "unavailable_reason", lambda: "no binaries in this test")
    service = views.local_service()
    assert not service.available and "no binaries in this test" in service.describe()


def test_local_backends_agree_and_hold_equal_records(tmp_path: Path) -> None:
    service = views.Service(False, "not needed")
    backends = views.open_backends(tmp_path, service)
    stores = backends["stores"]
    assert sorted(stores) == ["jsonl", "sqlite"]
    frame, results = views.recall_frame(
        stores, "  LAYERED   Memory  ", as_of=TEACHING_AS_OF, query_id="q"
    )
    assert views.results_agree(results)
    assert frame["memory_id"].tolist() == ["conversation-003"] * 2
    assert frame["total"].tolist() == [0.995161] * 2
    assert stores["jsonl"].read_all() == stores["sqlite"].read_all()


def test_check_then_insert_replay_shows_two_rows_without_the_index(tmp_path: Path) -> None:
    frame = views.check_then_insert_replay(tmp_path)
    counts = frame[frame["step"] == "rows with m-race"]["result"].tolist()
    assert counts == ["2", "1"]
    outcomes = frame[frame["step"].str.contains("ON CONFLICT")]["result"].tolist()
    assert outcomes[0].startswith("stored") and outcomes[1].startswith("RemoteMemoryDuplicateError")


@pytest.mark.slow
def test_race_on_a_sqlite_store_has_one_winner(tmp_path: Path) -> None:
    frame = views.race_on_store(f"sqlite:{tmp_path / 'race.db'}", contenders=4)
    values = dict(zip(frame["measure"], frame["value"], strict=True))
    assert values["outcome: stored (won)"] == 1
    assert values["outcome: RemoteMemoryDuplicateError"] == 3
    assert values["records with the raced memory_id"] == 1
    assert values["processes that exited cleanly"] == 4


def test_schema_and_migration_frames(tmp_path: Path) -> None:
    backends = views.open_backends(tmp_path / "s", views.Service(False, "-"))
    schema = views.schema_frame(backends["stores"]["sqlite"])
    names = set(schema["name"])
    assert {"memories", "memory_terms", "scope_counts", "schema_version"} <= names
    assert "sqlite_autoindex_memories_1" in names  # UNIQUE (user_scope, memory_id)
    assert schema.attrs["schema_versions"] == [1]
    copy = SQLiteMemoryStore(tmp_path / "copy.db", user_id="local-user")
    first = pairs(views.migration_frame(backends["stores"]["jsonl"], copy))
    again = pairs(views.migration_frame(backends["stores"]["jsonl"], copy))
    assert (first["copied"], again["copied"], again["already in the target"]) == (7, 0, 7)
    assert first["target equals source"] is True


def test_benchmark_frame_and_chart() -> None:
    frame = views.benchmark_frame()
    assert {"JSONL file", "SQLite", "PostgreSQL"} <= set(frame["backend"])
    assert sorted(set(frame["records"])) == [1_000, 10_000, 100_000]
    assert views.benchmark_chart(frame).axes


def test_the_example_answer_in_the_notebook_is_wrong_for_every_call() -> None:
    # the placeholder's comment shows the forms of an answer, never a right one
    import nbformat

    import memorylib

    nb = nbformat.read(SOLUTION.parents[1] / "11_from_file_to_service.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "my_prediction = ..." in c.source]
    (example,) = [line.lstrip("# ") for line in cell.source.splitlines() if "{" in line]
    given = eval(example, dict(vars(memorylib)))  # the cell's own comment, memorylib's names
    assert str(views.check_service_predictions(given)).startswith("❌ 5 of 5 wrong")


def test_the_checker_accepts_the_solution_and_rejects_wrong_answers() -> None:
    solution = runpy.run_path(str(SOLUTION))["my_prediction"]
    assert views.check_service_predictions(solution).is_right
    assert str(views.check_service_predictions(...)).startswith("⏳")
    assert str(views.check_service_predictions({"A": None})).startswith("⏳")
    wrong = dict(solution, B=RemoteMemoryDuplicateError, E=False)
    verdict = str(views.check_service_predictions(wrong))
    assert verdict.startswith("❌ 2 of 5") and "bob is another user_scope" in verdict


# -- against the real server ------------------------------------------------------------------


@pytest.fixture
def service(postgres_server: PostgresServer):
    found = views.local_service(postgres_server.admin_base)
    assert found.available, found.reason
    return found


@pytest.mark.slow
def test_all_three_backends_agree_race_and_hold_against_hostile_sql(service, tmp_path) -> None:
    backends = views.open_backends(tmp_path, service)
    stores = backends["stores"]
    assert sorted(stores) == ["jsonl", "postgresql", "sqlite"]
    _, results = views.recall_frame(stores, "layered memory", as_of=TEACHING_AS_OF, query_id="q")
    assert views.results_agree(results)
    race = views.race_on_store(backends["urls"]["postgresql"], contenders=4)
    values = dict(zip(race["measure"], race["value"], strict=True))
    assert (values["outcome: stored (won)"], values["records with the raced memory_id"]) == (1, 1)
    hostile = pairs(views.hostile_sql_frame(service, backends["urls"]["postgresql"]))
    assert hostile["read every row"] == "ran: 8 row(s) seen"  # the 7 seeded + the raced one
    assert hostile["read bob's rows by scope"] == "ran: 0 row(s) seen"
    refused = [k for k, v in hostile.items() if v.startswith("refused")]
    assert len(refused) == len(views.HOSTILE) - 2
    stores["postgresql"].close()
