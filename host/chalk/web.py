"""The venue's web scoreboard and local API: a Starlette app served by uvicorn (`chalk serve`).

Pages (read-only, open to anyone who can reach the server: the pub's TV, a phone on the Wi-Fi):
  /                       every table on one screen
  /table/NAME             one table, big
  /stats                  players across the archive; /stats/game/ID one game's plots
  /static/...             the pages' CSS and script (no CDN: everything is served from here)

API (JSON; docs/venue.md):
  GET  /api/tables                    every table's view
  GET  /api/tables/NAME               one table: connected, problem, info, view
  GET  /api/events[?table=NAME]       server-sent events: a `view` event per change
  GET  /api/tables/NAME/frames        server-sent events: the board's own frames, as they come
  POST /api/tables/NAME/request       {"cmd", "args", "timeout"}: a command to the board
  POST /api/tables/NAME/new | /undo   the same for `new` (args as the body) and `undo`

Control (the POSTs) is taken only from the host itself (127.0.0.1, ::1) or with the token
(`Authorization: Bearer TOKEN`), and only as `Content-Type: application/json`, which a page on
another site cannot send without the browser asking first (and this server never says yes).
The client's address is the connection's own: uvicorn's proxy headers are off (serve.py), so an
X-Forwarded-For header changes nothing. Links in the pages are paths ("/static/chalk.css"),
never built from the request's Host header.
"""

import asyncio
import json
import re
import secrets
from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from chalk import mqtt_outbox
from chalk.errors import ChalkError, NotFound
from chalk.serve import HEARTBEAT_S, BadRequest
from scoreboard.safejson import loads

HERE = Path(__file__).parent
LOCAL = ("127.0.0.1", "::1", "localhost")
# Every event stream carries a `beat` this often: a page that misses two knows the server is
# gone (and says so on every card) rather than showing frozen scores as live.
SERVER_BEAT_S = HEARTBEAT_S
RETRY_MS = 1000  # how soon a browser reconnects a broken event stream
BODY_MAX = 1024 * 1024  # bytes of a control request's body (a board takes 1 KB frames)
GAME_ID = re.compile(r"[0-9]{1,18}")  # an archive's game id, as SQLite can hold it


def _error(status, message, hint=None, **more):
    body = {"error": message}
    if hint:
        body["hint"] = hint
    body.update(more)
    return JSONResponse(body, status_code=status)


