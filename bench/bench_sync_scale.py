"""Sync at scale (issue 26, point 5): a stand-in Trilium holding `--notes` notes (100,000 by
default), and what the minute tick and the full comparison cost on it.

    python bench/bench_sync_scale.py [--notes 100000] [--version 0.105] [--changed 100]

Measured, each as requests made and seconds taken: the first build; a quiet tick and a full
comparison when nothing changed; a tick after `--changed` notes were edited (and whether all of
them are then searchable); a subtree of `notes / 20` notes moved under another folder, then the
ticks and the full comparison that bring the new paths in. Meanwhile a search thread measures
the search core's latency (keyword hits, meaning hits, the sections' rows) on a reader
connection of its own, as the engine's search threads do, idle and during a full comparison.

The notebook is bench_versions' synthetic one (made-up words, old dates) in 20 folders, so one
folder is the moved subtree. Passages are embedded by the tests' HashEmbedder: these figures are
requests and sync time, not the model (the model's cost per note is bench/build_bench.py's).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_versions import counted, synthetic_notebook
from report import load_average, machine

from conftest import HashEmbedder
from standin_faults import FaultyTrilium
from test_sync import TOKEN, Harness
from trilium_recall.index.store import Store
from trilium_recall.search.rankings import keyword_hits

FOLDERS = 20
PROMPTS = ("kalo mistova renqui", "dorpel tunbra xeka", "stova quidor brapel", "miren sto")


class SearchProbe:
    """Search-core latencies on a reader connection of its own, in a thread, until stopped."""

    def __init__(self, harness: Harness) -> None:
        self.store = Store(harness.settings.db_path, harness.store.vectors)
        self.embedder = harness.embedder
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        vectors = [self.embedder.query(p) for p in PROMPTS]
        n = 0
        while not self._stop.is_set():
            prompt, vector = PROMPTS[n % len(PROMPTS)], vectors[n % len(PROMPTS)]
            started = time.perf_counter()
            hits = keyword_hits(self.store, prompt)
            near = self.store.vectors.search(vector, 40, self.store.exact_vectors)
            self.store.section_hits([i for i, _ in hits.hits] + [m.section_id for m in near.hits])
            self.samples.append((time.perf_counter() - started) * 1000)
            n += 1
            self._stop.wait(0.02)  # a prompt every ~20 ms: a busy user, not a load test

    def __enter__(self) -> SearchProbe:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.store.close()


def percentiles(samples: list[float]) -> str:
    if len(samples) < 2:
        return "–"
    cuts = statistics.quantiles(samples, n=100)
    return f"p50 {cuts[49]:.1f} / p99 {cuts[98]:.1f} ms ({len(samples)} searches)"


async def measure(fake: FaultyTrilium, h: Harness, changed: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []

    def row(name: str, requests: int, seconds: float, extra: str = "") -> None:
        rows.append((name, f"{requests} requests, {seconds:.2f} s{extra}"))

    requests, seconds, _ = await counted(fake, h.syncer.full)
    row(f"first build ({len(h.indexed())} notes indexed)", requests, seconds)
    for name, run in (
        ("quiet tick", h.syncer.tick),
        ("full comparison, nothing changed", h.syncer.full),
    ):
        results = [await counted(fake, run) for _ in range(3)]
        median = statistics.median(s for _, s, _ in results)
        row(name + " (median of 3)", max(r for r, _, _ in results), median)

    edited = [f"benchNote{n:05d}" for n in range(0, changed * 37, 37)]
    for note_id in edited:
        fake.set_content(note_id, f"<p>Edited note {note_id} zygomorphic.</p>")
    requests, seconds, _ = await counted(fake, h.syncer.tick)
    found = sum(1 for note_id in edited if _holds(h, note_id, "zygomorphic"))
    row(
        f"tick after {changed} notes changed",
        requests,
        seconds,
        f"; {found} of {changed} searchable",
    )

    moved = [n for n in fake.note_ids() if n.startswith("benchNote") and int(n[9:]) % FOLDERS == 1]
    fake.move("benchDir0001", "root", "benchDir0000")
    requests, seconds, _ = await counted(fake, h.syncer.tick)
    row(f"tick after a subtree of {len(moved)} notes moved", requests, seconds)
    with SearchProbe(h) as during:
        requests, seconds, _ = await counted(fake, h.syncer.full)
    sample = moved[len(moved) // 2]
    paths = h.store.db.execute("SELECT paths FROM notes WHERE note_id = ?", (sample,)).fetchone()
    moved_in = "Folder 0" in str(paths[0]) if paths else False
    row("full comparison after the move", requests, seconds, f"; new path seen: {moved_in}")
    with SearchProbe(h) as idle:
        await asyncio.sleep(max(5.0, seconds))
    rows.append(("search core, idle", percentiles(idle.samples)))
    rows.append(("search core, during that full comparison", percentiles(during.samples)))
    return rows


def _holds(h: Harness, note_id: str, word: str) -> bool:
    query = "SELECT count(*) FROM sections s JOIN sections_fts f ON f.rowid = s.id "
    query += "WHERE s.note_id = ? AND sections_fts MATCH ?"
    return bool(h.store.db.execute(query, (note_id, word)).fetchone()[0])


async def run(args: argparse.Namespace, tmp: Path) -> list[tuple[str, str]]:
    notebook = tmp / "notebook"
    notebook.mkdir()
    synthetic_notebook(notebook, args.notes, folders=FOLDERS)
    fake = FaultyTrilium(token=TOKEN, version=args.version)
    fake.load_notebook_dir(notebook)
    fake.start()
    work = tmp / "index"
    work.mkdir(mode=0o700)
    h = Harness(fake, work, HashEmbedder())
    try:
        return await measure(fake, h, args.changed)
    finally:
        await h.close()
        fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--version", default="0.105", choices=("0.93", "0.105"))
    parser.add_argument("--changed", type=int, default=100)
    args = parser.parse_args()
    load = load_average()[0]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o700)  # the index holds notes
        rows = asyncio.run(run(args, Path(tmp)))
    print(machine())
    print(f"load average (1 min) before / after: {load:.2f} / {load_average()[0]:.2f}")
    took = time.perf_counter() - started
    print(f"stand-in as Trilium {args.version}, {args.notes} notes; whole run {took:.0f} s\n")
    print("| step | cost |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
