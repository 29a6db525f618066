"""The first /recall after a restart against the median of the next 30, over several restarts
of the demo engine (issue 12: ratio ≤ 1.5). run.py's table 4b does the same with 3 restarts
and 100 requests; this one takes more restarts, for the worst case.

    python bench/bench_restart.py [--restarts 8]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from corpus import PROMPTS
from engine_bench import _client, engine_env, recall_once, start_engine, wait_ready

from engine_process import EngineProcess
from trilium_recall.demo.mode import DEMO_TOKEN, start_demo_trilium

AFTER = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=8)
    args = parser.parse_args()
    fake = start_demo_trilium()
    ratios = []
    with tempfile.TemporaryDirectory(prefix="recall-restart-") as work:
        start_engine(Path(work), fake.url(), DEMO_TOKEN, ("ok",)).engine.stop()  # builds
        for _ in range(args.restarts):
            engine = EngineProcess(Path(work), engine_env(fake.url(), DEMO_TOKEN))
            spawned = time.perf_counter()
            engine.start()
            try:
                with _client() as client:
                    wait_ready(engine, client, ("ok",), spawned)
                    first = recall_once(client, engine.url, PROMPTS[0])[0]
                    rest = [
                        recall_once(client, engine.url, PROMPTS[i % len(PROMPTS)])[0]
                        for i in range(AFTER)
                    ]
            finally:
                engine.stop()
            ratios.append(first / statistics.median(rest))
            print(f"first {first:.0f} ms, median of the next {AFTER} "
                  f"{statistics.median(rest):.0f} ms: {ratios[-1]:.2f}×", flush=True)  # fmt: skip
    fake.stop()
    print(f"worst {max(ratios):.2f}×, median {statistics.median(ratios):.2f}× "
          f"over {len(ratios)} restarts")  # fmt: skip


if __name__ == "__main__":
    main()
