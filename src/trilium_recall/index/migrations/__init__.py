"""Numbered, append-only schema migrations, applied when the index file opens (`file.migrate`).

Never edit a shipped migration: add the next one. PRAGMA user_version records how far a file is.
`tables` holds those that add or change tables, `rereads` those that rebuild stored data from
the notes' text; the list below is the one order they run in.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from .rereads import (
    m013_resplit_snippets,
    m014_snippet_hashes,
    m015_stemmed_keywords,
    m018_resplit_with_whole_lines,
    m020_read_again_for_new_text,
    m021_cjk_pairs,
)
from .tables import (
    m001_index,
    m002_oauth,
    m003_term_stats,
    m004_password_check,
    m005_spent_credentials,
    m006_snippets,
    m007_activity,
    m008_note_errors,
    m009_server_features,
    m010_vector_blobs,
    m011_vector_codes,
    m012_reference_points,
    m016_notes_changes,
    m017_note_calendar,
    m019_snippet_hubness,
    m022_proven_sources,
    m023_grant_times,
)

MIGRATIONS: list[Callable[[apsw.Connection], None]] = [
    m001_index, m002_oauth, m003_term_stats, m004_password_check, m005_spent_credentials,
    m006_snippets, m007_activity, m008_note_errors, m009_server_features, m010_vector_blobs,
    m011_vector_codes, m012_reference_points, m013_resplit_snippets, m014_snippet_hashes,
    m015_stemmed_keywords, m016_notes_changes, m017_note_calendar, m018_resplit_with_whole_lines,
    m019_snippet_hubness, m020_read_again_for_new_text, m021_cjk_pairs, m022_proven_sources,
    m023_grant_times,
]  # fmt: skip
