"""install_hook / uninstall_hook against real settings.json files in a temp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trilium_recall.claude_settings import (
    command_entry,
    hook_command,
    hook_url,
    http_entry,
    install_hook,
    module_command,
    uninstall_hook,
)

OTHER_PROMPT_HOOK = {"type": "command", "command": "/usr/local/bin/lint-prompt", "timeout": 5}
EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]},
        ],
        "UserPromptSubmit": [{"matcher": "", "hooks": [OTHER_PROMPT_HOOK]}],
    },
}


def write_settings(path: Path, settings: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def read_settings(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.*.bak"))


@pytest.fixture
def user_settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    write_settings(path, EXISTING)
    return path


def test_install_merges_into_existing_settings(tmp_path: Path, user_settings: Path) -> None:
    lines = install_hook("user", home=tmp_path)

    expected = json.loads(json.dumps(EXISTING))
    expected["hooks"]["UserPromptSubmit"].append({"matcher": "", "hooks": [command_entry()]})
    assert read_settings(user_settings) == expected
    [backup] = backups(user_settings)
    assert read_settings(backup) == EXISTING
    assert lines == [
        f"added command hook in {user_settings} (backup: {backup})",
        "  engine: http://127.0.0.1:8765",
        "  password: $RECALL_LOGIN_PASSWORD from the environment Claude Code runs in",
    ]


def test_command_entry_runs_this_interpreters_hook() -> None:
    entry = command_entry()
    assert entry["type"] == "command" and entry["timeout"] == 3
    assert entry["command"] == (
        f"{hook_command()} --url http://127.0.0.1:8765 --password-env RECALL_LOGIN_PASSWORD"
    )
    assert "trilium-recall-hook" in entry["command"] or "-m trilium_recall.hook" in entry["command"]


def test_without_the_console_script_the_command_is_python_dash_p_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = tmp_path / "no scripts here" / "python3"
    monkeypatch.setattr("sys.executable", str(python))
    assert hook_command() == module_command(python) == f"'{python}' -P -m trilium_recall.hook"


def test_install_twice_adds_one_entry_and_writes_nothing_new(
    tmp_path: Path, user_settings: Path
) -> None:
    install_hook("user", home=tmp_path)
    after_first = user_settings.read_bytes()

    lines = install_hook("user", home=tmp_path)

    assert lines[0] == f"command hook already installed in {user_settings}"
    assert user_settings.read_bytes() == after_first
    assert len(backups(user_settings)) == 1
    groups = read_settings(user_settings)["hooks"]["UserPromptSubmit"]
    assert [group["hooks"] for group in groups] == [[OTHER_PROMPT_HOOK], [command_entry()]]


def test_install_creates_missing_project_file(tmp_path: Path) -> None:
    lines = install_hook("project", project_dir=tmp_path)

    path = tmp_path / ".claude" / "settings.json"
    assert read_settings(path) == {
        "hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [command_entry()]}]}
    }
    assert lines[0] == f"added command hook in {path}"
    assert backups(path) == []


def test_http_form(tmp_path: Path) -> None:
    lines = install_hook("project", http=True, project_dir=tmp_path, engine_url="http://e:9/")

    path = tmp_path / ".claude" / "settings.json"
    [group] = read_settings(path)["hooks"]["UserPromptSubmit"]
    assert group == {
        "matcher": "",
        "hooks": [
            {
                "type": "http",
                "url": "http://e:9/recall",
                "headers": {"Authorization": "Bearer $RECALL_LOGIN_PASSWORD"},
                "allowedEnvVars": ["RECALL_LOGIN_PASSWORD"],
                "timeout": 3,
            }
        ],
    }
    assert lines == [
        f"added http hook in {path}",
        "  engine: http://e:9",
        "  password: $RECALL_LOGIN_PASSWORD from the environment Claude Code runs in",
    ]


def test_http_engine_url_defaults_to_recall_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_URL", "https://notes.example:8443")
    assert http_entry()["url"] == "https://notes.example:8443/recall"
    monkeypatch.delenv("RECALL_URL")
    assert http_entry()["url"] == "http://127.0.0.1:8765/recall"


def test_the_http_hook_s_own_url_given_as_the_engine_s_names_the_engine() -> None:
    """`…/recall` is the URL a user sees in settings.json, and pastes back."""
    assert http_entry("http://127.0.0.1:9/recall/")["url"] == "http://127.0.0.1:9/recall"
    assert "--url http://127.0.0.1:9 " in command_entry("http://127.0.0.1:9/recall")["command"]


def test_switching_kind_replaces_our_hook(tmp_path: Path, user_settings: Path) -> None:
    install_hook("user", home=tmp_path)
    lines = install_hook("user", home=tmp_path, http=True, engine_url="http://127.0.0.1:8765")

    groups = read_settings(user_settings)["hooks"]["UserPromptSubmit"]
    assert [group["hooks"] for group in groups] == [
        [OTHER_PROMPT_HOOK],
        [http_entry("http://127.0.0.1:8765")],
    ]
    assert lines[0].startswith(f"replaced trilium-recall hook with http hook in {user_settings}")


def test_changed_engine_url_updates_the_http_hook(tmp_path: Path) -> None:
    install_hook("project", http=True, project_dir=tmp_path, engine_url="http://127.0.0.1:1")
    install_hook("project", http=True, project_dir=tmp_path, engine_url="http://127.0.0.1:2")

    path = tmp_path / ".claude" / "settings.json"
    [group] = read_settings(path)["hooks"]["UserPromptSubmit"]
    assert group["hooks"] == [http_entry("http://127.0.0.1:2")]


def test_uninstall_leaves_the_rest(tmp_path: Path, user_settings: Path) -> None:
    install_hook("user", home=tmp_path)
    # Our hook sharing a group with someone else's: only ours goes.
    settings = read_settings(user_settings)
    settings["hooks"]["UserPromptSubmit"][0]["hooks"].append(http_entry())
    write_settings(user_settings, settings)

    lines = uninstall_hook("user", home=tmp_path)

    assert read_settings(user_settings) == EXISTING
    assert len(lines) == 1
    assert lines[0].startswith(f"removed command and http hook from {user_settings} (backup: ")
    assert uninstall_hook("user", home=tmp_path) == [f"no trilium-recall hook in {user_settings}"]


def test_uninstall_removes_empty_containers(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    write_settings(path, {"model": "opus"})
    install_hook("project", project_dir=tmp_path)
    install_hook("project", project_dir=tmp_path, http=True)

    uninstall_hook("project", project_dir=tmp_path)

    assert read_settings(path) == {"model": "opus"}
    # One backup per change: the install, the switch to http, the uninstall.
    assert len(backups(path)) == 3


def test_uninstall_without_file(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    assert uninstall_hook("project", project_dir=tmp_path) == [
        f"no settings file at {path}; nothing to remove"
    ]
    assert not path.exists()


@pytest.mark.parametrize(
    "text",
    [
        '{"hooks": {"UserPromptSubmit": [',
        "[1, 2]",
        '{"hooks": []}',
        '{"hooks": {"UserPromptSubmit": {}}}',
    ],
)
def test_unreadable_file_refused_and_untouched(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")

    with pytest.raises(ValueError, match=r"not touching it"):
        install_hook("user", home=tmp_path)
    with pytest.raises(ValueError, match=r"not touching it"):
        uninstall_hook("user", home=tmp_path)

    assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_settings_path_that_is_a_directory_or_not_utf8_is_refused_in_a_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.mkdir(parents=True)
    with pytest.raises(ValueError, match=r"cannot be read \(Is a directory\); fix it first"):
        install_hook("user", home=tmp_path)
    path.rmdir()
    path.write_bytes(b'{"x": "\xff"}')
    with pytest.raises(ValueError, match=r"cannot be read \(not UTF-8\); fix it first"):
        install_hook("user", home=tmp_path)


def test_a_settings_file_kept_as_a_link_is_written_where_it_points(tmp_path: Path) -> None:
    """Dotfile managers (stow, chezmoi, home-manager) keep settings.json as a link."""
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n', encoding="utf-8")
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    install_hook("user", home=tmp_path)
    assert link.is_symlink() and link.resolve() == real
    written = json.loads(real.read_text(encoding="utf-8"))
    assert written["model"] == "opus" and written["hooks"]["UserPromptSubmit"]
    assert [p.name for p in real.parent.iterdir()] == ["claude-settings.json"]  # no backup there
    assert len(list(link.parent.glob("settings.json.*.bak"))) == 1


def test_a_settings_link_to_where_nothing_can_be_written_is_refused_in_a_line(
    tmp_path: Path,
) -> None:
    """home-manager links settings.json into the read-only Nix store; here the link points
    under a plain file, which no user (root neither) can write under."""
    in_the_way = tmp_path / "not-a-directory"
    in_the_way.write_text("", encoding="utf-8")
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(in_the_way / "settings.json")
    with pytest.raises(ValueError, match=r"links to .*, which cannot be written \(File exists\)"):
        install_hook("user", home=tmp_path)
    assert link.is_symlink()


def test_a_settings_folder_that_cannot_be_made_is_refused_in_a_line(tmp_path: Path) -> None:
    """A home under a plain file: no user, root neither, can make .claude there. It was an
    OSError, which `install-hook` called an internal error."""
    home = tmp_path / "a-file"
    home.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^cannot write .*settings\.json \(Not a directory: "):
        install_hook("user", home=home)


def test_a_read_only_settings_file_is_left_as_it_is(tmp_path: Path, user_settings: Path) -> None:
    before = user_settings.read_text(encoding="utf-8")
    user_settings.chmod(0o444)  # made so on purpose: not ours to replace (root could, and did)
    with pytest.raises(ValueError, match=r"settings\.json is read-only: make it writable"):
        install_hook("user", home=tmp_path)
    assert user_settings.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in user_settings.parent.iterdir()) == ["settings.json"]


def test_unknown_scope_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="scope"):
        install_hook("global", home=tmp_path)


def test_the_command_hook_names_its_engine_and_password_source(tmp_path: Path) -> None:
    """Where the engine is and where the password comes from are in the command itself, so
    the hook does not depend on Claude Code's environment holding RECALL_URL."""
    secret = tmp_path / "pass word"
    lines = install_hook("project", project_dir=tmp_path, engine_url="http://127.0.0.1:9001/",
                         password_file=str(secret))  # fmt: skip
    [group] = read_settings(tmp_path / ".claude" / "settings.json")["hooks"]["UserPromptSubmit"]
    command = group["hooks"][0]["command"]
    assert command == f"{hook_command()} --url http://127.0.0.1:9001 --password-file '{secret}'"
    assert hook_url(group["hooks"][0]) == "http://127.0.0.1:9001"
    assert lines[1:] == [
        "  engine: http://127.0.0.1:9001",
        f"  password: read from {secret} (RECALL_PASSWORD_FILE)",
    ]
    again = install_hook("project", project_dir=tmp_path, engine_url="http://127.0.0.1:9002")
    [group] = read_settings(tmp_path / ".claude" / "settings.json")["hooks"]["UserPromptSubmit"]
    assert again[0].startswith("replaced trilium-recall hook with command hook")
    assert hook_url(group["hooks"][0]) == "http://127.0.0.1:9002"
