"""What a recall is asked and what it answers, data only: the request every door hands on,
the result with its status (sent, silent, skipped, starting, building, late) and passages, and
the one rendering of them that the hook context, the MCP tool and the CLI all send.

The server and the command line read these without importing the pipeline (`recall`).
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from ..textclean import clip, valid_utf8
from .candidates import SearchTrace, why_nothing_passed_was_sent

HOOK_LEAD = "Passages from the user's Trilium notes that match this prompt:"
# Claude Code passes a hook's context to the model whole up to 10,000 characters (UTF-16 units,
# as JavaScript counts); a longer one is saved to a file and the model reads a 2 KB preview
# and the file's path instead (measured with the CLI 2.1.197: 9,990 characters arrived whole,
# 10,010 did not). Every door sends the same passages, so all are kept within it.
CONTEXT_CHARS = 10_000

Status = Literal["sent", "silent", "skipped", "starting", "building", "late"]
# What the model reads when nothing is sent (MCP tool, CLI); the hook adds nothing instead.
STATUS_TEXT: dict[Status, str] = {
    "silent": "No matching notes.",
    "skipped": "No matching notes.",
    "starting": "The notes index is still being built; try again in a minute.",
    "building": "The notes index is still being built; try again in a minute.",
    # Not the query's length (search reads only its start): a busy machine, or a first build
    # taking the cores.
    "late": "The search ran past its time budget (the machine is busy); try again shortly.",
}
# Added to the MCP tool's and the CLI's text for an answer from a part-built index.
PARTIAL_NOTE = "(The notes index is still being built: this answer comes from part of the notes.)"


@dataclass(frozen=True)
class RecallRequest:
    """One prompt to answer, as every door hands it on: who asks (`session_id`: notes already
    sent to it are not sent again), which notes (`instance`, None for all), how many passages
    at most (`limit`, None for RECALL_MAX_PASSAGES), whether the skip rules apply (prompts
    from the hook; `from_subagent` when Claude Code fired it inside a subagent), and the
    asker's local date (`today`: "yesterday" counts from it; None for the engine's own, which
    in a UTC container is a day ahead of an American evening), and how long it waits."""

    prompt: str
    session_id: str | None = None
    instance: str | None = None
    limit: int | None = None
    use_skip_rules: bool = True
    from_subagent: bool = False
    today: datetime.date | None = None
    # How long the asker waits for the answer, when less than RECALL_TIME_BUDGET_MS: a hook's
    # prompt (claude_settings.HOOK_ANSWER_S). Past it, the answer is "late" and nothing is sent.
    waits_s: float | None = None

    def __post_init__(self) -> None:
        # Every door's prompt made searchable here, once: a lone surrogate (a Latin-1 byte in
        # a shell's argv, half an emoji in JSON) fails the embedder's encoder, and SQLite and
        # FTS5 stop at a NUL.
        object.__setattr__(self, "prompt", valid_utf8(self.prompt).replace("\x00", " "))

    def budget_s(self, configured_s: float) -> float:
        """How long answering may take: the configured budget, or less when the asker waits
        less (nobody reads a later answer)."""
        return configured_s if self.waits_s is None else min(configured_s, self.waits_s)


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
    def key(self) -> tuple[str, str]:
        return self.instance, self.note_id

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class RecallResult:
    status: Status
    passages: list[Passage] = field(default_factory=list)
    skipped: str | None = None  # the skip rule, or "starting"
    took_ms: float = 0.0
    trace: SearchTrace | None = None
    partial: bool = False  # answered while the first build runs: from part of the notes
    # Why nothing could be searched, when more is known than the status says (a Trilium the
    # first build cannot read); None: the status's own text.
    waiting_for: str | None = None
    # A partial answer's notes it could not search and why (a first build that failed); None:
    # they are still being built (PARTIAL_NOTE).
    unsearched: str | None = None

    @property
    def context(self) -> str:
        """What the hook adds to the prompt: the passages under a lead line, or nothing."""
        return hook_context(self.passages)

    @property
    def text(self) -> str:
        """What the MCP tool and the CLI answer: the passages, or what the status means."""
        text = render_passages(self.passages) if self.passages else self.status_text
        if not self.partial:
            return text
        return f"{text}\n\n" + (f"({self.unsearched})" if self.unsearched else PARTIAL_NOTE)

    @property
    def status_text(self) -> str:
        """What the status means for the caller (the 503's reason while nothing is indexed)."""
        return self.waiting_for or STATUS_TEXT[self.status]

    def to_json(self) -> dict[str, object]:
        answer: dict[str, object] = {
            "passages": [p.to_json() for p in self.passages],
            "context": self.context,
            "skipped": self.skipped,
            "took_ms": round(self.took_ms, 1),
            "status": self.status,
            "partial": self.partial,
        }
        if self.status == "late":
            answer["timed_out"] = True
        if self.unsearched:
            answer["unsearched"] = self.unsearched
        return answer


# A title as a passage shows it, twice (its heading and its path): a web clip's 1,000-character
# title took 2,389 characters of context over a 33-character body. The heading trail is cut
# the same way (notes/sections.py, 200 a heading).
TITLE_CHARS = 200


def render_passages(passages: list[Passage]) -> str:
    """Plain facts with their sources, ready for a model's context: one block per passage."""
    blocks = []
    for passage in passages:
        title = clip(passage.title, TITLE_CHARS)
        path = f"{passage.path} › {title}" if passage.path else title
        lines = [f"## {title}", f"Path: {path}  (area: {passage.area})"]
        if passage.heading and passage.heading != passage.title:
            lines.append(f"Section: {passage.heading}")
        lines += ["", passage.text]
        if passage.url:
            lines += ["", f"Source: {passage.url}"]
        blocks.append("\n".join(lines))
    return "\n\n---\n\n".join(blocks)


def hook_context(passages: list[Passage]) -> str:
    """The passages under a lead line, as the hook adds them to a prompt (nothing for none)."""
    return f"{HOOK_LEAD}\n\n{render_passages(passages)}" if passages else ""


def within_context(choices: list[tuple[Passage, Passage]]) -> list[Passage]:
    """Of each passage's two forms (with its second section, and its first alone), the ones
    whose hook context fits CONTEXT_CHARS. What goes first is what matters least: the second
    sections of the passages past the third (the answer's usual size), those passages, then
    the first three's second sections from the third back, then the second and third; the
    best one always goes."""
    sent = [full for full, _ in choices]
    steps: list[tuple[str, int]] = [("second", i) for i in reversed(range(3, len(sent)))]
    steps += [("passage", i) for i in reversed(range(3, len(sent)))]
    steps += [("second", i) for i in reversed(range(min(3, len(sent))))]
    steps += [("passage", i) for i in reversed(range(1, min(3, len(sent))))]
    for step, i in steps:
        if _units(hook_context(sent)) <= CONTEXT_CHARS:
            break
        if step == "second":
            sent[i] = choices[i][1]
        else:
            del sent[i]
    return sent


def _units(text: str) -> int:
    """Its length as JavaScript counts it: a character outside the BMP is two."""
    return len(text.encode("utf-16-le")) // 2


def building(result: RecallResult, indexed: bool) -> RecallResult:
    """An answer during the first build: from the notes indexed so far, flagged partial, or
    status "building" for silence while nothing is indexed yet."""
    if indexed:
        return replace(result, partial=True)
    return replace(result, status="building") if result.status == "silent" else result


def with_failed_builds(
    result: RecallResult, failed: dict[str, str], retry_s: float | None
) -> RecallResult:
    """`result` naming the first builds that failed (instance → error) and when they are tried
    again (None: nothing here tries, as in a command that only reads the index): as why nothing
    could be searched, or, for an answer from the other instances' notes, as what it lacks.
    "Still being built" would send the user to wait on a Trilium that is down."""
    why = "; ".join(
        f'the first build of "{name}" failed: {error}' for name, error in failed.items()
    )
    again = (
        "`trilium-recall index` (or `serve`) builds it once what failed is mended."
        if retry_s is None
        else f"It is tried again every {retry_s:g} s."
    )
    if result.status == "building":
        return replace(result, waiting_for=f"No notes indexed yet: {why}. {again}")
    return replace(result, unsearched=f"Not all notes were searched: {why}. {again}")


def silence_reason(result: RecallResult, budget_ms: float) -> str | None:
    """Why a call sent nothing, in the words the explain view uses; None when it sent something."""
    if result.status == "sent":
        return None
    if result.status == "late":
        return f"answered too late (budget {budget_ms:.0f} ms)"
    if result.status in ("starting", "building"):
        return result.waiting_for or f"the index is still {result.status}"
    if result.status == "skipped":
        return f"skipped: {result.skipped}"
    trace = result.trace
    if trace is None or not trace.candidates:
        return "no note matched"
    if trace.verdict is not None and not trace.verdict.about_notes:
        return trace.verdict.reason
    return why_nothing_passed_was_sent(trace.candidates)
