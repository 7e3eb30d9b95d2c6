"""``PostgresMemoryStore``: the store contract on PostgreSQL (psycopg 3 + psycopg_pool).

The service's compare-and-insert is one statement: ``INSERT ... ON CONFLICT DO
NOTHING RETURNING seq``. A row comes back: stored (committed when the statement
returns, in autocommit). None: the unique index on ``(user_scope, memory_id)`` said
the id is taken, ``RemoteMemoryDuplicateError``. Racing writers on any number of
machines: the index lets exactly one in. A batch runs in one transaction; a
retraction is one statement too, after its target is checked, and the unique index on
``(user_scope, retracts)`` picks one of two racing retractions (the other caller is
handed the winner).

**A role per user scope.** ``provision(admin_dsn, user_ids=...)`` applies the schema
migrations (recorded in ``memorylib.schema_version``) and creates, for each user,
the login role ``memorylib_<user_scope>``: not a superuser, no BYPASSRLS, allowed
only SELECT and INSERT (rows are never updated or deleted). Row-level security lets
a role see and write only rows whose ``user_scope`` is its own (the tables' owner,
who runs the migrations, is the one exemption: the store never logs in as it). The
store logs in as its scope's role, so a session bound to one scope cannot reach
another's rows even with hand-written SQL; every statement also names the scope.
Credentials for the roles come from the DSN or libpq's usual places (``~/.pgpass``
holds one line per role).

**Never a hang.** Connections come from a pool (one per request), opened with a
bounded ``connect_timeout``; every statement runs under ``statement_timeout`` and
``lock_timeout``. A server that is down, a wrong address or credentials, a missing
role or schema, a statement past its timeout: ``RemoteMemoryUnavailableError``, with
the server's reason, within about ``connect_timeout`` seconds. A broken pooled
connection (the server restarted) is noticed and replaced on the next request. An
append that raised may or may not be committed: retrying it with the same memory_id
either stores it or reports the duplicate.

Constructing the store connects to nothing; the first operation opens the pool.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from memorylib.errors import (
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryUnavailableError,
    RemoteMemoryValidationError,
)
from memorylib.interface import (
    MemoryStore,
    check_new_ids,
    latest_profile_of,
    user_scope_for,
)
from memorylib.pipeline import recall_pipeline
from memorylib.records import RecallQuery, RecallResult, StoredMemory
from memorylib.scoring import DEFAULT_POLICY, ScoringPolicy

from .recall import TermMatches, recall_from_matches, serves
from .rows import captured_micros, record_from_row, record_json, record_terms

__all__ = [
    "GROUP_ROLE",
    "SCHEMA_VERSION",
    "PostgresMemoryStore",
    "describe_dsn",
    "provision",
    "schema_version",
    "scope_role",
]

SCHEMA_VERSION = 1
GROUP_ROLE = "memorylib_scopes"  # holds the table privileges every scope role inherits
ROLE_PREFIX = "memorylib_"
# A role sees only the rows of the scope its name carries. The scalar subquery is
# evaluated once per statement (an InitPlan), not once per row.
_OWN_SCOPE = (
    "user_scope = (SELECT CASE WHEN current_user::text ~ '^memorylib_[0-9a-f]{16}$' "
    "THEN substr(current_user::text, 11) END)"
)
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        f"""DO $$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{GROUP_ROLE}') THEN
                CREATE ROLE {GROUP_ROLE} NOLOGIN;
              END IF;
            END $$""",
        """CREATE TABLE memorylib.memories (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_scope text COLLATE "C" NOT NULL CHECK (user_scope ~ '^[0-9a-f]{16}$'),
            memory_id text COLLATE "C" NOT NULL,
            kind text NOT NULL CHECK (kind IN ('profile', 'conversation', 'retraction')),
            captured_us bigint NOT NULL,
            retracts text COLLATE "C",
            record text NOT NULL,
            UNIQUE (user_scope, memory_id)
        )""",
        # one retraction per target: a second one would be a second audit entry
        """CREATE UNIQUE INDEX memories_retracts ON memorylib.memories (user_scope, retracts)
            WHERE retracts IS NOT NULL""",
        # one row per (record, term), carrying what ranking needs: a covering index
        """CREATE TABLE memorylib.memory_terms (
            user_scope text COLLATE "C" NOT NULL,
            term text COLLATE "C" NOT NULL,
            seq bigint NOT NULL REFERENCES memorylib.memories (seq),
            captured_us bigint NOT NULL,
            memory_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (user_scope, term, seq) INCLUDE (captured_us, memory_id)
        )""",
        # per scope: conversations stored and how many a retraction hides (recall's counts),
        # kept by a trigger that runs as the owner: the scope roles may only read them
        """CREATE TABLE memorylib.scope_counts (
            user_scope text COLLATE "C" PRIMARY KEY,
            conversations bigint NOT NULL,
            retracted bigint NOT NULL
        )""",
        """CREATE FUNCTION memorylib.count_memory() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
              INSERT INTO memorylib.scope_counts AS c (user_scope, conversations, retracted)
              VALUES (NEW.user_scope, (NEW.kind = 'conversation')::int,
                ((NEW.kind = 'retraction' AND EXISTS (
                    SELECT 1 FROM memorylib.memories m WHERE m.user_scope = NEW.user_scope
                    AND m.memory_id = NEW.retracts AND m.kind = 'conversation'))
                 OR (NEW.kind = 'conversation' AND EXISTS (
                    SELECT 1 FROM memorylib.memories r WHERE r.user_scope = NEW.user_scope
                    AND r.retracts = NEW.memory_id)))::int)
              ON CONFLICT (user_scope) DO UPDATE SET
                conversations = c.conversations + EXCLUDED.conversations,
                retracted = c.retracted + EXCLUDED.retracted;
              RETURN NULL;
            END $$""",
        "REVOKE ALL ON FUNCTION memorylib.count_memory() FROM PUBLIC",
        """CREATE TRIGGER memories_count AFTER INSERT ON memorylib.memories
            FOR EACH ROW EXECUTE FUNCTION memorylib.count_memory()""",
        # The owner (who runs migrations and the trigger) is exempt; every scope role is not.
        "ALTER TABLE memorylib.memories ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE memorylib.memory_terms ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE memorylib.scope_counts ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY own_scope ON memorylib.memories USING ({_OWN_SCOPE}) "
        f"WITH CHECK ({_OWN_SCOPE})",
        f"CREATE POLICY own_scope ON memorylib.memory_terms USING ({_OWN_SCOPE}) "
        f"WITH CHECK ({_OWN_SCOPE})",
        f"CREATE POLICY own_scope ON memorylib.scope_counts FOR SELECT USING ({_OWN_SCOPE})",
        "REVOKE ALL ON SCHEMA memorylib FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA memorylib TO {GROUP_ROLE}",
        f"GRANT SELECT, INSERT ON memorylib.memories, memorylib.memory_terms TO {GROUP_ROLE}",
        f"GRANT SELECT ON memorylib.schema_version, memorylib.scope_counts TO {GROUP_ROLE}",
    ),
}

_COLUMNS = "seq, memory_id, record"
_INSERT = """
WITH stored AS (
  INSERT INTO memorylib.memories (user_scope, memory_id, kind, captured_us, retracts, record)
  VALUES (%(scope)s, %(memory_id)s, %(kind)s, %(captured_us)s, %(retracts)s, %(record)s)
  ON CONFLICT DO NOTHING
  RETURNING seq
), indexed AS (
  INSERT INTO memorylib.memory_terms (user_scope, term, seq, captured_us, memory_id)
  SELECT %(scope)s, term, stored.seq, %(captured_us)s, %(memory_id)s
  FROM stored, unnest(%(terms)s::text[]) AS term
)
SELECT seq FROM stored
"""
_MATCH = """
WITH matched AS (
  SELECT seq, count(*) AS level, min(captured_us) AS captured_us, min(memory_id) AS memory_id
  FROM memorylib.memory_terms
  WHERE user_scope = %(scope)s AND term = ANY(%(terms)s::text[])
  GROUP BY seq
), hidden AS MATERIALIZED (
  SELECT retracts FROM memorylib.memories
  WHERE user_scope = %(scope)s AND retracts IS NOT NULL
), ranked AS (
  SELECT seq, captured_us, level,
    row_number() OVER (PARTITION BY level ORDER BY captured_us DESC, memory_id) AS rn,
    count(*) OVER (PARTITION BY level) AS size
  FROM matched x
  WHERE NOT EXISTS (SELECT 1 FROM hidden h WHERE h.retracts = x.memory_id)
), counts AS (
  SELECT coalesce(max(conversations), 0) AS conversations, coalesce(max(retracted), 0) AS retracted
  FROM memorylib.scope_counts WHERE user_scope = %(scope)s
)
SELECT c.conversations, c.retracted, r.level, r.size, r.seq, r.captured_us
FROM counts c LEFT JOIN ranked r ON r.rn <= %(limit)s
ORDER BY r.level DESC, r.rn
"""


def scope_role(user_scope: str) -> str:
    """The login role of one user scope (16 hex chars): ``memorylib_<user_scope>``."""
    if len(user_scope) != 16 or any(c not in "0123456789abcdef" for c in user_scope):
        raise RemoteMemoryValidationError(f"user_scope {user_scope!r} is not 16 hex characters")
    return ROLE_PREFIX + user_scope


def describe_dsn(dsn: str) -> str:
    """A DSN's server and database, without user or password (for messages)."""
    params = _parse_dsn(dsn)
    host = params.get("host") or "localhost"
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{host}{port}/{params.get('dbname', '')}"


