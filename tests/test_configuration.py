"""Configured the documented way: the real CLI as a subprocess with a real environment, one test
per row of the README's configuration table (instances, password, port/host/URL, data dir, gate),
and each bad input answered by one line naming the variable, exit 2, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from engine_process import EngineProcess
from procs import closed_port_url, free_port, scrubbed_env
from trilium_recall.config import ENGINE_VARIABLES, load_settings, unknown_variables
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.demo.standin.newest import APP_INFO
from trilium_recall.errors import ConfigError

PASSWORD = "configured-password-1"


def cli(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trilium_recall.cli", *args],
        env=scrubbed_env(**env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single `trilium-recall: …` line of a refused start (exit 2, no traceback)."""
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output, output
    lines = [line for line in done.stderr.splitlines() if line.startswith("trilium-recall:")]
    assert len(lines) == 1, output
    return lines[0].removeprefix("trilium-recall: ")


def notebook(token: str, title: str) -> FakeTrilium:
    fake = FakeTrilium(token=token)
    fake.add_note(
        f"{title[:4].lower()}Note00001", title, content=f"<p>{title} notes live here.</p>"
    )
    return fake


# ---------------------------------------------------------------- the README's multi-instance row


@pytest.mark.slow
def test_readme_multi_instance_env_serves_two_trilium_instances(tmp_path: Path) -> None:
    """RECALL_INSTANCES=work,home with the four per-instance variables, exactly as the README
    writes them; the same run covers the password, port, host, data dir and gate rows."""
    work, home = notebook("work_token", "Quarterly planning"), notebook("home_token", "Sourdough")
    work.start()
    home.start()
    data = tmp_path / "data"
    data.mkdir()
    env = {
        "RECALL_INSTANCES": "work,home",
        "TRILIUM_URL_WORK": work.url(),
        "TRILIUM_ETAPI_TOKEN_WORK": "work_token",
        "TRILIUM_URL_HOME": home.url(),
        "TRILIUM_ETAPI_TOKEN_HOME": "home_token",
        "RECALL_LOGIN_PASSWORD": PASSWORD,
        "RECALL_GATE_STRICTNESS": "-2",
    }
    engine = EngineProcess(data, env).start()  # RECALL_DATA_DIR, RECALL_PORT, RECALL_HOST
    try:
        health = engine.wait_for("ok", timeout=300)
        assert sorted(health["instances"]) == ["home", "work"]
        assert all(i["notes"] == 1 for i in health["instances"].values()), health
        assert (data / "recall.sqlite3").is_file()  # RECALL_DATA_DIR
        assert httpx.post(f"{engine.url}/recall", json={"prompt": "x"}).status_code == 401
        bearer = {"Authorization": f"Bearer {PASSWORD}"}
        status = httpx.get(f"{engine.url}/ui/status", headers=bearer).json()
        assert status["gate"]["strictness"] == -2.0  # RECALL_GATE_STRICTNESS

        # RECALL_URL and RECALL_PASSWORD_FILE, read by a client: doctor against this engine.
        secret = tmp_path / "password"
        secret.write_text(PASSWORD + "\n")
        client = {"RECALL_URL": engine.url, "RECALL_PASSWORD_FILE": str(secret)}
        done = cli("doctor", "--json", env={**client, "HOME": str(tmp_path)})
        checks = {c["name"]: c for c in json.loads(done.stdout)}
        assert checks["engine"]["status"] == "ok", checks["engine"]
        assert checks["password"]["detail"] == "accepted (from RECALL_PASSWORD_FILE)"
        versions = {checks[f"trilium {n}"]["facts"]["version"] for n in ("work", "home")}
        assert versions == {APP_INFO["0.93"]["appVersion"]}
    finally:
        engine.stop()
        work.stop()
        home.stop()


