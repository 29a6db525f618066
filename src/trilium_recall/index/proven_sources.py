"""The addresses that gave the login password lately (access/rate_limits.PasswordGuard), kept
in the index file so a restart does not forget them. Each is kept as an HMAC keyed by a slow
digest (scrypt, with this file's salt) of the password (server/auth.py): a new password voids
them, the file names no address, and guessing the password from it costs what the stored
password check costs. Writers
pass a `Store.atomic()` block."""

from __future__ import annotations

import secrets

import apsw

_SALT_KEY = "proof_salt"


def salt(db: apsw.Connection) -> bytes:
    """This file's random salt for the proofs' key, made the first time (pass a write block)."""
    row = db.execute("SELECT value FROM index_meta WHERE key = ?", (_SALT_KEY,)).fetchone()
    if row is not None:
        return bytes.fromhex(row[0])
    made = secrets.token_bytes(16)
    db.execute("INSERT INTO index_meta VALUES (?, ?)", (_SALT_KEY, made.hex()))
    return made


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
