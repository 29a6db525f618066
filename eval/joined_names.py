"""Would the keyword index gain from splitting joined names? An upper bound, before building it.

FTS5's unicode61 tokenizer splits at every character that is not a letter or digit, so
`ERR_REQUIRE_ESM`, `fs.promises` and `git-rebase` are already separate words on both sides; a
name written in camel case (`createHash`, `deepStrictEqual`, `UnicodeDecodeError`) is one
word. Splitting it (index and prompt alike) can only matter where one side writes the name
joined and the other writes its parts: the prompt says `createHash` and the expected note only
"create … hash", or the note says `headersSent` and the prompt "headers sent". This counts,
per labelled set, the answerable prompts where that happens for an expected note, and prints
each with the names concerned. Every other prompt would search the same words as now.

    python eval/joined_names.py       # a few seconds over the indexes evaluate.py built
"""

from __future__ import annotations

import argparse
import re

import apsw
from corpora import CORPORA, HERE, labelled_set

# A joined name: lower then upper case ("createHash", "headersSent") or a capitalised run
# ("UnicodeDecodeError", "NewType"); the parts are its words, lower-cased.
JOINED = re.compile(r"[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
WORD = re.compile(r"[A-Za-z0-9]+")


def parts(name: str) -> list[str]:
    return [part.lower() for part in PART.findall(name)]


def note_texts(corpus: str) -> dict[str, str]:
    """Each note's title, headings and text, as the keyword index holds them."""
    path = HERE / ".index" / corpus / "recall.sqlite3"
    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    rows = db.execute(
        "SELECT note_id, notes.title || ' ' || group_concat(heading || ' ' || text, ' ')"
        " FROM sections JOIN notes USING (instance, note_id) GROUP BY note_id"
    )
    return {note_id: text for note_id, text in rows}


def split_apart(prompt: str, note: str) -> set[str]:
    """The joined names one side writes whole and the other only in parts."""
    prompt_words = [w.lower() for w in WORD.findall(prompt)]
    note_words = WORD.findall(note)
    held = {w.lower() for w in note_words}
    found = {
        name
        for name in JOINED.findall(prompt)
        if name.lower() not in held and all(p in held for p in parts(name))
    }
    said = f" {' '.join(prompt_words)} "
    found |= {
        name
        for name in set(note_words)
        if JOINED.fullmatch(name)
        and name.lower() not in prompt_words
        and f" {' '.join(parts(name))} " in said
    }
    return found


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    total = touched = 0
    for corpus in CORPORA:
        if not (HERE / ".index" / corpus / "recall.sqlite3").is_file():
            print(f"{corpus}: no index (run evaluate.py first)")
            continue
        texts = note_texts(corpus)
        answerable, _ = labelled_set(corpus, HERE / "sets")
        count = 0
        for item in answerable:
            names = set().union(
                *(split_apart(item["prompt"], texts.get(n, "")) for n in item["expected"])
            )
            if names:
                count += 1
                print(f"  {corpus}: {sorted(names)} in {item['prompt'][:90]!r}")
        print(f"{corpus}: {count} of {len(answerable)} answerable prompts")
        total += len(answerable)
        touched += count
    print(f"all: {touched} of {total}")


if __name__ == "__main__":
    main()
