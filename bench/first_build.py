"""Issue 26: what a first build of the real exports costs against the raw model on their
*sections* (one passage a section), how many snippets a section is embedded as, and the
process's peak memory. Run from the repository: `python bench/first_build.py [export.zip …]`."""

from __future__ import annotations

import argparse
import resource
import tempfile
from pathlib import Path

from build_bench import bench_build, fresh_embedder, passage_rate
from corpus import EXPORTS, export_trilium, sorted_batches

from trilium_recall.index.store import Store
from trilium_recall.sync.syncer import EMBED_BATCH

TOKEN = "firstBuild_bench"


def section_texts(db_path: Path) -> list[str]:
    store = Store(db_path)
    try:
        return [f"{h}\n{t}" for h, t in store.db.execute("SELECT heading, text FROM sections")]
    finally:
        store.close()


def main(exports: tuple[Path, ...]) -> None:
    with tempfile.TemporaryDirectory() as work:
        db = Path(work) / "recall.sqlite3"
        fake = export_trilium(TOKEN, exports)
        try:
            built = bench_build(db, fake, TOKEN, repeats=0)
        finally:
            fake.stop()
        sections = section_texts(db)
    embedder, _ = fresh_embedder()
    try:
        raw = passage_rate(embedder, sorted_batches(sections, EMBED_BATCH))
    finally:
        embedder.close()
    assert built.raw is not None
    names = " + ".join(p.name for p in exports)
    print(f"exports: {names}: {built.notes} notes, {built.sections} sections")
    per_section = len(built.texts) / built.sections
    print(f"snippets embedded: {len(built.texts)} ({per_section:.2f} a section)")
    print(f"first build: {built.build_s:.1f} s (embedding {built.embed_s:.1f} s)")
    print(f"raw model on the same snippets: {built.raw.seconds:.1f} s → {built.ratio:.2f} ×")
    print(f"raw model on the sections: {raw.seconds:.1f} s → {built.build_s / raw.seconds:.2f} ×")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak_mb:.0f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split(":")[0])
    parser.add_argument("exports", nargs="*", type=Path, help="Trilium export zips")
    main(tuple(parser.parse_args().exports) or EXPORTS)
