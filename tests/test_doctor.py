"""`trilium-recall doctor` and `install-hook` as a user runs them (subprocesses, a real
environment), against a served engine: healthy, and broken in the ways users break it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import apsw
import httpx
import pytest

from conftest import PASSWORD
from procs import closed_port_url, scrubbed_env
from test_failures import PROMPT, cli, hook, notebook, served, wait_ok
from trilium_recall.doctor import render
from trilium_recall.server.checks import Check


def doctor(
    url: str, home: Path, cwd: Path | None = None, **env: str
) -> tuple[int, dict[str, dict]]:
    done = cli("doctor", "--json", env={"RECALL_URL": url, "HOME": str(home), **env}, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)}


def install(
    url: str, home: Path, *flags: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return cli("install-hook", "--url", url, *flags, env={"HOME": str(home), **env}, cwd=cwd)


@pytest.mark.parametrize("version", ["0.93", "0.105"])
def test_a_working_setup_passes_every_check(tmp_path: Path, version: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with served(notebook(version), tmp_path / "data", login_password=PASSWORD) as (url, _):
        wait_ok(url)
        installed = install(url, home, RECALL_LOGIN_PASSWORD=PASSWORD)
        assert installed.returncode == 0, installed.stderr
        assert f"ok    engine    {url} answers: ok" in installed.stdout
        assert "ok    password  accepted (from RECALL_LOGIN_PASSWORD)" in installed.stdout
        run = hook(url, RECALL_LOGIN_PASSWORD=PASSWORD)
        assert run.returncode == 0 and "Sourdough starter" in run.stdout

        code, checks = doctor(url, home, RECALL_LOGIN_PASSWORD=PASSWORD)
    failed = {name: c for name, c in checks.items() if c["status"] == "fail"}
    assert code == 0 and not failed, failed
    assert checks["trilium default"]["facts"]["version"].startswith(version)  # /app-info
    # What the last full comparison found the server to offer the sync (history from 0.102).
    [synced] = checks["index default"]["lines"]
    assert synced.startswith(f"synced from Trilium {version}") and synced.count("history") == (
        version == "0.105"
    ), synced
    assert checks["hook"]["detail"] == f"installed, sends to {url}"
    assert "sent Sourdough starter" in checks["last hook request"]["detail"]
    assert checks["test recall"]["status"] == "ok"
    assert checks["failed notes default"]["lines"] == [
        "Broken export (brokenNote01): Trilium answered 200 with no body"
    ]
    assert PASSWORD not in json.dumps(checks)  # secrets masked
    assert f"({len(PASSWORD)} characters)" not in json.dumps(checks)  # nor their length


def test_a_wrong_trilium_token_names_the_variable_to_fix(tmp_path: Path) -> None:
    with served(notebook(), tmp_path / "data", token="wrong_token") as (url, _):
        code, checks = doctor(url, tmp_path)
    assert code == 1
    trilium = checks["trilium default"]
    assert trilium["status"] == "fail" and trilium["detail"].endswith("refuses the ETAPI token")
    assert trilium["fix"] == (
        "create a token in Trilium (Options → ETAPI), set TRILIUM_ETAPI_TOKEN, "
        "and restart the engine"
    )


def test_a_wrong_token_read_from_a_file_names_the_file_s_variable(tmp_path: Path) -> None:
    """Setting TRILIUM_ETAPI_TOKEN as told would have had both set, which the engine refuses."""
    token_file = tmp_path / "token"
    token_file.write_text("wrong_token\n", encoding="utf-8")
    trilium = notebook()
    trilium.start()
    try:
        env = {"TRILIUM_URL": trilium.url(), "TRILIUM_ETAPI_TOKEN_FILE": str(token_file)}
        code, checks = doctor(closed_port_url(), tmp_path, **env)  # no engine: checked here
    finally:
        trilium.stop()
    assert code == 1
    assert checks["trilium default"]["fix"] == (
        "create a token in Trilium (Options → ETAPI), write it in the file "
        "TRILIUM_ETAPI_TOKEN_FILE names, and restart the engine"
    )


def test_a_wrong_password_is_refused_with_the_fix(tmp_path: Path) -> None:
    with served(notebook(), tmp_path / "data", login_password=PASSWORD) as (url, _):
        installed = install(url, tmp_path, RECALL_LOGIN_PASSWORD="not-the-password")
        code, checks = doctor(url, tmp_path, RECALL_LOGIN_PASSWORD="not-the-password")
    assert "FAIL  password  refused (RECALL_LOGIN_PASSWORD)" in installed.stdout
    assert code == 1 and checks["password"]["status"] == "fail"
    assert checks["password"]["fix"] == (
        "RECALL_LOGIN_PASSWORD here differs from the engine's RECALL_LOGIN_PASSWORD"
    )


def test_engine_down_still_checks_trilium_and_the_index_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    trilium = notebook()
    with served(trilium, data) as (url, _):
        wait_ok(url)
        trilium_url = trilium.url()
        down = closed_port_url()
        env = {"RECALL_DATA_DIR": str(data), "TRILIUM_URL": trilium_url,
               "TRILIUM_ETAPI_TOKEN": "failure_token"}  # fmt: skip
        code, checks = doctor(down, tmp_path, **env)
        run = hook(down)
    assert code == 1
    assert checks["engine"]["detail"] == f"{down} does not answer (connection refused)"
    assert checks["engine"]["fix"].startswith("start it: `trilium-recall serve`")
    assert checks["trilium default"]["status"] == "ok"
    assert checks["index default"]["status"] == "ok"
    assert checks["index default"]["detail"].startswith("2 notes, 2 sections")
    assert (run.returncode, run.stdout) == (0, "")
    assert f"no engine answers at {down} (--url or RECALL_URL): Connection refused" in run.stderr
    # An index it cannot read is a check that failed, and doctor does not migrate or move it.
    apsw.Connection(str(data / "recall.sqlite3")).execute("PRAGMA user_version = 1")
    code, checks = doctor(down, tmp_path, **env)
    assert code == 1 and checks["index"]["status"] == "fail"
    assert "is from an older trilium-recall (schema 1," in checks["index"]["detail"]
    assert apsw.Connection(str(data / "recall.sqlite3")).execute("PRAGMA user_version").get == 1


def test_a_hook_pointing_at_the_wrong_port_is_named(tmp_path: Path) -> None:
    wrong = closed_port_url()
    with served(notebook(), tmp_path / "data") as (url, _):
        wait_ok(url)
        install(wrong, tmp_path)
        code, checks = doctor(url, tmp_path)
    assert code == 1
    assert checks["hook"]["detail"] == f"the hook sends to {wrong}, but the engine is at {url}"
    assert checks["hook"]["fix"] == (
        f"trilium-recall install-hook with RECALL_URL={url} (it replaces ours)"
    )


def test_a_hook_naming_the_engine_as_localhost_sends_to_the_same_engine(tmp_path: Path) -> None:
    with served(notebook(), tmp_path / "data") as (url, _):
        wait_ok(url)
        by_name = url.replace("127.0.0.1", "localhost")
        assert install(by_name, tmp_path).returncode == 0
        assert "Sourdough starter" in hook(by_name).stdout  # it works: doctor must agree
        code, checks = doctor(url, tmp_path)
    assert checks["hook"]["status"] == "ok", checks["hook"]
    assert code == 0


def test_settings_claude_code_cannot_read_fail_the_hook_check_naming_the_file(
    tmp_path: Path,
) -> None:
    """It said "no hook installed", and its fix (install-hook) then refused the same file."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"UserPromptSubmit": [', encoding="utf-8")
    code, checks = doctor(closed_port_url(), tmp_path)
    assert code == 1 and checks["hook"]["status"] == "fail"
    assert checks["hook"]["detail"].startswith(f"{settings} is not valid JSON (Expecting value")
    assert checks["hook"]["fix"] == (
        f"fix {settings} (or move it away), then trilium-recall install-hook"
    )
    settings.write_text("{}", encoding="utf-8")  # the fix, followed
    assert install(closed_port_url(), tmp_path).returncode == 0
    _, checks = doctor(closed_port_url(), tmp_path)
    assert checks["hook"]["detail"].startswith("the hook sends to")  # read again, and found


