"""``python -m memorylib``: the chapter's CLI.

python -m memorylib --demo        offline walkthrough (no key needed)
python -m memorylib               interactive agent (needs MODEL_ID and a key)
python -m memorylib fsck PATH     report on a store file; changes nothing
python -m memorylib repair PATH   quarantine torn/bad lines, keeping every byte
python -m memorylib migrate SRC DST --user USER_ID
                                  copy one user's store between backends (URLs
                                  jsonl:PATH, sqlite:PATH, postgresql://...), verified
python -m memorylib pg-provision ADMIN_DSN --user USER_ID [--user ...]
                                  PostgreSQL: apply the schema migrations, create roles
python -m memorylib eval          every scorer on the evaluation set (--help for options)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .errors import RemoteMemoryError


def run_demo(out=sys.stdout) -> None:
    from .render import render_recall_context
    from .runtime import default_runtime
    from .timestamps import TEACHING_AS_OF
    from .tool import build_system_prompt

    runtime = default_runtime()
    print(f"store: {runtime.store.path}  (user_scope {runtime.store.user_scope})", file=out)
    print(
        "\n== 1. Session start: the latest profile is injected into the system prompt ==", file=out
    )
    print(build_system_prompt(runtime.store), file=out)
    print('\n== 2. The model calls recall_history("  LAYERED   Memory  ") ==', file=out)
    result = runtime.engine.recall(
        "  LAYERED   Memory  ", limit=5, query_id="query-1", as_of=TEACHING_AS_OF
    )
    print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2), file=out)
    print(
        "\n== 3. Render: the block a harness puts into the prompt (the agent's tool result is "
        'the JSON above, unless agent_loop(..., tool_result="recalled_context")) ==',
        file=out,
    )
    print(render_recall_context(result) or "(no hits: nothing is rendered)", file=out)
    print(
        f"\nsearched {result.searched_records} records, {result.candidate_records} candidate(s); "
        "the store was read, never written, by recall.",
        file=out,
    )


def run_interactive() -> int:
    from .agent import AgentEvent, agent_loop
    from .runtime import default_runtime, runtime_client
    from .tool import build_system_prompt

    client, model = runtime_client()
    runtime = default_runtime()
    system = build_system_prompt(runtime.store)
    messages: list[dict] = []

    def show(event: AgentEvent) -> None:
        if event.kind == "text":
            print(event.payload["text"])
        elif event.kind == "tool_use":
            print(f"> recall_history {json.dumps(event.payload['input'], ensure_ascii=False)}")

    while True:
        try:
            line = input("\033[36ms12 >> \033[0m")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if line.strip().lower() in ("q", "quit", "exit", ""):
            return 0
        messages.append({"role": "user", "content": line})
        agent_loop(
            messages,
            client=client,
            model=model,
            engine=runtime.engine,
            system=system,
            on_event=show,
        )


def run_migrate(source: str, target: str, user_id: str, batch_size: int, out=sys.stdout) -> int:
    """Copy ``user_id``'s store from ``source`` to ``target``; progress lines, then a report."""
    from .backends import open_store
    from .backends.migrate import migrate

    def progress(done: int, total: int) -> None:
        print(f"copied {done}/{total}", file=out, flush=True)

    stores = [open_store(source, user_id=user_id), open_store(target, user_id=user_id)]
    try:
        report = migrate(*stores, batch_size=batch_size, progress=progress)
    finally:
        for store in stores:
            getattr(store, "close", lambda: None)()
    print(json.dumps(report.to_dict()), file=out, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memorylib",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--demo", action="store_true", help="print the offline walkthrough")
    sub = parser.add_subparsers(dest="command")
    fsck = sub.add_parser("fsck", help="check a store file; changes nothing")
    fsck.add_argument("path")
    repair = sub.add_parser("repair", help="quarantine torn or bad lines, keeping every byte")
    repair.add_argument("path")
    migrate = sub.add_parser("migrate", help="copy one user's store between backends, verified")
    migrate.add_argument("source", help="jsonl:PATH | sqlite:PATH | postgresql://...")
    migrate.add_argument("target", help="jsonl:PATH | sqlite:PATH | postgresql://...")
    migrate.add_argument("--user", required=True, help="the user id whose store is copied")
    migrate.add_argument("--batch-size", type=int, default=500)
    provision = sub.add_parser("pg-provision", help="PostgreSQL: migrations and scope roles")
    provision.add_argument("admin_dsn", help="a DSN or URL of a role that may create roles")
    provision.add_argument("--user", action="append", default=[], help="a user id (repeat)")
    evaluate = sub.add_parser(
        "eval", help="measure every scorer on data/eval_queries.json (recall, MRR, nDCG)"
    )
    from .evaluation import add_arguments  # the options live beside the code they drive

    add_arguments(evaluate)
    args = parser.parse_args(argv)
    try:
        if args.command == "eval":
            from .evaluation import run as run_eval

            return run_eval(args)
        if args.command == "migrate":
            return run_migrate(args.source, args.target, args.user, args.batch_size)
        if args.command == "pg-provision":
            from .backends.postgres import provision as provision_postgres

            version = provision_postgres(args.admin_dsn, user_ids=args.user)
            print(json.dumps({"schema_version": version, "users": len(args.user)}))
            return 0
        if args.command in ("fsck", "repair"):
            from .fsck import main_fsck, main_repair

            return (main_fsck if args.command == "fsck" else main_repair)(args.path)
        if args.demo:
            run_demo()
            return 0
        return run_interactive()
    except RemoteMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
