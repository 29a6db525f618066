"""Secrets given as a variable or as a file beside it (`<VARIABLE>_FILE`: Docker secrets, a
password manager's export): read once, each refused with one line naming its variable."""

from __future__ import annotations

from collections.abc import Mapping

from .errors import ConfigError

PASSWORD_VAR, PASSWORD_FILE_VAR = "RECALL_LOGIN_PASSWORD", "RECALL_PASSWORD_FILE"


def read_secret_file(variable: str, path: str) -> str:
    """A secret kept in a file (Docker secrets, a password manager's export): its one line,
    without the spaces and line break around it."""
    try:
        with open(path, encoding="utf-8") as handle:
            secret = handle.read(4096).strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise ConfigError(f"{variable}: cannot read {path} ({reason})") from None
    if not secret:
        raise ConfigError(f"{variable}: {path} is empty")
    if len(secret.splitlines()) > 1:
        raise ConfigError(f"{variable}: {path} holds more than one line; keep only the secret")
    return secret


def refuse_both(env: Mapping[str, str], variable: str, file_variable: str) -> None:
    """A secret given twice: which one was meant is not ours to guess (one may be stale)."""
    if variable in env and file_variable in env:
        raise ConfigError(f"{variable} and {file_variable} are both set: keep one of them")


def token_given(env: Mapping[str, str], token_var: str) -> bool:
    return token_var in env or f"{token_var}_FILE" in env


def without_empty_twins(env: Mapping[str, str]) -> Mapping[str, str]:
    """The environment as settings read it: without a secret's empty variable when its file is
    given (`<VARIABLE>_FILE`, the password's RECALL_PASSWORD_FILE). compose.yaml passes
    `TRILIUM_ETAPI_TOKEN: ${TRILIUM_ETAPI_TOKEN:-}` whatever the user chose, and the file the
    user gave was refused as "set but empty"."""
    twins = {PASSWORD_VAR: PASSWORD_FILE_VAR}
    empty = {
        name
        for name, value in env.items()
        if not value.strip() and twins.get(name, f"{name}_FILE") in env
    }
    return {k: v for k, v in env.items() if k not in empty} if empty else env
