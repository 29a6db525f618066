"""Settings read once from the environment at an entry point; errors name the variable."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlparse

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .areas import DEFAULT_WEIGHTS, parse_weights
from .errors import ConfigError

DEFAULT_PORT = 8765
DEFAULT_INSTANCE = "default"
_INSTANCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")

CommaList = Annotated[tuple[str, ...], NoDecode]


@dataclass(frozen=True)
class Instance:
    """One Trilium server the engine reads. The token never shows in repr()."""

    name: str
    url: str
    token: SecretStr = field(repr=False)

    def note_url(self, note_id: str) -> str:
        return f"{self.url}/#root/{note_id}"


def _split(value: Any) -> Any:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


class Settings(BaseSettings):
    """Everything tunable. Field `foo` is read from env `RECALL_FOO`."""

    model_config = SettingsConfigDict(env_prefix="RECALL_", extra="ignore", frozen=True)

    login_password: SecretStr | None = Field(default=None, repr=False)
    base_url: str | None = None
    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    instructions: str | None = None
    allowed_hosts: CommaList = ()
    # Proxies whose X-Forwarded-For names the client (rate-limit keys); none by default.
    trusted_proxies: CommaList = ()

    tick_seconds: float = Field(default=60.0, gt=0)
    full_seconds: float = Field(default=1800.0, gt=0)

    # Classification rules (see ../shared/trilium/TRILIUM-FACTS.md for the layouts they cover).
    plumbing_titles: CommaList = ("Locks", "Templates", "Views")
    wiki_titles: CommaList = ("Wiki", "LLM Wiki")
    sources_titles: CommaList = ("Sources", "Raw")
    summary_relations: CommaList = ("derivedFrom", "source", "summaryOf")

    # Ranking: a multiplier per area (areas.py). The gate's numbers are fitted by
    # eval/evaluate.py and live in gate.py; only its overall strictness is a setting.
    area_weights: Annotated[dict[str, float], NoDecode] = Field(
        default_factory=lambda: dict(DEFAULT_WEIGHTS)
    )
    gate_strictness: float = Field(default=0.0, ge=-5, le=5)
    max_passages: int = Field(default=3, ge=1, le=10)
    time_budget_ms: float = Field(default=1200.0, gt=0)
    session_ttl_hours: float = Field(default=24.0, gt=0)

    # The activity log (activity.py): what each /recall and MCP call sent, bounded both ways.
    log_prompts: bool = True  # RECALL_LOG_PROMPTS=0: not even the first words of a prompt
    activity_max_rows: int = Field(default=10_000, ge=0)  # 0 turns the log off
    activity_max_days: float = Field(default=30.0, gt=0)

    instances: dict[str, Instance] = Field(default_factory=dict, exclude=True)

    _split_lists = field_validator(
        "allowed_hosts",
        "trusted_proxies",
        "plumbing_titles",
        "wiki_titles",
        "sources_titles",
        "summary_relations",
        mode="before",
    )(_split)

    @field_validator("login_password")
    @classmethod
    def _check_password(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        secret = value.get_secret_value()
        if not secret.strip():
            raise ValueError("is empty: set a real password or leave it unset")
        if not (secret.isascii() and secret.isprintable()):
            # It travels in an HTTP header (Bearer), where only ASCII is portable.
            raise ValueError("must be printable ASCII (it is sent as a Bearer header)")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _check_proxies(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                # uvicorn would take a typo as a literal that never matches, or "*" as "trust
                # every client", which lets anyone choose its own rate-limit key.
                raise ValueError(
                    f"{entry!r} is not an IP address or network (such as 127.0.0.1 or 10.0.0.0/8)"
                ) from None
        return value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError("must be an http(s) URL such as https://recall.example.org")
        return value.rstrip("/")

    @field_validator("area_weights", mode="before")
    @classmethod
    def _parse_weights(cls, value: Any) -> Any:
        return parse_weights(value) if isinstance(value, str) else value

    @property
    def db_path(self) -> Path:
        return self.data_dir / "recall.sqlite3"

    @property
    def is_loopback(self) -> bool:
        return self.host in ("127.0.0.1", "localhost", "::1") or self.host.startswith("127.")


def read_instances(env: Mapping[str, str]) -> dict[str, Instance]:
    """`TRILIUM_URL`/`TRILIUM_ETAPI_TOKEN`, or `RECALL_INSTANCES=a,b` with `_A`/`_B` suffixes."""
    names = _split(env.get("RECALL_INSTANCES", ""))
    if not names:
        if not env.get("TRILIUM_URL") and not env.get("TRILIUM_ETAPI_TOKEN"):
            return {}
        return {DEFAULT_INSTANCE: _read_instance(env, DEFAULT_INSTANCE, "")}
    instances = {}
    for name in names:
        if not _INSTANCE_NAME.match(name.lower()):
            raise ConfigError(f"RECALL_INSTANCES: {name!r} is not a valid instance name")
        instances[name.lower()] = _read_instance(env, name.lower(), "_" + name.upper())
    return instances


def _read_instance(env: Mapping[str, str], name: str, suffix: str) -> Instance:
    url_var, token_var = f"TRILIUM_URL{suffix}", f"TRILIUM_ETAPI_TOKEN{suffix}"
    url, token = env.get(url_var, "").strip(), env.get(token_var, "").strip()
    if not url:
        raise ConfigError(f"{url_var} is not set (needed for instance {name!r})")
    if not token:
        raise ConfigError(f"{token_var} is not set: {url_var} needs an ETAPI token")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(f"{url_var} must be an http(s) URL such as http://localhost:8080")
    return Instance(name=name, url=url.rstrip("/"), token=SecretStr(token))


def load_settings(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Read and validate everything; raise ConfigError naming the first bad variable."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {
        key.removeprefix("RECALL_").lower(): value
        for key, value in env.items()
        if key.startswith("RECALL_") and key != "RECALL_INSTANCES" and key != "RECALL_URL"
    }
    values.update(overrides)
    values.setdefault("instances", read_instances(env))
    try:
        return Settings.model_validate(
            {k: v for k, v in values.items() if k in Settings.model_fields}
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        name = "RECALL_" + str(error["loc"][0]).upper() if error["loc"] else "settings"
        raise ConfigError(f"{name}: {error['msg']}") from None
