"""The eval's answer labels (eval/sets/answers/) stay true to the notes: each names a section the
product's own splitter makes of an expected note, and its quote is in that section word for word
(checked here for the built-in notebook always, and the four shared corpora where the shared
folder is; the other five need exports or packages the eval builds from). A change to the
splitter that moves sections shows up here, not as a silent drop in eval/answer_reach.py's
figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shared_file
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin.export import read_notebook_dir
from trilium_recall.notes.sections import split_note

EVAL = Path(__file__).resolve().parents[1] / "eval"
# Corpora of the shared folder, by the notebook folder each is loaded from (eval/corpora.py).
SHARED_NOTEBOOKS = ("gnucash", "gimp", "handbook", "skycultures")


def _sections(folder: Path) -> dict[tuple[str, int], str]:
    """Every section of a notebook folder's notes, as the product splits them."""
    return {
        (note.note_id, section.ordinal): section.text
        for note in read_notebook_dir(folder, "root")
        if isinstance(note.content, str)
        for section in split_note(note.title, note.type, note.mime, note.content)
    }


def _check(corpus: str, folder: Path, expected: dict[str, list[str]]) -> None:
    labels = json.loads((EVAL / "sets" / "answers" / f"{corpus}.json").read_text())["labels"]
    sections = _sections(folder)
    assert {label["prompt"] for label in labels} == set(expected)
    for label in labels:
        assert label["answers"] or label["problem"], label["prompt"]
        for answer in label["answers"]:
            where = (answer["note_id"], answer["ordinal"])
            assert answer["note_id"] in expected[label["prompt"]], label["prompt"]
            assert answer["quote"] in sections.get(where, ""), (label["prompt"], where)


def test_the_demo_notebooks_answer_labels_name_its_sections_and_quote_them() -> None:
    answerable = json.loads((EVAL / "sets" / "notebook.json").read_text())["answerable"]
    _check("notebook", NOTEBOOK_DIR, {item["prompt"]: item["expected"] for item in answerable})


@pytest.mark.shared
@pytest.mark.parametrize("corpus", SHARED_NOTEBOOKS)
def test_a_shared_corpus_answer_labels_name_its_sections_and_quote_them(corpus: str) -> None:
    folder = shared_file(f"corpora/{corpus}/notebook.json").parent
    prompts = shared_file(f"corpora/{corpus}/prompts.jsonl")
    rows = [json.loads(line) for line in prompts.read_text().splitlines() if line.strip()]
    _check(corpus, folder, {row["prompt"]: row["expect"] for row in rows if row["expect"]})
