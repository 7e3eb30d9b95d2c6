"""What notebook 11 relies on from the package: its PostgreSQL set-up
(memorylib.backends.local_postgres.local_service), the race's contender for any store URL
(memorylib.notebook.failure_race.store_contender), and its "Your turn" checker
(memorylib.notebook.service_views).

Everything else the notebook shows is written in its cells and compared by nbval; the
backends' behaviour itself is held by tests/test_store_contract.py and
tests/test_reliability_postgres.py.
"""

from __future__ import annotations

import inspect
import multiprocessing
import os
import re
import runpy
import subprocess
import sys
from collections import Counter
from contextlib import closing
from pathlib import Path

import nbformat
import pytest

from memorylib import (
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryValidationError,
)
from memorylib.backends import SQLiteMemoryStore, local_postgres, open_store
from memorylib.notebook import service_views as views
from memorylib.notebook.failure_race import RACE_MEMORY_ID, WON, store_contender
from memorylib.seed import seed_teaching_store

from .backends_support import PostgresServer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "11_from_file_to_service.ipynb"
SOLUTION = ROOT / "notebooks" / "solutions" / "11_from_file_to_service.py"


def race(url: str, contenders: int) -> Counter:
    """As notebook 11's race cell: ``contenders`` spawned processes, one barrier."""
    spawn = multiprocessing.get_context("spawn")
    barrier, results = spawn.Barrier(contenders), spawn.Queue()
    procs = [
        spawn.Process(target=store_contender, args=(url, n, barrier, results))
        for n in range(contenders)
    ]
    for proc in procs:
        proc.start()
    try:
        return Counter(results.get(timeout=120) for _ in procs)
    finally:
        for proc in procs:
            proc.join(timeout=60)
            if proc.is_alive():
                proc.terminate()
        assert [proc.exitcode for proc in procs] == [0] * contenders


# -- the set-up ---------------------------------------------------------------------------------


def test_without_a_server_the_service_explains_itself(monkeypatch) -> None:
    monkeypatch.delenv("MEMORYLIB_PG_DSN", raising=False)
    monkeypatch.setattr(local_postgres, "unavailable_reason", lambda: "no binaries in this test")
    service = local_postgres.local_service()
    assert not service.available and "no binaries in this test" in service.describe()


WITHOUT_POSIX = """
import os, sys
sys.modules["pwd"] = None  # as on Windows: no pwd module, no uids
del os.geteuid
os.environ.pop("MEMORYLIB_PG_DSN", None)
os.environ.pop("MEMORYLIB_NO_POSTGRES", None)
from memorylib.backends.local_postgres import local_service
service = local_service()
print(service.available, service.describe())
"""


