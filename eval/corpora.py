"""The evaluation corpora, each served by the fake Trilium and indexed with the real model.

- `demo_zip`: Trilium's own demo notebook, a real HTML export (../shared/trilium/demo.zip);
- `notebook`: the built-in demo notebook of this package (an LLM wiki, a journal, tech notes);
- `devdocs`: Trilium's developer guide and release notes, a real export (devdocs.zip);
- `gnucash`, `gimp`, `handbook`, `skycultures`: four notebooks from other domains
  (../shared/corpora/<name>/, see its README), each with its labelled `prompts.jsonl`;
- `pydocs`: a developer's notebook, Python 3.11 HOWTOs and 30 library module pages, built by
  `pydocs.py` from the python3.11-doc package into `eval/.index/pydocs_notebook/` (when absent),
  labelled in `sets/pydocs.json`;
- `nodedocs`: a second developer's notebook, 30 pages of the Node.js 18 API docs, built by
  `nodedocs.py` from the nodejs-doc package (unpacked) the same way, labelled in
  `sets/nodedocs.json`;
- `gitdocs`: a third developer's notebook, the Git 2.39 user manual, six guides and 30 command
  pages, built by `gitdocs.py` from the git-doc package (unpacked) the same way, labelled in
  `sets/gitdocs.json`.

The shared folder is `SHARED_DIR` or `shared` beside the checkout (as for the tests);
`missing()` names what is absent so the scripts can stop with a reason.

Each index lives in `eval/.index/<corpus>/`, so a re-run only embeds text it has not seen.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import gitdocs
import nodedocs
import pydocs
from pydantic import SecretStr

from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.index.embed import Embedder
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.classify import Rules
from trilium_recall.sync.syncer import Syncer
from trilium_recall.trilium.client import TriliumClient

HERE = Path(__file__).resolve().parent
SHARED_DIR = Path(os.environ.get("SHARED_DIR") or HERE.parents[1] / "shared")
SHARED = SHARED_DIR / "trilium"
CORPORA_DIR = SHARED_DIR / "corpora"
OTHER_DOMAINS = ("gnucash", "gimp", "handbook", "skycultures")
# One file standing for each documentation package, with the command that puts it there.
_UNPACK = (
    "mkdir -p eval/.index && cd eval/.index && apt-get download {0} && dpkg-deb -x {0}_*.deb {0}"
)
PACKAGES = {
    pydocs.DOC / "library" / "os.html": "apt-get install python3.11-doc",
    nodedocs.DOC / "fs.md.gz": _UNPACK.format("nodejs-doc"),
    gitdocs.DOC / "git-commit.html": _UNPACK.format("git-doc"),
}
TOKEN = "eval_token"
INSTANCE = "eval"


def built(out: Path, write: Callable[[Path], object]) -> Path:
    """A documentation notebook's folder, written by `write` on first use (delete the folder to
    rebuild it after changing its builder)."""
    if not (out / "notebook.json").is_file():
        write(out)
    return out


LOADERS: dict[str, Callable[[FakeTrilium], None]] = {
    "demo_zip": lambda fake: fake.load_export_zip(SHARED / "demo.zip"),
    "notebook": lambda fake: fake.load_notebook_dir(NOTEBOOK_DIR),
    "devdocs": lambda fake: fake.load_export_zip(SHARED / "devdocs.zip"),
    **{
        name: (lambda fake, name=name: fake.load_notebook_dir(CORPORA_DIR / name))
        for name in OTHER_DOMAINS
    },
    "pydocs": lambda fake: fake.load_notebook_dir(built(pydocs.OUT, pydocs.write_notebook)),
    "nodedocs": lambda fake: fake.load_notebook_dir(built(nodedocs.OUT, nodedocs.write_notebook)),
    "gitdocs": lambda fake: fake.load_notebook_dir(built(gitdocs.OUT, gitdocs.write_notebook)),
}
CORPORA = tuple(LOADERS)


def needs(name: str) -> list[Path]:
    """The files one corpus is read from (none for the demo notebook, which ships inside)."""
    shared = {"demo_zip": [SHARED / "demo.zip"], "devdocs": [SHARED / "devdocs.zip"]}
    shared |= {n: [CORPORA_DIR / n / "notebook.json", CORPORA_DIR / n / "prompts.jsonl"]
               for n in OTHER_DOMAINS}  # fmt: skip
    packages = {"pydocs": pydocs.DOC, "nodedocs": nodedocs.DOC, "gitdocs": gitdocs.DOC}
    if name in packages:
        return [page for page in PACKAGES if page.is_relative_to(packages[name])]
    return shared.get(name, [])


def missing(names: Sequence[str] = ()) -> list[str]:
    """The files the eval of `names` (default: every corpus) needs that are not there (empty
    when it can run); a package's file comes with the command that installs it."""
    needed = [path for name in names or CORPORA for path in needs(name)]
    return [
        f"{path} ({PACKAGES[path]})" if path in PACKAGES else str(path)
        for path in dict.fromkeys(needed)
        if not path.is_file()
    ]


def corpus_settings(data_dir: Path, url: str = "http://eval.invalid") -> Settings:
    """Default settings (the shipped gate) pointed at one corpus's index directory."""
    base = load_settings({"RECALL_DATA_DIR": str(data_dir)})
    instance = Instance(INSTANCE, url, SecretStr(TOKEN))
    return base.model_copy(update={"instances": {INSTANCE: instance}})


def open_corpus(name: str, embedder: Embedder, index_dir: Path = HERE / ".index") -> Store:
    """Sync the corpus into its index (embedding only new text) and open it for search."""
    fake = FakeTrilium(token=TOKEN)
    LOADERS[name](fake)
    fake.start()
    settings = corpus_settings(index_dir / name, fake.url())
    try:
        asyncio.run(_sync(settings, fake.url(), embedder))
    finally:
        fake.stop()
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    store.load_vectors()
    return store


async def _sync(settings: Settings, url: str, embedder: Embedder) -> None:
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    try:
        async with TriliumClient(url, TOKEN) as client:
            syncer = Syncer(
                settings.instances[INSTANCE], client, store, embedder, Rules.from_settings(settings)
            )
            report = await syncer.full()
        counts = store.counts(INSTANCE)
        print(
            f"{Path(settings.data_dir).name}: {report.indexed} notes (re)indexed, {counts}",
            file=sys.stderr,
        )
    finally:
        store.close()


def labelled_set(name: str, sets_dir: Path) -> tuple[list[dict], list[dict]]:
    """(answerable, unrelated) of one corpus, in one shape whatever the file's: answerable items
    carry `prompt`, `expected` (note ids) and `lang` (None where the item does not say);
    unrelated ones `prompt` and `kind` ("near-miss" for the prompts that share the notes'
    words or subject, as the shared sets label them)."""
    if name not in OTHER_DOMAINS:
        data = json.loads((sets_dir / f"{name}.json").read_text())
        answerable = [{"lang": None, **item} for item in data["answerable"]]
        return answerable, data["unrelated"]
    rows = [json.loads(line) for line in (CORPORA_DIR / name / "prompts.jsonl").open()]
    answerable = [
        {"prompt": r["prompt"], "expected": r["expect"], "lang": r["lang"], "id": r["id"]}
        for r in rows
        if r["expect"]
    ]
    unrelated = [
        {"prompt": r["prompt"], "kind": r["kind"], "id": r["id"]} for r in rows if not r["expect"]
    ]
    return answerable, unrelated
