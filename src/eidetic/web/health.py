"""``GET /healthz``: whether this server can serve, for a reverse proxy or a service manager.

It needs no token and says nothing about the store but that it answers: ``{"ok": true,
"version": ...}``, or 503 with a short reason. Never a DSN, a path, a count or a record, and no
cookie: whoever can reach the port may ask it.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse

from .. import __version__
from ..errors import EideticError
from .respond import session_of

HEALTH_PATH = "/healthz"
ANSWER_WITHIN = 10.0  # seconds: a store that takes longer counts as not answering


async def healthz(request: Request) -> JSONResponse:
    session = session_of(request)

    def answers() -> None:
        for store in session.memory.stores():
            store.exists()  # cheap: a path looked at, or one query to the database server

    try:
        await asyncio.wait_for(session.call(answers), ANSWER_WITHIN)
    except TimeoutError:
        return _unwell(f"the store did not answer within {ANSWER_WITHIN:g} s")
    except (EideticError, OSError):  # its message may name the server or a path: not said here
        return _unwell("the store does not answer")
    return JSONResponse({"ok": True, "version": __version__}, headers={"Cache-Control": "no-store"})


def _unwell(reason: str) -> JSONResponse:
    return JSONResponse(
        {"ok": False, "version": __version__, "reason": reason}, status_code=503, headers={"Cache-Control": "no-store"}
    )
