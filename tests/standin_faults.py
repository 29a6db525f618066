"""The stand-in Trilium with fault switches and a request log, for tests and benchmarks.

The product's stand-in (`trilium_recall.demo.standin`) serves only what the demo and its command
line need; the edits a test makes live in tests/standin_edits.py, and the faults a reliability
test injects live here, around its `respond`.
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

from standin_edits import EditableTrilium
from trilium_recall.demo.standin.etapi import JSON_TYPE, Reply, error_reply
from trilium_recall.demo.standin.newest import APP_INFO

# A body cut off mid-object: what a proxy dropping the connection halfway leaves behind.
TRUNCATED_JSON = b'{"results": [{"noteId": "abc", '


class FaultyTrilium(EditableTrilium):
    """An EditableTrilium whose answers a test can slow down, fail, break or rewrite as it serves.

    Every request is logged in `requests` as (method, target) before any fault applies.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.delay: float = 0.0  # seconds every answer waits (stop() drops those still waiting)
        self.fail_status: int | None = None  # every request answers this error
        self.malformed: bool = False  # every request answers TRUNCATED_JSON
        self.path_faults: dict[str, Reply] = {}  # this reply for this path, authenticated or not
        self.app_version = str(APP_INFO[self.version]["appVersion"])  # app-info's appVersion
        self.requests: list[tuple[str, str]] = []
        self.holding = 0  # requests waiting out `delay` right now
        self.contents_open = threading.Event()  # cleared: content reads wait (a build held)
        self.contents_open.set()
        self._blobless: set[str] = set()
        self._log_lock = threading.Lock()
        self._stopping = threading.Event()

    def start(self) -> str:
        self._stopping.clear()
        return super().start()

    def stop(self) -> None:
        self._stopping.set()  # requests still sleeping in `delay` are dropped unanswered
        super().stop()

    def drop_blob_id(self, note_id: str) -> None:
        """The note is listed without its blobId (as an ETAPI answer missing a field)."""
        self._blobless.add(note_id)

    def respond(self, method: str, target: str, authorization: str | None) -> Reply | None:
        with self._log_lock:
            self.requests.append((method, target))
        if self.delay and self._held(self.delay):
            return None
        if target.endswith("/content") and not self._contents_wait():
            return None
        if self.fail_status is not None:
            return error_reply(self.fail_status, "FAKE_FAILURE", "Injected failure.")
        if self.malformed:
            return Reply(200, TRUNCATED_JSON)
        path = unquote(urlsplit(target).path)
        if path in self.path_faults:
            return self.path_faults[path]
        reply = super().respond(method, target, authorization)
        return self._without_blob_ids(reply) if reply and self._blobless else reply

    def _held(self, seconds: float) -> bool:
        """Wait `seconds` before answering; True when stop() came first (drop the request)."""
        with self._log_lock:
            self.holding += 1
        try:
            return self._stopping.wait(seconds)
        finally:
            with self._log_lock:
                self.holding -= 1

    def _contents_wait(self) -> bool:
        """Wait until content reads are open; False when stop() came first."""
        while not self.contents_open.wait(0.05):
            if self._stopping.is_set():
                return False
        return True

    def _app_info(self) -> dict[str, Any]:
        return {**super()._app_info(), "appVersion": self.app_version}

    def _without_blob_ids(self, reply: Reply) -> Reply:
        """The reply with blobId left out of every note record in `_blobless`."""
        if reply.status != 200 or reply.content_type != JSON_TYPE:
            return reply
        body = json.loads(reply.body)
        records = body.get("results", [body]) if isinstance(body, dict) else []
        for record in records:
            if isinstance(record, dict) and record.get("noteId") in self._blobless:
                record.pop("blobId", None)
        return Reply(reply.status, json.dumps(body).encode(), reply.content_type)
