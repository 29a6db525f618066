"""Demo mode: the built-in notebook served by the fake Trilium on 127.0.0.1, indexed for real."""

from __future__ import annotations

import shlex
from pathlib import Path

from pydantic import SecretStr

from ..config import Instance, Settings
from .standin import FakeTrilium

NOTEBOOK_DIR = Path(__file__).parent / "notebook"
DEMO_INSTANCE = "demo"
DEMO_TOKEN = "demoToken_localOnly"
# The prompt the printed `explain` example shows: the demo notebook answers it (a test keeps it
# so), so a newcomer sees the steps of a passage found. About the user's own server: "which port
# does wireguard listen on" asks for general knowledge (the generic bank holds its twin), and the
# gate rightly leaves that to the model.
EXPLAINED_PROMPT = "which port does my wireguard server listen on"
DEMO_DIR = "demo"  # the demo's index lives in this folder of the data dir, apart from a real one


def start_demo_trilium(port: int = 0) -> FakeTrilium:
    """A fake Trilium holding the built-in notebook, listening on 127.0.0.1."""
    trilium = FakeTrilium(token=DEMO_TOKEN, port=port)
    trilium.load_notebook_dir(NOTEBOOK_DIR)
    trilium.start()
    return trilium


def demo_settings(settings: Settings, trilium: FakeTrilium) -> Settings:
    """The user's settings pointed at the demo notebook, with an index file of its own."""
    instance = Instance(DEMO_INSTANCE, trilium.url(), SecretStr(DEMO_TOKEN))
    return demo_index(settings).model_copy(update={"instances": {DEMO_INSTANCE: instance}})


def demo_index(settings: Settings) -> Settings:
    """The user's settings with the demo's data dir: its index file, apart from a real one."""
    return settings.model_copy(update={"data_dir": settings.data_dir / DEMO_DIR})


def try_it(settings: Settings) -> list[str]:
    """Three commands a newcomer can paste to see recall work."""
    base = settings.bound_url  # the demo just started here, whatever RECALL_URL names
    secret = "$RECALL_LOGIN_PASSWORD"  # the value is never printed: the shell fills it in
    if settings.password_file is not None:
        secret = f"$(cat {shlex.quote(settings.password_file)})"
    bearer = f'"Authorization: Bearer {secret}"'
    password = settings.login_password is not None
    return [
        f"curl -s {base}/recall"
        + (f" -H {bearer}" if password else "")
        + " -H 'Content-Type: application/json' "
        '-d \'{"prompt": "how do I restore my restic backup?"}\'',
        f'trilium-recall explain --demo "{EXPLAINED_PROMPT}"',
        f"claude mcp add --transport http trilium-recall {base}/mcp"
        + (f" --header {bearer}" if password else ""),
    ]