def test_index_builds_every_instance_it_can_and_names_each_that_failed(tmp_path: Path) -> None:
    """One Trilium down is no reason not to build the others: each is tried, and the one line
    names the instance that failed and why."""
    work, home = notebook("work_token", "Quarterly planning"), notebook("home_token", "Sourdough")
    dead = closed_port_url()
    env = {
        "RECALL_DATA_DIR": str(tmp_path / "data"),
        "RECALL_INSTANCES": "work,dead,home",
        "TRILIUM_URL_DEAD": dead,
        "TRILIUM_ETAPI_TOKEN_DEAD": "dead_token",
        "TRILIUM_ETAPI_TOKEN_WORK": "work_token",
        "TRILIUM_ETAPI_TOKEN_HOME": "home_token",
    }
    with work, home:
        env |= {"TRILIUM_URL_WORK": work.url(), "TRILIUM_URL_HOME": home.url()}
        done = cli("index", env=env)
    said = one_line_error(done)
    assert said.startswith(f"1 of 3 instances failed to build: dead: Trilium at {dead} ")
    assert "dead_token" not in done.stdout + done.stderr
    printed = json.loads(done.stdout[done.stdout.index("{\n") :])  # what was built, still
    status = json.loads(cli("status", env=env).stdout)
    assert printed == status
    assert {name: status[name]["notes"] for name in ("work", "home")} == {"work": 1, "home": 1}
    assert status["dead"]["notes"] == 0 and "unavailable" in status["dead"]["error"]


def test_recall_asked_of_an_instance_whose_build_failed_names_the_failure(
    tmp_path: Path,
) -> None:
    """Not "silent": that would say its notes hold nothing about the prompt."""
    work, dead = notebook("work_token", "Quarterly planning"), closed_port_url()
    env = {"RECALL_INSTANCES": "work,dead", "TRILIUM_ETAPI_TOKEN_WORK": "work_token",
           "TRILIUM_URL_DEAD": dead, "TRILIUM_ETAPI_TOKEN_DEAD": "t"}  # fmt: skip
    with work:
        engine = EngineProcess(tmp_path, {**env, "TRILIUM_URL_WORK": work.url()}).start()
        try:
            deadline = time.monotonic() + 240
            while engine.wait_for("degraded")["instances"]["work"]["notes"] < 1:
                assert time.monotonic() < deadline, "work's first build never ended"
                time.sleep(0.1)  # the two builds run side by side: dead's may fail first
            ask = {"prompt": "what are the quarterly planning notes?"}
            url = f"{engine.url}/recall"
            refused = httpx.post(url, json={**ask, "instance": "dead"}, timeout=30)
            answered = httpx.post(url, json={**ask, "instance": "work"}, timeout=30).json()
            whole = httpx.post(url, json=ask, timeout=30).json()
        finally:
            engine.stop()
    assert refused.status_code == 503, refused.text
    said = f'No notes indexed yet: the first build of "dead" failed: Trilium at {dead} '
    assert refused.json()["error"].startswith(said), refused.text
    assert answered["passages"] and answered["partial"] is False
    assert whole["passages"] and whole["partial"] is True  # "dead"'s notes are not in it
    unsearched = (
        f'Not all notes were searched: the first build of "dead" failed: Trilium at {dead} '
    )
    assert whole["unsearched"].startswith(unsearched), whole


