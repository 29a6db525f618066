"""Where a client on this machine finds the engine: the default address, and a URL as a user
gives it made the engine's base. Standard library only: the hook imports it on every prompt."""

from __future__ import annotations

DEFAULT_ENGINE_URL = "http://127.0.0.1:8765"


def engine_base(url: str) -> str:
    """The engine's URL as its clients use it, also when given as the http hook's own
    (`…/recall`): the URL a user sees in settings.json, and pastes."""
    return url.rstrip("/").removesuffix("/recall")
