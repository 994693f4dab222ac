"""The console's guard: one ASGI middleware in front of every route.

- **Host.** Bound to 127.0.0.1, the server answers only requests addressed to 127.0.0.1 or
  localhost (a page of another site cannot reach it through DNS rebinding).
- **Token** (``--lan``). Every request must carry the access token: ``?token=...`` in the URL
  (the printed link and QR code; the answer then sets it as an ``HttpOnly``,
  ``SameSite=Strict`` cookie, so the page's own requests carry it), the cookie, or an
  ``Authorization: Bearer`` header. Without it: 401.
- **Writes** (every method but GET and HEAD): an ``Origin`` header, when sent, must be this
  server's own; in ``--lan`` mode a write without an ``Origin`` must carry the token in the
  ``Authorization`` header (a browser always sends ``Origin`` on a write, so a cookie alone
  never authorises a write from elsewhere). The body must be ``application/json`` (else 415)
  and at most ``max_body_bytes`` (else 413), counted as it arrives, whatever
  ``Content-Length`` claims.

References
----------
.. [1] OWASP, "Cross-Site Request Forgery Prevention Cheat Sheet" (verifying the origin with
   standard headers; SameSite cookies).
.. [2] Starlette, "Middleware" (pure ASGI middleware), https://www.starlette.io/middleware/
"""

from __future__ import annotations

import json
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

__all__ = ["Guard", "TOKEN_COOKIE", "LOCAL_HOSTS"]

TOKEN_COOKIE = "evalsim_token"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
SAFE_METHODS = ("GET", "HEAD")


def _headers(scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in scope.get("headers", []):
        key = k.decode("latin-1").lower()
        out[key] = v.decode("latin-1") if key not in out else out[key] + "; " + v.decode("latin-1")
    return out


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if ":" in host else host


async def _refuse(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: host, token, origin, content type and body size (module docstring).

    Parameters
    ----------
    app : ASGI app
    token : str or None
        The access token (``--lan``); None on 127.0.0.1.
    allowed_hosts : tuple of str or None
        Host names the server answers to; None for any (``--lan``: the token guards it).
    max_body_bytes : int
        Largest request body accepted.
    """

    def __init__(self, app, token=None, allowed_hosts=LOCAL_HOSTS, max_body_bytes=16384):
        self.app = app
        self.token = token
        self.allowed_hosts = allowed_hosts
        self.max_body_bytes = int(max_body_bytes)

    def _supplied_token(self, scope, headers) -> tuple[str | None, str | None]:
        """(token, where): from the query, the Authorization header, or the cookie."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if query.get("token"):
            return query["token"][0], "query"
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip(), "header"
        if "cookie" in headers:
            jar = SimpleCookie()
            try:
                jar.load(headers["cookie"])
            except Exception:  # a malformed cookie header carries no token
                return None, None
            if TOKEN_COOKIE in jar:
                return jar[TOKEN_COOKIE].value, "cookie"
        return None, None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = _headers(scope)
        host = headers.get("host", "")
        if self.allowed_hosts is not None and _hostname(host) not in self.allowed_hosts:
            return await _refuse(send, 400, f"unknown host {host!r}; use 127.0.0.1")
        where = None
        if self.token is not None:
            supplied, where = self._supplied_token(scope, headers)
            if supplied is None or not secrets.compare_digest(
                supplied.encode("utf-8", "replace"), self.token.encode()
            ):
                return await _refuse(send, 401, "access token required (open the printed URL)")
        method = scope["method"]
        if method not in SAFE_METHODS:
            origin = headers.get("origin")
            scheme = scope.get("scheme", "http")
            if origin is not None and origin != f"{scheme}://{host}":
                return await _refuse(send, 403, f"write from another origin refused ({origin})")
            if origin is None and self.token is not None and where != "header":
                return await _refuse(send, 403, "write without Origin needs the Bearer token")
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return await _refuse(send, 415, "the body must be application/json")
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
                return await _refuse(send, 413, f"body over {self.max_body_bytes} bytes")
            body = bytearray()
            while True:
                msg = await receive()
                if msg["type"] == "http.disconnect":
                    return
                body.extend(msg.get("body", b""))
                if len(body) > self.max_body_bytes:
                    return await _refuse(send, 413, f"body over {self.max_body_bytes} bytes")
                if not msg.get("more_body"):
                    break
            replayed = False

            async def receive_body():
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": bytes(body), "more_body": False}
                return await receive()

            receive = receive_body
        if where == "query":
            cookie = f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()

            async def send_cookie(message):
                if message["type"] == "http.response.start":
                    message = dict(message)
                    message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
                await send(message)

            return await self.app(scope, receive, send_cookie)
        return await self.app(scope, receive, send)
