"""What the ETAPI client hands out: typed notes, recent-changes rows, app info, and the note id
pattern. Data only, no I/O: the stages below the client (`notes/`, `sync/plan`) read notes
without importing the client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Trilium's note ids: 12 random characters, `root`, or a system id like `_hidden`; branch ids
# join two (`parent_child`). Shorter words in a link (`#root/no`) are not ids.
NOTE_ID = re.compile(r"[A-Za-z0-9_]{4,64}")


@dataclass(frozen=True)
class Attribute:
    attribute_id: str
    note_id: str  # the owner: differs from the note carrying it when inherited
    type: str  # "label" | "relation"
    name: str
    value: str  # for a relation: the target note id
    position: int
    is_inheritable: bool


@dataclass(frozen=True)
class Note:
    """A note's metadata as ETAPI lists it; `attributes` includes inherited ones."""

    note_id: str
    title: str
    type: str
    mime: str
    is_protected: bool
    blob_id: str | None
    utc_date_modified: str
    parent_note_ids: tuple[str, ...]
    child_note_ids: tuple[str, ...]
    attributes: tuple[Attribute, ...]

    @property
    def owned_attributes(self) -> tuple[Attribute, ...]:
        return tuple(a for a in self.attributes if a.note_id == self.note_id)

    def label(self, name: str) -> str | None:
        """Value of label `name`, own before inherited; None when absent."""
        labels = [a for a in self.attributes if a.type == "label" and a.name == name]
        owned = [a for a in labels if a.note_id == self.note_id]
        chosen = owned or labels
        return chosen[0].value if chosen else None

    def own_label(self, name: str) -> str | None:
        """Value of label `name` set on this note itself (not inherited); None when absent."""
        for attribute in self.owned_attributes:
            if attribute.type == "label" and attribute.name == name:
                return attribute.value
        return None

    def has_label(self, name: str) -> bool:
        return self.label(name) is not None

    def relations(self, name: str | None = None, *, owned: bool = False) -> list[Attribute]:
        """Relations (own and inherited unless `owned`), optionally only those named `name`."""
        pool = self.owned_attributes if owned else self.attributes
        return [a for a in pool if a.type == "relation" and name in (None, a.name)]


@dataclass(frozen=True)
class Change:
    """A recent-changes row: a creation, revision or deletion (unsaid); flags are as of now."""

    note_id: str
    utc_date: str
    is_deleted: bool
    is_protected: bool


@dataclass(frozen=True)
class AppInfo:
    app_version: str
    db_version: int
    utc_date_time: str  # fixed at server start: not a clock
    sync_version: int | None = None
    build_date: str | None = None
    build_revision: str | None = None
