"""Write transactions that wait for the lock instead of failing.

apsw's `with db` begins a deferred transaction: it reads first and asks for the write lock at
its first write. In WAL mode, if another connection committed in between, SQLite cannot wait
(the snapshot is stale) and raises BusyError at once, ignoring the busy timeout. The OAuth
store's "look up, then delete" met exactly that beside a /recall writing its session (CI,
test_oauth). Taking the lock at BEGIN lets the busy timeout do its work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import apsw

BUSY_TIMEOUT_MS = 5000  # how long a statement waits for another connection's lock


@contextmanager
def write_transaction(
    db: apsw.Connection, wait_s: float | None = None
) -> Iterator[apsw.Connection]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error; nested calls become savepoints.
    `wait_s` shortens the wait for the write lock (an answer's budget left)."""
    if db.in_transaction:
        with db:
            yield db
        return
    if wait_s is not None:
        db.set_busy_timeout(max(1, int(wait_s * 1000)))
    try:
        db.execute("BEGIN IMMEDIATE")
    finally:
        db.set_busy_timeout(BUSY_TIMEOUT_MS)
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # some errors (e.g. a full disk) have already rolled it back
            db.execute("ROLLBACK")
        raise
