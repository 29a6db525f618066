"""Settings, read once from the environment at an entry point; errors name the variable.

`load_settings` is the one reader: every variable of the README's configuration table goes
through it (the settings class reads nothing itself). A bad value is a ConfigError naming the
variable and what is wrong; an unknown `RECALL_*` variable is a warning naming the closest
known one (a typo is the likeliest configuration bug).
"""

from __future__ import annotations

import difflib
import ipaddress
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from .areas import DEFAULT_WEIGHTS, parse_weights
from .engine_address import (
    engine_base,
    host_header_name,
    is_http_url,
    is_loopback_name,
    public_origin,
    server_key,
    shown_url,
    trilium_base,
)
from .errors import ConfigError
from .secret_files import (
    PASSWORD_FILE_VAR,
    PASSWORD_VAR,
    read_secret_file,
    refuse_both,
    token_given,
    without_empty_twins,
)

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
DEFAULT_INSTANCE = "default"
# A name becomes part of variable names (TRILIUM_URL_<NAME>): what a shell variable name holds.
_INSTANCE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
# Each also as <VARIABLE>_<NAME> for RECALL_INSTANCES; the token also from a file (_FILE).
TRILIUM_VARIABLES = ("TRILIUM_URL", "TRILIUM_ETAPI_TOKEN", "TRILIUM_LINK_URL")
# Read here besides the settings class's own RECALL_<FIELD> variables.
READ_HERE = ("RECALL_INSTANCES", "RECALL_URL", PASSWORD_FILE_VAR)
# Read by the hook alone, and by the test suite: known, so they are not taken for typos. (The
# suite's, eval's and bench's SHARED_DIR and SHARED_REQUIRED are deliberately not RECALL_*.)
READ_ELSEWHERE = ("RECALL_HOOK_DEBUG", "RECALL_WRITE_SCREENSHOT")

CommaList = tuple[str, ...]


@dataclass(frozen=True)
class Instance:
    """One Trilium server the engine reads. The token never shows in repr()."""

    name: str
    url: str
    token: SecretStr = field(repr=False)
    token_file: bool = False  # read from TRILIUM_ETAPI_TOKEN[_NAME]_FILE: a fix names that file
    # TRILIUM_LINK_URL[_NAME]: where a browser opens this Trilium, when the engine reaches it
    # elsewhere (compose's http://trilium:8080 is a name only Docker's network knows).
    link_url: str | None = None

    @property
    def shown_url(self) -> str:
        return shown_url(self.url)

    def note_url(self, note_id: str) -> str:
        """A link into the instance's web UI (passages carry it to the assistant)."""
        return f"{shown_url(self.link_url or self.url)}/#root/{note_id}"


def _split(value: Any) -> Any:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


# A Host header's value: a name (a Docker service's may hold "_") or a bracketed IPv6 address,
# with a port or ":*" for any.
# Where the MCP server answers; with RECALL_BASE_URL, `<base_url>/mcp` is the OAuth resource.
MCP_PATH = "/mcp"


