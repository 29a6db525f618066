"""The keyword-only baseline the issue names: SQLite FTS5's bm25 over whole notes (title and
body), the prompt's words OR-ed with stop words dropped, no gate.

Built in memory from the eval index's own sections, so it sees exactly the text the engine
indexed, through the same tokenizer (`tokens.FTS_TOKENIZER`) and the same prompt words
(`tokens.prompt_terms`).
"""

from __future__ import annotations

import apsw

from trilium_recall.index.store import Store
from trilium_recall.index.terms import FTS_TOKENIZER, fts_query, prompt_terms


class WholeNotes:
    """One FTS5 row per note: its title and all its sections' headings and text."""

    def __init__(self, store: Store) -> None:
        name, args = FTS_TOKENIZER
        self.db = apsw.Connection(":memory:")
        self.db.execute(
            f"CREATE VIRTUAL TABLE notes USING fts5(note_id UNINDEXED, title, body, "
            f"tokenize = '{name} {' '.join(args)}')"
        )
        rows = store.db.execute(
            "SELECT n.note_id, n.title, group_concat(s.heading || ' ' || s.text, ' ') "
            "FROM notes n JOIN sections s USING (instance, note_id) "
            "GROUP BY n.instance, n.note_id"
        ).fetchall()
        with self.db:
            self.db.executemany("INSERT INTO notes VALUES (?, ?, ?)", rows)

    def top(self, prompt: str, k: int = 3) -> list[str]:
        terms = prompt_terms(prompt)
        if not terms:
            return []
        return [
            row[0]
            for row in self.db.execute(
                "SELECT note_id FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT ?",
                (fts_query(terms), k),
            )
        ]
