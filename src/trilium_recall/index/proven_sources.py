"""The addresses that gave the login password lately (access/rate_limits.PasswordGuard), kept
in the index file so a restart does not forget them. Each is kept as a digest keyed by the
password (server/auth.py): a new password voids them, and the file names no address. Writers
pass a `Store.atomic()` block."""

from __future__ import annotations

import apsw


def live(db: apsw.Connection, now: float) -> dict[str, float]:
    """Proof key -> when it expires, for the proofs not yet expired (the column `source` holds
    the key)."""
    rows = db.execute("SELECT source, until FROM proven_sources WHERE until > ?", (now,))
    return {str(source): float(until) for source, until in rows}


def keep(db: apsw.Connection, key: str, until: float, now: float, at_most: int) -> None:
    """Keep the proof `key` until `until`; expired proofs go, and past `at_most` the proofs
    that expire first."""
    db.execute("INSERT OR REPLACE INTO proven_sources VALUES (?, ?)", (key, until))
    db.execute("DELETE FROM proven_sources WHERE until <= ?", (now,))
    db.execute(
        "DELETE FROM proven_sources WHERE source NOT IN "
        "(SELECT source FROM proven_sources ORDER BY until DESC LIMIT ?)",
        (at_most,),
    )
