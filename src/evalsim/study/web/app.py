"""The console's web app: :func:`create_app` builds it over one locked study folder.

Routes are thin: parse, call :class:`evalsim.study.web.console.ConsoleStudy`, render. Pages
are Jinja2 templates with autoescape on; their scripts fill in data with ``textContent``
only, so a note or a name is never markup. State lives in the study's store, never here:
the app keeps only a cache of the last state it computed and a version counter that
server-sent events push to the pages (``/api/stream``) when an event is stored, by this
server or by another process (``evalsim study record``; the store file is watched).

Pages: ``/`` the operator's console, ``/mirror`` a second screen, ``/review`` the blind
review. API: ``GET /api/state``, ``GET /api/stream`` (SSE), ``GET /api/review``,
``POST /api/session``, ``/api/pause``, ``/api/run``, ``/api/outcome``, ``/api/undo``,
``/api/review``; ``GET /artefact/<path>`` serves a run's files from the study's ``runs/``.

References
----------
.. [1] Starlette, https://www.starlette.io/ ; uvicorn, https://www.uvicorn.org/
.. [2] WHATWG HTML, "Server-sent events",
   https://html.spec.whatwg.org/multipage/server-sent-events.html
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import mimetypes
import os
from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from evalsim.study.errors import StudyError
from evalsim.study.web.console import ConsoleError, ConsoleStudy
from evalsim.study.web.guard import LOCAL_HOSTS, Guard

__all__ = ["create_app", "ROUTES"]

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
#: Every route's path, for the blinding crawl (tests/test_study_console.py).
ROUTES = (
    "/",
    "/mirror",
    "/review",
    "/api/state",
    "/api/stream",
    "/api/review",
    "/api/session",
    "/api/pause",
    "/api/run",
    "/api/outcome",
    "/api/undo",
    "/artefact/{path:path}",
    "/static",
)
TEXT_ARTEFACTS = {".log", ".txt", ".json", ".csv", ".yaml", ".md"}
KEEPALIVE_S = 15.0
WATCH_S = 0.25


class _Changes:
    """The state's version, the last state computed, and the pages waiting for a change."""

    def __init__(self, study: ConsoleStudy) -> None:
        self.study = study
        self.version = -1
        self.state: dict | None = None
        self.cond = asyncio.Condition()
        self.stamp = None

    def _file_stamp(self):
        out = []
        for suffix in ("", "-wal"):
            try:
                s = os.stat(str(self.study.store.path) + suffix)
                out.append((s.st_size, s.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    async def refresh(self) -> dict:
        """Recompute the state; wake the streams if it changed."""
        self.stamp = self._file_stamp()
        state = await run_in_threadpool(self.study.state)
        changed = self.state is None or state != self.state
        self.state = state
        if changed:
            async with self.cond:
                self.version += 1
                self.cond.notify_all()
        return state

    async def watch(self) -> None:
        """Poll the store file for writes by other processes (cheap: two ``stat`` calls)."""
        while True:
            await asyncio.sleep(WATCH_S)
            try:
                if self._file_stamp() != self.stamp:
                    await self.refresh()
            except StudyError:
                pass


def _json_error(err: Exception) -> JSONResponse:
    status = getattr(err, "status", 400)
    return JSONResponse({"error": str(err)}, status_code=status)


async def _body(request: Request) -> dict:
    try:
        data = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        raise ConsoleError("the body is not JSON") from None
    if not isinstance(data, dict):
        raise ConsoleError("the body must be a JSON object")
    return data


def create_app(
    study_dir,
    token: str | None = None,
    *,
    allowed_hosts: tuple[str, ...] | None = LOCAL_HOSTS,
    max_body_bytes: int = 16384,
):
    """The console app over the locked study in ``study_dir``.

    Parameters
    ----------
    study_dir : path
        A locked study folder.
    token : str, optional
        The access token every request must carry (``--lan``).
    allowed_hosts : tuple of str or None
        Host names answered (default 127.0.0.1 and localhost; None for any, with a token).
    max_body_bytes : int
        Largest request body.

    Returns
    -------
    ASGI app
        A Starlette app wrapped in :class:`evalsim.study.web.guard.Guard`.
    """
    study = ConsoleStudy(study_dir)
    changes = _Changes(study)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )

    def page(name: str, **ctx) -> HTMLResponse:
        html = env.get_template(name).render(**ctx)
        return HTMLResponse(
            html,
            headers={
                "cache-control": "no-store",
                "content-security-policy": "default-src 'self'; img-src 'self' data:; "
                "style-src 'self'; script-src 'self'; frame-ancestors 'none'",
                "x-content-type-options": "nosniff",
                "referrer-policy": "no-referrer",
            },
        )

    async def operator(request: Request):
        return page("operator.html", page_name="operator")

    async def mirror(request: Request):
        return page("mirror.html", page_name="mirror")

    async def review(request: Request):
        return page("review.html", page_name="review")

    async def api_state(request: Request):
        try:
            return JSONResponse(await changes.refresh(), headers={"cache-control": "no-store"})
        except StudyError as err:
            return _json_error(err)

    async def api_stream(request: Request):
        if changes.state is None:
            await changes.refresh()

        async def events():
            seen = None
            while True:
                async with changes.cond:
                    if seen == changes.version:
                        try:
                            await asyncio.wait_for(changes.cond.wait(), KEEPALIVE_S)
                        except TimeoutError:
                            pass
                    version, state = changes.version, changes.state
                if await request.is_disconnected():
                    return
                if version == seen:
                    yield ": keepalive\n\n"
                    continue
                seen = version
                yield f"id: {version}\ndata: {json.dumps(state)}\n\n"

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    def writer(method):
        async def endpoint(request: Request):
            try:
                data = await _body(request)
                result = await run_in_threadpool(method, data)
            except (ConsoleError, StudyError) as err:
                return _json_error(err)
            except Exception as err:  # a bug: say so in one line, keep the trace in the log
                log.exception("%s failed", request.url.path)
                return JSONResponse({"error": f"server error: {err}"}, status_code=500)
            await changes.refresh()
            return JSONResponse(result, headers={"cache-control": "no-store"})

        return endpoint

    def _session(d):
        return study.start_session(d.get("id"), d.get("operator"), d.get("checklist"))

    def _pause(d):
        return study.set_pause(d.get("id"), d.get("paused"))

    def _run(d):
        return study.run_trial(d.get("id"), d.get("trial"))

    def _outcome(d):
        return study.record_outcome(
            d.get("id"),
            d.get("trial"),
            d.get("success"),
            d.get("failure"),
            d.get("note"),
            d.get("duration_s"),
            d.get("operator"),
        )

    def _undo(d):
        return study.undo_last(d.get("id"), d.get("expected"))

    def _review(d):
        return study.record_review(
            d.get("id"), d.get("key"), d.get("success"), d.get("failure"), d.get("reviewer")
        )

    async def api_review(request: Request):
        try:
            items = await run_in_threadpool(study.review_items)
        except StudyError as err:
            return _json_error(err)
        return JSONResponse(
            {"items": items, "failure_types": list(study.failure_types)},
            headers={"cache-control": "no-store"},
        )

    async def artefact(request: Request):
        try:
            path = study.artefact_path(request.path_params["path"])
        except ConsoleError as err:
            return _json_error(err)
        blind = (changes.state or await changes.refresh()).get("unblinded") is False
        if path.suffix.lower() in TEXT_ARTEFACTS:
            text = path.read_text(encoding="utf-8", errors="replace")
            if blind:
                text = study.redact(text)
            return Response(text, media_type="text/plain; charset=utf-8")
        media = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return Response(
            path.read_bytes(),
            media_type=media,
            headers={"content-disposition": "inline", "x-content-type-options": "nosniff"},
        )

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await changes.refresh()
        task = asyncio.create_task(changes.watch())
        try:
            yield
        finally:
            task.cancel()
            study.close()

    routes = [
        Route("/", operator),
        Route("/mirror", mirror),
        Route("/review", review),
        Route("/api/state", api_state),
        Route("/api/stream", api_stream),
        Route("/api/review", api_review, methods=["GET"]),
        Route("/api/session", writer(_session), methods=["POST"]),
        Route("/api/pause", writer(_pause), methods=["POST"]),
        Route("/api/run", writer(_run), methods=["POST"]),
        Route("/api/outcome", writer(_outcome), methods=["POST"]),
        Route("/api/undo", writer(_undo), methods=["POST"]),
        Route("/api/review", writer(_review), methods=["POST"]),
        Route("/artefact/{path:path}", artefact),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.study = study
    return Guard(app, token=token, allowed_hosts=allowed_hosts, max_body_bytes=max_body_bytes)
