"""What /health says, read from the engine's own state (Engine.health), and the form anyone may
read: the progress of a first build over all instances, and errors without Trilium addresses."""

from __future__ import annotations

import re
from typing import Any

from ..config import Settings
from ..sync.run_status import SyncStatus
from ..trilium.features import Features

# A URL as an error message quotes it, up to the punctuation that ends its sentence.
_URL = r"https?://[^\s\"'()<>]*[^\s\"'()<>.,:;]"


def instance_health(
    status: SyncStatus, saved: dict[str, object], counts: dict[str, object], settled: bool
) -> tuple[str, dict[str, object]]:
    """One instance's state ("degraded", "ok", "building" or "starting") and what /health
    shows of it, from its syncer's `status`, the index's `saved` state and `counts`; `settled`:
    its first build's recalibration and instructions are done as well."""
    complete = bool(saved.get("build_complete"))
    reading = status.running == "full" and status.total > 0
    state = (
        "degraded" if status.error else "ok" if complete and settled
        else "building" if reading or complete else "starting"
    )  # fmt: skip
    shown = {
        **counts,
        "last_sync": saved.get("last_sync"),
        "last_full": saved.get("last_full"),
        "trilium": Features.from_state(saved).to_json(),
        "error": status.error,
        "progress": {"done": status.done, "total": status.total},
        # The first build's notes indexed so far (kept from a run it resumes, then read), of
        # those to index, and the time left at this run's rate.
        "notes_done": status.done if not complete else None,
        "notes_total": status.total if not complete else None,
        "eta_seconds": status.eta_seconds() if not complete else None,
    }
    return state, shown


def overall_health(
    states: dict[str, tuple[str, dict[str, object]]], warmed: bool, damaged: str | None
) -> dict[str, object]:
    """/health over every instance's (state, what it shows): degraded when any is, or when a
    search found the index file damaged (an error of its own: no instance's sync failed)."""
    instances = {name: shown for name, (_, shown) in states.items()}
    found = [state for state, _ in states.values()] + ([] if warmed else ["starting"])
    if damaged:
        found.append("degraded")
    status = next((s for s in ("degraded", "starting", "building") if s in found), "ok")
    index = {"index_error": f"{damaged}: restart to move it aside and rebuild"} if damaged else {}
    return {"status": status, "instances": instances, **index, **build_progress(instances)}


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
