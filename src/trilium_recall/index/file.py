"""Opening the index file: private to its owner, sqlite-vec loaded, migrations applied.

The file holds every indexed note's text and the OAuth tables, so the data directory is created
0700 and the database 0600 whatever the umask (SQLite gives its -wal and -shm files the mode of
the database file); an existing looser mode is warned about, not changed: the owner may share
it on purpose.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, ParamSpec, TypeVar

import apsw
import sqlite_vec

from ..errors import IndexBusy, IndexDamaged, IndexInUse, IndexTooNew, IndexUnusable, StoreError
from .migrations import MIGRATIONS
from .transactions import BUSY_TIMEOUT_MS, write_transaction

logger = logging.getLogger(__name__)

DAMAGE_SUFFIX = ".damaged"  # beside the file: found damaged while serving (record_damage)
DATA_DIR_MODE = 0o700
DB_FILE_MODE = 0o600
WAL_ATTEMPTS, WAL_RETRY_SECONDS = 50, 0.1
_warned: set[Path] = set()  # each open Store (one per search thread) would warn again


def missing_index(path: Path) -> str | None:
    """Why `path` is no index file a reader may open, or None when it is one. A 0-byte file
    (`touch`, a failed copy) would be given a schema by opening it, and read as an index of
    nothing."""
    if path.is_dir():  # `index` would fail to open it: say why, not "run index"
        return f"{path} is a folder, not an index file: move it away"
    if not path.is_file():
        return f"no index at {path}"
    return f"an empty file (0 bytes) at {path}" if path.stat().st_size == 0 else None


def open_db(path: Path, read_only: bool = False) -> apsw.Connection:
    """Open (creating if needed) the index file with sqlite-vec loaded and migrations applied;
    `read_only`: an existing, current file, through a connection that cannot change it."""
    try:
        if not read_only:
            _create_private(path)
    except OSError as exc:
        raise unwritable(path, exc) from None
    with index_errors(path):
        flags = apsw.SQLITE_OPEN_READWRITE | (0 if read_only else apsw.SQLITE_OPEN_CREATE)
        db = apsw.Connection(str(path), flags=flags)
        try:
            # sqlite-vec only for the migrations: early schemas made vec0 tables that later
            # ones read and drop (m006, m010); nothing else uses it.
            db.enable_load_extension(True)
            db.load_extension(sqlite_vec.loadable_path())
            db.enable_load_extension(False)
            db.set_busy_timeout(BUSY_TIMEOUT_MS)
            _refuse_a_foreign_file(db, path)  # before WAL mode, the first change to a file
            if read_only:
                _refuse_an_old_schema(db, path)
                db.execute("PRAGMA query_only = ON")
            _use_wal(db)  # a no-op on a file in WAL mode already: every index is
            db.execute("PRAGMA synchronous = NORMAL")
            migrate(db, path)
        except BaseException:
            db.close()
            raise
        return db


@contextlib.contextmanager
def index_errors(path: Path) -> Iterator[None]:
    """Database errors as the package's own, each with what it means for the user."""
    try:
        yield
    except apsw.Error as exc:
        raise store_error(exc, path) from exc


P = ParamSpec("P")
T = TypeVar("T")
C = TypeVar("C", bound=type)


