"""Register the prompt hook in Claude Code's settings.json, and take it out again.

The file belongs to the user: merge into ``hooks.UserPromptSubmit`` and keep everything else as it
was, write nothing when nothing changes, keep a backup before changing an existing file, and refuse
(``ValueError``) rather than overwrite a file we cannot read as a JSON object.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .engine_address import named_engine

EVENT = "UserPromptSubmit"
# Claude Code counts hook timeouts in seconds; the hook gives itself 1.5 s, this is the backstop.
HOOK_TIMEOUT_S = 3
# How long the engine may take over a hook's prompt, whatever RECALL_TIME_BUDGET_MS allows: the
# command hook gives up 1.4 s after its process started (hook.DEADLINE_S), and its start-up and
# the round trip take some of that. An answer later than this reaches nobody, and its notes
# must not count as sent to the session.
HOOK_ANSWER_S = 1.2
PASSWORD_ENV = "RECALL_LOGIN_PASSWORD"
# Our command hooks, whichever way they were spelled: the console script or `python -m`.
_OUR_COMMAND = re.compile(r"trilium-recall-hook|trilium_recall\.hook|trilium-recall\s+hook\b")


def install_hook(
    scope: str = "user",
    *,
    http: bool = False,
    project_dir: Path | None = None,
    home: Path | None = None,
    engine_url: str | None = None,
    password_file: str | None = None,
) -> list[str]:
    """Add our hook (command, or http with ``http=True``); return lines saying what changed.

    Any hook of ours already there of the other kind, or with another command or URL, is replaced,
    so the prompt never gets the same passages twice.
    """
    path = settings_path(scope, project_dir=project_dir, home=home)
    kind = "http" if http else "command"
    entry = http_entry(engine_url) if http else command_entry(engine_url, password_file)
    settings, groups = _read(path)
    ours = [hook for group in groups for hook in _hooks_of(group) if _is_ours(hook)]
    where = [f"  engine: {hook_url(entry)}"]
    if http or password_file is None:
        where.append(f"  password: ${PASSWORD_ENV} from the environment Claude Code runs in")
    else:
        where.append(f"  password: read from {password_file} (RECALL_PASSWORD_FILE)")
    if ours == [entry]:
        return [f"{kind} hook already installed in {path}", *where]
    _remove_ours(settings)
    hooks = settings.setdefault("hooks", {})
    hooks.setdefault(EVENT, []).append({"matcher": "", "hooks": [entry]})
    backup = _save(path, settings)
    verb = "replaced trilium-recall hook with" if ours else "added"
    return [f"{verb} {kind} hook in {path}" + (f" (backup: {backup})" if backup else ""), *where]


def uninstall_hook(
    scope: str = "user",
    *,
    project_dir: Path | None = None,
    home: Path | None = None,
) -> list[str]:
    """Remove our hooks of both kinds, keep everything else; return lines saying what changed."""
    path = settings_path(scope, project_dir=project_dir, home=home)
    if not path.exists():
        return [f"no settings file at {path}; nothing to remove"]
    settings, _ = _read(path)  # the shape checked before anything changes
    removed = _remove_ours(settings)
    if not removed:
        return [f"no trilium-recall hook in {path}"]
    backup = _save(path, settings)
    kinds = " and ".join(sorted({str(hook.get("type")) for hook in removed}))
    return [f"removed {kinds} hook from {path} (backup: {backup})"]


def settings_path(scope: str, *, project_dir: Path | None = None, home: Path | None = None) -> Path:
    if scope == "user":
        return user_config_dir(home) / "settings.json"
    if scope == "project":
        return (project_dir or Path.cwd()) / ".claude" / "settings.json"
    raise ValueError(f"scope must be 'user' or 'project', not {scope!r}")


def user_config_dir(home: Path | None = None) -> Path:
    """Where Claude Code keeps a user's settings: $CLAUDE_CONFIG_DIR when set (a hook written
    to ~/.claude then never ran), else ~/.claude. An explicit `home` is that home's."""
    if home is None and (configured := os.environ.get("CLAUDE_CONFIG_DIR")):
        return Path(configured).expanduser()
    return (home or Path.home()) / ".claude"


def hooks_disabled_by(*, project_dir: Path | None = None, home: Path | None = None) -> Path | None:
    """The settings file whose `"disableAllHooks": true` Claude Code obeys, if one does: the
    project's local file over the project's over the user's. Unreadable files say nothing."""
    project = (project_dir or Path.cwd()) / ".claude"
    layers = (user_config_dir(home) / "settings.json", project / "settings.json",
              project / "settings.local.json")  # fmt: skip
    disabled_by = None
    for path in layers:
        try:
            value = _load(path).get("disableAllHooks")
        except (ValueError, OSError):
            continue
        if isinstance(value, bool):
            disabled_by = path if value else None
    return disabled_by


def command_entry(
    engine_url: str | None = None, password_file: str | None = None
) -> dict[str, Any]:
    """The hook command, with where the engine is and where the password comes from (the name
    of a variable or a file, never the password), so it does not rely on Claude Code's
    environment holding RECALL_URL."""
    password = (
        f"--password-file {shlex.quote(password_file)}"
        if password_file
        else f"--password-env {PASSWORD_ENV}"
    )
    command = f"{hook_command()} --url {shlex.quote(named_engine(engine_url))} {password}"
    return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}


