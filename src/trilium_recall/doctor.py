"""`trilium-recall doctor`: is it working, and if not, what do I change?

What only a client can see is checked here: this shell's configuration, whether the engine
answers where this configuration says it is, whether it takes the password, and the Claude
Code hook in this machine's settings. The engine's own checks (server/checks.py: each Trilium,
the index, failed notes, the last hook request, a test recall) come from its `/ui/doctor`;
when it does not answer, the ones that need no engine run here, on the index file.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence

import httpx

from .config import Settings, load_settings
from .errors import ConfigError, StoreError
from .index.activity_log import recent
from .index.file import missing_index
from .index.store import Store
from .server.checks import (
    Check,
    Status,
    configuration,
    hook_installed,
    index_checks,
    index_state,
    last_hook_request,
    trilium_instance,
)
from .textclean import counted

TIMEOUT_S = 10.0  # the engine's checks ask each Trilium (5 s at most) and run one recall
HEALTH_PROBE_S = 8.0  # inside the Dockerfile HEALTHCHECK's --timeout, so the reason is printed
MARK = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


def run_doctor(env: Mapping[str, str], as_json: bool = False) -> int:
    """Print every check; 1 when any failed."""
    checks = diagnose(env)
    if as_json:
        print(json.dumps([c.to_json() for c in checks], indent=2, ensure_ascii=False))
    else:
        print("\n".join(render(checks)))
    return 1 if any(c.status == "fail" for c in checks) else 0


def diagnose(env: Mapping[str, str]) -> list[Check]:
    try:
        settings = load_settings(env, quiet=True)
    except ConfigError:
        # Every other check reads this configuration (where the engine is, its password, the
        # index): run on the defaults, they blamed a working engine and hook.
        skipped = Check("other checks", "warn", "not run: the configuration above is invalid")
        return [configuration(env), skipped]
    url = settings.engine_url
    health = engine_health(url)
    # With the engine up this shell is only its client; down, its Trilium is checked here.
    checks = [configuration(env, serves=health.status == "fail"), health]
    found = _without_engine(settings) if health.status == "fail" else _from_engine(url, settings)
    # The hook as this machine's settings have it, just before the last request it made.
    at = next((i for i, c in enumerate(found) if c.name == "last hook request"), len(found))
    return [*checks, *found[:at], hook_installed(url), *found[at:]]


HEALTH_STATUSES = ("ok", "starting", "building", "degraded")  # what the engine's /health says


def probe_health(env: Mapping[str, str], url: str | None = None) -> int:
    """`trilium-recall health`: 0 while the engine answers as itself, with any status: building
    is work under way, and degraded a Trilium down, which restarting the engine would not bring
    back. Otherwise 1, never 2: Docker reserves it, and a health check means "unhealthy"."""
    try:
        url = url or load_settings(env, quiet=True).bound_url  # not RECALL_URL: a proxy's
    except ConfigError as exc:
        print(f"trilium-recall: {exc}")
        return 1
    check = engine_health(url, HEALTH_PROBE_S)
    print(check.detail)
    return 1 if check.status == "fail" else 0


def engine_health(url: str, timeout: float = TIMEOUT_S) -> Check:
    fix = "start it: `trilium-recall serve`, or set RECALL_URL to where it runs"
    try:
        answer = httpx.get(f"{url}/health", timeout=timeout)
    except httpx.HTTPError as exc:
        reason = _reason(exc)
        return Check("engine", "fail", f"{url} does not answer ({reason})", fix, facts={"url": url})
    status = _health_status(answer)
    if status not in HEALTH_STATUSES:  # another server, or the engine's URL with a wrong path
        said = f"{url} answers, but not as trilium-recall (HTTP {answer.status_code} for /health)"
        return Check("engine", "fail", said, fix, facts={"url": url})
    mark: Status = "ok" if status in ("ok", "starting", "building") else "warn"
    return Check("engine", mark, f"{url} answers: {status}", facts={"url": url, "status": status})


def _health_status(answer: httpx.Response) -> str | None:
    """The status an engine's /health reports; None from anything else."""
    try:
        status = answer.json().get("status")
    except (ValueError, AttributeError):
        return None
    return status if isinstance(status, str) else None