# ---------------------------------------------------------------- one line per bad input


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"RECALL_INSTANCES": "work,home", "TRILIUM_URL_WORK": "http://127.0.0.1:9",
             "TRILIUM_ETAPI_TOKEN_WORK": "w"},
            'TRILIUM_URL_HOME is not set (RECALL_INSTANCES names "home")',
        ),
        (
            {"RECALL_INSTANCES": "work, home,"},
            "RECALL_INSTANCES='work, home,' has an empty name (a stray comma?): "
            "list names like work,home",
        ),
        (
            {"RECALL_INSTANCES": "my-home"},
            "RECALL_INSTANCES: 'my-home' cannot be part of a variable name (TRILIUM_URL_MY-HOME): "
            "use letters, digits and _ (a letter first)",
        ),
        (
            {"RECALL_INSTANCES": "a,b", "TRILIUM_URL_A": "http://notes:8080",
             "TRILIUM_ETAPI_TOKEN_A": "x", "TRILIUM_URL_B": "http://notes:8080/",
             "TRILIUM_ETAPI_TOKEN_B": "y"},
            "TRILIUM_URL_B is the same Trilium as TRILIUM_URL_A (http://notes:8080): "
            "list each instance once",
        ),
        ({"RECALL_INSTANCES": "work,Work"}, "RECALL_INSTANCES names 'work' twice"),
        (  # one Trilium by this machine's two names: indexed twice, with no word said
            {"RECALL_INSTANCES": "a,b", "TRILIUM_URL_A": "http://127.0.0.1:8080",
             "TRILIUM_ETAPI_TOKEN_A": "x", "TRILIUM_URL_B": "http://LOCALHOST:8080/etapi",
             "TRILIUM_ETAPI_TOKEN_B": "y"},
            "TRILIUM_URL_B is the same Trilium as TRILIUM_URL_A (http://LOCALHOST:8080): "
            "list each instance once",
        ),
        (  # the OverflowError came from the activity log's thread, after start
            {"RECALL_ACTIVITY_MAX_ROWS": "100000000000000000000"},
            "RECALL_ACTIVITY_MAX_ROWS: Input should be less than or equal to 1000000",
        ),
        (
            {"RECALL_ACTIVITY_MAX_DAYS": "inf"},
            "RECALL_ACTIVITY_MAX_DAYS: Input should be a finite number",
        ),
        (
            {"TRILIUM_URL": "notes.example:8080", "TRILIUM_ETAPI_TOKEN": "t"},
            "TRILIUM_URL must be an http(s) URL such as http://localhost:8080",
        ),
        ({"TRILIUM_URL": ""}, "TRILIUM_URL is set but empty: give it a value or unset it"),
        (
            {"TRILIUM_ETAPI_TOKEN_FILE": "/run/secrets/etapi"},
            "TRILIUM_URL is not set: TRILIUM_ETAPI_TOKEN_FILE needs a Trilium URL",
        ),
        (  # a port out of range and a broken IPv6 host parse, then fail every connection
            {"TRILIUM_URL": "http://localhost:80800", "TRILIUM_ETAPI_TOKEN": "t"},
            "TRILIUM_URL must be an http(s) URL such as http://localhost:8080",
        ),
        (
            {"TRILIUM_URL": "http://[::1:8080", "TRILIUM_ETAPI_TOKEN": "t"},
            "TRILIUM_URL must be an http(s) URL such as http://localhost:8080",
        ),
        (  # SQLite's busy timeout is a C int of milliseconds
            {"RECALL_TIME_BUDGET_MS": "9999999999"},
            "RECALL_TIME_BUDGET_MS: Input should be less than or equal to 120000",
        ),
        (
            {"RECALL_TIME_BUDGET_MS": "inf"},
            "RECALL_TIME_BUDGET_MS: Input should be a finite number",
        ),
        (
            {"RECALL_PORT": "eighty"},
            "RECALL_PORT: Input should be a valid integer, unable to parse string as an integer",
        ),
        ({"RECALL_PORT": "70000"}, "RECALL_PORT: Input should be less than or equal to 65535"),
        (
            {"RECALL_URL": "127.0.0.1:8765"},
            "RECALL_URL: must be an http(s) URL such as https://recall.example.org",
        ),
        (
            {"RECALL_GATE_STRICTNESS": "9"},
            "RECALL_GATE_STRICTNESS: Input should be less than or equal to 5",
        ),
        (  # which of two secrets is the stale one is not ours to guess
            {"TRILIUM_URL": "http://127.0.0.1:9", "TRILIUM_ETAPI_TOKEN": "t",
             "TRILIUM_ETAPI_TOKEN_FILE": "/run/secrets/etapi"},
            "TRILIUM_ETAPI_TOKEN and TRILIUM_ETAPI_TOKEN_FILE are both set: keep one of them",
        ),
        (
            {"RECALL_INSTANCES": "work", "TRILIUM_URL_WORK": "http://127.0.0.1:9",
             "TRILIUM_ETAPI_TOKEN_WORK": "t", "TRILIUM_ETAPI_TOKEN_WORK_FILE": "/run/s/w"},
            "TRILIUM_ETAPI_TOKEN_WORK and TRILIUM_ETAPI_TOKEN_WORK_FILE are both set: "
            "keep one of them",
        ),
        (
            {"RECALL_LOGIN_PASSWORD": "pw", "RECALL_PASSWORD_FILE": "/run/secrets/pw"},
            "RECALL_LOGIN_PASSWORD and RECALL_PASSWORD_FILE are both set: keep one of them",
        ),
        (  # compared with Host headers, where a URL never matches
            {"RECALL_ALLOWED_HOSTS": "recall.example.org, https://notes.example.org/mcp"},
            "RECALL_ALLOWED_HOSTS: 'https://notes.example.org/mcp' is not a host "
            "name: write it as a Host header does, such as notes.example.org, "
            "notes.example.org:8443, notes.example.org:* or [::1]:8765 (no scheme, no path)",
        ),
        (
            {"RECALL_ALLOWED_HOSTS": "notes.example.org:99999"},
            "RECALL_ALLOWED_HOSTS: 'notes.example.org:99999' is not a host name: "
            "write it as a Host header does, such as notes.example.org, notes.example.org:8443, "
            "notes.example.org:* or [::1]:8765 (no scheme, no path)",
        ),
        (  # TRILIUM_ETAPI_TOKEN_WORK_FILE would be both work's token file and work_file's token
            {"RECALL_INSTANCES": "work,work_file"},
            "RECALL_INSTANCES: 'work_file' cannot end in _file (TRILIUM_ETAPI_TOKEN_WORK_FILE "
            "would also be the token file of 'work')",
        ),
        (
            {"RECALL_LOGIN_PASSWORD": " "},
            "RECALL_LOGIN_PASSWORD is set but empty: give it a value or unset it",
        ),
        (  # the page took it as typed, no Bearer header kept the spaces
            {"RECALL_LOGIN_PASSWORD": " pass word "},
            "RECALL_LOGIN_PASSWORD: starts or ends with a space, which a Bearer header drops",
        ),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_the_variable(
    env: dict[str, str], message: str, tmp_path: Path
) -> None:
    done = cli("serve", env={"RECALL_DATA_DIR": str(tmp_path), **env})
    assert one_line_error(done) == message


