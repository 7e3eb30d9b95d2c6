"""PostgreSQL under failure: typed errors in bounded time, a server crash and restart
under concurrent writers, and row-level security against hostile SQL.

* Nothing answers (no socket, a closed TCP port), a wrong database, an unprovisioned
  user or database, a malformed DSN, a lock held past ``statement_timeout``: each is a
  typed ``RemoteMemoryError`` within a few seconds, never a hang.
* 4 writer processes append (retrying a failed append with the same memory_id) and a
  reader recalls while the server is stopped with ``pg_ctl stop -m immediate`` (a
  crash: no shutdown checkpoint) and restarted, twice. Every acknowledged record is
  there exactly once; an append that failed is there once (retried) and, when its
  first attempt had in fact committed, the retry is told it is a duplicate; clients
  see only typed errors and recover without being restarted.
* A session logged in as one scope's role runs hand-written hostile SQL (other
  scopes' rows, SET ROLE, row_security off, UPDATE/DELETE/TRUNCATE, DDL, COPY, ...):
  it sees and writes only its own rows.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from memorylib import (
    RecallEngine,
    RemoteMemoryError,
    RemoteMemoryUnavailableError,
    RemoteMemoryValidationError,
    user_scope_for,
)

from ._reliability import PROCESS_TIMEOUT, PYTHON, REPO, python_env, record_figures
from .backends_support import PostgresServer
from .conftest import add

pytestmark = pytest.mark.postgres
BOUND_SECONDS = 8.0  # the longest any failing call may take (connect_timeout 1-2 s + probe)


def timed(call):
    start = time.monotonic()
    try:
        call()
    except RemoteMemoryError as exc:
        return exc, time.monotonic() - start
    raise AssertionError("expected a RemoteMemoryError")


def new_store(dsn: str, user_id: str = "alice", **options):
    from memorylib.backends.postgres import PostgresMemoryStore

    options.setdefault("connect_timeout", 1.0)
    return PostgresMemoryStore(dsn, user_id=user_id, **options)


# -- typed errors, bounded ---------------------------------------------------------------------


def test_unreachable_wrong_or_unprovisioned_servers_fail_typed_and_fast(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    from memorylib.backends.postgres import provision

    database = postgres_server.new_database()
    provision(postgres_server.admin_dsn(database), user_ids=["alice"])
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    cases = {
        "no socket": (
            f"host={tmp_path} dbname=x",
            "alice",
            RemoteMemoryUnavailableError,
            "No such file|connection",
        ),
        "closed tcp port": (
            f"host=127.0.0.1 port={closed_port} dbname=x",
            "alice",
            RemoteMemoryUnavailableError,
            "refused|connection",
        ),
        "wrong database": (
            postgres_server.dsn("no_such_database"),
            "alice",
            RemoteMemoryUnavailableError,
            "does not exist",
        ),
        "unprovisioned user": (
            postgres_server.dsn(database),
            "mallory",
            RemoteMemoryUnavailableError,
            "role .* does not exist",
        ),
        "unprovisioned database": (
            postgres_server.dsn("postgres"),
            "alice",
            RemoteMemoryUnavailableError,
            "not provisioned",
        ),
    }
    timings = {}
    for name, (dsn, user, error, message) in cases.items():
        store = new_store(dsn, user)
        for call in (store.read_all, lambda s=store: add(s, "m-1", "text")):
            exc, seconds = timed(call)
            assert isinstance(exc, error), (name, exc)
            assert re.search(message, str(exc)), (name, str(exc))
            assert seconds < BOUND_SECONDS, (name, seconds)
            timings[name] = round(max(seconds, timings.get(name, 0.0)), 3)
        store.close()
    with pytest.raises(RemoteMemoryValidationError, match="dsn"):
        new_store("host=/tmp port=notanumber = =")
    record_figures(
        "postgres_errors",
        cases=len(cases),
        slowest_seconds=max(timings.values()),
        seconds_by_case=timings,
    )


def test_a_held_lock_times_out_with_a_typed_error(postgres_server: PostgresServer) -> None:
    import psycopg

    from memorylib.backends.postgres import provision

    database = postgres_server.new_database()
    provision(postgres_server.admin_dsn(database), user_ids=["alice"])
    store = new_store(postgres_server.dsn(database), statement_timeout=0.5)
    add(store, "m-0", "before the lock")
    with psycopg.connect(postgres_server.admin_dsn(database)) as admin:
        admin.execute("LOCK TABLE memorylib.memories IN ACCESS EXCLUSIVE MODE")
        exc, seconds = timed(lambda: add(store, "m-1", "blocked"))
        assert isinstance(exc, RemoteMemoryUnavailableError) and seconds < BOUND_SECONDS
        assert "lock" in str(exc) or "cancel" in str(exc)
    add(store, "m-1", "after the lock")  # the same store recovers by itself
    assert [r.memory_id for r in store.read_all()] == ["m-0", "m-1"]
    store.close()


# -- hostile SQL from a scope-bound session ----------------------------------------------------

HOSTILE = [
    ("read everything", "SELECT memory_id, user_scope FROM memorylib.memories"),
    ("read bob by scope", "SELECT memory_id FROM memorylib.memories WHERE user_scope = %(bob)s"),
    ("read bob's terms", "SELECT term FROM memorylib.memory_terms WHERE user_scope = %(bob)s"),
    ("or-true filter", "SELECT memory_id FROM memorylib.memories WHERE true OR user_scope <> ''"),
    ("count by scope", "SELECT user_scope, count(*) FROM memorylib.memories GROUP BY 1"),
    ("set a GUC", "SET app.user_scope = %(bob_literal)s"),
    ("set role bob", "SET ROLE %(bob_role)s"),
    ("set session authorization", "SET SESSION AUTHORIZATION %(bob_role)s"),
    ("set role group", "SET ROLE memorylib_scopes"),
    ("row_security off", "SET row_security = off"),
    (
        "insert as bob",
        "INSERT INTO memorylib.memories (user_scope, memory_id, kind, "
        "captured_us, record) VALUES (%(bob)s, 'forged', 'conversation', 0, '{}')",
    ),
    ("insert bob's terms", "INSERT INTO memorylib.memory_terms VALUES (%(bob)s, 'x', 1)"),
    ("update", "UPDATE memorylib.memories SET record = '{}'"),
    ("update bob", "UPDATE memorylib.memories SET user_scope = %(alice)s WHERE true"),
    ("delete", "DELETE FROM memorylib.memories"),
    ("truncate", "TRUNCATE memorylib.memories"),
    ("disable rls", "ALTER TABLE memorylib.memories DISABLE ROW LEVEL SECURITY"),
    ("no force rls", "ALTER TABLE memorylib.memories NO FORCE ROW LEVEL SECURITY"),
    ("drop policy", "DROP POLICY own_scope ON memorylib.memories"),
    ("new policy", "CREATE POLICY everyone ON memorylib.memories USING (true)"),
    ("create table", "CREATE TABLE memorylib.stolen AS SELECT * FROM memorylib.memories"),
    ("copy out", "COPY memorylib.memories TO STDOUT"),
    ("grant self", "GRANT UPDATE ON memorylib.memories TO CURRENT_USER"),
    ("alter role", "ALTER ROLE CURRENT_USER BYPASSRLS"),
    ("create role", "CREATE ROLE sneaky LOGIN SUPERUSER"),
    ("read server file", "SELECT pg_read_file('postgresql.conf')"),
    (
        "security definer",
        "CREATE FUNCTION public.f() RETURNS SETOF text LANGUAGE sql "
        "SECURITY DEFINER AS 'SELECT record FROM memorylib.memories'",
    ),
]


def test_row_level_security_holds_against_hostile_sql(postgres_server: PostgresServer) -> None:
    import psycopg

    from memorylib.backends.postgres import provision, scope_role

    database = postgres_server.new_database()
    provision(postgres_server.admin_dsn(database), user_ids=["alice", "bob"])
    alice_store, bob_store = (
        new_store(postgres_server.dsn(database)),
        new_store(postgres_server.dsn(database), "bob"),
    )
    add(alice_store, "a-1", "alice's own layered memory")
    for i in range(5):
        add(bob_store, f"b-{i}", f"bob's secret layered memory {i}")
    alice, bob = user_scope_for("alice"), user_scope_for("bob")
    params = {"alice": alice, "bob": bob, "bob_role": scope_role(bob), "bob_literal": bob}
    blocked = leaked = 0
    alice_dsn = postgres_server.dsn(database) + f" user={scope_role(alice)}"
    with psycopg.connect(alice_dsn, autocommit=True) as conn:
        attributes = conn.execute(
            "SELECT rolsuper, rolbypassrls, rolcreaterole FROM pg_roles WHERE rolname = "
            "current_user"
        ).fetchone()
        assert attributes == (False, False, False)
    for name, statement in HOSTILE:  # each in a session of its own, then one more read
        with psycopg.connect(alice_dsn, autocommit=True) as conn:
            text = statement % {
                k: (
                    psycopg.sql.Identifier(v).as_string(conn)
                    if k == "bob_role"
                    else psycopg.sql.Literal(v).as_string(conn)
                )
                for k, v in params.items()
            }
            try:
                if text.startswith("COPY"):
                    with conn.cursor().copy(text) as copy:
                        rows = [bytes(chunk).decode() for chunk in copy]
                else:
                    cursor = conn.execute(text)
                    rows = cursor.fetchall() if cursor.description else []
            except psycopg.Error:
                blocked += 1
                rows = []
            # whatever went through shows nothing of bob, and the session still sees only
            # alice's row (or, with row_security off, is refused outright)
            assert bob not in repr(rows) and "bob's secret" not in repr(rows), (name, rows)
            leaked += sum(1 for row in rows if bob in repr(row))
            try:
                after = conn.execute("SELECT memory_id FROM memorylib.memories").fetchall()
            except psycopg.Error:
                after = []
            assert after in ([("a-1",)], []), (name, after)
    assert [r.memory_id for r in bob_store.read_all()] == [f"b-{i}" for i in range(5)]
    assert [r.memory_id for r in alice_store.read_all()] == ["a-1"]
    assert RecallEngine(alice_store).recall("secret", query_id="q").hits == ()
    alice_store.close()
    bob_store.close()
    record_figures(
        "postgres_rls",
        hostile_statements=len(HOSTILE),
        blocked=blocked,
        allowed_but_empty=len(HOSTILE) - blocked,
        rows_leaked=leaked,
    )


# -- the server crashes and restarts under writers ---------------------------------------------

WRITER = r"""
import json, sys, time
from memorylib import (MemorySource, RemoteMemoryDuplicateError, RemoteMemoryError,
    RemoteMemoryUnavailableError)
