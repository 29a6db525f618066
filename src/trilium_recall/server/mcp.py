"""The MCP server at /mcp: one `recall` tool and instructions saying when to call it.

The tool calls the engine's recall pipeline directly (no skip rules, no session dedupe), never
our own HTTP API. Initialize and list_tools never touch the index, so connecting stays fast
while the first build runs (Claude Code gives a slow server ~2 s, then starts without it).

The instructions describe the notes themselves (instances, how many notes, the largest
top-level subjects: `overview.py`), so the model knows when a call is worth it. They are built
when the server starts and again after each full sync (app.py calls `refresh_instructions`),
never during initialize; until an index exists they are the built-in text.
RECALL_INSTRUCTIONS overrides.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any
from urllib.parse import urlparse

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_REQUEST
from pydantic import Field, ValidationError
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..body_limits import PROMPT_BODY_BYTES
from ..config import MCP_PATH, Settings
from ..engine_address import LOOPBACK_HOSTS
from ..errors import RecallError, UnknownInstance
from ..search.answers import STATUS_TEXT, RecallRequest
from ..search.dates.prompt import DAY_FORM, DAY_WRITTEN, parse_day
from ..textclean import clip, one_line
from .activity import ActivityLog
from .engine import Engine
from .http_errors import BUG, NO_STORE
from .overview import InstanceOverview

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
This server searches the user's personal Trilium notebook: their own notes on projects, \
home-lab and server setups, configuration, commands they use, decisions and their reasons, \
meeting notes, a work journal, and an LLM-maintained wiki of summaries and sources.

Call `recall` before answering whenever the question may depend on something the user wrote \
down: their own projects, systems, setups, past decisions, people, dates, or "how did I / what \
did we …" questions. Phrase the query as a short description of what you are looking for. \
It returns at most a few passages with links, or "No matching notes." when nothing fits — then \
answer from general knowledge. Skip it for generic programming questions that do not depend on \
the user's own notes."""

WHEN_TO_CALL = """\
Call `recall` before answering whenever the question may depend on something the user wrote \
down: these subjects, their own projects, systems, setups, past decisions, people, dates, or \
"how did I / what did we …" questions. Phrase the query as a short description of what you \
are looking for. It returns at most a few passages with links, or "No matching notes." when \
nothing fits — then answer from general knowledge. Skip it for generic programming questions \
that do not depend on the user's own notes."""

# Claude Code truncates server instructions at 2 KB; the built text stays under it in bytes.
MAX_INSTRUCTIONS_BYTES = 2000
SUBJECT_TITLE_CHARS = 60
TRANSPORT_SECURITY_LOGGER = "mcp.server.transport_security"
REFUSED_HEADER_CHARS = 200
NO_MATCH = STATUS_TEXT["silent"]
STILL_BUILDING = STATUS_TEXT["building"]

RECALL_DESCRIPTION = """\
Search the user's Trilium notes (keywords and meaning) and return the few most relevant \
passages — title, breadcrumb path, section, excerpt and a link — or "No matching notes."."""
TODAY_DESCRIPTION = (
    "The user's local date, YYYY-MM-DD, when the query names a day from today "
    '("yesterday", "last friday"); otherwise the server\'s date is used.'
)
# The shape of a date; the tool refuses 2026-02-30 itself (a ToolError the model reads).
DAY_PATTERN = f"^{DAY_WRITTEN.pattern}$"


class RecallServer(MCPServer):
    """The SDK's server, arguments that fail the tool's schema told as one line a field
    ("limit: Input should be greater than or equal to 1"), not pydantic's dump with its links,
    and the tool's own errors without the SDK's "Error executing tool recall: " before them."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            invalid = exc.__cause__
            if isinstance(invalid, ToolError):  # the tool's own: its words, not the SDK's prefix
                raise ToolError(str(invalid)) from invalid
            if not isinstance(invalid, ValidationError):
                raise
            said = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {_told(error)}"
                for error in invalid.errors()
            )
            raise ToolError(f"bad arguments: {said}") from invalid


def _told(error: Any) -> str:
    """A field's error in words: a pattern as the form it asks for, not as its regex."""
    if error["type"] == "string_pattern_mismatch" and error["loc"] == ("today",):
        return f"{error['input']!r} is not {DAY_FORM}"
    return str(error["msg"])