def provision(admin_dsn: str, *, user_ids: Iterable[str] = (), connect_timeout: float = 5.0) -> int:
    """As an administrator: apply the missing migrations, create each user's role.

    Idempotent and safe to run from several processes at once (an advisory lock
    serializes them). Returns the schema version now in force.
    """
    roles = [scope_role(user_scope_for(user_id)) for user_id in user_ids]
    with (
        _errors(describe_dsn(admin_dsn)),
        psycopg.connect(
            admin_dsn, autocommit=True, connect_timeout=_connect_seconds(connect_timeout)
        ) as conn,
        conn.transaction(),
    ):
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('memorylib.provision'))")
        conn.execute("CREATE SCHEMA IF NOT EXISTS memorylib")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS memorylib.schema_version ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = _current_version(conn)
        if current > SCHEMA_VERSION:
            raise RemoteMemoryUnavailableError(
                f"database schema version {current} is newer than this memorylib's {SCHEMA_VERSION}"
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)  # type: ignore[arg-type]
            conn.execute("INSERT INTO memorylib.schema_version (version) VALUES (%s)", [version])
        for role in roles:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
            if exists.fetchone() is None:
                conn.execute(
                    sql.SQL(
                        "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
                        "NOREPLICATION NOBYPASSRLS INHERIT IN ROLE {}"
                    ).format(sql.Identifier(role), sql.Identifier(GROUP_ROLE))
                )
        return _current_version(conn)


