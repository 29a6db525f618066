"""What a client may register (RFC 7591 §3.2.2): registration is open (claude.ai registers
itself), so what a stranger can make us store, show and log is bounded, and redirects go only
to https or to this machine."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlparse

from mcp.server.auth.provider import RegistrationError
from mcp.shared.auth import OAuthClientInformationFull

from ..engine_address import LOOPBACK_HOSTS

# claude.ai sends a ~20-character name and one redirect URI.
MAX_CLIENT_NAME_CHARS = 100  # shown on the login page, written to the log
MAX_URI_CHARS = 2000  # a redirect URI's origin goes into the login page's CSP header
MAX_REDIRECT_URIS = 10
_URI_FIELDS = ("client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri")


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not be sent to `uri` (None: it may)."""
    parsed = urlparse(uri)
    if parsed.fragment:
        return "must not have a fragment (#…): RFC 6749 §3.1.2"
    if not parsed.hostname:
        return "has no host"
    if parsed.scheme == "https" or (parsed.scheme == "http" and parsed.hostname in LOOPBACK_HOSTS):
        return None
    return "must be https, or http on 127.0.0.1, localhost or [::1]"


def check_client_metadata(client: OAuthClientInformationFull) -> None:
    """Refuse (RFC 7591 §3.2.2) what is too long to store, show or log, and unsafe redirects."""
    if client.client_name is not None and len(client.client_name) > MAX_CLIENT_NAME_CHARS:
        raise RegistrationError(
            "invalid_client_metadata", f"client_name is longer than {MAX_CLIENT_NAME_CHARS}"
        )
    if client.client_name is not None and any(map(_invisible, client.client_name)):
        # A right-to-left override turns the sign-in page's "you return to <host>" around.
        raise RegistrationError(
            "invalid_client_metadata", "client_name holds control or formatting characters"
        )
    redirect_uris = [str(uri) for uri in client.redirect_uris or []]
    if len(redirect_uris) > MAX_REDIRECT_URIS:
        raise RegistrationError(
            "invalid_redirect_uri", f"more than {MAX_REDIRECT_URIS} redirect URIs"
        )
    uris = [(f"redirect URI {n + 1}", uri) for n, uri in enumerate(redirect_uris)]
    uris += [(name, str(value)) for name in _URI_FIELDS if (value := getattr(client, name))]
    for name, uri in uris:
        if len(uri) > MAX_URI_CHARS:
            raise RegistrationError(
                "invalid_client_metadata", f"{name} is longer than {MAX_URI_CHARS}"
            )
    for uri in redirect_uris:
        if problem := redirect_uri_problem(uri):
            raise RegistrationError(
                "invalid_redirect_uri",
                f"redirect URI {uri} {problem}",
            )


def _invisible(char: str) -> bool:
    """A control or formatting character (Unicode Cc, Cf: bidi overrides, zero-width joiners)."""
    return unicodedata.category(char) in ("Cc", "Cf")