def test_token_and_password_files_that_are_empty_or_unreadable(tmp_path: Path) -> None:
    empty, missing, two_lines = tmp_path / "empty", tmp_path / "missing", tmp_path / "two"
    empty.write_text("\n")
    two_lines.write_text("tokA\rsecret-LEAK\n")  # sent as a header, httpx's refusal quoted it
    accented = tmp_path / "accented"
    accented.write_text("pässwörd\n")
    url = {"TRILIUM_URL": "http://127.0.0.1:9"}
    cases = [
        (
            {**url, "TRILIUM_ETAPI_TOKEN_FILE": str(two_lines)},
            f"TRILIUM_ETAPI_TOKEN_FILE: {two_lines} holds more than one line; keep only the secret",
        ),
        (
            {"RECALL_PASSWORD_FILE": str(two_lines)},
            f"RECALL_PASSWORD_FILE: {two_lines} holds more than one line; keep only the secret",
        ),
        (  # named by the variable that gave it, not RECALL_LOGIN_PASSWORD
            {"RECALL_PASSWORD_FILE": str(accented)},
            "RECALL_PASSWORD_FILE: must be printable ASCII (it is sent as a Bearer header)",
        ),
        (
            {**url, "TRILIUM_ETAPI_TOKEN_FILE": str(empty)},
            f"TRILIUM_ETAPI_TOKEN_FILE: {empty} is empty",
        ),
        (
            {**url, "TRILIUM_ETAPI_TOKEN_FILE": str(missing)},
            f"TRILIUM_ETAPI_TOKEN_FILE: cannot read {missing} (No such file or directory)",
        ),
        ({"RECALL_PASSWORD_FILE": str(empty)}, f"RECALL_PASSWORD_FILE: {empty} is empty"),
        (
            {"RECALL_PASSWORD_FILE": str(tmp_path)},
            f"RECALL_PASSWORD_FILE: cannot read {tmp_path} (Is a directory)",
        ),
    ]  # fmt: skip
    for env, message in cases:
        done = cli("serve", env={"RECALL_DATA_DIR": str(tmp_path), **env})
        assert one_line_error(done) == message
        assert "secret-LEAK" not in done.stdout + done.stderr