from memorylib.backends.postgres import PostgresMemoryStore
dsn, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = PostgresMemoryStore(dsn, user_id="restart-user", connect_timeout=1.0,
                            statement_timeout=3.0, pool_size=2)
acked, failed_once, duplicate_after_failure, typed, untyped = [], [], [], 0, []
for j in range(n):
    mid = f"w{wid}-{j:04d}"
    failed = False
    deadline = time.monotonic() + 90
    while True:
        try:
            store.append(kind="conversation", memory_id=mid, content=f"layered memory {mid}",
                         summary=f"restart note {mid}",
                         source=MemorySource(f"s-{mid}", "conversation_transcript", "t",
                                             "2026-08-01T12:00:00Z"))
            acked.append([mid, time.time()])
            break
        except RemoteMemoryDuplicateError:
            (duplicate_after_failure if failed else untyped).append(mid)
            break
        except RemoteMemoryUnavailableError:
            typed += 1
            failed = True
        except Exception as exc:
            untyped.append(f"{mid}: {type(exc).__name__}: {exc}")
            failed = True
        if time.monotonic() > deadline:
            untyped.append(f"{mid}: gave up")
            break
        time.sleep(0.05)
    if failed:
        failed_once.append(mid)
store.close()
print(json.dumps({"acked": acked, "failed_once": failed_once, "typed": typed,
                  "duplicate_after_failure": duplicate_after_failure, "untyped": untyped}))
