"""`serve` and `demo`: refuse what cannot work before any work, build in the foreground where
nothing is served yet (the demo, `index`), then hand the engine to uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from urllib.parse import urlsplit

import uvicorn

from .build_progress import build_progress
from .config import Settings
from .demo.mode import demo_settings, start_demo_trilium, try_it
from .engine_address import is_loopback_name
from .errors import RecallError
from .server.app import create_app, refuse_unbindable, server_options
from .server.auth import check_base_url
from .server.engine import Engine

log = logging.getLogger("trilium_recall")
TERMINATED = 128 + signal.SIGTERM  # the exit code a shell reports for a process SIGTERM ended


def serve(settings: Settings) -> int:
    if not settings.instances:
        log.info(
            "no Trilium configured (TRILIUM_URL, TRILIUM_ETAPI_TOKEN): serving the demo notebook"
        )
        return demo(settings)
    return run_server(settings)


def demo(base: Settings) -> int:
    refuse_to_serve(base)  # before a minute of indexing, not after
    trilium = start_demo_trilium()
    try:
        settings = demo_settings(base, trilium)
        build_with_progress(settings)
        return run_server(settings, try_it(settings))
    finally:
        trilium.stop()


def run_server(settings: Settings, to_try: list[str] | None = None) -> int:
    """Serve until stopped; `to_try`: the demo's commands, printed once the address is known
    to be free (a port taken while the demo was indexed is said before them, not after)."""
    refuse_to_serve(settings)
    if to_try:
        print("\nThe demo notebook is indexed. Try:\n")
        print("\n".join(f"  {line}" for line in to_try) + "\n")
    if settings.login_password is None:
        log.warning(
            "RECALL_LOGIN_PASSWORD is not set: /recall and /mcp are open to this machine only"
        )
    uvicorn.run(create_app(Engine(settings)), **server_options(settings))
    return 0


def refuse_to_serve(settings: Settings) -> None:
    """One line before any work when serving cannot work: no password on an open address, an
    OAuth issuer the SDK refuses, or no listening on the address (`refuse_unbindable`)."""
    if settings.login_password is None and not settings.is_loopback:
        raise RecallError(
            f"RECALL_LOGIN_PASSWORD is not set: refusing to serve on {settings.host}; "
            "set a password or bind to 127.0.0.1"
        )
    if settings.login_password is None and (proxied := proxy_settings(settings)):
        # A proxy's requests come from this machine: "this machine only" would be everyone's.
        raise RecallError(
            f"RECALL_LOGIN_PASSWORD is not set: refusing to serve behind a proxy "
            f"({' and '.join(proxied)} set); set a password"
        )
    if settings.base_url:
        check_base_url(settings.base_url)
    refuse_unbindable(settings)


def proxy_settings(settings: Settings) -> list[str]:
    """The variables that say requests reach the engine through a proxy or by another name
    than this machine's own."""
    base = urlsplit(settings.base_url or "").hostname
    hosts = [urlsplit(f"//{host}").hostname for host in settings.allowed_hosts]
    given = {
        "RECALL_BASE_URL": base is not None and not is_loopback_name(base),
        "RECALL_TRUSTED_PROXIES": bool(settings.trusted_proxies),
        "RECALL_ALLOWED_HOSTS": any(not is_loopback_name(host or "") for host in hosts),
    }
    return [name for name, value in given.items() if value]


def build_with_progress(settings: Settings) -> None:
    """A full build of each instance through the engine `serve` runs, its progress on stderr."""

    async def build() -> None:
        engine = Engine(settings)
        try:
            with build_progress(list(settings.instances)) as show:
                reports = await engine.build(show)
            for name, report in reports.items():
                if not isinstance(report, RecallError):
                    print(f"{name}: {report.indexed} notes (re)indexed", file=sys.stderr)
        finally:
            await engine.stop()
        failed = {name: r for name, r in reports.items() if isinstance(r, RecallError)}
        if len(reports) == 1 and failed:
            raise next(iter(failed.values()))
        if failed:
            said = "; ".join(f"{name}: {error}" for name, error in failed.items())
            raise RecallError(f"{len(failed)} of {len(reports)} instances failed to build: {said}")

    with _terminate_as_exit():
        asyncio.run(build())


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM ends the build as Ctrl-C does: the engine stops and the index keeps what was
    built. Needed, not only tidy: as a container's first process (`docker stop`), a signal
    with no handler is ignored, and the stop waited out its 10 s for a SIGKILL."""

    def exit_terminated(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(TERMINATED)

    try:
        before = signal.signal(signal.SIGTERM, exit_terminated)
    except ValueError:  # not the main thread (an embedding test): nothing to take over
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
