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
"""

import asyncio
import json
import secrets
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from chalk import mqtt_outbox
from chalk.errors import ChalkError

HERE = Path(__file__).parent
LOCAL = ("127.0.0.1", "::1", "localhost")
PING_S = 15.0  # a comment line on quiet event streams, so proxies and browsers keep them open


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

    def table_or_404(request):
        name = request.path_params["name"]
        t = venue.tables.get(name)
        if t is None:
            raise _NotFound("no table %r here (tables: %s)" % (
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

    async def venue_page(request):
        return templates.TemplateResponse(request, "venue.html", {
            "views": [t.view() for t in _tables(venue)], "table": None,
            "title": "Chalk: every table"})

    async def table_page(request):
        t = table_or_404(request)
        return templates.TemplateResponse(request, "table.html", {
            "views": [t.view()], "table": t.name, "title": "Chalk: " + t.name})

    async def api_tables(request):
        return JSONResponse({"tables": [t.view() for t in _tables(venue)]})

    async def api_table(request):
        t = table_or_404(request)
        return JSONResponse({"name": t.name, "port": t.port, "connected": t.connected,
                             "problem": t.problem, "info": t.info, "view": t.view(),
                             "counts": t.counts})

    def stream(request, table, kind, first):
        loop = asyncio.get_running_loop()
        q = asyncio.Queue(maxsize=1000)
        item = venue.listen(loop, q, table, kind)  # before the snapshot: nothing falls between

        async def gen():
            try:
                for data in first:
                    yield _sse(kind, data)
                quiet = 0.0
                while not venue.stop.is_set():
                    try:
                        data = await asyncio.wait_for(q.get(), 1.0)
                    except asyncio.TimeoutError:
                        quiet += 1.0
                        if quiet >= PING_S:
                            quiet = 0.0
                            yield ": ping\n\n"
                        continue
                    quiet = 0.0
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
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError as e:
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

        try:
            gid = int(request.path_params["gid"])
        except ValueError:
            raise _NotFound("no game %r" % request.path_params["gid"])
        with stats.open_ro(db_path) as db:
            g = stats.game_stats(db, gid)
        if g is None:
            raise _NotFound("no game %d in the archive" % gid)
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
        _NotFound: not_found, 404: not_found, ChalkError: archive_missing})


class _NotFound(Exception):
    def __init__(self, text):
        super().__init__(text)
        self.text = text


def _tables(venue):
    return [venue.tables[k] for k in sorted(venue.tables)]


def _sse(kind, data):
    return "event: %s\ndata: %s\n\n" % (kind, json.dumps(data, separators=(",", ":")))


def _html(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
