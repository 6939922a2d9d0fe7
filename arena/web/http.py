"""What every answer of the site shares at the HTTP level, whichever route made it.

- ``X-Content-Type-Options: nosniff`` on every response (pages, JSON, static files,
  errors): a browser takes each for the type it is served as, never guesses another
  (an uploaded bot's text shown as a script, say).
- ``Retry-After`` on every 429 and 503 that did not set its own: a client is told
  when to come back.
- ``HEAD`` for every route that answers ``GET``: the same status and headers, no body.
- The session cookie (Starlette's ``SessionMiddleware``) is ``Secure`` when the site
  is told so (``arena serve --secure-cookies``) and, by itself, on any request that
  came over HTTPS, which for ``arena serve --behind-proxy`` means the proxy on this
  machine said so in ``X-Forwarded-Proto`` (uvicorn's proxy headers set the request's
  scheme from it, only for that proxy).
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

RETRY_SECONDS = 60  # Retry-After of a 429 or 503 that gave none of its own


class HttpRules:
    """The HTTP rules above (nosniff, Retry-After, HEAD), around the whole site: its
    error pages of last resort included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:  # answered as GET, whose body is then left out (its Content-Length kept, as HEAD says)
            scope = {**scope, "method": "GET"}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["X-Content-Type-Options"] = "nosniff"
                if message["status"] in (429, 503) and "retry-after" not in headers:
                    headers["Retry-After"] = str(RETRY_SECONDS)
            elif message["type"] == "http.response.body" and head:
                message = {**message, "body": b""}
            await send(message)

        await self.app(scope, receive, sending)


class Sessions:
    """Starlette's ``SessionMiddleware``, its cookie ``Secure`` when ``secure`` or when
    the request came over HTTPS (its scheme)."""

    def __init__(self, app: ASGIApp, /, secure: bool = False, **settings: Any) -> None:
        self.plain = SessionMiddleware(app, https_only=secure, **settings)
        self.secure = SessionMiddleware(app, https_only=True, **settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.secure if scope.get("scheme") in ("https", "wss") else self.plain
        await chosen(scope, receive, send)
