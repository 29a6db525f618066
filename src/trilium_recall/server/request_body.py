"""Reading a JSON request body: bounded in size, an object, or a BadRequest that says why."""

from __future__ import annotations

import datetime
import json
from typing import Any

from starlette.requests import Request

from ..body_limits import PROMPT_BODY_BYTES, read_at_most
from ..errors import BadRequest, BodyTooLarge
from ..search.dates.prompt import DAY_FORM, parse_day
from ..textclean import valid_utf8


async def read_json(request: Request, limit: int = PROMPT_BODY_BYTES) -> dict[str, Any]:
    """The body as a JSON object; over `limit` bytes (body_limits.py) it is refused unparsed."""
    raw = await read_at_most(request.headers, request.receive, limit)
    if raw is None:
        raise BodyTooLarge(f"body larger than {limit} bytes")
    try:
        body = json.loads(raw)
    except ValueError:  # UnicodeDecodeError included
        raise BadRequest("body is not valid JSON") from None
    except RecursionError:
        raise BadRequest("body is nested too deeply") from None
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    return body


def prompt_field(body: dict[str, Any], name: str = "prompt") -> str:
    """A required string (made searchable by RecallRequest)."""
    prompt = body.get(name)
    if not isinstance(prompt, str):
        raise BadRequest(f"'{name}' is required and must be a string")
    return prompt


def optional_text(body: dict[str, Any], name: str) -> str | None:
    """A string or absent; an empty string counts as absent."""
    value = valid_utf8(body.get(name))
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"'{name}' must be a string")
    return value or None


def optional_date(body: dict[str, Any], name: str) -> datetime.date | None:
    """A calendar date written YYYY-MM-DD, or absent."""
    value = optional_text(body, name)
    if value is None:
        return None
    try:
        return parse_day(value)
    except ValueError:
        raise BadRequest(f"'{name}' must be {DAY_FORM}") from None