class Settings(BaseModel):
    """Everything tunable. Field `foo` comes from env `RECALL_FOO` (through load_settings)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    login_password: SecretStr | None = Field(default=None, repr=False)
    base_url: str | None = None
    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    instructions: str | None = None
    allowed_hosts: CommaList = ()
    # Proxies whose X-Forwarded-For names the client (rate-limit keys); none by default.
    trusted_proxies: CommaList = ()

    tick_seconds: float = Field(default=60.0, gt=0, le=86_400, allow_inf_nan=False)
    full_seconds: float = Field(default=1800.0, gt=0, le=7 * 86_400, allow_inf_nan=False)

    # Classification rules (see ../shared/trilium/TRILIUM-FACTS.md for the layouts they cover).
    plumbing_titles: CommaList = ("Locks", "Templates", "Views")
    wiki_titles: CommaList = ("Wiki", "LLM Wiki")
    sources_titles: CommaList = ("Sources", "Raw")
    summary_relations: CommaList = ("derivedFrom", "source", "summaryOf")

    # Ranking: a multiplier per area (areas.py). The gate's numbers are fitted by
    # eval/evaluate.py and live in search/gate.py; only its overall strictness is a setting.
    area_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    gate_strictness: float = Field(default=0.0, ge=-5, le=5)
    max_passages: int = Field(default=3, ge=1, le=10)
    # Bounded so each fits where it goes (SQLite's busy timeout is a C int of milliseconds).
    time_budget_ms: float = Field(default=1200.0, gt=0, le=120_000, allow_inf_nan=False)
    session_ttl_hours: float = Field(default=24.0, gt=0, le=24 * 366, allow_inf_nan=False)

    # The activity log (server/activity.py; its table: index/activity_log.py): what each /recall
    # and MCP call sent, bounded both ways.
    log_prompts: bool = True  # RECALL_LOG_PROMPTS=0: not even the first words of a prompt
    activity_max_rows: int = Field(default=10_000, ge=0, le=1_000_000)  # 0 turns the log off
    activity_max_days: float = Field(default=30.0, gt=0, le=3660, allow_inf_nan=False)

    # Not RECALL_<FIELD> variables: filled in by load_settings from the variables named.
    instances: dict[str, Instance] = Field(default_factory=dict, exclude=True)
    url: str | None = None  # RECALL_URL: where clients (hook, install-hook, doctor) find us
    password_source: str | None = None  # which variable gave the password (never the value)
    password_file: str | None = None  # RECALL_PASSWORD_FILE made absolute, for commands printed

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
        if secret != secret.strip():  # the page took it as typed; no Bearer header keeps them
            raise ValueError("starts or ends with a space, which a Bearer header drops")
        return value

    @field_validator("data_dir")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        # Compose files and systemd units pass "~/…" as written: it meant the home folder, not
        # a folder named "~" here (which a later `rm -rf ~` would take for the home itself).
        try:
            return value.expanduser()
        except RuntimeError:  # "~someone" who does not exist, or no HOME at all
            raise ValueError(f"{value}: the home folder it names is unknown") from None

    @field_validator("host")
    @classmethod
    def _check_host(cls, value: str) -> str:
        if not value or any(c.isspace() or not c.isprintable() for c in value):
            raise ValueError(f"{value!r} is no address: give one such as 127.0.0.1 or ::1")
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

    @field_validator("allowed_hosts")
    @classmethod
    def _check_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(host_header_name(entry) for entry in value)

    @field_validator("base_url", "url")
    @classmethod
    def _check_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if not is_http_url(value):
            raise ValueError("must be an http(s) URL such as https://recall.example.org")
        # RECALL_URL may be given as the http hook's own URL, `…/recall`: it names the engine.
        return public_origin(value) if info.field_name == "base_url" else engine_base(value)

    @field_validator("area_weights", mode="before")
    @classmethod
    def _parse_weights(cls, value: Any) -> Any:
        return parse_weights(value) if isinstance(value, str) else value

    @property
    def db_path(self) -> Path:
        return self.data_dir / "recall.sqlite3"

    @property
    def is_loopback(self) -> bool:
        return is_loopback_name(self.host)

    @property
    def engine_url(self) -> str:
        """Where a client on this machine finds the engine: RECALL_URL, else `bound_url`."""
        return self.url or self.bound_url

    @property
    def bound_url(self) -> str:
        """What `serve` binds, as a URL on this machine (a wildcard address means this one)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"


# The variables the settings class takes, by name: RECALL_<FIELD>.
_FIELD_VARS = {
    f"RECALL_{name.upper()}": name
    for name in Settings.model_fields
    if name not in ("instances", "url", "password_source", "password_file")
}
ENGINE_VARIABLES = frozenset(_FIELD_VARS) | frozenset(READ_HERE)
KNOWN_VARIABLES = ENGINE_VARIABLES | frozenset(READ_ELSEWHERE)


def load_settings(
    env: Mapping[str, str] | None = None, *, quiet: bool = False, **overrides: Any
) -> Settings:
    """Read and validate everything; raise ConfigError naming the first bad variable. Unknown
    variables are logged as warnings (`quiet`: not; `doctor` shows them as a check)."""
    env = without_empty_twins(os.environ if env is None else env)
    for name, value in env.items():
        ours = name in ENGINE_VARIABLES or name.startswith(TRILIUM_VARIABLES)
        if ours and not value.strip():
            raise ConfigError(f"{name} is set but empty: give it a value or unset it")
    if not quiet:
        for warning in unknown_variables(env):
            log.warning("%s", warning)
    values: dict[str, Any] = {
        field_name: env[var] for var, field_name in _FIELD_VARS.items() if var in env
    }
    if "RECALL_URL" in env:
        values["url"] = env["RECALL_URL"]
    refuse_both(env, PASSWORD_VAR, PASSWORD_FILE_VAR)
    if PASSWORD_FILE_VAR in env:
        values["login_password"] = read_secret_file(PASSWORD_FILE_VAR, env[PASSWORD_FILE_VAR])
        values["password_file"] = os.path.abspath(env[PASSWORD_FILE_VAR])
    sources = [v for v in (PASSWORD_VAR, PASSWORD_FILE_VAR) if v in env]
    values["password_source"] = sources[0] if sources else None
    values.update(overrides)
    if "instances" not in values:
        values["instances"] = read_instances(env)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = str(error["loc"][0]) if error["loc"] else ""
        name = "RECALL_URL" if loc == "url" else f"RECALL_{loc.upper()}" if loc else "settings"
        if loc == "login_password":  # the variable it came from, perhaps the file's
            name = values["password_source"] or name
        raise ConfigError(f"{name}: {error['msg'].removeprefix('Value error, ')}") from None


def read_instances(env: Mapping[str, str]) -> dict[str, Instance]:
    """`TRILIUM_URL`/`TRILIUM_ETAPI_TOKEN`, or `RECALL_INSTANCES=a,b` with `_A`/`_B` suffixes."""
    listed = env.get("RECALL_INSTANCES")
    if listed is None:
        if "TRILIUM_URL" not in env and not token_given(env, "TRILIUM_ETAPI_TOKEN"):
            return {}
        instances = {DEFAULT_INSTANCE: _read_instance(env, DEFAULT_INSTANCE, "", None)}
    else:
        names = _instance_names(listed)
        instances = {name: _read_instance(env, name, "_" + name.upper(), listed) for name in names}
    _check_distinct_urls(instances)
    return instances