def build_mcp(engine: Engine, activity: ActivityLog | None = None) -> MCPServer:
    """The server with its `recall` tool; each call goes into `activity` (path "mcp")."""
    settings = engine.settings
    given = len((settings.instructions or "").encode())
    if given > MAX_INSTRUCTIONS_BYTES:
        log.warning(
            "RECALL_INSTRUCTIONS is %d bytes: Claude Code keeps only the first %d of them",
            given,
            MAX_INSTRUCTIONS_BYTES,
        )
    server = RecallServer(
        name="trilium-recall",
        version=__version__,
        instructions=settings.instructions or INSTRUCTIONS,
    )

    # Plain text, not structured output: clients show it to the model as is (Claude Code would
    # otherwise pass a JSON-wrapped string with escaped newlines).
    @server.tool(name="recall", description=RECALL_DESCRIPTION, structured_output=False)
    async def recall_tool(
        query: Annotated[
            str,
            Field(min_length=1, max_length=20_000, description="What to look for in the notes."),
        ],
        limit: Annotated[int, Field(ge=1, le=10, description="Passages at most.")] = 3,
        instance: Annotated[str | None, Field(description="Only this Trilium instance.")] = None,
        today: Annotated[
            str | None,
            Field(pattern=DAY_PATTERN, description=TODAY_DESCRIPTION),
        ] = None,
    ) -> str:
        try:
            day = parse_day(today) if today else None
        except ValueError:  # the pattern lets 2026-02-30 through
            raise ToolError(f"bad arguments: today: {today!r} is no day of the calendar") from None
        asked = RecallRequest(
            query, instance=instance, limit=limit, use_skip_rules=False, today=day
        )
        try:
            result = await engine.recall(asked)
        except UnknownInstance as exc:  # the pipeline's own check, shown to the model
            known = ", ".join(settings.instances)
            raise ToolError(f"bad arguments: instance: {exc}; known: {known}") from None
        except RecallError as exc:  # the index unavailable (busy, rebuilt, disk full)
            raise ToolError(f"{exc}; try again in a moment") from None
        except Exception:  # a bug: the traceback goes to the log, the model gets a reason
            log.exception("the MCP recall tool failed")
            raise ToolError(BUG) from None
        if activity is not None:
            activity.record("mcp", asked.prompt, result, instance=instance)
        return result.text

    return server


def refresh_instructions(
    server: MCPServer, settings: Settings, overviews: list[InstanceOverview]
) -> None:
    """Describe the index in the instructions the next initialize sends (RECALL_INSTRUCTIONS,
    when set, stays).

    The SDK reads its low-level server's `instructions` at each initialize (and
    server/discover); the session manager holds that server as `app`, so the routes must be
    built (`mcp_routes`) first.
    """
    if not settings.instructions:
        server.session_manager.app.instructions = index_instructions(overviews)


def index_instructions(overviews: list[InstanceOverview]) -> str:
    """The instructions for an index: what it holds, then when to call `recall`. The built-in
    text while nothing is indexed; detail is shed until it fits MAX_INSTRUCTIONS_BYTES."""
    if not any(o.notes for o in overviews):
        return INSTRUCTIONS
    for parts, subjects in ((4, 8), (3, 8), (2, 6), (1, 6), (0, 6), (0, 3), (0, 0)):
        text = _describe(overviews, parts, subjects) + "\n\n" + WHEN_TO_CALL
        if len(text.encode()) <= MAX_INSTRUCTIONS_BYTES:
            return text
    return INSTRUCTIONS


def _describe(overviews: list[InstanceOverview], parts: int, subjects: int) -> str:
    shown = [o for o in overviews if o.notes]
    total = sum(o.notes for o in shown)
    where = (
        f'instance "{shown[0].name}"'
        if len(shown) == 1
        else "instances "
        + ", ".join(f'"{o.name}" ({o.notes:,})' for o in shown)
        + "; pass `instance` to search only one"
    )
    lines = [
        f"This server searches the user's personal Trilium notebook: {total:,} notes in "
        f"{where}. Its largest subjects (notes in each) and some of their parts:"
    ]
    for o in shown:
        if len(shown) > 1 and subjects:
            lines.append(f"{o.name}:")
        for subject in o.subjects[:subjects]:
            kind = f", {subject.area}" if subject.area != "other" else ""
            line = f"- {_clip(subject.title)} ({subject.notes}{kind})"
            if parts and subject.parts:
                line += ": " + ", ".join(_clip(p) for p in subject.parts[:parts])
            lines.append(line)
    return "\n".join(lines)


