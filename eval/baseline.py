"""The keyword-only baseline the issue names: SQLite FTS5's bm25 over whole notes (title and
body), the prompt's words OR-ed with stop words dropped, no gate.

Built in memory from the eval index's own sections, so it sees exactly the text the engine
indexed, split as the engine splits (`terms.WORD_TOKENIZER`: FTS5's default unicode61) and
with the same stop words. Without the stemmer the engine's own index adds since stop 37, and
with every distinct prompt word (the engine keeps one per stem): the baseline stays the one the
issue measured.
"""

from __future__ import annotations

import apsw

from trilium_recall.index.store import Store
from trilium_recall.index.terms import (
    MAX_TERMS,
    STOP_WORDS,
    WORD_TOKENIZER,
    fts_query,
    tokenize_option,
    words,
)


class WholeNotes:
    """One FTS5 row per note: its title and all its sections' headings and text."""

    def __init__(self, store: Store) -> None:
        self.db = apsw.Connection(":memory:")
        self.db.execute(
            f"CREATE VIRTUAL TABLE notes USING fts5(note_id UNINDEXED, title, body, "
            f"tokenize = '{tokenize_option(WORD_TOKENIZER)}')"
        )
        rows = store.db.execute(
            "SELECT n.note_id, n.title, group_concat(s.heading || ' ' || s.text, ' ') "
            "FROM notes n JOIN sections s USING (instance, note_id) "
            "GROUP BY n.instance, n.note_id"
        ).fetchall()
        with self.db:
            self.db.executemany("INSERT INTO notes VALUES (?, ?, ?)", rows)

    def top(self, prompt: str, k: int = 3) -> list[str]:
        found = dict.fromkeys(w for w in words(prompt) if len(w) > 1 and w not in STOP_WORDS)
        terms = list(found)[:MAX_TERMS]
        if not terms:
            return []
        return [
            row[0]
            for row in self.db.execute(
                "SELECT note_id FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT ?",
                (fts_query(terms), k),
            )
        ]
