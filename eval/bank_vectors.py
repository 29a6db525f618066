"""Write the generic-prompt bank's vectors beside it, made by the bundled model.

    python eval/bank_vectors.py      # after editing src/trilium_recall/search/generic_prompts.txt

The engine uses them only while their key (model name + every prompt) matches; a test checks
that the shipped file is current and equals what the model makes now.
"""

from __future__ import annotations

import argparse
from importlib import resources

import numpy as np

from trilium_recall.index.embed import E5Embedder
from trilium_recall.search.null_bank import VECTORS_FILE, bank_key, bank_prompts


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    embedder = E5Embedder()
    prompts = bank_prompts()
    vectors = embedder.queries(prompts)
    target = resources.files("trilium_recall.search").joinpath(VECTORS_FILE)
    with open(str(target), "wb") as handle:
        np.savez_compressed(handle, key=bank_key(prompts, embedder.name), vectors=vectors)
    print(f"{len(prompts)} prompts → {target}")


if __name__ == "__main__":
    main()