def _clip(title: str) -> str:
    return clip(one_line(title), SUBJECT_TITLE_CHARS)


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """Host/Origin checks against DNS rebinding: loopback, RECALL_BASE_URL, RECALL_ALLOWED_HOSTS."""
    loopback = [f"[{host}]" if ":" in host else host for host in LOOPBACK_HOSTS]
    hosts = [f"{host}:*" for host in loopback] + list(settings.allowed_hosts)
    origins = [f"http://{host}:*" for host in loopback]
    if settings.base_url:
        parsed = urlparse(settings.base_url)
        hosts += [parsed.netloc, f"{parsed.hostname}:*"]
        origins.append(f"{parsed.scheme}://{parsed.netloc}")
    origins += [f"https://{host}" for host in settings.allowed_hosts]
    origins += ["https://claude.ai", "https://claude.com"]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


class RefusedHeaderInLog(logging.Filter):
    """The SDK's Host/Origin check logs a refused header as it came ("Invalid Host header:
    yyyy…"), and the page and the login form run it before anyone signs in: a 60 KB header
    grew the log by 60 KB a request. Its lines are capped and the value quoted, as the
    engine's own lines quote client text."""

    def filter(self, record: logging.LogRecord) -> bool:
        said, colon, value = record.getMessage().partition(": ")
        quoted = f"{colon}{clip(value, REFUSED_HEADER_CHARS)!r}" if colon else ""
        record.msg = clip(said, REFUSED_HEADER_CHARS) + quoted
        record.args = ()
        return True


def cap_refused_headers_in_log() -> None:
    """Install `RefusedHeaderInLog` on the SDK's transport-security logger, once."""
    sdk = logging.getLogger(TRANSPORT_SECURITY_LOGGER)
    if not any(isinstance(f, RefusedHeaderInLog) for f in sdk.filters):
        sdk.addFilter(RefusedHeaderInLog())


def mcp_routes(server: MCPServer, settings: Settings) -> list[BaseRoute]:
    """/mcp, and /mcp/ answered by the same app, its plain-text refusals as JSON-RPC errors;
    the caller runs `server.session_manager.run()` in its lifespan.

    /mcp/ is served, not redirected: Starlette's slash redirect builds its Location from the
    Host header, so `Host: evil.example` got `Location: http://evil.example/mcp`."""
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(settings),
        max_request_body_size=PROMPT_BODY_BYTES,
        # The tool keeps nothing per session. Kept, each client's session held ~40 KB for 30
        # minutes, and a client that never closed them filled the SDK's 10,000 with every new
        # client refused (503) while /health said ok.
        stateless_http=True,
    )
    routes: list[BaseRoute] = list(app.routes)
    sdk = next(r for r in routes if isinstance(r, Route) and r.path == MCP_PATH)
    endpoint = JsonRpcRefusals(sdk.endpoint)
    others = [r for r in routes if r is not sdk]
    return [*others, Route(MCP_PATH, endpoint), Route(MCP_PATH + "/", endpoint)]


class JsonRpcRefusals:
    """An ASGI app answering each error `app` answers in plain text (the MCP SDK's refusals of a
    foreign Host or Origin, of a wrong Content-Type, of a body over the limit) as a JSON-RPC
    error with that text, under the same HTTP status: an MCP client shows a JSON-RPC error's
    message, and a bare status only as "Server returned an error response". The request was
    refused before its id was read, so the id is null (JSON-RPC 2.0, 5).
    A class, not a function: Starlette would take a function for a request handler."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused: Message | None = None
        text = bytearray()

        async def sending(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and _plain_refusal(message):
                refused = message
                return
            if refused is None or message["type"] != "http.response.body":
                await send(message)
                return
            text.extend(message.get("body", b""))
            if not message.get("more_body", False):
                reason = text.decode("utf-8", "replace").strip() or "refused"
                error = {"code": INVALID_REQUEST, "message": reason}
                body = {"jsonrpc": "2.0", "id": None, "error": error}
                answer = JSONResponse(body, refused["status"], headers=NO_STORE)
                await answer(scope, receive, send)

        await self.app(scope, receive, sending)


def _plain_refusal(start: Message) -> bool:
    headers = {name.lower(): value for name, value in start.get("headers", [])}
    kind = headers.get(b"content-type", b"")
    return start["status"] >= 400 and b"json" not in kind