def hook_url(entry: dict[str, Any]) -> str | None:
    """The engine URL one of our hooks sends prompts to (None: an older command hook that
    follows RECALL_URL)."""
    if entry.get("type") == "http":
        return str(entry.get("url", "")).removesuffix("/recall")
    try:
        words = shlex.split(str(entry.get("command", "")))
    except ValueError:  # unbalanced quotes: edited by hand
        return None
    return next((url for flag, url in itertools.pairwise(words) if flag == "--url"), None)


def installed_hooks(path: Path) -> list[dict[str, Any]]:
    """Our hooks in one settings file (none when it is missing); ValueError saying why when it
    cannot be read as Claude Code's settings (which Claude Code cannot either)."""
    try:
        groups = _groups(_load(path), path)
    except OSError as exc:  # a folder on the way that may not be searched
        raise ValueError(f"{path} cannot be read ({exc.strerror})") from None
    return [hook for group in groups for hook in _hooks_of(group) if _is_ours(hook)]


def http_entry(engine_url: str | None = None) -> dict[str, Any]:
    """Claude Code's http hook: it POSTs the hook input to url and reads hook JSON back.

    Header values may name environment variables as ``$NAME``; Claude Code fills in only those
    listed in ``allowedEnvVars`` (others become empty), so the password never sits in the file.
    """
    return {
        "type": "http",
        "url": f"{named_engine(engine_url)}/recall",
        "headers": {"Authorization": f"Bearer ${PASSWORD_ENV}"},
        "allowedEnvVars": [PASSWORD_ENV],
        "timeout": HOOK_TIMEOUT_S,
    }


def hook_command() -> str:
    """The console script next to this interpreter, else ``<python> -P -m trilium_recall.hook``."""
    script = Path(sys.executable).parent / "trilium-recall-hook"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script.absolute()))
    return module_command(Path(sys.executable))


def module_command(python: Path) -> str:
    """Run the hook module with python; ``-P`` (Python ≥ 3.11) keeps the working directory off
    ``sys.path``: Claude Code runs the hook in the user's project, and a project holding
    ``json.py`` or an ``http/`` package would otherwise be imported in place of the standard
    library's, and its output injected as context."""
    return f"{shlex.quote(str(python.absolute()))} -P -m trilium_recall.hook"


def _is_ours(hook: Any) -> bool:
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "command":
        return bool(_OUR_COMMAND.search(str(hook.get("command", ""))))
    if hook.get("type") == "http":
        allowed = hook.get("allowedEnvVars")
        return str(hook.get("url", "")).rstrip("/").endswith("/recall") and (
            isinstance(allowed, list) and PASSWORD_ENV in allowed
        )
    return False


def _hooks_of(group: Any) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _remove_ours(settings: dict[str, Any]) -> list[dict[str, Any]]:
    """Drop our hooks in place, and the containers they leave empty; return what was dropped."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(EVENT), list):
        return []
    removed: list[dict[str, Any]] = []
    kept_groups = []
    for group in hooks[EVENT]:
        mine = [hook for hook in _hooks_of(group) if _is_ours(hook)]
        if not mine:
            kept_groups.append(group)
            continue
        removed += mine
        rest = [hook for hook in _hooks_of(group) if not _is_ours(hook)]
        if rest:
            kept_groups.append({**group, "hooks": rest})
    hooks[EVENT] = kept_groups
    if not kept_groups:
        del hooks[EVENT]
    if not hooks:
        del settings["hooks"]
    return removed


def _groups(settings: dict[str, Any], path: Path) -> list[Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: 'hooks' is not a JSON object")
    groups = hooks.get(EVENT, [])
    if not isinstance(groups, list):
        raise ValueError(f"{path}: 'hooks.{EVENT}' is not a JSON list")
    return groups


def _read(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The settings and our event's groups, for a change: refused whole when unusable."""
    try:
        settings = _load(path)
        return settings, _groups(settings, path)
    except ValueError as exc:
        raise ValueError(f"{exc}; fix it first, not touching it") from None


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8-sig")  # Claude Code reads a BOM'd file too
    except (OSError, UnicodeDecodeError) as exc:  # a directory, unreadable, not UTF-8
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise ValueError(f"{path} cannot be read ({why})") from None
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return settings


def _save(path: Path, settings: dict[str, Any]) -> Path | None:
    """Write settings atomically; back up an existing file first (beside `path`) and return
    the backup's path. A settings file that is a link (a dotfile manager's) is written where it
    points, and stays a link; where that cannot be written (home-manager's read-only store),
    one line says so."""
    target = path.resolve() if path.is_symlink() else path
    if target.exists() and not target.stat().st_mode & 0o222:  # made read-only on purpose
        raise ValueError(
            f"{target} is read-only: make it writable to change it, or edit it yourself"
        )
    try:
        return _write(target, settings, _backup_path(path) if target.exists() else None)
    except OSError as exc:
        if target == path:
            raise ValueError(
                f"cannot write {path} ({exc.strerror}: {exc.filename}): check the owner and "
                f"mode of {path.parent}"
            ) from None
        raise ValueError(
            f"{path} links to {target}, which cannot be written ({exc.strerror}): add the hook "
            "where that file is made, or replace the link with a file"
        ) from None


def _write(path: Path, settings: dict[str, Any], backup: Path | None) -> Path | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if backup:
        shutil.copy2(path, backup)
    fd, tmp = tempfile.mkstemp(prefix=".settings.", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(settings, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        if backup:
            shutil.copymode(backup, tmp)  # settings may hold secrets; keep the user's mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


def _backup_path(path: Path) -> Path:
    """A fresh name every time, so an uninstall's backup never overwrites the install's."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.{stamp}.bak")
    counter = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{stamp}-{counter}.bak")
        counter += 1
    return candidate
