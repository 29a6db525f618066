"""Benchmark inputs: realistic prompts, the texts the build embeds and real Trilium exports.

The shared folder (real exports, the other-domain corpora) is `SHARED_DIR` or `shared`
beside the checkout, as for the tests and eval/. Synthetic 50k-250k notebooks: synth_notebook.py.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "tests")
)  # the request-counting stand-in
from standin_faults import FaultyTrilium
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin.export import SeedNote, read_export_zip, read_notebook_dir
from trilium_recall.notes.sections import Section, estimate_tokens, split_note
from trilium_recall.notes.snippets import split_snippets
from trilium_recall.sync.plan import length_sorted_batches

REPO = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("SHARED_DIR") or REPO.parent / "shared")
# Real Trilium exports: the developer guide and release notes, and Trilium's demo notebook.
EXPORTS = (SHARED_DIR / "trilium" / "devdocs.zip", SHARED_DIR / "trilium" / "demo.zip")
CORPORA_DIR = SHARED_DIR / "corpora"
EVAL_SETS = REPO / "eval" / "sets"
OTHER_DOMAINS = ("gnucash", "gimp", "handbook", "skycultures")  # ../shared/corpora/<name>/
PASSAGE_TOKENS = 250  # a long section: sections are capped near 350 tokens (notes/sections.py)

# ~30 prompts of the kind a developer types into Claude Code, most about the demo notebook.
PROMPTS = (
    "how do I restore my restic backup to a new disk?",
    "which port does wireguard listen on and how do I add a new peer",
    "what did we decide in the postmortem about booking-api connection exhaustion",
    "set up pgbouncer transaction pooling for the booking service",
    "how should I handle stripe webhook retries and idempotency keys",
    "autovacuum is not keeping up on our biggest postgres table, what settings do we use?",
    "what is the on-call runbook step when the database is at max connections",
    "write a helm upgrade command with a values override for staging",
    "why did we move background jobs from celery to dramatiq",
    "nginx reverse proxy config for a new service in the LXC container",
    "proxmox host pve1: how much RAM is left for another VM",
    "how do I cut a release, which tags and changelog steps",
    "git workflow: should I rebase or merge feature branches",
    "how do we publish the python package to the internal index",
    "show me the pg diagnostics query for long running transactions",
    "what shared_buffers and work_mem did we set on db-prod-1",
    "who is Priya Raman and what does she own",
    "kubectl command to see why a pod is in CrashLoopBackOff",
    "fix this TypeError: unsupported operand type(s) for +: 'int' and 'str' in my script",
    "refactor this function to use a dataclass instead of a dict",
    "what did I write in my journal about the architecture sync in October",
    "recipe for käsespätzle like my grandmother makes",
    "plan for the Valencia half marathon training week 6",
    "what is left to do for the 2025 tax return",
    "Kyoto trip in April: which temples did I want to see",
    "Lyon weekend in November, where are we staying",
    "how do I rotate the WireGuard keys on the old raspberry pi setup",
    "celery worker concurrency settings we used before it was retired",
    "add retries with exponential backoff to this httpx client",
    "explain the difference between a summary page and its raw source in the wiki",
)


# -- what the build embeds ---------------------------------------------------------------------


def demo_seeds() -> list[SeedNote]:
    return read_notebook_dir(NOTEBOOK_DIR, "root")


def export_seeds() -> list[SeedNote]:
    return [seed for path in EXPORTS for seed in read_export_zip(path, "root", ())]


def seed_sections(seeds: list[SeedNote]) -> Iterator[tuple[str, Section]]:
    """(note title, section) for every text note, split as the build splits it."""
    for seed in seeds:
        if isinstance(seed.content, str):
            for section in split_note(seed.title, seed.type, seed.mime, seed.content):
                yield seed.title, section


def snippet_texts(seeds: list[SeedNote]) -> list[str]:
    """The texts the build hands the embedder: every snippet of every section."""
    return [
        s.text for title, section in seed_sections(seeds) for s in split_snippets(title, section)
    ]


def sorted_batches(texts: list[str], size: int) -> list[list[str]]:
    """`texts` in batches of `size`, similar lengths together, as the build batches them."""
    return [[texts[i] for i in batch] for batch in length_sorted_batches(texts, size)]


def packed_texts(seeds: list[SeedNote], tokens: int = PASSAGE_TOKENS) -> list[str]:
    """Consecutive sections joined into ~`tokens`-token passages (the last one dropped if
    short): real prose of a fixed, long length for the raw embedder rate."""
    passages, current = [], ""
    for _, section in seed_sections(seeds):
        text = f"{section.heading}\n{section.text}"
        current = f"{current}\n\n{text}" if current else text
        if estimate_tokens(current) >= tokens:
            passages.append(current)
            current = ""
    return passages


def require_shared(*paths: Path) -> None:
    """Stop with one line naming what is absent and where it was looked for."""
    absent = [str(p) for p in paths if not p.exists()]
    if absent:
        sys.exit(
            f"bench: {', '.join(absent)} not found: set SHARED_DIR to the shared folder "
            "(default: `shared` beside the checkout)"
        )


def eval_prompts(seed: int = 26) -> tuple[str, ...]:
    """The answerable prompts of the seven eval corpora (eval/sets/*.json and
    ../shared/corpora/*/prompts.jsonl), shuffled by `seed` so consecutive ones come from
    different corpora: the text of a synthetic notebook comes from those corpora."""
    files = [CORPORA_DIR / name / "prompts.jsonl" for name in OTHER_DOMAINS]
    require_shared(*files)
    prompts = [
        case["prompt"]
        for name in ("notebook", "demo_zip", "devdocs")
        for case in json.loads((EVAL_SETS / f"{name}.json").read_text())["answerable"]
    ]
    for path in files:
        cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        prompts += [case["prompt"] for case in cases if case.get("expect")]
    order = np.random.default_rng(seed).permutation(len(prompts))
    return tuple(prompts[i] for i in order)


def export_trilium(token: str, exports: tuple[Path, ...] = EXPORTS) -> FaultyTrilium:
    """The fake Trilium holding the real exports, listening on 127.0.0.1."""
    require_shared(*exports)
    fake = FaultyTrilium(token=token)
    for path in exports:
        fake.load_export_zip(path)
    fake.start()
    return fake