def test_install_and_uninstall_where_nothing_can_be_written_say_so_in_one_line(
    tmp_path: Path,
) -> None:
    home = tmp_path
    (home / ".claude").write_text("", encoding="utf-8")  # a file: no folder, for root neither
    for command in ("install-hook", "uninstall-hook"):
        done = cli(command, env={"HOME": str(home), "RECALL_URL": closed_port_url()})
        assert done.returncode in (0, 2), done.stderr
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    installed = install(closed_port_url(), home)
    assert installed.returncode == 2
    assert installed.stderr.startswith(f"trilium-recall: cannot write {home}/.claude/settings.json")
    assert len(installed.stderr.splitlines()) == 1


def test_the_installed_hook_reaches_its_engine_whatever_claude_code_inherits(
    tmp_path: Path,
) -> None:
    """The command install-hook writes carries the engine URL and the password file: run as
    Claude Code runs it (sh -c), with a RECALL_URL pointing elsewhere and no password in the
    environment, it still gets the passages."""
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    with served(notebook(), tmp_path / "data", login_password=PASSWORD) as (url, _):
        wait_ok(url)
        installed = install(url, tmp_path, RECALL_PASSWORD_FILE=str(secret))
        assert "ok    password  accepted (from RECALL_PASSWORD_FILE)" in installed.stdout
        settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
        command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        body = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
        run = subprocess.run(
            ["sh", "-c", command],
            input=body,
            env=scrubbed_env(RECALL_URL=closed_port_url(), RECALL_HOOK_DEBUG="1"),
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert run.returncode == 0, run.stderr
    context = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Sourdough starter" in context


def test_the_summary_line_counts_failures_and_warnings() -> None:
    ok, warn, fail = (Check(n, s, "detail") for n, s in (("a", "ok"), ("b", "warn"), ("c", "fail")))
    assert render([ok])[-1] == "all checks passed"
    assert render([ok, warn])[-1] == "all checks passed, 1 warning"
    assert render([warn, warn])[-1] == "all checks passed, 2 warnings"
    assert render([ok, fail])[-1] == "1 check failed"
    assert render([fail, fail, warn])[-1] == "2 checks failed"


def test_a_hook_the_engine_refuses_is_named_with_the_fix(tmp_path: Path) -> None:
    """A hook run where Claude Code's environment lacks the password is refused at every
    prompt, and the prompt goes through without passages: doctor said the last hook request
    (an older success) was ok."""
    with served(notebook(), tmp_path / "data", login_password=PASSWORD) as (url, _):
        wait_ok(url)
        assert "Sourdough starter" in hook(url, RECALL_LOGIN_PASSWORD=PASSWORD).stdout
        assert hook(url).stdout == ""  # no password where this hook runs: refused
        bearer = {"Authorization": f"Bearer {PASSWORD}"}
        api = httpx.post(f"{url}/recall", json={"prompt": PROMPT}, headers=bearer, timeout=30)
        assert api.status_code == 200  # not the hook: the hook is still refused
        code, refused = doctor(url, tmp_path, RECALL_LOGIN_PASSWORD=PASSWORD)
        assert hook(url, RECALL_LOGIN_PASSWORD=PASSWORD).returncode == 0
        stranger = httpx.post(f"{url}/recall", data={"prompt": "x"}, timeout=30)  # a form
        assert stranger.status_code == 401  # refused, and no hook's
        _, working = doctor(url, tmp_path, RECALL_LOGIN_PASSWORD=PASSWORD)
    check = refused["last hook request"]
    assert code == 1 and check["status"] == "fail", check
    assert check["detail"].endswith(": refused (no password sent, from 127.0.0.1)"), check
    assert "has no RECALL_LOGIN_PASSWORD, or an old one" in check["fix"]
    assert working["last hook request"]["status"] == "ok"  # the newer success counts again


def test_an_invalid_variable_stops_the_checks_that_read_the_configuration(
    tmp_path: Path,
) -> None:
    """With one bad variable, doctor checked the default address and told the user to point
    a working hook there."""
    with served(notebook(), tmp_path / "data") as (url, _):
        wait_ok(url)
        assert install(url, tmp_path).returncode == 0
        code, checks = doctor(url, tmp_path, RECALL_TICK_SECONDS="abc")
    assert code == 1
    assert checks["configuration"]["status"] == "fail"
    assert "RECALL_TICK_SECONDS" in checks["configuration"]["detail"]
    assert list(checks) == ["configuration", "other checks"]
    assert checks["other checks"]["detail"] == "not run: the configuration above is invalid"


def test_the_hook_goes_where_claude_config_dir_says(tmp_path: Path) -> None:
    """Claude Code reads $CLAUDE_CONFIG_DIR/settings.json when that is set: a hook written to
    ~/.claude never ran, and doctor said it was installed."""
    config = tmp_path / "claude-config"
    url = closed_port_url()
    done = install(url, tmp_path, CLAUDE_CONFIG_DIR=str(config))
    assert done.returncode == 0, done.stderr
    assert f"in {config / 'settings.json'}" in done.stdout
    assert not (tmp_path / ".claude").exists()
    _, checks = doctor(url, tmp_path, CLAUDE_CONFIG_DIR=str(config))
    assert checks["hook"]["lines"] == [f"command hook in {config / 'settings.json'} → {url}"]
    _, elsewhere = doctor(url, tmp_path)  # without it: ~/.claude, which holds none
    assert elsewhere["hook"]["detail"] == "no trilium-recall hook in Claude Code's settings"


def test_settings_with_a_byte_order_mark_are_read_as_claude_code_reads_them(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.write_bytes(b"\xef\xbb\xbf" + json.dumps({"model": "x"}).encode())
    url = closed_port_url()
    done = install(url, tmp_path, "--project", cwd=project)
    assert done.returncode == 0, done.stderr
    written = json.loads(settings.read_text(encoding="utf-8"))
    assert written["model"] == "x" and written["hooks"]["UserPromptSubmit"]
    _, checks = doctor(url, tmp_path, cwd=project)
    assert checks["hook"]["lines"] == [f"command hook in {settings} → {url}"]


def test_a_broken_project_file_does_not_hide_the_user_s_hook(tmp_path: Path) -> None:
    """Claude Code skips a settings file it cannot read and runs the user's hook: doctor
    failed the hook check on the broken file alone."""
    url = closed_port_url()
    assert install(url, tmp_path).returncode == 0  # the user's
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    broken = project / ".claude" / "settings.json"
    broken.write_text('{"permissions": {} // a comment\n}', encoding="utf-8")
    _, checks = doctor(url, tmp_path, cwd=project)
    hook_check = checks["hook"]
    assert hook_check["status"] == "warn", hook_check
    assert hook_check["detail"] == f"installed, sends to {url}; Claude Code skips {broken}"
    assert hook_check["fix"] == f"fix {broken} (or move it away)"


def test_disable_all_hooks_fails_the_hook_check_naming_the_file(tmp_path: Path) -> None:
    url = closed_port_url()
    assert install(url, tmp_path).returncode == 0
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}), encoding="utf-8")
    code, checks = doctor(url, tmp_path, cwd=project)
    assert code == 1 and checks["hook"]["detail"] == f"{local} turns every hook off"
    assert checks["hook"]["fix"] == f'take "disableAllHooks" out of {local}, or set it to false'
    _, at_home = doctor(url, tmp_path)  # another project: the hook runs
    assert at_home["hook"]["detail"] == f"installed, sends to {url}"


