"""Sync against the stand-in as Trilium 0.93 and as 0.105 on a 5,000-note notebook: how many
minute ticks until each kind of change is searchable, and the requests a quiet tick and a full
comparison make.

    python bench/bench_versions.py [--notes 5000] [--ticks 3]

The notebook: the demo notebook, the notes tests/change_kinds.py changes, and synthetic notes
(two paragraphs of made-up words each, in 50 folders) up to `--notes`, loaded through a
notebook.json manifest so they carry old dates, as a long-kept notebook does. Passages are
embedded by the tests' HashEmbedder (bag of words): the numbers here are requests and ticks,
which do not depend on the model. Each change is made right after a full comparison; "full"
means no tick within `--ticks` saw it and the next full comparison did.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from report import load_average, machine

from change_kinds import KINDS, finds, note_row, seed
from conftest import HashEmbedder
from standin_faults import FaultyTrilium
from test_sync import TOKEN, Harness
from trilium_recall.demo.mode import NOTEBOOK_DIR

VERSIONS = ("0.93", "0.105")
FOLDERS = 50


def synthetic_notebook(
    directory: Path, count: int, seed_value: int = 25, folders: int = FOLDERS
) -> None:
    """`count` notes in `folders` folders, written as a notebook.json manifest."""
    rng = random.Random(seed_value)
    syllables = ["ka", "lo", "mi", "ren", "sto", "va", "qui", "dor", "pel", "tun", "bra", "xe"]

    def word() -> str:
        return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))

    def sentence() -> str:
        return " ".join(word() for _ in range(rng.randint(8, 16))).capitalize() + "."

    notes = [{"id": f"benchDir{f:04d}", "title": f"Folder {f}"} for f in range(folders)]
    for number in range(count - folders):
        name = f"n{number:05d}.html"
        paragraphs = "".join(f"<p>{sentence()} {sentence()}</p>" for _ in range(2))
        (directory / name).write_text(paragraphs, encoding="utf-8")
        notes.append({"id": f"benchNote{number:05d}", "title": f"{word()} {word()}",
                      "parent": f"benchDir{number % folders:04d}", "file": name})  # fmt: skip
    (directory / "notebook.json").write_text(json.dumps({"notes": notes}), encoding="utf-8")


def stand_in(version: str, notebook: Path) -> FaultyTrilium:
    fake = FaultyTrilium(token=TOKEN, version=version)
    fake.load_notebook_dir(NOTEBOOK_DIR)
    fake.load_notebook_dir(notebook)
    seed(fake)
    fake.start()
    return fake


async def counted(fake: FaultyTrilium, run) -> tuple[int, float, object]:
    """(requests, seconds, result) of one sync run."""
    before, started = len(fake.requests), time.perf_counter()
    result = await run()
    return len(fake.requests) - before, time.perf_counter() - started, result


async def measure(version: str, notebook: Path, ticks: int, work: Path) -> dict[str, object]:
    fake = stand_in(version, notebook)
    h = Harness(fake, work, HashEmbedder())
    try:
        out: dict[str, object] = {"notes": len(fake.note_ids())}
        out["build"] = await counted(fake, h.syncer.full)
        quiet_full = [await counted(fake, h.syncer.full) for _ in range(3)]
        quiet_tick = [await counted(fake, h.syncer.tick) for _ in range(5)]
        out["full requests"] = sorted({r for r, _, _ in quiet_full})
        out["full s"] = statistics.median(s for _, s, _ in quiet_full)
        out["tick requests"] = sorted({r for r, _, _ in quiet_tick})
        out["tick s"] = statistics.median(s for _, s, _ in quiet_tick)
        out["features"] = h.syncer.features.to_json()
        for kind in KINDS:
            if kind.before is not None:
                kind.before(fake)
                await h.syncer.full()
            kind.make(fake)
            seen = "full"
            for tick in range(1, ticks + 1):
                await h.syncer.tick()
                if kind.seen(h.store):
                    seen = str(tick)
                    break
            await h.syncer.full()
            out[kind.name] = seen if kind.seen(h.store) else "missed"
        out["delete amid > 500 changes"] = await burst(fake, h)
        return out
    finally:
        await h.close()
        fake.stop()


async def burst(fake: FaultyTrilium, h: Harness) -> str:
    """520 notes created and one deleted within one minute: ticks until the deletion shows."""
    fake.add_note("burstVictimA", "Victim", content="<p>The xylophone victim.</p>")
    await h.syncer.full()
    assert finds(h.store, "burstVictimA", "xylophone")
    for number in range(520):
        fake.add_note(f"burstNote{number:04d}", f"Burst {number}", content="<p>burst</p>")
    fake.delete("burstVictimA")
    report = await h.syncer.tick()
    seen = note_row(h.store, "burstVictimA") is None
    await h.syncer.full()
    return ("1 (the tick compared in full)" if report.full else "1") if seen else "full"


def table(results: dict[str, dict[str, object]]) -> str:
    first = results[VERSIONS[0]]
    rows = ["| | " + " | ".join(f"Trilium {v}" for v in VERSIONS) + " |", "|---|---|---|"]

    def row(name: str, cell) -> None:
        rows.append(f"| {name} | " + " | ".join(cell(results[v]) for v in VERSIONS) + " |")

    row("notes in the notebook", lambda r: f"{r['notes']:,}")
    row("sync features detected", lambda r: ", ".join(r["features"]["features"]) or "none")
    for kind in [k.name for k in KINDS] + ["delete amid > 500 changes"]:
        row(f"ticks until searchable: {kind}", lambda r, k=kind: str(r[k]))
    row("requests, quiet minute tick", lambda r: "/".join(map(str, r["tick requests"])))
    row("time, quiet minute tick (median of 5)", lambda r: f"{r['tick s'] * 1000:.0f} ms")
    row(
        "requests, full comparison, nothing changed",
        lambda r: "/".join(map(str, r["full requests"])),
    )
    row("time, full comparison, nothing changed (median of 3)", lambda r: f"{r['full s']:.2f} s")
    row("requests, first build", lambda r: f"{r['build'][0]:,}")
    row("time, first build (hash embedder)", lambda r: f"{r['build'][1]:.1f} s")
    assert set(first) == set(results[VERSIONS[1]])
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--ticks", type=int, default=3)
    args = parser.parse_args()
    load = load_average()[0]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o700)  # the index holds notes
        notebook = Path(tmp) / "notebook"
        notebook.mkdir()
        base = FaultyTrilium()  # root, the system notes, the demo notebook, change_kinds'
        base.load_notebook_dir(NOTEBOOK_DIR)
        seed(base)
        synthetic_notebook(notebook, args.notes - len(base.note_ids()))
        results = {}
        for version in VERSIONS:
            work = Path(tmp) / version
            work.mkdir(mode=0o700)
            results[version] = asyncio.run(measure(version, notebook, args.ticks, work))
    print(machine())
    print(f"load average (1 min) before / after: {load:.2f} / {load_average()[0]:.2f}\n")
    print(table(results))


if __name__ == "__main__":
    main()