def schema_version(admin_dsn: str, *, connect_timeout: float = 5.0) -> int:
    """The migrations applied to a database (0 when memorylib was never provisioned)."""
    with (
        _errors(describe_dsn(admin_dsn)),
        psycopg.connect(
            admin_dsn, autocommit=True, connect_timeout=_connect_seconds(connect_timeout)
        ) as conn,
    ):
        found = conn.execute("SELECT to_regclass('memorylib.schema_version')").fetchone()
        return _current_version(conn) if found and found[0] else 0


class PostgresMemoryStore(MemoryStore):
    """One user's memories in PostgreSQL, reached as that user's scope role."""

    def __init__(
        self,
        dsn: str,
        *,
        user_id: str = "local-user",
        connect_timeout: float = 5.0,
        statement_timeout: float = 10.0,
        pool_size: int = 4,
    ) -> None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise RemoteMemoryValidationError("dsn must be a non-empty libpq string or URI")
        self.user_scope = user_scope_for(user_id)
        self.role = scope_role(self.user_scope)
        for name, value in (
            ("connect_timeout", connect_timeout),
            ("statement_timeout", statement_timeout),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise RemoteMemoryValidationError(f"{name} must be a positive number of seconds")
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise RemoteMemoryValidationError(f"pool_size must be an int >= 1, got {pool_size!r}")
        self.connect_timeout = float(connect_timeout)
        self.statement_timeout = float(statement_timeout)
        params = _parse_dsn(dsn)
        self.url = describe_dsn(dsn)
        millis = int(self.statement_timeout * 1000)
        options = (params.pop("options", "") + " ").lstrip() + (
            f"-c statement_timeout={millis} -c lock_timeout={millis} "
            f"-c idle_in_transaction_session_timeout={3 * millis}"
        )
        params.update(user=self.role, options=options, application_name="memorylib")
        params.setdefault("connect_timeout", str(_connect_seconds(self.connect_timeout)))
        self._conninfo = make_conninfo(**params)
        self._pool_size = pool_size
        self._pool: ConnectionPool | None = None
        self._pool_pid = 0
        self._pool_lock = threading.Lock()
        self._checked = False

    def __repr__(self) -> str:
        return f"PostgresMemoryStore({self.url!r}, user_scope={self.user_scope!r})"

    def __enter__(self) -> PostgresMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the pool's connections (a later operation opens a new pool)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pool_pid == os.getpid():
            pool.close(timeout=self.connect_timeout)

    # -- reading ------------------------------------------------------------------------

    def read_all(self) -> list[StoredMemory]:
        """Every record of this user in insertion order. Damaged rows raise, naming them."""
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memorylib.memories WHERE user_scope = %s ORDER BY seq",
                [self.user_scope],
            ).fetchall()
        return [self._record(row) for row in rows]

    def latest_profile(self) -> StoredMemory | None:
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memorylib.memories WHERE user_scope = %s "
                "AND kind IN ('profile', 'retraction') ORDER BY seq",
                [self.user_scope],
            ).fetchall()
        return latest_profile_of([self._record(row) for row in rows])

    def count(self) -> int:
        """How many records (of every kind) this user has stored."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM memorylib.memories WHERE user_scope = %s", [self.user_scope]
            ).fetchone()
        return int(row[0]) if row else 0

    def indexed_recall(
        self,
        query: RecallQuery,
        *,
        as_of: datetime | str,
        policy: ScoringPolicy = DEFAULT_POLICY,
    ) -> RecallResult:
        """The RecallResult of the taught path, with candidates from the terms table."""
        if (
            not isinstance(query, RecallQuery)
            or query.user_scope != self.user_scope
            or not serves(policy)
        ):
            return recall_pipeline(query, self.read_all(), as_of=as_of, policy=policy)
        with self._connection() as conn:
            return recall_from_matches(
                query,
                as_of=as_of,
                policy=policy,
                match=lambda terms, limit: self._match(conn, terms, limit),
                fetch=lambda keys: self._fetch(conn, keys),
            )

    # -- writing: MemoryStore's append, append_many and retract, in these steps ---------

    def _write_transaction(self) -> AbstractContextManager[psycopg.Connection]:
        """A pooled connection in autocommit: one record is one ``INSERT ... ON CONFLICT DO
        NOTHING RETURNING`` statement, a batch one transaction (``_insert``), and the
        unique indexes, not a lock, decide every race (a retraction's too)."""
        return self._connection()

    def _stored(self, conn: psycopg.Connection, memory_id: str) -> StoredMemory | None:
        return self._by_ids(conn, [memory_id]).get(memory_id)

    def _retraction_of(self, conn: psycopg.Connection, target_id: str) -> StoredMemory | None:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM memorylib.memories WHERE user_scope = %s AND retracts = %s",
            [self.user_scope, target_id],
        ).fetchone()
        return None if row is None else self._record(row)

    def _insert(self, conn: psycopg.Connection, records: Sequence[StoredMemory]) -> bool:
        if len(records) == 1:
            (record,) = records
            if conn.execute(_INSERT, self._params(record)).fetchone() is not None:
                return True
            check_new_ids(records, self._by_ids(conn, [record.memory_id]))
            return False  # not a taken id: a retraction of the same target came first
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(_INSERT, [self._params(r) for r in records], returning=True)
            refused = set()
            for record in records:  # one result per statement, in order
                if cur.fetchone() is None:
                    refused.add(record.memory_id)
                cur.nextset()
            check_new_ids(records, refused)  # raises if any was refused: all rolled back
        return True

    # -- SQL ----------------------------------------------------------------------------

    def _params(self, record: StoredMemory) -> dict[str, Any]:
        return {
            "scope": self.user_scope,
            "memory_id": record.memory_id,
            "kind": record.kind.value,
            "captured_us": captured_micros(record),
            "retracts": record.retracts,
            "record": record_json(record),
            "terms": list(record_terms(record)),
        }

    def _by_ids(self, conn: psycopg.Connection, ids: list[str]) -> dict[str, StoredMemory]:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM memorylib.memories "
            "WHERE user_scope = %s AND memory_id = ANY(%s::text[])",
            [self.user_scope, ids],
        ).fetchall()
        return {record.memory_id: record for record in map(self._record, rows)}

    def _match(self, conn: psycopg.Connection, terms: tuple[str, ...], limit: int) -> TermMatches:
        rows = conn.execute(
            _MATCH, {"scope": self.user_scope, "terms": list(terms), "limit": limit}
        ).fetchall()
        conversations, retracted = rows[0][0], rows[0][1]
        sizes: dict[int, int] = {}
        newest: dict[int, list[tuple[Hashable, int]]] = {}
        for _, _, level, size, seq, captured in rows:
            if level is not None:
                sizes[level] = size
                newest.setdefault(level, []).append((seq, captured))
        return TermMatches(sizes, newest, conversations - retracted, retracted)

    def _fetch(self, conn: psycopg.Connection, keys: list[Hashable]) -> list[StoredMemory]:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM memorylib.memories "
            "WHERE user_scope = %s AND seq = ANY(%s::bigint[]) ORDER BY seq",
            [self.user_scope, keys],
        ).fetchall()
        return [self._record(row) for row in rows]

    def _record(self, row: Sequence[Any]) -> StoredMemory:
        seq, memory_id, text = row
        return record_from_row(text, row=seq, user_scope=self.user_scope, memory_id=memory_id)

    # -- connections ----------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection for one request, with every failure typed."""
        pool = self._get_pool()
        with _errors(self.url, probe=self._probe):
            try:
                with pool.connection(timeout=self.connect_timeout) as conn:
                    if not self._checked:
                        self._check_schema(conn)
                    yield conn
            except PoolTimeout:
                cause = self._probe()
                self._discard_pool(pool)  # the next request starts afresh, not in a backoff
                raise RemoteMemoryUnavailableError(
                    f"PostgreSQL at {self.url} unavailable: {cause}"
                ) from None

    def _get_pool(self) -> ConnectionPool:
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():  # new, or forked
                self._pool = ConnectionPool(
                    self._conninfo,
                    kwargs={"autocommit": True},
                    min_size=0,
                    max_size=self._pool_size,
                    open=False,
                    timeout=self.connect_timeout,
                    check=ConnectionPool.check_connection,  # a restarted server's leftovers
                    name=f"memorylib-{self.user_scope}",
                )
                self._pool.open(wait=False)
                self._pool_pid = os.getpid()
            return self._pool

    def _discard_pool(self, pool: ConnectionPool) -> None:
        """Drop a pool that could not connect: its reconnection backoff would keep the
        next requests waiting after the server is back."""
        with self._pool_lock:
            if self._pool is pool:
                self._pool = None
        pool.close(timeout=0.1)

    def _check_schema(self, conn: psycopg.Connection) -> None:
        try:
            version = _current_version(conn)
        except (
            pg_errors.UndefinedTable,
            pg_errors.InvalidSchemaName,
            pg_errors.InsufficientPrivilege,
        ) as exc:
            raise RemoteMemoryUnavailableError(
                f"PostgreSQL at {self.url} is not provisioned for memorylib "
                f"({exc.diag.message_primary}); run: python -m memorylib pg-provision "
                "ADMIN_DSN --user USER_ID"
            ) from None
        if version != SCHEMA_VERSION:
            raise RemoteMemoryUnavailableError(
                f"PostgreSQL at {self.url} has memorylib schema version {version}; this "
                f"memorylib needs {SCHEMA_VERSION} (run: python -m memorylib pg-provision)"
            )
        self._checked = True

    def _probe(self) -> str:
        """Why no connection came: one direct, bounded attempt, its error in one line."""
        try:
            with psycopg.connect(self._conninfo, autocommit=True) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            return _first_line(exc)
        return (
            f"the server answers, but no pooled connection came free within "
            f"{self.connect_timeout:g} s ({self._pool_size} in use)"
        )


