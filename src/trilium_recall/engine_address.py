"""Where a client on this machine finds the engine: the default address, a URL as a user gives
it made the engine's base, what counts as an http(s) URL at all, which names are this machine,
when two URLs name one server, and a URL as shown (no credentials). Standard library only: the
hook imports it on every prompt."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

DEFAULT_ENGINE_URL = "http://127.0.0.1:8765"
# This machine by name: binding here needs no password, OAuth may redirect here over plain http,
# and /mcp accepts these Host and Origin headers.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback_name(host: str) -> bool:
    """A name or address that is this machine."""
    return host in LOOPBACK_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def engine_base(url: str) -> str:
    """The engine's URL as its clients use it, also when given as the http hook's own
    (`…/recall`): the URL a user sees in settings.json, and pastes."""
    return url.rstrip("/").removesuffix("/recall")


def named_engine(url: str | None = None) -> str:
    """The engine a client talks to: `url` if given (--url), else RECALL_URL, else the default."""
    return engine_base(url or os.environ.get("RECALL_URL") or DEFAULT_ENGINE_URL)


def is_http_url(value: str) -> bool:
    """An http(s) URL with a host, and a port of 1-65535 if it names one: "http://host:80800",
    ":0" and "http://[::1" would pass a look at the scheme, then fail at every connection."""
    if any(c.isspace() or not c.isprintable() for c in value):
        return False  # a space or a control character is never part of one: a paste went wrong
    try:
        parsed = urlsplit(value)
        port = parsed.port  # a port out of range raises
    except ValueError:
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.hostname) and port != 0


def same_engine(one: str, other: str) -> bool:
    """Whether two engine URLs reach the same engine: this machine counts once by any of its
    names (a hook sending to localhost reaches an engine bound to 127.0.0.1)."""
    return server_key(engine_base(one)) == server_key(engine_base(other))


def server_key(url: str) -> tuple[str, str, int | None, str]:
    """One server whatever its URL's spelling: case, a default port, this machine's names."""
    parsed = urlsplit(url)
    host = (parsed.hostname or "").lower()
    port = parsed.port or DEFAULT_PORTS.get(parsed.scheme)
    path = parsed.path.rstrip("/")
    return parsed.scheme, "loopback" if is_loopback_name(host) else host, port, path


def trilium_base(url: str) -> str:
    """A Trilium URL as the server's own address: ETAPI's path and a trailing slash taken off
    (the browser opens the former, the client adds /etapi itself)."""
    return re.sub(r"/etapi$", "", url.strip().rstrip("/"), flags=re.IGNORECASE)


def shown_url(url: str) -> str:
    """A Trilium URL as messages, links and pages show it: without the user name and password
    it may hold for a proxy in front of Trilium, and without a trailing slash."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl().rstrip("/")


def public_origin(url: str) -> str:
    """RECALL_BASE_URL as OAuth clients compare it, character for character: scheme and host in
    lower case, no default port, no trailing slash. A path, query, fragment or user name is
    refused: discovery looks for the metadata at the root of the host (RFC 8414, RFC 9728),
    which an engine served under a path does not hold."""
    parsed = urlsplit(url.strip())
    if parsed.path.strip("/") or parsed.query or parsed.fragment or "@" in parsed.netloc:
        raise ValueError(
            "must be the engine's origin alone, such as https://recall.example.org: serve it at "
            "the root of its own host name (OAuth clients look for /.well-known/ there)"
        )
    host = (parsed.hostname or "").lower()
    netloc = f"[{host}]" if ":" in host else host
    if parsed.port and parsed.port != DEFAULT_PORTS.get(parsed.scheme.lower()):
        netloc += f":{parsed.port}"
    return f"{parsed.scheme.lower()}://{netloc}"


_HOST_NAME = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_.])?)(?::(\d{1,5}|\*))?")


def host_header_name(entry: str) -> str:
    """An allowed host as the Host header writes it (lower case): a URL or a path there never
    matches, and every request from that name would fail the DNS-rebinding check."""
    host = entry.lower()
    match = _HOST_NAME.fullmatch(host)
    if not match or (match[2] not in (None, "*") and not 0 < int(match[2]) < 65536):
        raise ValueError(
            f"{entry!r} is not a host name: write it as a Host header does, such as "
            "notes.example.org, notes.example.org:8443, notes.example.org:* or "
            "[::1]:8765 (no scheme, no path)"
        )
    return host