def test_notebook_11s_set_up_runs_where_there_is_no_pwd_module() -> None:
    """11's first cell imports local_service: on Windows, with no pwd module and no
    os.geteuid, it must give a service or a reason, never an ImportError."""
    root = Path(local_postgres.__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    ran = subprocess.run(
        [sys.executable, "-c", WITHOUT_POSIX], capture_output=True, text=True, timeout=120, env=env
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(("True PostgreSQL", "False PostgreSQL: not available here"))


def test_the_service_says_which_server_it_is() -> None:
    assert "$MEMORYLIB_PG_DSN" in local_postgres.Service(True, "", "16.4", "host=x").describe()


def test_a_server_that_does_not_answer_is_a_reason_not_a_crash(tmp_path: Path) -> None:
    service = local_postgres.local_service(f"host={tmp_path} port=1 connect_timeout=2")
    assert not service.available and service.reason


@pytest.mark.slow
def test_a_race_on_a_sqlite_url_has_one_winner(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'race.db'}"
    assert race(url, 4) == Counter({WON: 1, "RemoteMemoryDuplicateError": 3})
    with closing(open_store(url, user_id="local-user")) as store:
        assert [r.memory_id for r in store.read_all()] == [RACE_MEMORY_ID]


@pytest.fixture
def service(postgres_server: PostgresServer):
    found = local_postgres.local_service(postgres_server.admin_base)
    assert found.available, found.reason
    return found


@pytest.mark.slow
def test_a_new_database_serves_its_users_and_races_to_one_winner(service) -> None:
    url = service.new_database(user_ids=("local-user", "bob"))
    with closing(open_store(url, user_id="local-user")) as store:
        assert len(seed_teaching_store(store)) == 7
    with closing(open_store(url, user_id="bob")) as bob:
        assert bob.read_all() == []  # bob's role exists, and sees none of local-user's rows
    other = service.new_database()
    assert other != url
    assert race(other, 4) == Counter({WON: 1, "RemoteMemoryDuplicateError": 3})


# -- the exercise -------------------------------------------------------------------------------

RIGHT = {
    "A": RemoteMemoryDuplicateError,
    "B": None,
    "C": RemoteMemoryScopeError,
    "D": RemoteMemoryValidationError,
    "E": (9, 8),
}


def test_the_five_calls_do_what_the_solution_says() -> None:
    truth = views.service_exercise_truth()
    assert truth == {
        "A": "RemoteMemoryDuplicateError",
        "B": None,
        "C": "RemoteMemoryScopeError",
        "D": "RemoteMemoryValidationError",
        "E": (9, 8),  # A stored nothing (the batch is refused whole), B one row of bob's
    }
    assert runpy.run_path(str(SOLUTION))["my_prediction"] == RIGHT


def test_the_checker_accepts_the_right_answer_in_every_form() -> None:
    assert views.check_service_predictions(RIGHT).is_right
    by_name = {k: (v.__name__ if isinstance(v, type) else v) for k, v in RIGHT.items()}
    assert views.check_service_predictions(dict(by_name, B="no error", E=[9, 8])).is_right


@pytest.mark.parametrize(
    "answer",
    [
        dict.fromkeys("ABCDE"),  # "nothing raises"
        dict.fromkeys("ABCDE", RemoteMemoryError),  # the base class everywhere
        dict(RIGHT, A=RemoteMemoryValidationError),  # a parent class
        dict(RIGHT, C=None),  # a JSONL file shared as a SQLite file is
        dict(RIGHT, B=RemoteMemoryScopeError),  # a SQLite file kept to one user as JSONL is
        dict(RIGHT, E=(10, 9)),  # A's new 'm-2' kept although 'm-1' was refused
        dict(RIGHT, E=(9, 9)),  # bob's row read by alice's store
        dict(RIGHT, E=(8, 8)),  # bob's append refused
        dict(RIGHT, E=True),  # not a pair of counts
        dict(RIGHT, E=(True, 8)),  # a bool is not a count
        dict(RIGHT, E="(9, 8)"),  # a string is not a pair
    ],
)
def test_the_checker_rejects_wrong_and_blanket_answers(answer) -> None:
    assert not views.check_service_predictions(answer).is_right


def test_a_wrong_label_gets_its_hint() -> None:
    verdict = str(views.check_service_predictions(dict(RIGHT, C=None, E=(9, 9))))
    assert verdict.startswith("❌ 2 of 5") and "a JSONL file holds one user's records" in verdict
    assert "returns only the rows carrying her user_scope" in verdict


def test_not_answered_while_a_key_holds_the_placeholder() -> None:
    assert str(views.check_service_predictions(...)).startswith("⏳")
    assert str(views.check_service_predictions(dict(RIGHT, D=...))).startswith("⏳ Not answered")


def test_the_answer_cell_holds_only_the_keys() -> None:
    # no value on screen before the attempt, not even a wrong one
    nb = nbformat.read(NOTEBOOK, as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "my_prediction =" in c.source]
    assert re.fullmatch(r'my_prediction = \{("[A-E]": \.\.\.(, )?){5}\}', cell.source.strip())


# -- the store's SQL the notebook shows ---------------------------------------------------------


def _sql(text: str) -> str:
    return " ".join(text.split())


def _cell(cell_id: str) -> str:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    (source,) = [c.source for c in nb.cells if c.get("id") == cell_id]
    return source


def test_the_match_query_run_by_hand_is_the_stores() -> None:
    # the notebook runs SQLiteMemoryStore._match's statement and says so (it also prints that
    # check): the same text, whatever the cell's own check line says
    def statement(source: str) -> str:
        (found,) = re.findall(r'"""(WITH matched AS.*?)"""', source, re.S)
        return _sql(found)

    assert statement(_cell("nb11-match")) == statement(inspect.getsource(SQLiteMemoryStore._match))
