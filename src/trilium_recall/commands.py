"""What the commands do (`cli` parses the command line): serve · demo · index · status · search ·
explain · log · doctor · install-hook · uninstall-hook. The hook is `hook.main`, dispatched by `cli`
alone."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import select
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from pydantic import SecretStr

from .claude_settings import install_hook, uninstall_hook
from .config import Instance, Settings, load_settings
from .demo.mode import demo_index
from .doctor import engine_health, password_check, render, run_doctor
from .engine_address import engine_base, is_http_url
from .errors import ConfigError, IndexUnusable, RecallError
from .explained import print_explained, print_searched
from .index.activity_log import Activity, recent
from .index.file import index_errors, missing_index
from .index.store import Store
from .search.answers import RecallRequest, RecallResult, silence_reason
from .secret_files import PASSWORD_FILE_VAR
from .server.activity import parse_since
from .server.checks import hook_installed
from .server.engine import Engine
from .server.overview import failed_notes
from .serving import build_with_progress, demo, serve

log = logging.getLogger("trilium_recall")
CLI_BUDGET_MS = 120_000  # search and explain wait for the answer; the hook's budget is not theirs


def run(args: argparse.Namespace) -> int:
    """Run the command `cli` parsed, logging to stderr; return its exit code.

    A RecallError is one line on stderr and exit code 2; anything else (a bug) one line and
    exit code 1: never a traceback.
    """
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per ETAPI request is noise
    try:
        return COMMANDS[args.command](args) or 0
    except IndexUnusable as exc:
        print(f"trilium-recall: {exc}: {exc.FIX}", file=sys.stderr)
        return 2
    except RecallError as exc:
        print(f"trilium-recall: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as exc:  # `trilium-recall search … | head -3`: the reader is done
        if not _stdout_closed():
            return _internal_error(exc)  # a socket's, not the reader's
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing at exit either
        return 141  # as a shell counts SIGPIPE
    except Exception as exc:
        return _internal_error(exc)


def _internal_error(exc: BaseException) -> int:
    print(
        f"trilium-recall: internal error ({type(exc).__name__}: {exc}); please report it",
        file=sys.stderr,
    )
    return 1


def _stdout_closed() -> bool:
    """Whether standard output's reader has gone (what a broken pipe there means): the pipe's
    writing end then polls as an error or a hang-up."""
    try:
        watch = select.poll()
        watch.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in watch.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, or no file behind stdout
        return False


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {k: v for k in ("host", "port") if (v := getattr(args, k, None)) is not None}
    try:
        return load_settings(**overrides)
    except ConfigError as exc:  # a flag's value is the flag's to name, not the variable's
        variable, _, reason = str(exc).partition(":")
        flag = next((f"--{k}" for k in overrides if variable == f"RECALL_{k.upper()}"), None)
        if flag is None:
            raise
        raise ConfigError(f"{flag}:{reason}") from None


def _serve(args: argparse.Namespace) -> int:
    return serve(_settings(args))


def _demo(args: argparse.Namespace) -> int:
    return demo(_settings(args))


def _index(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if not settings.instances:
        raise RecallError("no Trilium configured: set TRILIUM_URL and TRILIUM_ETAPI_TOKEN")
    try:
        build_with_progress(settings)
    except RecallError:
        with contextlib.suppress(RecallError):
            _status(args)  # what was built, also when an instance failed
        raise
    return _status(args)


def _status(args: argparse.Namespace) -> int:
    settings = _index_settings(args)
    store = Store(settings.db_path, read_only=True)
    try:
        report = {
            name: {
                **store.counts(name),
                **_public_state(store.instance_state(name)),
                "failed": failed_notes(store, name),
            }
            for name in store.recorded_instances()
        }
    finally:
        store.close()
    print(json.dumps(report, indent=2))
    return 0


def _public_state(state: dict[str, object]) -> dict[str, object]:
    return {k: state.get(k) for k in ("last_sync", "last_full", "build_complete", "error")}


def _index_settings(args: argparse.Namespace) -> Settings:
    """Settings pointing at an index file that exists (the demo's with --demo)."""
    settings = _settings(args)
    demo = demo_index(settings)
    wants_demo = getattr(args, "demo", False)  # `index` shows its status without the flag
    if wants_demo:
        settings = demo
    if (missing := missing_index(settings.db_path)) is None:
        return settings
    if settings.db_path.is_dir():  # `index` could not build there either
        raise RecallError(missing)
    if not wants_demo and missing_index(demo.db_path) is None:
        raise RecallError(
            f"{missing}; the demo notebook's is at {demo.db_path}: add --demo to use it"
        )
    first = "`trilium-recall demo`" if wants_demo else "`trilium-recall index` (or `demo`)"
    raise RecallError(f"{missing}: run {first} first")


def _offline_settings(args: argparse.Namespace) -> Settings:
    """Settings for commands that read the index only: instances as recorded in the file."""
    settings = _index_settings(args)
    store = Store(settings.db_path, read_only=True)
    try:
        recorded = store.recorded_instances()
    finally:
        store.close()
    if not settings.instances or args.demo:
        instances = {name: Instance(name, url, SecretStr("")) for name, url in recorded.items()}
        return settings.model_copy(update={"instances": instances})
    # A configured instance the file has never heard of is not "being built": nothing builds
    # it until `index` or `serve` runs.
    unbuilt = [name for name in settings.instances if name not in recorded]
    if len(unbuilt) == len(settings.instances):
        held = ", ".join(recorded) or "none"
        raise RecallError(
            f"{settings.db_path} holds no index of {', '.join(unbuilt)} (it holds {held}): run "
            "`trilium-recall index` or `serve` to build it"
        )
    for name in unbuilt:
        log.warning("%s has no index yet: `trilium-recall index` or `serve` builds it", name)
    built = {name: i for name, i in settings.instances.items() if name in recorded}
    return settings.model_copy(update={"instances": built})


def _search(args: argparse.Namespace, explain: bool = False) -> int:
    """What `serve` would answer the hook for this prompt (same engine, skip rules and gate),
    with time to load the model instead of the hook's budget."""
    if not args.prompt.strip():
        raise RecallError("the prompt is empty: give the text to search the notes for")
    settings = _offline_settings(args).model_copy(update={"time_budget_ms": CLI_BUDGET_MS})

    async def search() -> RecallResult:
        engine = Engine(settings, reading=True)
        try:
            await engine.warm()
            asked = RecallRequest(args.prompt, instance=args.instance, today=args.today)
            return await engine.recall(asked)
        finally:
            await engine.stop()

    result = asyncio.run(search())
    if args.demo:  # the stand-in that served the demo's notes lives only while `demo` runs
        unlinked = [replace(passage, url="") for passage in result.passages]
        result = replace(result, passages=unlinked)
    if args.json:
        answer = result.to_json()
        if not result.passages:  # why, as the text output says it
            answer["silence"] = silence_reason(result, CLI_BUDGET_MS)
        if explain and result.trace:
            answer["explain"] = result.trace.to_json()
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    elif explain:
        print_explained(result)
    else:
        print_searched(result)
    return 1 if result.waiting_for else 0  # a build that failed: nothing could be searched


def _explain(args: argparse.Namespace) -> int:
    return _search(args, explain=True)


def _log(args: argparse.Namespace) -> int:
    """What recall sent (or why nothing), oldest first; --json for a list of objects."""
    settings = _index_settings(args)
    try:
        since = parse_since(args.since) if args.since is not None else None
    except ValueError as exc:
        raise RecallError(str(exc)) from None
    if args.limit < 1:
        raise RecallError(f"--limit {args.limit}: give a number of entries, 1 or more")
    store = Store(settings.db_path, read_only=True)
    try:
        with index_errors(store.path):
            entries = recent(store, limit=args.limit, session_id=args.session, since=since)
        failed = {name: failed_notes(store, name) for name in store.recorded_instances()}
    finally:
        store.close()
    entries.reverse()
    if args.json:
        print(json.dumps([e.to_json() for e in entries], indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print("No calls logged" + (" in that time" if since else "") + ".")
    for entry in entries:
        print(_activity_lines(entry))
    for name, notes in failed.items():
        if notes:
            print(f"\nNotes of {name} that failed to index ({len(notes)}):")
        for note in notes:
            print(f"  {note['title']} ({note['note_id']}, {note['at']}): {note['reason']}")
    return 0


def _activity_lines(entry: Activity) -> str:
    when = datetime.fromtimestamp(entry.at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    prompt = "(prompt not logged)" if entry.prompt_head is None else f'"{entry.prompt_head}"'
    took = "late" if entry.took_ms is None else f"{entry.took_ms:.0f} ms"
    session = (entry.session_id or "-")[:12]
    head = f"{when}  {entry.path:<4}  {session:<12}  {took:>7}  {prompt}"
    if not entry.passages:
        return f"{head}\n    silent: {entry.silence}"
    sent = " · ".join(f"{p.title} ({p.score:.4f})" for p in entry.passages)
    return f"{head}\n    sent: {sent}"


def _install_hook(args: argparse.Namespace) -> int:
    """Install, then say whether the engine answers there and takes the password (the hook is
    installed either way: the engine may simply not be running yet)."""
    settings = load_settings()
    if args.url and not is_http_url(args.url):
        raise RecallError(f"--url {args.url}: give an http(s) URL such as http://127.0.0.1:8765")
    url = engine_base(args.url or settings.engine_url)
    password_file = settings.password_file
    if args.http and password_file:
        # The http hook sends $RECALL_LOGIN_PASSWORD from Claude Code's environment: a password
        # kept in a file would never reach the engine, and every prompt would get a 401.
        raise RecallError(
            f"--http sends RECALL_LOGIN_PASSWORD from Claude Code's environment, but the password "
            f"is in {PASSWORD_FILE_VAR}: install the command hook (without --http), which reads "
            "the file"
        )
    try:
        lines = install_hook(
            args.scope or "user", http=args.http, engine_url=url, password_file=password_file
        )
    except ValueError as exc:
        raise RecallError(str(exc)) from None
    health = engine_health(url)
    checks = [health] if health.status == "fail" else [health, password_check(url, settings)[0]]
    if (hook := hook_installed(url)).status != "ok":  # disableAllHooks, ours twice: doctor's
        checks.append(hook)
    print("\n".join(lines + render(checks)[:-1]))
    if health.status == "fail":
        print(
            f"The hook is installed anyway: it adds nothing until trilium-recall answers at {url}."
        )
    return 0


def _doctor(args: argparse.Namespace) -> int:
    return run_doctor(os.environ, as_json=args.json)


def _uninstall_hook(args: argparse.Namespace) -> int:

    try:
        lines = uninstall_hook(args.scope or "user")
    except ValueError as exc:
        raise RecallError(str(exc)) from None
    print("\n".join(lines))
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": _serve,
    "demo": _demo,
    "index": _index,
    "status": _status,
    "search": _search,
    "explain": _explain,
    "log": _log,
    "doctor": _doctor,
    "install-hook": _install_hook,
    "uninstall-hook": _uninstall_hook,
}
