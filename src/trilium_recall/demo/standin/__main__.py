"""`python -m trilium_recall.demo.standin`: serve a stand-in Trilium until interrupted."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from .newest import VERSIONS
from .server import FakeTrilium


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake Trilium ETAPI on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--zip", type=Path, help="seed from a Trilium export zip")
    parser.add_argument("--notebook", type=Path, help="seed from a notebook.json directory")
    parser.add_argument("--token", default="fakeTokenId_fakeSecret")
    parser.add_argument(
        "--trilium-version",
        choices=VERSIONS,
        default=VERSIONS[0],
        help="answer as this Trilium release does (default %(default)s)",
    )
    args = parser.parse_args(argv)
    fake = FakeTrilium(args.token, port=args.port, version=args.trilium_version)
    if args.zip:
        fake.load_export_zip(args.zip)
    if args.notebook:
        fake.load_notebook_dir(args.notebook)
    print(f"READY {fake.start()}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
