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
from ..index import sent_marks
from ..index.embed import Embedder
from ..index.store import Store
from ..index.transactions import BUSY_TIMEOUT_MS
from .answers import Passage, RecallRequest, RecallResult, Status, within_context
from .candidates import Candidate, SearchResult, SecondSection
from .excerpts import passage_text
from .gate import GateThresholds
from .hybrid import search
from .null_bank import GenericPrompts
from .triage import triage

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
    if instance is not None:
        instance = instance.lower()  # RECALL_INSTANCES=Work names the instance "work"
        if instance not in settings.instances:
            known = ", ".join(settings.instances) or "none"
            raise UnknownInstance(f"unknown instance {request.instance!r} (known: {known})")
    if request.use_skip_rules:
        decided = triage(prompt, from_subagent=request.from_subagent)
        if decided.skip is not None:
            return RecallResult("skipped", skipped=decided.skip, took_ms=_since(started))
        prompt = decided.text
    ttl = settings.session_ttl_hours * 3600
    sent = frozenset(sent_marks.already_sent(store, session_id, ttl)) if session_id else frozenset()
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
    if result.trace.searched_as is None and prompt != request.prompt.strip():
        result.trace.searched_as = prompt  # harness text or an acknowledgement peeled off
    if deadline is not None and time.monotonic() > deadline:
        return RecallResult("late", took_ms=_since(started), trace=result.trace)
    passages, result.trace.second_sections = passages_of(result, settings)
    if session_id and passages:
        passages = _claim(store, session_id, passages, ttl, deadline)
    status: Status = "sent" if passages else "silent"
    return RecallResult(status, passages, took_ms=_since(started), trace=result.trace)


def passages_of(
    result: SearchResult, settings: Settings
) -> tuple[list[Passage], dict[tuple[str, str], SecondSection]]:
    """The passages of a search as every door sends them, and the second sections they hold:
    each note's excerpt, with its second section's where one goes along, all within the hook's
    context (`within_context`)."""
    choices = []
    for c in result.passages:
        alone = _passage(c, *passage_text(c, result.spans), settings)
        full = alone
        if second := result.seconds.get(c.key):
            full = _passage(c, *passage_text(c, result.spans, second.section), settings)
        choices.append((full, alone))
    passages = within_context(choices)
    # zip stops at the passages kept: those past the answer's size sent nothing.
    pairs = zip(passages, choices, strict=False)
    went = {(p.instance, p.note_id) for p, (_, alone) in pairs if p.text != alone.text}
    return passages, {key: s for key, s in result.seconds.items() if key in went}


def _passage(c: Candidate, heading: str, text: str, settings: Settings) -> Passage:
    hit = c.hit
    return Passage(
        instance=hit.instance,
        note_id=hit.note_id,
        title=hit.title,
        path=hit.path,
        area=hit.area,
        heading=heading,
        text=text,
        score=round(c.score, 5),
        url=settings.instances[hit.instance].note_url(hit.note_id),
    )


def _claim(
    store: Store, session_id: str, passages: list[Passage], ttl: float, deadline: float | None
) -> list[Passage]:
    """The passages no other request of this session has sent, marked sent. A write that
    cannot happen (another process holds the lock past the budget, a full disk) costs only
    that memory, never the answer (the note may come again in this session)."""
    wait_s = SESSION_WAIT_S if deadline is None else max(0.001, deadline - time.monotonic())
    try:
        fresh = set(sent_marks.claim(store, session_id, [p.key for p in passages], ttl, wait_s))
    except StoreError as exc:
        log.warning("%s: this answer is not remembered for session %.12s", exc, session_id)
        return passages
    return [p for p in passages if p.key in fresh]


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
