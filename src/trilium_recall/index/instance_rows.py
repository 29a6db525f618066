"""The index file's instances table: one row per Trilium instance synced into it, with the URL
it was read from and its sync state (watermarks, last runs, the last error)."""

from __future__ import annotations

import apsw


class InstanceRows:
    """Store's instance methods; `db` is the store's connection."""

    db: apsw.Connection

    def ensure_instance(self, name: str, url: str) -> None:
        """The instance's row, written only when it is new or its URL changed: each sync run
        asks, once a minute."""
        self.db.execute(
            "INSERT INTO instances (name, url) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET url = excluded.url WHERE url IS NOT excluded.url",
            (name, url),
        )

    def recorded_instances(self) -> dict[str, str]:
        """Each instance this index holds, by name, with the URL it was synced from."""
        return dict(self.db.execute("SELECT name, url FROM instances ORDER BY name"))

    def instance_state(self, name: str) -> dict[str, object]:
        cursor = self.db.execute("SELECT * FROM instances WHERE name = ?", (name,))
        row = cursor.fetchone()
        if row is None:
            return {}
        return dict(zip([d[0] for d in cursor.getdescription()], row, strict=True))

    def update_instance(self, name: str, **fields: object) -> None:
        assignments = ", ".join(f'"{key}" = ?' for key in fields)
        self.db.execute(
            f"UPDATE instances SET {assignments} WHERE name = ?", (*fields.values(), name)
        )
