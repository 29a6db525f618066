"""The checks behind `trilium-recall doctor` and the status page: is it working, and if not,
what to change. Each check is one line, a status, and for a failure the one-line fix.

The engine runs the checks it can answer (`engine_checks`: its configuration, each Trilium
instance, the index, failed notes, the hook in this machine's settings, the last hook request,
a test recall) for the page and for `doctor`, which adds what only a client can see (doctor.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..claude_settings import hook_url, hooks_disabled_by, installed_hooks, settings_path
from ..config import (
    DEFAULT_INSTANCE,
    Instance,
    load_settings,
    unknown_variables,
)
from ..engine_address import named_engine, same_engine, shown_url
from ..errors import ConfigError, TriliumAuthError, TriliumError, TriliumUnavailable
from ..index.store import Store
from ..secret_files import without_empty_twins
from ..textclean import counted
from ..trilium.client import TriliumClient
from ..trilium.features import Features
from .overview import failed_notes

Status = Literal["ok", "warn", "fail"]
SECRET_WORDS = ("TOKEN", "PASSWORD")
TRILIUM_TIMEOUT_S = 5.0
FAILED_SHOWN = 20  # per instance, in a check's lines (the page and `status` list them all)


@dataclass(frozen=True)
class Check:
    """One answer. `facts` holds what a program reads (an instance's URL and version) beside the
    line a person reads; the index check's lines name the sync features the Trilium offers."""

    name: str
    status: Status
    detail: str
    fix: str | None = None
    lines: tuple[str, ...] = ()
    facts: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Check:
        return cls(
            str(data["name"]),
            data["status"],
            str(data["detail"]),
            data.get("fix"),
            tuple(data.get("lines") or ()),
            dict(data.get("facts") or {}),
        )


def configuration(
    env: Mapping[str, str], where: str = "configuration", serves: bool = True
) -> Check:
    """Which variables are set (secrets masked) and whether they make a valid configuration.
    `serves`: whether this configuration runs the engine (a client needs no Trilium)."""
    given = without_empty_twins(env)  # as the engine reads it
    names = sorted(k for k in given if k.startswith(("RECALL_", "TRILIUM_")))
    shown = tuple(f"{k}={_masked(k, env[k])}" for k in names)
    try:
        settings = load_settings(env, quiet=True)
    except ConfigError as exc:
        return Check(
            where, "fail", str(exc), "correct that variable (README: Configuration)", shown
        )
    if unknown := unknown_variables(env):
        return Check(where, "warn", unknown[0], "correct or unset it", (*unknown[1:], *shown))
    variables = f"{counted(len(names), 'variable')} set"
    if not settings.instances and not serves:
        detail = f"{variables}; no Trilium here (the engine's is checked below)"
        return Check(where, "ok", detail, None, shown)
    if not settings.instances:
        detail = "no Trilium configured: `serve` runs the demo notebook"
        fix = "set TRILIUM_URL and TRILIUM_ETAPI_TOKEN (or RECALL_INSTANCES) for your own notes"
        return Check(where, "warn", detail, fix, shown)
    listed = ", ".join(f"{i.name} ({i.shown_url})" for i in settings.instances.values())
    detail = f"{variables}; instances: {listed}"
    return Check(where, "ok", detail, None, shown)


def _masked(name: str, value: str) -> str:
    if any(word in name for word in SECRET_WORDS) and not name.endswith("_FILE"):
        return "•••• (set)"  # not even its length
    return shown_url(value) if name.startswith(("TRILIUM_URL", "TRILIUM_LINK_URL")) else value


def instance_variables(name: str) -> tuple[str, str]:
    suffix = "" if name == DEFAULT_INSTANCE else f"_{name.upper()}"
    return f"TRILIUM_URL{suffix}", f"TRILIUM_ETAPI_TOKEN{suffix}"


async def trilium_instance(instance: Instance) -> Check:
    """Trilium answers /app-info with this token; the version it reports."""
    name, url = f"trilium {instance.name}", instance.shown_url
    url_var, token_var = instance_variables(instance.name)
    client = TriliumClient(
        instance.url, instance.token.get_secret_value(), timeout=TRILIUM_TIMEOUT_S, retries=0
    )
    try:
        info = await client.app_info()
    except TriliumAuthError:
        keep = f"write it in the file {token_var}_FILE names" if instance.token_file else None
        fix = f"create a token in Trilium (Options → ETAPI), {keep or f'set {token_var}'}, "
        fix += "and restart the engine"
        return Check(name, "fail", f"{url} refuses the ETAPI token", fix, facts={"url": url})
    except TriliumUnavailable as exc:
        fix = f"start Trilium, or correct {url_var}"
        return Check(name, "fail", f"{url} does not answer ({exc})", fix, facts={"url": url})
    except TriliumError as exc:
        fix = f"is {url_var} the address of a Trilium server?"
        return Check(name, "fail", f"{url}: {exc}", fix, facts={"url": url})
    finally:
        await client.aclose()
    facts: dict[str, object] = {"url": url, "version": info.app_version}
    return Check(name, "ok", f"{url}: Trilium {info.app_version}", facts=facts)


def index_state(store: Store, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per instance: counts, the last runs as the file records them, and the failed notes."""
    state = {}
    for name in names:
        saved = store.instance_state(name)
        state[name] = {
            **store.counts(name),
            **{k: saved.get(k) for k in ("last_sync", "last_full", "build_complete", "error")},
            "failed": failed_notes(store, name),
            "trilium": Features.from_state(saved).to_json(),
        }
    return state


def index_checks(
    state: Mapping[str, Mapping[str, Any]],
    progress: Mapping[str, tuple[int, int]] | None = None,
) -> list[Check]:
    checks = []
    for name, s in state.items():
        counts = f"{s['notes']} notes, {s['sections']} sections"
        times = f"last tick {s['last_sync'] or 'never'}, last full {s['last_full'] or 'never'}"
        fix: str | None
        if s["error"]:
            kept = "; the last index keeps serving" if s["build_complete"] else ""
            fix = f"see the trilium check; the next tick retries{kept}"
            checks.append(Check(f"index {name}", "fail", f"{counts}; {s['error']}", fix))
        elif not s["build_complete"]:
            done, total = (progress or {}).get(name, (0, 0))
            running = f"first build running ({done} of {total} notes indexed)" if total else ""
            detail = running or "no full build has completed yet"
            fix = None if running else "start the engine: `trilium-recall serve` builds it"
            checks.append(Check(f"index {name}", "warn", f"{counts}; {detail}", fix))
        else:
            checks.append(Check(f"index {name}", "ok", f"{counts}; {times}", lines=_synced(s)))
        checks.append(_failed(name, s["failed"]))
    return checks


def _synced(state: Mapping[str, Any]) -> tuple[str, ...]:
    """What the last full comparison found the Trilium to be and to offer the sync."""
    trilium = state.get("trilium") or {}
    if not trilium.get("version"):
        return ()
    offered = ", ".join(trilium.get("features") or []) or "none beyond the 0.93 baseline"
    return (f"synced from Trilium {trilium['version']}; sync features: {offered}",)


def _failed(name: str, failed: Sequence[Mapping[str, Any]]) -> Check:
    if not failed:
        return Check(f"failed notes {name}", "ok", "none")
    lines = tuple(f"{f['title']} ({f['note_id']}): {f['reason']}" for f in failed[:FAILED_SHOWN])
    more = (f"… and {len(failed) - FAILED_SHOWN} more",) if len(failed) > FAILED_SHOWN else ()
    fix = "the next full comparison tries them again; the reasons say what Trilium answered"
    detail = f"{counted(len(failed), 'note')} could not be indexed"
    return Check(f"failed notes {name}", "warn", detail, fix, lines + more)


def moved_aside(moved: tuple[Path, str] | None) -> list[Check]:
    if moved is None:
        return []
    path, reason = moved
    detail = f"the index found at start could not be used; kept as {path.name}, a fresh build runs"
    return [Check("index file", "warn", detail, None, (reason,))]


INSTALL = "trilium-recall install-hook"


def hook_installed(
    engine_url: str, home: Path | None = None, project_dir: Path | None = None
) -> Check:
    """Our hook in the user's or this project's Claude Code settings, and whether it sends to
    `engine_url`."""
    paths = {settings_path(s, home=home, project_dir=project_dir) for s in ("user", "project")}
    found, unreadable = [], []
    for path in sorted(paths):
        try:
            found += [(path, hook) for hook in installed_hooks(path)]
        except ValueError as exc:  # Claude Code skips that file; the other may hold our hook
            unreadable.append((path, str(exc)))
    if disabled_by := hooks_disabled_by(home=home, project_dir=project_dir):
        fix = f'take "disableAllHooks" out of {disabled_by}, or set it to false'
        return Check("hook", "fail", f"{disabled_by} turns every hook off", fix)
    if unreadable and not found:
        path, why = unreadable[0]
        return Check("hook", "fail", why, f"fix {path} (or move it away), then {INSTALL}")
    if not found:
        fix = f"{INSTALL} (not needed if you use the MCP server only)"
        return Check("hook", "warn", "no trilium-recall hook in Claude Code's settings", fix)
    lines = [
        f"{hook['type']} hook in {path} → {named_engine(hook_url(hook))}" for path, hook in found
    ]
    lines += [f"skipped by Claude Code: {why}" for _, why in unreadable]
    if wrong := [
        u for _, h in found if not same_engine(u := named_engine(hook_url(h)), engine_url)
    ]:
        fix = f"{INSTALL} with RECALL_URL={engine_url} (it replaces ours)"
        detail = f"the hook sends to {wrong[0]}, but the engine is at {engine_url}"
        return Check("hook", "fail", detail, fix, tuple(lines), {"urls": wrong})
    if unreadable:
        path, _ = unreadable[0]
        detail = f"installed, sends to {engine_url}; Claude Code skips {path}"
        return Check("hook", "warn", detail, f"fix {path} (or move it away)", tuple(lines))
    if len({json.dumps(hook, sort_keys=True) for _, hook in found}) > 1:
        # Claude Code runs each distinct hook: every prompt is asked, and answered, twice.
        fix = "keep one: trilium-recall uninstall-hook (or --project) removes ours from a file"
        return Check("hook", "warn", "installed twice: Claude Code runs both", fix, tuple(lines))
    return Check("hook", "ok", f"installed, sends to {engine_url}", None, tuple(lines))


# A hook the engine refuses fails at every prompt, silently: the prompt goes through as is.
REFUSED_HOOK_FIX = (
    "the Claude Code that sent it has no RECALL_LOGIN_PASSWORD, or an old one (it keeps the "
    "environment it started with): start it again from a shell that has the engine's, or "
    "install the command hook with RECALL_PASSWORD_FILE set (trilium-recall install-hook)"
)


def last_hook_request(
    entries: Sequence[Mapping[str, Any]],
    log_enabled: bool = True,
    refused: tuple[str, str, str] | None = None,
) -> Check:
    """The newest hook call in the activity log (entries newest first, as `recent` gives), or
    the POST /recall the engine refused since the last it let through (`refused`: when, why,
    from which address)."""
    if refused is not None:
        detail = f"{refused[0]}: refused ({refused[1]}, from {refused[2]})"
        return Check("last hook request", "fail", detail, REFUSED_HOOK_FIX)
    if not log_enabled:
        fix = "set RECALL_ACTIVITY_MAX_ROWS above 0 to see hook requests"
        return Check("last hook request", "warn", "the activity log is off", fix)
    hook = next((e for e in entries if e.get("path") == "hook"), None)
    if hook is None:
        fix = "type a prompt in Claude Code; if none arrives, check the hook line above"
        return Check("last hook request", "warn", "none seen in the activity log", fix)
    sent = ", ".join(str(p["title"]) for p in hook["passages"])
    outcome = f"sent {sent}" if sent else f"silent: {hook['silence']}"
    return Check("last hook request", "ok", f"{hook['at']}: {outcome}")


def recall_check(prompt: str, sent: Sequence[str], silence: str | None, status: str) -> Check:
    decision = f"sent {', '.join(sent)}" if sent else f"silent ({silence})"
    name = "test recall"
    if status in ("starting", "building"):
        fix = "wait for the first build (the index check says if it failed)"
        return Check(name, "warn", f'"{prompt}": {decision}', fix)
    if status == "late":
        fix = "the machine is busy or the index large: raise RECALL_TIME_BUDGET_MS if this persists"
        return Check(name, "warn", f'"{prompt}": {decision}', fix)
    return Check(name, "ok", f'"{prompt}": {decision}', facts={"status": status})