def _translated(method: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        owner: Any = args[0]  # the Store
        with index_errors(owner.path):
            return method(*args, **kwargs)

    return call


def own_errors(cls: C) -> C:
    """Each public method raises the package's StoreError (index_file.store_error: busy,
    damaged, disk full, ...), never apsw's own, so each surface maps one kind of error."""
    for name, member in list(vars(cls).items()):
        if callable(member) and not name.startswith("_") and name != "atomic":
            setattr(cls, name, _translated(member))
    return cls


def unwritable(path: Path, exc: OSError) -> StoreError:
    """The data dir is a file, or not this user's to write: the variable that names it."""
    why = exc.strerror or str(exc)
    return StoreError(
        f"cannot open the index at {path} ({why}): set RECALL_DATA_DIR to a folder you can write"
    )


READ_ONLY_FOLDER = "its folder is read-only, and SQLite keeps its -wal and -shm files beside it"


def store_error(exc: apsw.Error, path: Path) -> StoreError:
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return IndexBusy(f"{path} is locked by another process; try again in a moment")
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        return IndexDamaged(f"{path} is damaged ({exc})")
    if isinstance(exc, apsw.FullError):
        return StoreError(f"disk full while writing {path}")
    if isinstance(exc, apsw.ReadOnlyError):
        return StoreError(f"{path} is read-only")
    if isinstance(exc, apsw.CantOpenError):
        if path.is_dir():
            return StoreError(f"cannot open the index at {path}: it is a folder; move it away")
        if not os.access(path.parent, os.W_OK):  # "unable to open database file" says less
            return StoreError(f"cannot open the index at {path}: {READ_ONLY_FOLDER}")
        return StoreError(f"cannot open the index at {path}: {exc}")
    return StoreError(f"the index at {path} failed: {exc}")  # EIO, EFBIG: the reason matters


def move_aside(path: Path) -> Path:
    """Rename the index file (and its -wal and -shm, which belong to it) to
    `<name>.broken-<UTC time>`: kept for a look, never deleted."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    for suffix in ("-wal", "-shm", DAMAGE_SUFFIX, ""):  # the main file last: a crash leaves it
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(target.with_name(target.name + suffix))
    return target


def record_damage(path: Path, reason: str) -> None:
    """Note beside the index file that a search or a sync found it damaged: the next start
    moves it aside (`recorded_damage`). Best effort: the disk holding it may be failing."""
    try:
        path.with_name(path.name + DAMAGE_SUFFIX).write_text(reason + "\n", encoding="utf-8")
    except OSError as exc:
        logger.warning("cannot note the damage beside %s (%s)", path, exc.strerror or exc)


def recorded_damage(path: Path) -> IndexDamaged | None:
    try:
        reason = path.with_name(path.name + DAMAGE_SUFFIX).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return IndexDamaged(f"{reason or f'{path} is damaged'} (found while serving)")


def migrate(db: apsw.Connection, path: Path) -> int:
    """Apply every migration the file has not seen, each in its own transaction. An up-to-date
    file takes no lock; otherwise the version is read again under the write lock, so two
    processes opening a new file never run one migration twice. A file a newer version wrote
    is refused: its tables may mean something else."""
    if (found := _version(db)) > len(MIGRATIONS):
        raise IndexTooNew(
            f"{path} was written by a newer trilium-recall (schema {found}, this one knows "
            f"{len(MIGRATIONS)})"
        )
    migrated = False
    while _version(db) < len(MIGRATIONS):
        with write_transaction(db):
            version = _version(db)
            if version < len(MIGRATIONS):
                _apply(db, path, version)
                db.execute(f"PRAGMA user_version = {version + 1}")
                migrated = True
    if migrated:
        _give_back_free_pages(db, path)
    return len(MIGRATIONS)


def _give_back_free_pages(db: apsw.Connection, path: Path) -> None:
    """Migrations that drop or rebuild tables (m006, m013, m014, m020) leave their pages free
    inside the file, which SQLite never gives back by itself: an upgraded index was 3.6 MB
    where a fresh one of the same notes is 1 MB. Once, after migrating, VACUUM a file more
    than a quarter free; a busy file or a full disk keeps it as it is, for the next upgrade."""
    free = db.execute("PRAGMA freelist_count").get
    pages = db.execute("PRAGMA page_count").get
    if not isinstance(free, int) or not isinstance(pages, int) or free * 4 <= pages:
        return
    # VACUUM writes the used pages twice (a temporary copy, then the WAL): room for both first.
    if shutil.disk_usage(path.parent).free < 2 * path.stat().st_size:
        _kept(path, free, pages, "the disk is too full")
        return
    try:
        db.execute("VACUUM")
    except (apsw.BusyError, apsw.LockedError, apsw.FullError, apsw.IOError) as exc:
        _kept(path, free, pages, str(exc))
    else:
        logger.info("gave back %d free pages of %s after migrating it", free, path.name)
    finally:  # the WAL holds a copy of the file now: give its space back too
        with contextlib.suppress(apsw.Error):
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _kept(path: Path, free: int, pages: int, why: str) -> None:
    logger.warning("kept %s at its size (%d of %d pages free): %s", path, free, pages, why)


def _apply(db: apsw.Connection, path: Path, version: int) -> None:
    """One migration; a file whose tables it cannot take is refused, naming the step, and left
    as it was (the step's transaction rolls back): never moved aside, since the fault may be
    the step's, and the file holds sign-ins and embeddings a rebuild would lose."""
    step = MIGRATIONS[version]
    try:
        step(db)
    except (apsw.SQLError, apsw.ConstraintError) as exc:
        raise StoreError(
            f"{path} could not be updated to schema {version + 1} ({step.__name__}: {exc}); it "
            "is left as it was: report this, or move the file away to build a fresh index"
        ) from None


def _refuse_a_foreign_file(db: apsw.Connection, path: Path) -> None:
    """Every index this project wrote has a schema version; a file without one that holds
    tables is another program's SQLite database, never to be migrated into (nor moved)."""
    # One statement, one snapshot: another connection may be creating our tables right now.
    rows = db.execute(
        "SELECT name FROM sqlite_schema, pragma_user_version WHERE user_version = 0 LIMIT 3"
    )
    if tables := [row[0] for row in rows]:
        raise StoreError(
            f"{path} is another program's SQLite file (it holds {', '.join(tables)}), not a "
            "trilium-recall index: move it away, or set RECALL_DATA_DIR to another folder"
        )


def _refuse_an_old_schema(db: apsw.Connection, path: Path) -> None:
    """A reading command does not migrate the file it reads: a newer one is refused by
    `migrate`, an older one here."""
    if (found := _version(db)) < len(MIGRATIONS):
        raise StoreError(
            f"{path} is from an older trilium-recall (schema {found}, this one writes "
            f"{len(MIGRATIONS)}): run `trilium-recall index` or `serve` once to update it"
        )


def _version(db: apsw.Connection) -> int:
    row = db.execute("PRAGMA user_version").fetchone()
    return row[0] if row else 0


def _use_wal(db: apsw.Connection, attempts: int = WAL_ATTEMPTS) -> None:
    """Switch a new file to WAL (a no-op once it is). The switch needs the file to itself, and
    SQLite answers BUSY at once rather than wait, so connections opening a new file together
    (a test's threads, two processes) retry it for a few seconds."""
    for _ in range(attempts - 1):
        with contextlib.suppress(apsw.BusyError):
            if db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",):
                return
        time.sleep(WAL_RETRY_SECONDS)
    db.execute("PRAGMA journal_mode = WAL")


def ensure_vector_table(db: apsw.Connection, path: Path, dim: int, model: str) -> None:
    """The embedder's dimension and model, recorded with the first vectors; an index another
    model built is refused (its vectors mean nothing to this one)."""
    recorded = dict(db.execute("SELECT key, value FROM index_meta WHERE key LIKE 'embedding_%'"))
    built_dim, built_model = recorded.get("embedding_dim"), recorded.get("embedding_model")
    if built_dim is not None and (
        int(built_dim) != dim or (model and built_model not in (None, model))
    ):
        raise IndexUnusable(
            f"{path} was built with {built_model or 'another model'} ({built_dim} dimensions); "
            f"this engine embeds with {model or 'a model'} ({dim})"
        )
    if built_dim is not None and (built_model is not None or not model):
        return  # readers never write: several open at once
    with write_transaction(db):
        meta = [("embedding_dim", str(dim))] + ([("embedding_model", model)] if model else [])
        db.executemany("INSERT OR REPLACE INTO index_meta VALUES (?, ?)", meta)


def _create_directories(path: Path) -> None:
    """The file's missing directories, 0700."""
    missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=DATA_DIR_MODE, exist_ok=True)


def _create_private(path: Path) -> None:
    """Missing directories 0700 and a missing database file 0600; looser existing modes warned."""
    _create_directories(path)
    with contextlib.suppress(FileExistsError):  # an empty file is a new database to SQLite
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, DB_FILE_MODE))
    for existing in (path.parent, *path.parent.glob(path.name + "*")):
        try:
            mode = stat.S_IMODE(existing.stat().st_mode)
        except FileNotFoundError:  # another connection's journal, gone since the listing
            continue
        if mode & 0o077 and existing not in _warned:
            _warned.add(existing)
            wanted = DATA_DIR_MODE if existing.is_dir() else DB_FILE_MODE
            logger.warning(
                "%s is open to other users (mode %03o): chmod %03o it, it holds your notes",
                existing,
                mode,
                wanted,
            )


def hold_index(path: Path) -> IO[str]:
    """Take the index file's keeper lock (`<file>.lock` beside it, released when the returned
    file is closed or the process ends), or raise IndexInUse naming the process that holds it.
    Commands that answer from the index and never sync (search, explain, status) take none."""
    lock_path = path.with_name(path.name + ".lock")
    try:
        _create_directories(path)
        handle = os.fdopen(os.open(lock_path, os.O_RDWR | os.O_CREAT, DB_FILE_MODE), "r+")
    except OSError as exc:
        raise unwritable(path, exc) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # held
        handle.seek(0)
        pid = bytes(handle.buffer.read(32)).decode("ascii", "replace").strip()
        handle.close()
        raise IndexInUse(
            f"{path} is kept by another trilium-recall{f' (pid {pid})' if pid else ''}: stop "
            "it first, or set RECALL_DATA_DIR to another folder"
        ) from None
    except OSError as exc:  # a file system without locks (some network mounts): serve anyway
        logger.warning("cannot lock %s (%s): a second engine would not be refused", path, exc)
        return handle
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle
