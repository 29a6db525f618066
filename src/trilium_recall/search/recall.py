"""Answer a prompt: skip rules → search → session dedupe → at most N passages.

The one pipeline behind POST /recall, the MCP tool, `trilium-recall search/explain` and eval.
Its result (`answers.py`, with the request and the one rendering every door sends) carries a
status (sent, silent, skipped, starting, building, late), so no edge re-decides what an empty
answer means.
"""

from __future__ import annotations

import logging
import time

from ..config import Settings
from ..errors import StoreError, UnknownInstance
from ..index.embed import Embedder
from ..index.store import Store
from ..index.transactions import BUSY_TIMEOUT_MS
from .answers import Passage, RecallRequest, RecallResult, Status
from .gate import GateThresholds
from .hybrid import search
from .null_bank import GenericPrompts
from .triage import triage

EXCERPT_CHARS = 1200

log = logging.getLogger(__name__)
# Without a deadline (CLI search), a locked index is waited for as long as any write waits.
SESSION_WAIT_S = BUSY_TIMEOUT_MS / 1000


def recall(
    store: Store,
    embedder: Embedder,
    generic: GenericPrompts,
    settings: Settings,
    request: RecallRequest,
    *,
    deadline: float | None = None,
    gate: GateThresholds | None = None,
) -> RecallResult:
    """Steps: check instance → skip rules (and peel harness text off the prompt) → search
    (minus notes this session already got) → passages → mark them sent, unless the deadline
    (time.monotonic) has passed."""
    started = time.perf_counter()
    if deadline is not None and time.monotonic() > deadline:  # queued behind a slow search
        return RecallResult("late", took_ms=_since(started))
    prompt, session_id, instance = request.prompt, request.session_id, request.instance
    if instance is not None and instance not in settings.instances:
        raise UnknownInstance(f"unknown instance {instance!r}")
    if request.use_skip_rules:
        decided = triage(prompt, from_subagent=request.from_subagent)
        if decided.skip is not None:
            return RecallResult("skipped", skipped=decided.skip, took_ms=_since(started))
        prompt = decided.text
    ttl = settings.session_ttl_hours * 3600
    sent = frozenset(store.already_sent(session_id, ttl)) if session_id else frozenset()
    result = search(
        store,
        embedder,
        generic,
        settings,
        prompt,
        limit=request.limit or settings.max_passages,
        instance=instance,
        exclude=sent,
        gate=gate,
        today=request.today,
    )
    if deadline is not None and time.monotonic() > deadline:
        return RecallResult("late", took_ms=_since(started), trace=result.trace)
    passages = [
        Passage(
            instance=c.hit.instance,
            note_id=c.hit.note_id,
            title=c.hit.title,
            path=c.hit.path,
            area=c.hit.area,
            heading=c.hit.heading,
            text=excerpt(c.hit.text, around=result.spans.get(c.snippet_id or -1)),
            score=round(c.score, 5),
            url=settings.instances[c.hit.instance].note_url(c.hit.note_id),
        )
        for c in result.passages
    ]
    if session_id and passages:
        _remember(store, session_id, passages, ttl, deadline)
    status: Status = "sent" if passages else "silent"
    return RecallResult(status, passages, took_ms=_since(started), trace=result.trace)


def _remember(
    store: Store, session_id: str, passages: list[Passage], ttl: float, deadline: float | None
) -> None:
    """Mark the passages sent in this session. A write that cannot happen (another process holds
    the lock past the budget, a full disk) costs only that memory, never the answer (the note
    may come again in this session)."""
    wait_s = SESSION_WAIT_S if deadline is None else max(0.001, deadline - time.monotonic())
    try:
        store.mark_sent(session_id, [(p.instance, p.note_id) for p in passages], ttl, wait_s)
    except StoreError as exc:
        log.warning("%s: this answer is not remembered for session %.12s", exc, session_id)


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def excerpt(text: str, limit: int = EXCERPT_CHARS, around: tuple[int, int] | None = None) -> str:
    """At most `limit` characters, cut at sentence or word boundaries; when `around` (a span of
    the text) is given, the excerpt keeps that span — the snippet that matched the prompt."""
    if len(text) <= limit:
        return text
    start = 0
    if around is not None and around[1] > limit:
        start = max(0, min(around[0] - limit // 4, len(text) - limit))
        boundary = max(text.rfind(". ", 0, start + 1), text.rfind("\n", 0, start + 1))
        if boundary >= 0 and start - boundary < limit // 4 and boundary + 1 + limit >= around[1]:
            start = boundary + 1  # a sentence's start, when the snippet still fits after it
    head = text[start : start + limit]
    if start + len(head) == len(text):  # the text's end: nothing to cut
        return ("… " if start > 0 else "") + head.strip()
    reach = around[1] - start if around is not None else 0  # a cut keeps the snippet whole
    cut = max(head.rfind(". "), head.rfind("\n"))
    if cut < limit // 2 or cut + 1 < reach:
        cut = head.rfind(" ")
    body = head[: cut + 1 if cut > 0 and cut + 1 >= reach else limit].strip()
    return ("… " if start > 0 else "") + body + " …"
