"""What /health says, read from the engine's own state (Engine.health), and the form anyone may
read: the progress of a first build over all instances, and errors without Trilium addresses."""

from __future__ import annotations

import re
from typing import Any

from ..config import Settings

# A URL as an error message quotes it, up to the punctuation that ends its sentence.
_URL = r"https?://[^\s\"'()<>]*[^\s\"'()<>.,:;]"


def build_progress(instances: dict[str, Any]) -> dict[str, object]:
    """The first build's progress over all instances (what the page's bar shows)."""
    unbuilt = [i for i in instances.values() if i["notes_total"] is not None]
    if not unbuilt:
        return {}
    etas = [i["eta_seconds"] for i in unbuilt]
    return {
        "notes_done": sum(i["notes_done"] for i in unbuilt),
        "notes_total": sum(i["notes_total"] for i in unbuilt),
        "eta_seconds": None if None in etas else max(etas),
    }


def public_health(health: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """/health as anyone may read it: an instance's error names the instance, not the address
    of a Trilium that may sit on a private network (the page and `status` show it whole). Any
    URL goes, in whatever form the error quotes it (httpx normalises a host's case)."""
    for name, state in health["instances"].items():
        if name in settings.instances and state.get("error"):
            error = re.sub(f"Trilium at {_URL}", f'Trilium "{name}"', state["error"])
            state["error"] = re.sub(_URL, f'the Trilium of "{name}"', error)
    return health