def _instance_names(listed: str) -> list[str]:
    """RECALL_INSTANCES as names, all checked before any instance's variables are read."""
    names: list[str] = []
    for raw in listed.split(","):
        name = raw.strip()
        if not name:
            raise ConfigError(
                f"RECALL_INSTANCES={listed!r} has an empty name (a stray comma?): "
                "list names like work,home"
            )
        if not _INSTANCE_NAME.match(name):
            raise ConfigError(
                f"RECALL_INSTANCES: {name!r} cannot be part of a variable name "
                f"(TRILIUM_URL_{name.upper()}): use letters, digits and _ (a letter first)"
            )
        if name.lower() in names:
            raise ConfigError(f"RECALL_INSTANCES names {name.lower()!r} twice")
        if name.lower().endswith("_file"):
            raise ConfigError(
                f"RECALL_INSTANCES: {name!r} cannot end in _file (TRILIUM_ETAPI_TOKEN_"
                f"{name.upper()} would also be the token file of {name[:-5].lower()!r})"
            )
        names.append(name.lower())
    return names


def _read_instance(env: Mapping[str, str], name: str, suffix: str, listed: str | None) -> Instance:
    url_var, token_var = f"TRILIUM_URL{suffix}", f"TRILIUM_ETAPI_TOKEN{suffix}"
    because = f' (RECALL_INSTANCES names "{name}")' if listed is not None else ""
    url = env.get(url_var, "").strip()
    if not url:
        given = f"{token_var}_FILE" if f"{token_var}_FILE" in env else token_var
        raise ConfigError(f"{url_var} is not set{because or f': {given} needs a Trilium URL'}")
    if not is_http_url(url):
        raise ConfigError(f"{url_var} must be an http(s) URL such as http://localhost:8080")
    url = trilium_base(url)
    link_var = f"TRILIUM_LINK_URL{suffix}"
    link = trilium_base(env.get(link_var, "")) or None
    if link is not None and not is_http_url(link):
        raise ConfigError(f"{link_var} must be an http(s) URL such as http://localhost:8080")
    refuse_both(env, token_var, f"{token_var}_FILE")
    if token_var in env:
        token = env[token_var].strip()
    elif f"{token_var}_FILE" in env:
        token = read_secret_file(f"{token_var}_FILE", env[f"{token_var}_FILE"])
    else:
        raise ConfigError(f"{token_var} is not set{because or f': {url_var} needs an ETAPI token'}")
    if not (token.isascii() and token.isprintable()):
        # It travels in an HTTP header, and httpx's refusal of it would quote it in the error.
        given = token_var if token_var in env else f"{token_var}_FILE"
        raise ConfigError(f"{given}: the token must be one line of printable ASCII")
    return Instance(name, url, SecretStr(token), token_var not in env, link)


def _check_distinct_urls(instances: dict[str, Instance]) -> None:
    seen: dict[tuple[str, str, int | None, str], str] = {}
    for instance in instances.values():
        key = server_key(instance.url)
        if key in seen:
            raise ConfigError(
                f"TRILIUM_URL_{instance.name.upper()} is the same Trilium as "
                f"TRILIUM_URL_{seen[key].upper()} ({instance.shown_url}): list each instance once"
            )
        seen[key] = instance.name


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """A warning for each RECALL_* variable nobody reads, naming the likeliest intended one, and
    for per-instance Trilium variables that RECALL_INSTANCES does not name."""
    warnings = []
    listed = {n.strip().upper() for n in env.get("RECALL_INSTANCES", "").split(",") if n.strip()}
    for name in sorted(env):
        if name.startswith("RECALL_") and name not in KNOWN_VARIABLES:
            close = difflib.get_close_matches(name, sorted(KNOWN_VARIABLES), n=1, cutoff=0.75)
            hint = f"did you mean {close[0]}?" if close else "see the README's configuration table"
            warnings.append(f"{name} is not a trilium-recall setting ({hint})")
        elif listed and name in TRILIUM_VARIABLES:
            warnings.append(f"{name} is ignored: RECALL_INSTANCES is set (use {name}_<NAME>)")
        elif name in ("TRILIUM_URL_FILE", "TRILIUM_LINK_URL_FILE"):  # not an instance "file"
            warnings.append(f"{name} is ignored: only the ETAPI token is read from a file")
        elif (
            (match := re.fullmatch(r"TRILIUM_(?:URL|ETAPI_TOKEN|LINK_URL)_(\w+?)(?:_FILE)?", name))
            and match[1] not in listed
            and name != "TRILIUM_ETAPI_TOKEN_FILE"
        ):
            warnings.append(
                f'{name} is ignored: RECALL_INSTANCES does not name "{match[1].lower()}"'
            )
    return warnings
