"""The index file: one SQLite file (`store`, opened and migrated by `file` with the steps in
`migrations`, written in `transactions`), the in-memory vector mirror (`vectors`), the e5
embedder (`embed`) and the words as FTS5 sees them (`terms`).

May import: the top's foundation and `notes` (the records it stores).
"""