def test_allowed_hosts_take_what_a_host_header_holds() -> None:
    written = "Notes.Example.org, my_service:8765, [::1]:*, example.org.:443, recall:*"
    settings = load_settings({"RECALL_ALLOWED_HOSTS": written}, quiet=True)
    assert settings.allowed_hosts == (
        "notes.example.org",  # Host headers are compared as written: lower-case
        "my_service:8765",  # a Docker service name
        "[::1]:*",
        "example.org.:443",
        "recall:*",
    )


@pytest.mark.parametrize(
    "variable", sorted(ENGINE_VARIABLES | {"TRILIUM_URL", "TRILIUM_ETAPI_TOKEN"})
)
def test_every_variable_set_empty_is_named(variable: str) -> None:
    with pytest.raises(
        ConfigError, match=f"^{variable} is set but empty: give it a value or unset it$"
    ):
        load_settings({variable: ""})


def test_a_token_file_stands_in_for_the_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("file_token\n")
    env = {"RECALL_INSTANCES": "work", "TRILIUM_URL_WORK": "http://w:1",
           "TRILIUM_ETAPI_TOKEN_WORK_FILE": str(token)}  # fmt: skip
    assert load_settings(env).instances["work"].token.get_secret_value() == "file_token"


def test_an_unknown_variable_is_a_warning_naming_the_closest(tmp_path: Path) -> None:
    typos = {"RECALL_PROT": "9000", "RECALL_INSTANCE": "work", "TRILIUM_URL_WROK": "http://w:1"}
    done = cli("status", env={"RECALL_DATA_DIR": str(tmp_path), **typos})
    assert "RECALL_PROT is not a trilium-recall setting (did you mean RECALL_PORT?)" in done.stderr
    assert "RECALL_INSTANCE is not a trilium-recall setting (did you mean RECALL_INSTANCES?)" in (
        done.stderr
    )
    assert 'TRILIUM_URL_WROK is ignored: RECALL_INSTANCES does not name "wrok"' in done.stderr
    assert one_line_error(done).startswith("no index at ")  # the warnings do not stop it


def test_host_beyond_loopback_needs_a_password(tmp_path: Path) -> None:
    env = {"RECALL_DATA_DIR": str(tmp_path), "RECALL_HOST": "0.0.0.0",
           "TRILIUM_URL": closed_port_url(), "TRILIUM_ETAPI_TOKEN": "t"}  # fmt: skip
    assert one_line_error(cli("serve", env=env)) == (
        "RECALL_LOGIN_PASSWORD is not set: refusing to serve on 0.0.0.0; "
        "set a password or bind to 127.0.0.1"
    )


def test_port_and_url_decide_where_clients_look(tmp_path: Path) -> None:
    """RECALL_PORT moves what install-hook writes; RECALL_URL wins over it."""
    port = free_port()
    home = tmp_path / "home"
    done = cli("install-hook", env={"HOME": str(home), "RECALL_PORT": str(port)})
    assert done.returncode == 0, done.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert f"--url http://127.0.0.1:{port} --password-env RECALL_LOGIN_PASSWORD" in command
    elsewhere = closed_port_url()
    done = cli("install-hook", env={"HOME": str(home), "RECALL_URL": elsewhere})
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    groups = settings["hooks"]["UserPromptSubmit"]
    assert len(groups) == 1 and f"--url {elsewhere} " in groups[0]["hooks"][0]["command"]
    assert f"FAIL  engine  {elsewhere} does not answer (connection refused)" in done.stdout
    installed = "The hook is installed anyway: it adds nothing until trilium-recall answers at"
    assert f"{installed} {elsewhere}." in done.stdout