def create_app(venue, token=None, db_path=None):
    """The ASGI app for a Venue. `token`: the control token (None: control from the host only);
    `db_path`: the archive the statistics pages read (read-only)."""
    templates = Jinja2Templates(directory=str(HERE / "templates"))

    @jinja2.pass_context
    def url_for(context, name, /, **path_params):
        # A path, not an absolute URL: nothing the request's Host header says reaches the page.
        return str(context["request"].app.url_path_for(name, **path_params))

    templates.env.globals["url_for"] = url_for

    def table_or_404(request):
        name = request.path_params["name"]
        t = venue.tables.get(name)
        if t is None:
            raise NotFound("no table %r here (tables: %s)" % (
                name, ", ".join(sorted(venue.tables)) or "none"))
        return t

    def may_control(request):
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return "control requests must be sent as application/json"
        auth = request.headers.get("authorization", "")
        if token and auth.startswith("Bearer ") and secrets.compare_digest(
                auth[7:].strip().encode(), token.encode()):
            return None
        host = request.client.host if request.client else None
        if host in LOCAL and not request.headers.get("origin"):
            return None
        return "control of a board is only for the host itself or with the token"

    def page(request, name, views, table, title):
        return templates.TemplateResponse(request, name, {
            "views": views, "table": table, "title": title,
            "tv": "tv" in request.query_params or "kiosk" in request.query_params,
            "beat": SERVER_BEAT_S})

    async def venue_page(request):
        return page(request, "venue.html", [t.view() for t in _tables(venue)], None,
                    "Chalk: every table")

    async def table_page(request):
        t = table_or_404(request)
        return page(request, "table.html", [t.view()], t.name, "Chalk: " + t.name)

    async def api_tables(request):
        return JSONResponse({"tables": [t.view() for t in _tables(venue)]})

    async def api_table(request):
        t = table_or_404(request)
        v = t.view()
        return JSONResponse({"name": t.name, "port": t.port, "connected": t.connected,
                             "state": v["state"], "problem": v["why"] or None, "info": t.info,
                             "view": v, "counts": t.counts, "restarts": t.worker_restarts})

    def stream(request, table, kind, first):
        loop = asyncio.get_running_loop()
        q = asyncio.Queue(maxsize=1000)
        item = venue.listen(loop, q, table, kind)  # before the snapshot: nothing falls between

        async def gen():
            try:
                yield "retry: %d\n\n" % RETRY_MS
                if kind == "view":  # which tables there are now (a restarted server may differ)
                    yield _sse("tables", {"tables": sorted(venue.tables),
                                          "beat": SERVER_BEAT_S})
                for data in first:
                    yield _sse(kind, data)
                beat = loop.time() + SERVER_BEAT_S
                while not venue.stop.is_set():
                    try:
                        data = await asyncio.wait_for(q.get(), max(0.0, beat - loop.time()))
                    except asyncio.TimeoutError:
                        beat = loop.time() + SERVER_BEAT_S
                        yield _sse("beat", {"beat": SERVER_BEAT_S}) if kind == "view" \
                            else ": beat\n\n"
                        continue
                    yield _sse(kind, data)
            finally:
                venue.unlisten(item)

        return StreamingResponse(gen(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    async def api_events(request):
        name = request.query_params.get("table")
        if name is not None and name not in venue.tables:
            return _error(404, "no table %r here" % name)
        return stream(request, name, "view",
                      [t.view() for t in _tables(venue) if name in (None, t.name)])

    async def api_frames(request):
        t = table_or_404(request)
        return stream(request, t.name, "frame", [])

    async def control(request, cmd=None):
        t = table_or_404(request)
        why = may_control(request)
        if why:
            return _error(403, why, "run the command on the host running chalk serve, or send "
                          "Authorization: Bearer TOKEN (chalk serve --token)")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > BODY_MAX:
                return _error(413, "the request body is over %d bytes" % BODY_MAX)
        try:
            body = loads(raw.decode("utf-8") or "{}")
        except UnicodeDecodeError as e:
            return _error(400, "the request body is not UTF-8 text: %s" % e.reason)
        except (ValueError, RecursionError) as e:
            return _error(400, "the request body is not JSON: %s" % e)
        if type(body) is not dict:
            return _error(400, "the request body must be a JSON object")
        if cmd is None:
            cmd, args = body.get("cmd"), body.get("args") or {}
            timeout = body.get("timeout", 5.0)
        else:
            args, timeout = body, 5.0
        if type(cmd) is not str or type(args) is not dict or type(timeout) not in (int, float):
            return _error(400, 'give {"cmd": NAME, "args": {...}, "timeout": SECONDS}')
        fut = t.submit(cmd, args, min(max(float(timeout), 0.1), 60.0))
        try:
            result = await asyncio.wrap_future(fut)
        except BadRequest as e:
            return _error(400, e.message, e.hint)
        except ChalkError as e:
            reason = getattr(e, "reason", None)
            if reason is not None:
                return _error(409, e.message, e.hint, reason=reason, payload=e.payload)
            return _error(503, e.message, e.hint)
        return JSONResponse({"result": result})

    async def api_request(request):
        return await control(request)

    async def api_new(request):
        return await control(request, "new")

    async def api_undo(request):
        return await control(request, "undo")

    async def api_dispute(request):  # a game disputed at the league (docs/mqtt.md)
        return await mqtt_outbox.api_dispute(request, venue, db_path, may_control)

    # The statistics replay games from the archive: plain functions, which Starlette runs in
    # its thread pool, so the event streams of the scoreboard never wait for them.
    def stats_page(request):
        from chalk import stats

        with stats.open_ro(db_path) as db:
            report = stats.players(db)
            games = stats.game_list(db)
        return templates.TemplateResponse(request, "stats.html", {
            "report": report, "games": games, "title": "Chalk: statistics"})

    def game_page(request):
        from chalk import stats

        text = request.path_params["gid"]
        if not GAME_ID.fullmatch(text):
            raise NotFound("no game %r" % text[:40])
        gid = int(text)
        with stats.open_ro(db_path) as db:
            g = stats.game_stats(db, gid)
        if g is None:
            raise NotFound("no game %d in the archive" % gid)
        return templates.TemplateResponse(request, "game.html", {
            "g": g, "title": "Chalk: game %d" % gid})

    async def not_found(request, exc):
        text = getattr(exc, "text", None) or "not found"
        if request.url.path.startswith("/api/"):
            return _error(404, text)
        return HTMLResponse("<!doctype html><title>not found</title><p>%s</p>"
                            % _html(text), status_code=404)

    async def archive_missing(request, exc):
        return _error(503, exc.message, exc.hint)

    routes = [
        Route("/", venue_page),
        Route("/table/{name}", table_page),
        Route("/stats", stats_page),
        Route("/stats/game/{gid}", game_page),
        Route("/api/tables", api_tables),
        Route("/api/events", api_events),
        Route("/api/tables/{name}", api_table),
        Route("/api/tables/{name}/frames", api_frames),
        Route("/api/tables/{name}/request", api_request, methods=["POST"]),
        Route("/api/tables/{name}/new", api_new, methods=["POST"]),
        Route("/api/tables/{name}/undo", api_undo, methods=["POST"]),
        Route("/api/disputes", api_dispute, methods=["POST"]),
        Route("/api/mqtt", lambda r: JSONResponse(
            {"mqtt": venue.mqtt.status() if getattr(venue, "mqtt", None) else None})),
        Route("/favicon.ico", lambda r: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    return Starlette(routes=routes, exception_handlers={
        NotFound: not_found, 404: not_found, ChalkError: archive_missing})


def _tables(venue):
    return [venue.tables[k] for k in sorted(venue.tables)]


def _sse(kind, data):
    return "event: %s\ndata: %s\n\n" % (kind, json.dumps(data, separators=(",", ":")))


def _html(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
