"""The stop-48 audit's coding prompts through the real CLI, as a user meets the engine.

    python eval/coding_audit.py            # about 5 min on 2 cores

`sets/coding_audit.json` holds what a helper wrote from the notes of the pydocs and gitdocs
indexes without seeing the eval's sets: answerable coding questions as developers type them
(pasted errors, goals described without the API's name, other languages), unrelated ones,
odd inputs and minimal pairs. Each is run by `trilium-recall search --demo --json` on a copy of
`.index/<corpus>/recall.sqlite3` (built by `evaluate.py`), with the shipped gate and the whole
generic-prompt bank: not a held-out figure (the gate was fitted on these two corpora among
ten), but the product on common questions, which the eval's sets hold few of. Prints, per
corpus and kind, how many sent an expected note and how many were silent.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from corpora import HERE

SET = HERE / "sets" / "coding_audit.json"


def searched(data_dir: Path, prompt: str) -> list[str]:
    """The note ids `trilium-recall search` sends for the prompt."""
    env = {**os.environ, "RECALL_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-m", "trilium_recall.cli", "search", "--demo", "--json", prompt]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return [passage["note_id"] for passage in json.loads(done.stdout)["passages"]]


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    corpora = json.loads(SET.read_text(encoding="utf-8"))["corpora"]
    with tempfile.TemporaryDirectory() as scratch:
        for name, items in corpora.items():
            index = HERE / ".index" / name / "recall.sqlite3"
            if not index.is_file():
                sys.exit(f"{index} is missing: run `python eval/evaluate.py` once to build it")
            data_dir = Path(scratch) / name
            (data_dir / "demo").mkdir(parents=True, mode=0o700)
            shutil.copy(index, data_dir / "demo" / "recall.sqlite3")
            with ThreadPoolExecutor(2) as pool:
                prompts = [item["prompt"] for item in items]
                sent = list(pool.map(searched, [data_dir] * len(items), prompts))
            hits, silent, total = Counter(), Counter(), Counter()
            for item, ids in zip(items, sent, strict=True):
                total[item["kind"]] += 1
                hits[item["kind"]] += bool(set(ids) & set(item["expected"]))
                silent[item["kind"]] += not ids
            for kind in total:
                print(
                    f"{name} {kind}: expected note sent {hits[kind]} of {total[kind]}, "
                    f"silent {silent[kind]}"
                )


if __name__ == "__main__":
    main()