def test_an_etapi_url_is_read_as_the_trilium_it_belongs_to() -> None:
    """The client stripped /etapi, so syncing worked, but every passage linked to
    http://…/etapi/#root/…, which answers 401."""
    env = {"TRILIUM_URL": "http://127.0.0.1:18471/etapi/", "TRILIUM_ETAPI_TOKEN": "t"}
    instance = load_settings(env).instances["default"]
    assert instance.url == "http://127.0.0.1:18471"
    assert instance.note_url("abc") == "http://127.0.0.1:18471/#root/abc"


def test_an_empty_secret_beside_its_file_is_left_out(tmp_path: Path) -> None:
    """compose.yaml passes TRILIUM_ETAPI_TOKEN: ${TRILIUM_ETAPI_TOKEN:-} whatever the user
    chose: the token file given beside it was refused as "set but empty"."""
    token, password = tmp_path / "token", tmp_path / "password"
    token.write_text("file_token\n")
    password.write_text("file-password\n")
    env = {
        "TRILIUM_URL": "http://trilium:8080", "TRILIUM_ETAPI_TOKEN": "",
        "TRILIUM_ETAPI_TOKEN_FILE": str(token),
        "RECALL_LOGIN_PASSWORD": "", "RECALL_PASSWORD_FILE": str(password),
    }  # fmt: skip
    settings = load_settings(env)
    assert settings.instances["default"].token.get_secret_value() == "file_token"
    assert settings.login_password is not None
    assert settings.login_password.get_secret_value() == "file-password"
    assert settings.password_source == "RECALL_PASSWORD_FILE"


def test_passages_link_where_the_browser_opens_trilium() -> None:
    """compose.yaml reaches Trilium as http://trilium:8080, a name only Docker's network
    knows: every passage linked there."""
    env = {
        "RECALL_INSTANCES": "home", "TRILIUM_URL_HOME": "http://trilium:8080",
        "TRILIUM_ETAPI_TOKEN_HOME": "t", "TRILIUM_LINK_URL_HOME": "http://localhost:8080/",
    }  # fmt: skip
    instance = load_settings(env).instances["home"]
    assert instance.url == "http://trilium:8080"  # where the engine reads it
    assert instance.note_url("abc") == "http://localhost:8080/#root/abc"
    with pytest.raises(ConfigError, match=r"^TRILIUM_LINK_URL_HOME must be an http"):
        load_settings({**env, "TRILIUM_LINK_URL_HOME": "localhost:8080"})
    stray = {**env, "TRILIUM_LINK_URL_WORK": "http://x:1", "TRILIUM_LINK_URL": "http://y:1"}
    assert unknown_variables(stray) == [
        "TRILIUM_LINK_URL is ignored: RECALL_INSTANCES is set (use TRILIUM_LINK_URL_<NAME>)",
        'TRILIUM_LINK_URL_WORK is ignored: RECALL_INSTANCES does not name "work"',
    ]


def test_a_url_given_as_a_file_is_named_not_taken_for_an_instance() -> None:
    """It warned that RECALL_INSTANCES does not name an instance called "file"."""
    env = {"TRILIUM_URL_FILE": "/run/secrets/url", "TRILIUM_LINK_URL_FILE": "/run/secrets/link"}
    assert unknown_variables(env) == [
        "TRILIUM_LINK_URL_FILE is ignored: only the ETAPI token is read from a file",
        "TRILIUM_URL_FILE is ignored: only the ETAPI token is read from a file",
    ]


def test_doctor_lists_the_variables_as_the_engine_reads_them(tmp_path: Path) -> None:
    from trilium_recall.server.checks import configuration

    token = tmp_path / "token"
    token.write_text("file_token\n")
    env = {"TRILIUM_URL": "http://trilium:8080", "TRILIUM_ETAPI_TOKEN": "",
           "TRILIUM_ETAPI_TOKEN_FILE": str(token)}  # fmt: skip
    check = configuration(env)
    assert check.status == "ok", check
    assert not any(line.startswith("TRILIUM_ETAPI_TOKEN=") for line in check.lines), check.lines
