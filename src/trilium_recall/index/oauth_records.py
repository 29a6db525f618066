"""The OAuth tables of the index file: the login password's check, clients, codes, tokens and
spent credentials. Only digests are stored (access/oauth.py makes them); the protocol's rules
live there, the SQL here. Writers pass the connection of a `Store.atomic()` block."""

from __future__ import annotations

import apsw

TokenRow = tuple[str, str, str, float]  # client_id, scopes (JSON), resource, expires_at


def password_check(db: apsw.Connection) -> tuple[bytes, bytes] | None:
    """(salt, check) of the password the grants were given under, if any."""
    return db.execute("SELECT salt, check_hash FROM auth_password").fetchone()


def set_password_check(db: apsw.Connection, salt: bytes, check: bytes) -> None:
    db.execute("INSERT OR REPLACE INTO auth_password VALUES (1, ?, ?)", (salt, check))


def end_every_grant(db: apsw.Connection) -> int:
    """Delete every token, code and spent credential (clients stay); returns grants ended."""
    ended = len(db.execute("SELECT DISTINCT grant_id FROM oauth_tokens").fetchall())
    db.execute("DELETE FROM oauth_tokens")
    db.execute("DELETE FROM oauth_codes")
    db.execute("DELETE FROM oauth_spent")
    return ended


def client_info(db: apsw.Connection, client_id: str) -> str | None:
    """The client's registration as stored (JSON), or None."""
    row = db.execute("SELECT info FROM oauth_clients WHERE client_id = ?", (client_id,)).fetchone()
    return row[0] if row else None


def add_client(db: apsw.Connection, client_id: str, info: str, created_at: float) -> None:
    db.execute(
        "INSERT INTO oauth_clients (client_id, info, created_at) VALUES (?, ?, ?)",
        (client_id, info, created_at),
    )


def client_count(db: apsw.Connection) -> int:
    row = db.execute("SELECT count(*) FROM oauth_clients").fetchone()
    return row[0] if row else 0


def drop_idle_clients(db: apsw.Connection, at_most: int) -> int:
    """Delete up to `at_most` clients without a code or token, those that never signed in
    first (a flood of registrations must not push out a real client whose grant ended), oldest
    first; returns how many."""
    db.execute(
        "DELETE FROM oauth_clients WHERE client_id IN (SELECT client_id FROM oauth_clients "
        "WHERE client_id NOT IN (SELECT client_id FROM oauth_tokens) "
        "AND client_id NOT IN (SELECT client_id FROM oauth_codes) "
        "ORDER BY signed_in_at IS NOT NULL, coalesce(signed_in_at, created_at) LIMIT ?)",
        (at_most,),
    )
    return db.changes()


def mark_signed_in(db: apsw.Connection, client_id: str, at: float) -> None:
    db.execute("UPDATE oauth_clients SET signed_in_at = ? WHERE client_id = ?", (at, client_id))


def add_code(
    db: apsw.Connection, code_hash: str, client_id: str, params: str, expires_at: float
) -> None:
    db.execute(
        "INSERT INTO oauth_codes VALUES (?, ?, ?, ?)", (code_hash, client_id, params, expires_at)
    )


def code(db: apsw.Connection, code_hash: str, client_id: str) -> tuple[str, float] | None:
    """(params JSON, expires_at) of a client's code."""
    return db.execute(
        "SELECT params, expires_at FROM oauth_codes WHERE code_hash = ? AND client_id = ?",
        (code_hash, client_id),
    ).fetchone()


def take_code(db: apsw.Connection, code_hash: str) -> bool:
    """Delete a code; False when it was gone already (used)."""
    db.execute("DELETE FROM oauth_codes WHERE code_hash = ?", (code_hash,))
    return db.changes() > 0


def add_token(
    db: apsw.Connection, token_hash: str, kind: str, grant_id: str, client_id: str,
    scopes: str, resource: str, expires_at: float,
) -> None:  # fmt: skip
    db.execute(
        "INSERT INTO oauth_tokens VALUES (?, ?, ?, ?, ?, ?, ?)",
        (token_hash, kind, grant_id, client_id, scopes, resource, expires_at),
    )


def token(db: apsw.Connection, token_hash: str, kind: str) -> TokenRow | None:
    return db.execute(
        "SELECT client_id, scopes, resource, expires_at FROM oauth_tokens "
        "WHERE token_hash = ? AND kind = ?",
        (token_hash, kind),
    ).fetchone()


def refresh_grant(db: apsw.Connection, token_hash: str) -> str | None:
    """The grant a refresh token belongs to."""
    row = db.execute(
        "SELECT grant_id FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh'",
        (token_hash,),
    ).fetchone()
    return row[0] if row else None


def drop_grant_refresh_tokens(db: apsw.Connection, grant_id: str) -> None:
    db.execute("DELETE FROM oauth_tokens WHERE grant_id = ? AND kind = 'refresh'", (grant_id,))


def drop_grant_of_token(db: apsw.Connection, token_hash: str) -> None:
    """Every token of the grant this token belongs to."""
    db.execute(
        "DELETE FROM oauth_tokens WHERE grant_id IN "
        "(SELECT grant_id FROM oauth_tokens WHERE token_hash = ?)",
        (token_hash,),
    )


def spend(
    db: apsw.Connection, credential_hash: str, grant_id: str, expires_at: float, spent_at: float
) -> None:
    """Remember a used code or rotated refresh token, and its grant."""
    db.execute(
        "INSERT OR REPLACE INTO oauth_spent (credential_hash, grant_id, expires_at, spent_at) "
        "VALUES (?, ?, ?, ?)",
        (credential_hash, grant_id, expires_at, spent_at),
    )


def spent(db: apsw.Connection, credential_hash: str) -> tuple[str, float | None] | None:
    """(grant_id, spent_at) of a spent credential; spent_at is None for those spent before
    the file recorded it."""
    return db.execute(
        "SELECT grant_id, spent_at FROM oauth_spent WHERE credential_hash = ?", (credential_hash,)
    ).fetchone()


def end_grant(db: apsw.Connection, grant_id: str) -> None:
    """Every token and spent credential of a grant."""
    db.execute("DELETE FROM oauth_tokens WHERE grant_id = ?", (grant_id,))
    db.execute("DELETE FROM oauth_spent WHERE grant_id = ?", (grant_id,))


def purge(db: apsw.Connection, now: float) -> None:
    """Expired rows out; a spent credential also goes once its grant has no token left.
    Run first in a write transaction: mid-rotation a grant has no tokens for a moment."""
    db.execute("DELETE FROM oauth_codes WHERE expires_at <= ?", (now,))
    db.execute("DELETE FROM oauth_tokens WHERE expires_at <= ?", (now,))
    db.execute(
        "DELETE FROM oauth_spent WHERE expires_at <= ? "
        "OR grant_id NOT IN (SELECT grant_id FROM oauth_tokens)",
        (now,),
    )