# -- helpers --------------------------------------------------------------------------------


def _parse_dsn(dsn: str) -> dict[str, Any]:
    try:
        return conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise RemoteMemoryValidationError(f"dsn does not parse: {_first_line(exc)}") from None


def _connect_seconds(timeout: float) -> int:
    return max(2, math.ceil(timeout))  # libpq's connect_timeout: whole seconds, at least 2


def _current_version(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT coalesce(max(version), 0) FROM memorylib.schema_version")
    found = row.fetchone()
    return int(found[0]) if found else 0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@contextmanager
def _errors(url: str, probe: Any = None) -> Iterator[None]:
    """psycopg's exceptions as memorylib's typed errors (never the password)."""
    try:
        yield
    except RemoteMemoryError:
        raise
    except pg_errors.QueryCanceled as exc:  # statement_timeout
        raise RemoteMemoryUnavailableError(
            f"PostgreSQL at {url}: statement cancelled ({_first_line(exc)})"
        ) from None
    except pg_errors.LockNotAvailable as exc:
        raise RemoteMemoryUnavailableError(f"PostgreSQL at {url}: {_first_line(exc)}") from None
    except pg_errors.InsufficientPrivilege as exc:  # row-level security said no
        raise RemoteMemoryScopeError(f"PostgreSQL at {url}: {_first_line(exc)}") from None
    except psycopg.OperationalError as exc:  # connection refused or lost, server shut down
        raise RemoteMemoryUnavailableError(
            f"PostgreSQL at {url} unavailable: {_first_line(exc)}"
        ) from None
    except psycopg.DataError as exc:
        raise RemoteMemoryValidationError(f"PostgreSQL at {url}: {_first_line(exc)}") from None
    except psycopg.Error as exc:
        raise RemoteMemoryError(f"PostgreSQL at {url}: {_first_line(exc)}") from None
