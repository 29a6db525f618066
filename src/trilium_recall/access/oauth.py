"""The OAuth 2.1 authorization server behind the login page, as the MCP SDK wants it.

`OAuthProvider` is the SDK's `OAuthAuthorizationServerProvider` over the index file: the SDK's
handlers do the protocol (RFC 8414 metadata, RFC 7591 registration, /authorize, /token with PKCE
S256, RFC 7009 revocation); this class keeps clients, codes and tokens. Codes and tokens are
random 256-bit strings stored only as SHA-256 digests; a client's secret likewise, which is why
the token and revocation routes hash the secret a client sends before the SDK compares it.
Access tokens live an hour, refresh tokens rotate on every use, codes are single-use and live
five minutes. A used code or a rotated refresh token presented again has leaked, so it ends its
whole grant (RFC 6749 §4.1.2, RFC 9700 §4.14.2): the tokens issued from the code, or the newer
refresh token. One exception: a refresh token presented again within `REUSE_GRACE_SECONDS` of
its rotation is the client's own parallel request (two workers refreshing at expiry), refused
without ending the grant; later it ends it as before. A rotation leaves the old access token to
its hour, so requests already under way are not refused mid-flight. The tables' SQL is in
`index/oauth_records.py`; every write goes through `Store.atomic()`.

This module is protocol state only; the HTTP side (the SDK's routes, our shims around them and
the login page's route) is wired in `oauth_routes.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import apsw
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from ..index import oauth_records as records
from ..index.store import Store
from .client_metadata import check_client_metadata
from .pending_authorizations import Pending, PendingAuthorizations

logger = logging.getLogger(__name__)

ACCESS_TOKEN_SECONDS = 3600
REFRESH_TOKEN_SECONDS = 30 * 24 * 3600
CODE_SECONDS = 300  # RFC 6749 §4.1.2 recommends at most 10 minutes
SPENT_SECONDS = REFRESH_TOKEN_SECONDS  # or until the grant ends, whichever comes first
# Past this many, registering drops the oldest clients without a live grant. Registrations are
# rate limited (rate_limits.REGISTER_OVERALL, 30 an hour), so pushing out a client that is still
# signing in (10 minutes at most) would take hours of registering.
MAX_CLIENTS = 100
# Short: a thief who times a stolen token's use just before the client's own refresh keeps the
# grant while the client's reuse falls inside it.
REUSE_GRACE_SECONDS = 10.0


def digest(secret: str) -> str:
    """What the file keeps instead of a code, token or client secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


def slow_digest(password: bytes, salt: bytes) -> bytes:
    # scrypt, not a bare hash: the file must not make the password cheap to guess offline.
    return hashlib.scrypt(password, salt=salt, n=2**14, r=8, p=1, dklen=32)


def _token_fields(token: str, row: records.TokenRow) -> dict[str, Any]:
    """The SDK's token fields from a stored token row."""
    client_id, scopes, resource, expires_at = row
    return {
        "token": token,
        "client_id": client_id,
        "scopes": json.loads(scopes),
        "resource": resource,
        "expires_at": int(expires_at),
    }


class OAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """The SDK's `OAuthAuthorizationServerProvider`, persisted in the index file.

    Subclassed, not just matched: the SDK's default refuses the identity-assertion grant."""

    def __init__(
        self,
        store: Store,
        resources: tuple[str, str],
        login_url: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`resources`: the identifiers a token may be bound to, the default first."""
        self._store = store
        self._clock = clock
        self.resources = resources
        self.login_url = login_url
        self.pending = PendingAuthorizations(clock)

    def end_grants_if_password_changed(self, password: bytes) -> int:
        """Whoever knew the old password must not keep access through OAuth: on a new password,
        every token and code is deleted (clients stay registered). Returns grants ended."""
        with self._store.atomic() as db:
            row = records.password_check(db)
            if row and hmac.compare_digest(slow_digest(password, row[0]), row[1]):
                return 0
            ended = records.end_every_grant(db) if row else 0
            salt = secrets.token_bytes(16)
            records.set_password_check(db, salt, slow_digest(password, salt))
        return ended

    # -- clients -----------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        info = records.client_info(self._store.db, client_id)
        return OAuthClientInformationFull.model_validate_json(info) if info else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        check_client_metadata(client_info)
        # The SDK compares client secrets verbatim, so the file holds the hash and the token and
        # revocation routes hash what the client sends (`_HashClientSecret`) before comparing.
        secret = client_info.client_secret
        stored = client_info.model_copy(update={"client_secret": secret and digest(secret)})
        with self._store.atomic() as db:
            records.purge(db, self._clock())
            self._make_room(db)
            info = stored.model_dump_json(exclude_none=True)
            records.add_client(db, client_info.client_id, info, self._clock())
        logger.info("registered OAuth client %s (%r)", client_info.client_id, stored.client_name)

    def _make_room(self, db: apsw.Connection) -> None:
        """Drop the oldest clients without a live code or token until one more fits."""
        excess = records.client_count(db) - MAX_CLIENTS + 1
        if excess <= 0:
            return
        dropped = records.drop_idle_clients(db, excess)
        if dropped < excess:  # every client holds a grant, and each grant took the password
            raise RegistrationError(
                "invalid_client_metadata",
                f"{MAX_CLIENTS} clients are registered and signed in; revoke one first",
            )
        logger.info("dropped %d unused OAuth client(s) to make room", dropped)

    # -- authorization -----------------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        resource = (params.resource or self.resources[0]).rstrip("/")
        if resource not in self.resources:
            raise AuthorizeError(
                "invalid_target", f"resource must be {self.resources[0]} or {self.resources[1]}"
            )
        bound = params.model_copy(update={"resource": resource})
        pending = self.pending.add(client.client_id, client.client_name or "An app", bound)
        return f"{self.login_url}?request={pending.id}"

    async def issue_code(self, pending: Pending) -> str:
        """Called by the login page after the password: a single-use code, back to the client."""
        code = secrets.token_urlsafe(32)
        params = pending.params
        record = {
            "scopes": params.scopes or [],
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "challenge": params.code_challenge,
            "resource": params.resource,
        }
        with self._store.atomic() as db:
            now = self._clock()
            records.purge(db, now)
            records.add_code(
                db, digest(code), pending.client_id, json.dumps(record), now + CODE_SECONDS
            )
            records.mark_signed_in(db, pending.client_id, now)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        row = records.code(self._store.db, digest(authorization_code), client.client_id)
        if row is None:
            self._end_grant_if_spent(authorization_code, "authorization code", client.client_id)
            return None
        if row[1] <= self._clock():
            return None
        record = json.loads(row[0])
        return AuthorizationCode(
            code=authorization_code,
            scopes=record["scopes"],
            expires_at=row[1],
            client_id=client.client_id,
            code_challenge=record["challenge"],
            redirect_uri=AnyUrl(record["redirect_uri"]),
            redirect_uri_provided_explicitly=record["explicit"],
            resource=record["resource"],
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        code = authorization_code.code
        grant_id = secrets.token_urlsafe(16)
        with self._store.atomic() as db:
            records.purge(db, self._clock())
            # False: a second exchange raced past load_authorization_code
            used = not records.take_code(db, digest(code))
            if not used:
                issued = self._issue_tokens(
                    db,
                    grant_id,
                    client.client_id,
                    authorization_code.scopes,
                    authorization_code.resource or self.resources[0],
                )
                self._spend(db, code, grant_id)
        if used:
            self._end_grant_if_spent(code, "authorization code", client.client_id)
            raise TokenError("invalid_grant", "authorization code was already used")
        return issued

    # -- tokens ------------------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        row = self._token_row(refresh_token, "refresh")
        if row is None:
            self._end_grant_if_spent(
                refresh_token, "refresh token", client.client_id, REUSE_GRACE_SECONDS
            )
            return None
        if row[0] != client.client_id:
            return None
        return RefreshToken(**_token_fields(refresh_token, row))

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        """Rotate: the old refresh token dies (its access token lives out its hour), a new
        pair is issued."""
        old = refresh_token.token
        with self._store.atomic() as db:
            records.purge(db, self._clock())
            grant_id = records.refresh_grant(db, digest(old))
            if grant_id is not None:
                records.drop_grant_refresh_tokens(db, grant_id)
                resource = refresh_token.resource or self.resources[0]
                issued = self._issue_tokens(db, grant_id, client.client_id, scopes, resource)
                self._spend(db, old, grant_id)
        if grant_id is None:  # a second rotation raced past load_refresh_token
            self._end_grant_if_spent(old, "refresh token", client.client_id, REUSE_GRACE_SECONDS)
            raise TokenError("invalid_grant", "refresh token was already used")
        return issued

    async def load_access_token(self, token: str) -> AccessToken | None:
        row = self._token_row(token, "access")
        if row is None:
            return None
        return AccessToken(**_token_fields(token, row))

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """RFC 7009 via the SDK: revoking either token ends the whole grant."""
        with self._store.atomic() as db:
            records.drop_grant_of_token(db, digest(token.token))
        logger.info("revoked an OAuth grant of client %s", token.client_id)

    def _spend(self, db: apsw.Connection, credential: str, grant_id: str) -> None:
        now = self._clock()
        records.spend(db, digest(credential), grant_id, now + SPENT_SECONDS, now)

    def _end_grant_if_spent(
        self, credential: str, what: str, client_id: str, grace_s: float = 0.0
    ) -> None:
        """A used code or rotated refresh token came back: whoever holds it is not (only) the
        client, so every token of its grant dies and the client signs in again, unless it was
        spent less than `grace_s` ago. Read first: an unknown credential (anyone can send one)
        costs no write transaction."""
        spent = records.spent(self._store.db, digest(credential))
        if spent is None:
            return
        grant_id, spent_at = spent
        if self._clock() - (spent_at or 0.0) < grace_s:
            logger.warning(
                "a %s spent moments ago came again (client %s): refused, its grant kept as a "
                "parallel request's",
                what,
                client_id,
            )
            return
        with self._store.atomic() as db:
            records.end_grant(db, grant_id)
        logger.warning(
            "a used OAuth %s was presented again (client %s): ended its grant", what, client_id
        )

    def _token_row(self, token: str, kind: str) -> records.TokenRow | None:
        row = records.token(self._store.db, digest(token), kind)
        if row is None or row[3] <= self._clock():
            return None
        return row

    def _issue_tokens(
        self, db: apsw.Connection, grant_id: str, client_id: str, scopes: list[str], resource: str
    ) -> OAuthToken:
        now = self._clock()
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        for token, kind, lifetime in (
            (access, "access", ACCESS_TOKEN_SECONDS),
            (refresh, "refresh", REFRESH_TOKEN_SECONDS),
        ):
            records.add_token(
                db, digest(token), kind, grant_id, client_id, json.dumps(scopes), resource,
                now + lifetime,
            )  # fmt: skip
        return OAuthToken(
            access_token=access,
            expires_in=ACCESS_TOKEN_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )
