"""Answer a prompt: skip rules → search → session dedupe → at most N passages + context text.

The one pipeline behind POST /recall, the MCP tool, `trilium-recall search/explain` and eval.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from .config import Settings
from .embed import Embedder
from .errors import UnknownInstance
from .gate import GateThresholds
from .generic import GenericPrompts
from .search import SearchTrace, excerpt, search
from .skip import triage
from .store import Store


@dataclass(frozen=True)
class Passage:
    instance: str
    note_id: str
    title: str
    path: str
    area: str
    heading: str
    text: str
    score: float
    url: str

    @property
    def location(self) -> str:
        """Breadcrumb and title: "Homelab › Backups (restic)"."""
        return f"{self.path} › {self.title}" if self.path else self.title

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class RecallResult:
    passages: list[Passage]
    context: str
    skipped: str | None
    took_ms: float
    trace: SearchTrace | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "passages": [p.to_json() for p in self.passages],
            "context": self.context,
            "skipped": self.skipped,
            "took_ms": round(self.took_ms, 1),
        }


def recall(
    store: Store,
    embedder: Embedder,
    generic: GenericPrompts,
    settings: Settings,
    prompt: str,
    *,
    session_id: str | None = None,
    instance: str | None = None,
    limit: int | None = None,
    use_skip_rules: bool = True,
    from_subagent: bool = False,
    deadline: float | None = None,
    gate: GateThresholds | None = None,
) -> RecallResult:
    """Steps: check instance → skip rules (and peel harness text off the prompt) → search
    (minus notes this session already got) → passages → mark them sent, unless the deadline
    (time.monotonic) has passed."""
    started = time.perf_counter()
    if deadline is not None and time.monotonic() > deadline:  # queued behind a slow search
        return RecallResult([], "", None, _since(started))
    if instance is not None and instance not in settings.instances:
        raise UnknownInstance(f"unknown instance {instance!r}")
    if use_skip_rules:
        decided = triage(prompt, from_subagent=from_subagent)
        if decided.skip is not None:
            return RecallResult([], "", decided.skip, _since(started))
        prompt = decided.text
    ttl = settings.session_ttl_hours * 3600
    sent = frozenset(store.already_sent(session_id, ttl)) if session_id else frozenset()
    result = search(
        store,
        embedder,
        generic,
        settings,
        prompt,
        limit=limit or settings.max_passages,
        instance=instance,
        exclude=sent,
        gate=gate,
    )
    if deadline is not None and time.monotonic() > deadline:
        return RecallResult([], "", None, _since(started), result.trace)
    spans = store.snippet_spans([c.snippet_id for c in result.passages if c.snippet_id])
    passages = [
        Passage(
            instance=c.hit.instance,
            note_id=c.hit.note_id,
            title=c.hit.title,
            path=c.hit.path,
            area=c.hit.area,
            heading=c.hit.heading,
            text=excerpt(c.hit.text, around=spans.get(c.snippet_id or -1)),
            score=round(c.score, 5),
            url=settings.instances[c.hit.instance].note_url(c.hit.note_id),
        )
        for c in result.passages
    ]
    if session_id and passages:
        store.mark_sent(session_id, [(p.instance, p.note_id) for p in passages], ttl)
    return RecallResult(passages, format_context(passages), None, _since(started), result.trace)


def format_context(passages: list[Passage]) -> str:
    """Plain facts with their sources, ready to add to a model's context."""
    if not passages:
        return ""
    blocks = ["Passages from the user's Trilium notes that match this prompt:"]
    for number, passage in enumerate(passages, start=1):
        heading = passage.heading if passage.heading != passage.title else ""
        lines = [f"[{number}] {passage.location} ({passage.area})"]
        if heading:
            lines.append(f"Section: {heading}")
        lines.append(passage.text)
        if passage.url:
            lines.append(f"Source: {passage.url}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