def test_our_hook_in_two_forms_is_a_warning(tmp_path: Path) -> None:
    """Claude Code runs each distinct hook: a command hook for the user and an http one in a
    project asked every prompt twice."""
    url = closed_port_url()
    assert install(url, tmp_path).returncode == 0
    project = tmp_path / "project"
    project.mkdir()
    assert install(url, tmp_path, "--project", "--http", cwd=project).returncode == 0
    _, checks = doctor(url, tmp_path, cwd=project)
    assert checks["hook"]["status"] == "warn"
    assert checks["hook"]["detail"] == "installed twice: Claude Code runs both"
    assert len(checks["hook"]["lines"]) == 2
    _, one = doctor(url, tmp_path)  # outside that project: one hook
    assert one["hook"]["detail"] == f"installed, sends to {url}"


def test_install_hook_says_what_would_stop_the_hook_it_installs(tmp_path: Path) -> None:
    """Only doctor said so: install-hook said "added" beside our hook in another form in the
    other scope (each prompt then asked twice) and under disableAllHooks (no hook runs)."""
    url = closed_port_url()
    assert install(url, tmp_path).returncode == 0
    project = tmp_path / "project"
    project.mkdir()
    twice = install(url, tmp_path, "--project", "--http", cwd=project)
    assert twice.returncode == 0, twice.stderr
    assert "warn  hook    installed twice: Claude Code runs both" in twice.stdout
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}), encoding="utf-8")
    off = install(url, tmp_path, "--project", "--http", cwd=project)
    assert f"FAIL  hook    {local} turns every hook off" in off.stdout
    alone = install(url, tmp_path)  # run in HOME: one hook, nothing to say of it
    assert not [line for line in alone.stdout.splitlines() if "  hook  " in line], alone.stdout