def password_check(url: str, settings: Settings) -> tuple[Check, httpx.Response | None]:
    """The engine takes this password (its /ui/doctor answers); the answer for the caller."""
    secret = settings.login_password
    headers = {"Authorization": f"Bearer {secret.get_secret_value()}"} if secret else {}
    try:
        answer = httpx.get(f"{url}/ui/doctor", headers=headers, timeout=TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Check("password", "fail", f"{url}/ui/doctor: {_reason(exc)}"), None
    source = settings.password_source or "no password"
    if answer.status_code in (401, 403):
        fix = (
            "set RECALL_LOGIN_PASSWORD (or RECALL_PASSWORD_FILE) to the engine's password"
            if secret is None
            else f"{source} here differs from the engine's RECALL_LOGIN_PASSWORD"
        )
        return Check("password", "fail", f"refused ({source})", fix), None
    if answer.status_code == 429:
        fix = "wait a minute: too many wrong passwords from here"
        return Check("password", "fail", "refused for now (rate limit)", fix), None
    detail = f"accepted (from {source})" if secret else "not needed (engine on loopback)"
    return Check("password", "ok", detail), answer


def _from_engine(url: str, settings: Settings) -> list[Check]:
    password, answer = password_check(url, settings)
    if answer is None:
        return [password]
    try:
        if answer.status_code != 200:  # the engine's own reason: starting, index unavailable
            reason = answer.json()["error"]
            return [
                password,
                Check("engine checks", "fail", f"HTTP {answer.status_code}: {reason}"),
            ]
        found = [Check.from_json(c) for c in answer.json()["checks"]]
    except (ValueError, KeyError, TypeError) as exc:
        return [password, Check("engine checks", "fail", f"unreadable answer ({exc})")]
    return [password, *(c for c in found if c.name != "hook")]  # the hook: checked here


def _without_engine(settings: Settings) -> list[Check]:
    """With the engine down: each Trilium from this configuration, and the index file."""
    checks = []
    if settings.instances:
        instances = settings.instances.values()

        async def ask() -> list[Check]:
            return list(await asyncio.gather(*(trilium_instance(i) for i in instances)))

        checks += asyncio.run(ask())
    path = settings.db_path
    if (missing := missing_index(path)) is not None:
        if path.is_dir():  # no engine can make its file there
            return [*checks, Check("index", "fail", missing, "move it away, then start the engine")]
        return [*checks, Check("index", "warn", missing, "start the engine")]
    try:
        store = Store(path, read_only=True)
    except StoreError as exc:  # damaged, from another release, unreadable: a check that failed
        return [
            *checks,
            Check("index", "fail", str(exc), "start the engine: `trilium-recall serve`"),
        ]
    try:
        names = list(store.recorded_instances())
        checks += index_checks(index_state(store, names))
        entries = [e.to_json() for e in recent(store, limit=500)]
    finally:
        store.close()
    return [*checks, last_hook_request(entries, settings.activity_max_rows > 0)]


def _reason(exc: Exception) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "connection refused"
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def render(checks: Sequence[Check]) -> list[str]:
    width = max(len(c.name) for c in checks)
    out = []
    for check in checks:
        out.append(f"{MARK[check.status]}  {check.name:<{width}}  {check.detail}")
        indent = " " * (width + 8)
        out += [f"{indent}{line}" for line in check.lines]
        if check.fix and check.status != "ok":
            out.append(f"{indent}→ fix: {check.fix}")
    failed = sum(c.status == "fail" for c in checks)
    warned = sum(c.status == "warn" for c in checks)
    warnings = f", {counted(warned, 'warning')}" if warned else ""
    out.append(f"{counted(failed, 'check')} failed" if failed else f"all checks passed{warnings}")
    return out
