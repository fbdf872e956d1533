"""The league's pages and API (Starlette, served by `chalk league run`; docs/league.md).

Pages (read-only): / standings and what the league noticed; /results by round and venue;
/game/ID one game with its verdict, receipts and disputes; /player/NAME a player's (or team's)
record; /venues the venues, their boards and whether they are online. The same as CSV:
/standings.csv, /results.csv, /matches.csv (a tournament tool's per-match scores).

API: GET /api/standings, /api/games, /api/reports; control (the host itself, or
`Authorization: Bearer TOKEN` with the league's token, as application/json):
POST /api/games/ID/dispute {"note"}, POST /api/disputes/ID/resolve {"outcome", "note"}.
"""

import json
import secrets
from pathlib import Path
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from chalk import leaguecheck, leaguerank
from chalk.errors import ChalkError, NotFound
from chalk.leaguedb import LeagueDB

HERE = Path(__file__).parent
LOCAL = ("127.0.0.1", "::1", "localhost")
GRADE_CLASS = {"ok-finished": "ok", "legacy": "warn", "ok-in-progress": "warn"}


def create_app(league, db_path, token=None, status=None):
    """The ASGI app. `status()`: the collector's live status (broker, venues online)."""
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals["quote"] = lambda s: quote(str(s), safe="")
    templates.env.globals["grade_class"] = lambda g: GRADE_CLASS.get(g, "bad")
    templates.env.globals["grade_words"] = lambda g: leaguecheck.WORDS.get(g, g or "")

    def read():
        db = LeagueDB(db_path, readonly=True)
        try:
            games = db.games()
            disputes = db.disputes()
            assessed = leaguerank.assess(league, games, disputes)
            return db, games, disputes, assessed
        except BaseException:
            db.close()
            raise

    def page(request, name, **ctx):
        live = status() if status else {}
        ctx.update(league=league, live=live, title=ctx.get("title") or league.name)
        return templates.TemplateResponse(request, name, ctx)

    def standings_page(request):
        db, games, disputes, assessed = read()
        try:
            rows = leaguerank.standings(league, assessed)
            problems = leaguerank.sequences(league, games)
            reports = db.reports()
        finally:
            db.close()
        pending = [a for a in assessed if a.status == leaguerank.PENDING]
        rejected = [a for a in assessed if (a.game["verdict"] or {}).get("grade")
                    not in leaguecheck.AUTHENTIC]
        return page(request, "league_standings.html", rows=rows, problems=problems,
                    reports=[r for r in reports if r["kind"] != "refused"][-30:],
                    refused=[r for r in reports if r["kind"] == "refused"][-10:],
                    pending=pending, rejected=rejected[-20:], assessed=assessed)

    def results_page(request):
        db, games, disputes, assessed = read()
        db.close()
        return page(request, "league_results.html", rounds=leaguerank.by_round(league,
                                                                               assessed),
                    title="%s: results" % league.name)

    def game_page(request):
        try:
            gid = int(request.path_params["gid"])
        except ValueError:
            raise NotFound("no game %r" % request.path_params["gid"][:40])
        db, games, disputes, assessed = read()
        try:
            a = next((x for x in assessed if x.id == gid), None)
            if a is None:
                raise NotFound("no game %d in the league's archive" % gid)
            receipts = db.receipts(gid)
            log = db.log(gid)
        finally:
            db.close()
        return page(request, "league_game.html", a=a, g=a.game, receipts=receipts,
                    actions=_actions(log, a), title="%s: game %d" % (league.name, gid))

    def player_page(request):
        name = request.path_params["name"]
        who = league.entrant(name) or next((t for t in league.teams
                                            if leaguerank.norm(t) == leaguerank.norm(name)),
                                           None)
        if who is None:
            raise NotFound("no player or team %r in %s" % (name[:60], league.name))
        db, games, disputes, assessed = read()
        db.close()
        rec = leaguerank.record(league, assessed, who)
        row = next((r for r in leaguerank.standings(league, assessed) if r["name"] == who),
                   None)
        team = league.team_of.get(leaguerank.norm(who))
        return page(request, "league_player.html", who=who, rec=rec, row=row, team=team,
                    members=league.teams.get(who), title="%s: %s" % (league.name, who))

    def venues_page(request):
        db, games, disputes, assessed = read()
        db.close()
        last = {}
        for g in games:
            last[g["venue"]] = g["received"]
        problems = leaguerank.sequences(league, games)
        return page(request, "league_venues.html", last=last, problems=problems,
                    title="%s: venues" % league.name)

    def csv_response(text, name):
        return Response(text, media_type="text/csv; charset=utf-8", headers={
            "Content-Disposition": 'attachment; filename="%s-%s.csv"' % (league.id, name)})

    def standings_csv(request):
        db, games, disputes, assessed = read()
        db.close()
        return csv_response(leaguerank.standings_csv(leaguerank.standings(league, assessed)),
                            "standings")

    def results_csv(request):
        db, games, disputes, assessed = read()
        db.close()
        return csv_response(leaguerank.results_csv(league, assessed), "results")

    def matches_csv(request):
        db, games, disputes, assessed = read()
        db.close()
        return csv_response(leaguerank.matches_csv(league, assessed), "matches")

    def api_standings(request):
        from chalk.league import snapshot

        with LeagueDB(db_path, readonly=True) as db:
            body = snapshot(league, db)
        body["live"] = status() if status else {}
        return JSONResponse(body)

    def api_games(request):
        db, games, disputes, assessed = read()
        db.close()
        return JSONResponse({"games": [_game_json(league, a) for a in assessed]})

    def api_reports(request):
        db, games, disputes, assessed = read()
        try:
            reports = db.reports()
        finally:
            db.close()
        return JSONResponse({"sequences": leaguerank.sequences(league, games),
                             "reports": reports, "disputes": disputes})

    def may_control(request):
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return "control requests must be sent as application/json"
        auth = request.headers.get("authorization", "")
        if token and auth.startswith("Bearer ") and secrets.compare_digest(
                auth[7:].strip().encode("utf-8", "replace"), token.encode()):
            return None
        host = request.client.host if request.client else None
        if host in LOCAL and not request.headers.get("origin"):
            return None
        return "disputes are raised and resolved only from the league's host or with its token"

    async def body_of(request):
        why = may_control(request)
        if why:
            return None, _error(403, why, "send Authorization: Bearer TOKEN (chalk league run "
                                "--token, or the league.token file beside its archive)")
        raw = await request.body()
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            return None, _error(400, "the request body is not JSON")
        if type(body) is not dict:
            return None, _error(400, "the request body must be a JSON object")
        return body, None

    async def api_dispute(request):
        from starlette.concurrency import run_in_threadpool

        from chalk.mqtt_outbox import check_note

        body, err = await body_of(request)
        if err:
            return err
        def raise_it(gid, note):
            with LeagueDB(db_path) as db:
                return db.dispute(gid, "league", note)
        try:
            gid = int(request.path_params["gid"])
            note = check_note(body.get("note"))
            did = await run_in_threadpool(raise_it, gid, note)
        except ValueError:
            return _error(404, "no game %r" % request.path_params["gid"][:40])
        except ChalkError as e:
            return _error(409, e.message, e.hint)
        return JSONResponse({"result": {"dispute": did, "game": gid, "status": "pending"}})

    async def api_resolve(request):
        from starlette.concurrency import run_in_threadpool

        from chalk.mqtt_outbox import check_note

        body, err = await body_of(request)
        if err:
            return err

        def resolve_it(did, outcome, note):
            with LeagueDB(db_path) as db:
                db.resolve(did, outcome, note)
        try:
            did = int(request.path_params["did"])
            note = check_note(body.get("note"))
            await run_in_threadpool(resolve_it, did, body.get("outcome"), note)
        except ValueError:
            return _error(404, "no dispute %r" % request.path_params["did"][:40])
        except ChalkError as e:
            return _error(409, e.message, e.hint)
        return JSONResponse({"result": {"dispute": did, "outcome": body.get("outcome")}})

    async def not_found(request, exc):
        text = getattr(exc, "text", None) or "not found"
        if request.url.path.startswith("/api/"):
            return _error(404, text)
        return HTMLResponse("<!doctype html><meta charset=utf-8><title>not found</title>"
                            "<p style='font-size:2rem'>%s</p><p><a href='/'>standings</a>"
                            % _html(text), status_code=404)

    async def chalk_error(request, exc):
        return _error(503, exc.message, exc.hint)

    routes = [
        Route("/", standings_page, name="standings"),
        Route("/results", results_page, name="results"),
        Route("/game/{gid}", game_page, name="game"),
        Route("/player/{name:path}", player_page, name="player"),
        Route("/venues", venues_page, name="venues"),
        Route("/standings.csv", standings_csv),
        Route("/results.csv", results_csv),
        Route("/matches.csv", matches_csv),
        Route("/api/standings", api_standings),
        Route("/api/games", api_games),
        Route("/api/reports", api_reports),
        Route("/api/games/{gid}/dispute", api_dispute, methods=["POST"]),
        Route("/api/disputes/{did}/resolve", api_resolve, methods=["POST"]),
        Route("/favicon.ico", lambda r: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    return Starlette(routes=routes, exception_handlers={
        NotFound: not_found, 404: not_found, ChalkError: chalk_error})


def _error(status, message, hint=None):
    body = {"error": message}
    if hint:
        body["hint"] = hint
    return JSONResponse(body, status_code=status)


def _html(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _game_json(league, a):
    g = a.game
    return {"id": a.id, "venue": a.venue, "device": g["device"], "game_no": g["game_no"],
            "game": g["game"], "status": a.status, "why": a.why,
            "verdict": (g["verdict"] or {}).get("grade"),
            "reasons": (g["verdict"] or {}).get("reasons", []),
            "round": a.round.name if a.round else None, "sides": a.sides,
            "entrants": a.entrants, "winner": a.winner, "scores": a.scores, "sets": a.sets,
            "result": a.result_text(), "received": g["received"], "started": g["started"],
            "disputes": a.disputes}


def _actions(log, a):
    """The game's actions in words: its rules replay the log and its game's words say each
    action from the states before and after it, with the players' names (as the scoresheet
    does); a log the rules cannot replay has each line said plainly."""
    from chalk import sheet
    from chalk.mqtt import describe
    from scoreboard import matchlog
    from scoreboard.rules import RuleError

    if not log:
        return []
    read = matchlog.read(log.split("\n"))
    if read.header is not None and not read.problems:
        try:
            rules = matchlog.new_game(read.header)
            before = rules.state()
            steps = []
            for n, rec in read.actions:
                after = rules.apply(matchlog.strip_meta(rec))
                steps.append((n, rec, before, after))
                before = after
            words = sheet.said(read.header, steps)
            return [(rec.get("seq"), w or describe(rec, [])) for (_n, rec, _b, _a), w
                    in zip(steps, words)]
        except (matchlog.LineError, RuleError, KeyError, TypeError, ValueError):
            pass
    out = []
    for line in log.split("\n")[1:]:
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            out.append(("?", "an unreadable line"))
            continue
        if isinstance(rec, dict):
            out.append((rec.get("seq"), describe(rec, [])))
    return out
