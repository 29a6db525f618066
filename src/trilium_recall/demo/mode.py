"""Demo mode: the built-in notebook served by the fake Trilium on 127.0.0.1, indexed for real."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from ..config import Instance, Settings
from .standin import FakeTrilium

NOTEBOOK_DIR = Path(__file__).parent / "notebook"
DEMO_INSTANCE = "demo"
DEMO_TOKEN = "demoToken_localOnly"


def start_demo_trilium(port: int = 0) -> FakeTrilium:
    """A fake Trilium holding the built-in notebook, listening on 127.0.0.1."""
    trilium = FakeTrilium(token=DEMO_TOKEN, port=port)
    trilium.load_notebook_dir(NOTEBOOK_DIR)
    trilium.start()
    return trilium


def demo_settings(settings: Settings, trilium: FakeTrilium) -> Settings:
    """The user's settings pointed at the demo notebook, with an index file of its own."""
    instance = Instance(DEMO_INSTANCE, trilium.url(), SecretStr(DEMO_TOKEN))
    return settings.model_copy(
        update={"instances": {DEMO_INSTANCE: instance}, "data_dir": settings.data_dir / "demo"}
    )


def try_it(settings: Settings) -> list[str]:
    """Three commands a newcomer can paste to see recall work."""
    base = f"http://{settings.host}:{settings.port}"
    auth = ' -H "Authorization: Bearer $RECALL_LOGIN_PASSWORD"' if settings.login_password else ""
    return [
        f"curl -s {base}/recall{auth} -H 'Content-Type: application/json' "
        '-d \'{"prompt": "how do I restore my restic backup?"}\'',
        'trilium-recall explain --demo "which port does wireguard listen on"',
        f"claude mcp add --transport http trilium-recall {base}/mcp",
    ]