"""

READER = r"""
import json, sys, time
from pathlib import Path
from memorylib import TEACHING_AS_OF, RecallEngine, RemoteMemoryUnavailableError
from memorylib.backends.postgres import PostgresMemoryStore
dsn, stop = sys.argv[1], Path(sys.argv[2])
store = PostgresMemoryStore(dsn, user_id="restart-user", connect_timeout=1.0,
                            statement_timeout=3.0, pool_size=1)
engine = RecallEngine(store)
ok, typed, untyped, last = 0, 0, [], 0
while not stop.exists():
    try:
        result = engine.recall("layered memory restart", limit=5, query_id="q",
                               as_of=TEACHING_AS_OF)
        assert result.searched_records >= last, "the store shrank"
        last = result.searched_records
        ok += 1
    except RemoteMemoryUnavailableError:
        typed += 1
    except Exception as exc:
        untyped.append(f"{type(exc).__name__}: {exc}")
    time.sleep(0.02)
store.close()
print(json.dumps({"ok": ok, "typed": typed, "untyped": untyped}))
"""


def _count(admin_dsn: str) -> int:
    import psycopg

    try:
        with psycopg.connect(admin_dsn, connect_timeout=2) as conn:
            return conn.execute("SELECT count(*) FROM memorylib.memories").fetchone()[0]
    except psycopg.OperationalError:
        return -1


@pytest.mark.slow
def test_writers_survive_an_immediate_stop_and_restart(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    from memorylib.backends.postgres import PostgresMemoryStore, provision

    cluster = postgres_server.cluster
    if cluster is None:
        pytest.skip("an external server (MEMORYLIB_TEST_PG_DSN) is not ours to restart")
    database = postgres_server.new_database()
    admin = postgres_server.admin_dsn(database)
    provision(admin, user_ids=["restart-user"])
    dsn = postgres_server.dsn(database)
    writers, per_writer = 4, 250
    stop_file = tmp_path / "stop"
    env = python_env()
    procs = [
        subprocess.Popen(
            [PYTHON, "-c", WRITER, dsn, str(w), str(per_writer)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        for w in range(writers)
    ]
    reader = subprocess.Popen(
        [PYTHON, "-c", READER, dsn, str(stop_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    restarts = []
    try:
        for threshold, down in ((150, 1.0), (550, 0.5)):
            deadline = time.monotonic() + PROCESS_TIMEOUT
            while _count(admin) < threshold:
                assert time.monotonic() < deadline, "the writers made no progress"
                assert all(p.poll() is None for p in procs), "a writer ended early"
                time.sleep(0.05)
            cluster.stop("immediate")
            stopped = time.time()
            time.sleep(down)
            cluster.start()
            restarts.append((stopped, time.time()))
        results = [
            json.loads(p.communicate(timeout=PROCESS_TIMEOUT * 2)[0].splitlines()[-1])
            for p in procs
        ]
    finally:
        stop_file.touch()
        for p in [*procs, reader]:
            if p.poll() is None and p is not reader:
                p.kill()
    reads = json.loads(reader.communicate(timeout=PROCESS_TIMEOUT)[0].splitlines()[-1])
    acked = {mid for r in results for mid, _ in r["acked"]}
    resolved = {mid for r in results for mid in r["duplicate_after_failure"]}
    failed_once = {mid for r in results for mid in r["failed_once"]}
    untyped = [u for r in results for u in r["untyped"]] + reads["untyped"]
    store = PostgresMemoryStore(dsn, user_id="restart-user")
    records = store.read_all()
    store.close()
    stored = [r.memory_id for r in records]
    expected = {f"w{w}-{j:04d}" for w in range(writers) for j in range(per_writer)}
    assert untyped == []
    assert acked <= set(stored), f"lost: {sorted(acked - set(stored))[:10]}"
    assert len(stored) == len(set(stored)), "a record is stored twice"
    assert set(stored) == acked | resolved == expected  # every attempt ended stored, once
    assert all(r.content == f"layered memory {r.memory_id}" for r in records)
    assert sum(r["typed"] for r in results) > 0, "no writer noticed the restarts"
    assert reads["ok"] > 0
    recovery = []
    for _, started in restarts:  # from the server being back to the next acknowledgement
        after = [t for r in results for _, t in r["acked"] if t >= started]
        recovery.append(round(min(after) - started, 3) if after else None)
    record_figures(
        "postgres_restart",
        writer_processes=writers,
        reader_processes=1,
        immediate_stops=len(restarts),
        appends_attempted=len(expected),
        acknowledged=len(acked),
        failed_then_retried=len(failed_once),
        first_attempt_had_committed=len(resolved),
        typed_errors_seen_by_writers=sum(r["typed"] for r in results),
        reader_recalls_ok=reads["ok"],
        reader_typed_errors=reads["typed"],
        untyped_errors=len(untyped),
        records_lost=len(acked - set(stored)),
        records_duplicated=len(stored) - len(set(stored)),
        seconds_to_first_ack_after_restart=recovery,
    )


ORPHAN = r"""
import os, sys
from memorylib.backends.local_postgres import TemporaryPostgres
cluster = TemporaryPostgres().start()
print(cluster.root, flush=True)
os._exit(0)  # as a notebook kernel ends: no atexit, no cleanup()
"""


@pytest.mark.slow
def test_no_server_outlives_the_process_that_started_it(postgres_server: PostgresServer) -> None:
    done = subprocess.run(
        [PYTHON, "-c", ORPHAN],
        capture_output=True,
        text=True,
        env=python_env(),
        cwd=REPO,
        timeout=PROCESS_TIMEOUT,
    )
    root = Path(done.stdout.strip().splitlines()[-1])
    deadline = time.monotonic() + 30
    while root.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not root.exists(), "the watchdog did not remove the orphaned cluster"
    running = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(root) not in running, "the orphaned server is still running"
