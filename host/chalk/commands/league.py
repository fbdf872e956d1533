"""chalk league: a league over MQTT: collect the venues' finished games, verify, file and rank
them, serve the standings; disputes; the Mosquitto bridge and broker configs (docs/league.md)."""

import os
import signal
import sys

from chalk.errors import ChalkError

ORDER = 40
ENV_CONFIG = "CHALK_LEAGUE"


def _config(args):
    from chalk import leagueconf

    path = args.config or os.environ.get(ENV_CONFIG) or "league.json"
    return leagueconf.load(path)


def _db_path(args, league):
    return args.db or str(league.path.parent / "league.sqlite3")


def _assessed(args):
    from chalk import leaguerank
    from chalk.leaguedb import LeagueDB

    league = _config(args)
    with LeagueDB(_db_path(args, league), readonly=True) as db:
        games = db.games()
        return league, games, leaguerank.assess(league, games, db.disputes()), db.reports()


def _out(args, text):
    if getattr(args, "output", None) and args.output != "-":
        from chalk import atomic

        p = atomic.write_file(args.output, text)  # whole or not at all
        print("written to %s" % p)
    else:
        sys.stdout.write(text)


def run_league(args):
    import uvicorn

    from chalk import leagueweb, mqttconf
    from chalk.commands.serve import _bind, _terminate
    from chalk.league import Collector
    from chalk.leaguedb import LeagueDB

    league = _config(args)
    broker = mqttconf.broker_from_args(args, league.broker)
    db_path = _db_path(args, league)
    LeagueDB(db_path, create=True).close()  # a file that is not the league's fails now
    token = args.token or os.environ.get("CHALK_LEAGUE_TOKEN")
    if not token:
        token = _token_file(db_path)
    say = (lambda text: None) if args.quiet else (lambda text: print(text, flush=True))
    collector = Collector(league, db_path, broker, say=say)

    def status():
        return {"connected": collector.conn.up.is_set(), "problem": collector.conn.problem,
                "venues": dict(collector.venues), "counts": dict(collector.counts)}

    app = leagueweb.create_app(league, db_path, token=token, status=status)
    sock = _bind(args.host, args.http_port)
    host, port = sock.getsockname()[:2]
    shown = "[%s]" % host if ":" in host else host
    config = uvicorn.Config(app, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=2, lifespan="off")
    server = uvicorn.Server(config)
    collector.start()
    print("chalk league: %s (%s), %d venues, %d boards enrolled; broker %s; archive %s" % (
        league.name, league.game, len(league.venues), len(league.boards), broker.describe(),
        db_path), flush=True)
    print("standings at http://%s:%d/  (Ctrl-C stops)" % (shown, port), flush=True)
    old = signal.signal(signal.SIGTERM, _terminate)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)
        collector.stop()
        sock.close()
    c = collector.counts
    print("chalk league: %d messages, %d games filed, %d duplicates, %d replays" % (
        c["received"], c["filed"], c["duplicates"], c["replays"]), flush=True)
    return 0


def _token_file(db_path):
    """The league's control token, kept beside its archive (owner-only), made once."""
    import secrets

    path = os.path.splitext(db_path)[0] + ".token"
    try:
        with open(path) as f:
            tok = f.read().strip()
        if tok:
            return tok
    except OSError:
        pass
    from chalk import atomic

    tok = secrets.token_urlsafe(24)
    atomic.write_file(path, tok + "\n", mode=0o600)
    return tok


def check(args):
    from chalk.league import load_keys

    league = _config(args)
    keys = load_keys(league)
    print("%s (id %s): %s%s, %s league of %d %s" % (
        league.name, league.id, league.game,
        " " + ", ".join("%s %s" % kv for kv in league.config.items()) if league.config else "",
        league.mode[:-1], len(league.teams) if league.mode == "teams" else len(league.players),
        league.mode))
    print("points: win %(win)s, draw %(draw)s, loss %(loss)s; tie-breaks: %(tb)s" % dict(
        league.points, tb=", ".join(league.tie_breaks) or "none"))
    print("rounds: %s" % (", ".join("%s %s..%s" % (r.name, r.first, r.last)
                                    for r in league.rounds[:3]) +
                          (" ... (%d)" % len(league.rounds) if len(league.rounds) > 3 else "")
                          if league.rounds else "one season, no rounds"))
    missing = []
    for vid, v in league.venues.items():
        boards = [d for d, b in league.boards.items() if b["venue"] == vid]
        print("venue %s (%s): %d board%s%s" % (vid, v["name"], len(boards),
                                               "" if len(boards) == 1 else "s",
                                               "" if v["token"] else "; no token: its "
                                               "disputes are refused"))
        for d in boards:
            if not keys.for_device(d):
                missing.append(d)
    if missing:
        raise ChalkError("no key in %s for board%s %s: its games will be 'unknown key'" % (
            league.keys, "" if len(missing) == 1 else "s", ", ".join(missing)),
            "enrol each board over USB (chalk league enrol --port PORT --venue ID), or from "
            "a key file the league signed (chalk league enrol DEVICE --venue ID --key-file "
            "FILE)")
    print("ok")
    return 0


def standings(args):
    from chalk import leaguerank

    league, games, assessed, _r = _assessed(args)
    rows = leaguerank.standings(league, assessed)
    if args.csv:
        _out(args, leaguerank.standings_csv(rows))
        return 0
    from chalk.text import printable

    print("%s — standings" % printable(league.name))
    print("%4s  %-24s %6s %4s %4s %4s %6s %7s" % ("#", "name", "played", "won", "drawn",
                                                  "lost", "points", "pending"))
    for r in rows:
        print("%4s  %-24s %6d %4d %4d %4d %6s %7s" % (
            "%d%s" % (r["pos"], "=" if r["shared"] else ""), printable(r["name"])[:24],
            r["played"], r["won"], r["drawn"], r["lost"], r["points"], r["pending"] or ""))
    return 0


def results(args):
    from chalk import leaguerank
    from chalk.text import printable

    league, games, assessed, _r = _assessed(args)
    if args.csv:
        _out(args, leaguerank.results_csv(league, assessed))
        return 0
    for rname, venues in leaguerank.by_round(league, assessed):
        print(rname)
        for vname, gs in venues:
            print("  %s" % printable(vname))
            for a in gs:
                print("    game %d: %s, %s (%s) — %s%s" % (
                    a.id, printable(" v ".join(a.entrants) or "?"),
                    printable(a.result_text()), a.score_text(), a.status,
                    "" if a.status == "counted" else ": " + printable(a.why)))
    return 0


def matches(args):
    from chalk import leaguerank

    league, games, assessed, _r = _assessed(args)
    _out(args, leaguerank.matches_csv(league, assessed))
    return 0


def reports(args):
    from chalk import leaguecheck, leaguerank
    from chalk.text import printable

    league, games, assessed, reps = _assessed(args)
    lines = [s["text"] for s in leaguerank.sequences(league, games)]
    lines += ["%s: %s" % (r["kind"], r["text"]) for r in reps]
    lines += ["game %d: %s" % (a.id, a.why) for a in assessed
              if (a.game["verdict"] or {}).get("grade") not in leaguecheck.COUNTABLE]
    for line in lines:
        print(printable(line))
    if not lines:
        print("nothing to report")
    return 0


def dispute(args):
    from chalk.leaguedb import LeagueDB
    from chalk.mqtt_outbox import check_note

    league = _config(args)
    note = check_note(args.note)
    with LeagueDB(_db_path(args, league)) as db:
        did = db.dispute(args.game, "league", note)
    print("dispute %d: game %d is pending until resolved (chalk league resolve %d accepted|"
          "voided --note ...)" % (did, args.game, did))
    return 0


def resolve(args):
    from chalk.leaguedb import LeagueDB
    from chalk.mqtt_outbox import check_note

    league = _config(args)
    note = check_note(args.note)
    with LeagueDB(_db_path(args, league)) as db:
        db.resolve(args.dispute, args.outcome, note)
    print("dispute %d resolved: %s" % (args.dispute, args.outcome))
    return 0


def reverify(args):
    from chalk import league as lg

    league = _config(args)
    n = lg.reverify(league, _db_path(args, league))
    print("%d game%s verified again with a new outcome" % (n, "" if n == 1 else "s"))
    return 0


def enrol(args):
    """Add a board to the league: its key into the league's key store, with proof that it came
    from that board (docs/league.md: read from the board over USB, the board signing a fresh
    challenge; or from a key file signed by a league key the store trusts; `--legacy` for an
    older board's HMAC key, which the pub holds), then the board into the config file
    (written aside, then renamed). Everything is checked before anything is written."""
    import json

    from chalk import atomic, mqttconf
    from chalk import keys as keystore

    league = _config(args)
    if args.venue not in league.venues:
        raise ChalkError("no venue %r in %s (venues: %s)" % (args.venue, league.path,
                                                            ", ".join(league.venues)))
    if args.from_game < 1:
        raise ChalkError("--from-game must be a game number, 1 or more")
    store = keystore.KeyStore(league.keys)
    lines = []
    if args.port:
        from chalk.link import BAUD, BoardLink, open_port

        link = BoardLink(open_port(args.port, args.baud or BAUD), args.port)
        try:
            link.hello()
            reply = keystore.ask_key(link)
        finally:
            link.close()
        device = reply["device"]
        if args.device and args.device != device:
            raise ChalkError("the board on %s is %s, not %s: nothing was kept" % (
                args.port, device, args.device), "check which board is on the cable")
        lines = store.add_board(device, reply["pub"], reply["since"],
                                "enrolled over USB on %s for the league" % args.port,
                                args.replace)
    elif args.device is None:
        raise ChalkError("give the board: --port PORT (it proves its key over USB), or its "
                         "device id with --key-file FILE")
    elif args.key_file:
        device = args.device
        lines = store.import_file(args.key_file, replace=args.replace, legacy=args.legacy,
                                  devices=[device])
    else:
        device = args.device
        if not store.for_device(device):
            raise ChalkError("the league's key store %s has no key for board %s" % (
                league.keys, device), "enrol it over USB (--port PORT), or give a key file "
                "the league signed (--key-file FILE)")
    data = mqttconf.read_json(league.path, "league config")
    boards = data.setdefault("boards", {})
    if type(boards) is not dict:
        raise ChalkError("%s: \"boards\" must be an object" % league.path)
    boards[device] = {"venue": args.venue, "from_game": args.from_game}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    _check_config(league.path, text)  # the new config must hold before anything is written
    store.save()
    atomic.write_file(league.path, text)
    for line in lines:
        print(line)
    print("board %s enrolled at %s from game #%d (its key: %s)" % (
        device, args.venue, args.from_game,
        ", ".join(e["kid"] for e in store.for_device(device) if "replaced" not in e)))
    return 0


def _check_config(path, text):
    """ChalkError (naming the key) if `text` is not a league config that loads as `path`
    would: checked in a hidden file beside it (its relative paths are from that folder)."""
    import tempfile

    from chalk import leagueconf

    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".chalk-tmp",
                               dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        leagueconf.load(tmp)
    finally:
        os.unlink(tmp)


def token(args):
    import secrets

    print(secrets.token_urlsafe(24))
    return 0


def bridge_config(args):
    from chalk import mqtt_bridge, mqttconf

    host, port = mqttconf.parse_address(args.league, args.ca is not None)
    password = mqttconf.read_password(args.password_file) if args.password_file else None
    _out(args, mqtt_bridge.bridge_config(args.venue, host, port, username=args.user or
                                         args.venue, password=password, ca=args.ca,
                                         live=args.live))
    return 0


def broker_config(args):
    from chalk import mqtt_bridge

    _out(args, mqtt_bridge.league_broker_config(args.port, args.password_file, args.acl_file,
                                                args.persistence, cert=args.cert,
                                                key=args.key))
    return 0


def acl(args):
    from chalk import mqtt_bridge

    _out(args, mqtt_bridge.league_acl(args.league_user))
    return 0


def register(sub):
    from chalk import mqttconf
    from chalk.commands.serve import _tcp_port

    p = sub.add_parser(
        "league", help="a league: collect venues' games over MQTT, verify, rank, disputes",
        description="Run a league: its config (game, players or teams, points, tie-breaks, "
        "rounds, venues, enrolled boards) is a JSON file (--config, $%s, or ./league.json). "
        "`chalk league run` collects the venues' finished games from the league's MQTT broker, "
        "verifies and files each, acknowledges it, and serves the standings. docs/league.md."
        % ENV_CONFIG)
    s = p.add_subparsers(dest="action", metavar="ACTION")
    s.required = True

    def cmd(name, func, help):
        q = s.add_parser(name, help=help, description=help)
        q.set_defaults(func=func)
        return q

    def with_config(q, db=True):
        q.add_argument("--config", "-c", metavar="FILE", help="the league config (default "
                       "$%s, else ./league.json)" % ENV_CONFIG)
        if db:
            q.add_argument("--db", metavar="FILE", help="the league's archive (default "
                           "league.sqlite3 beside the config)")
        return q

    q = with_config(cmd("run", run_league, "collect games from the league broker, verify, "
                        "file, acknowledge; serve the standings pages"))
    mqttconf.add_broker_options(q, "of the league (default: the config's \"broker\")")
    q.add_argument("--host", default="127.0.0.1", help="address of the pages (default "
                   "%(default)s; 0.0.0.0 for the network)")
    q.add_argument("--http-port", type=_tcp_port, default=8431, metavar="N",
                   help="TCP port of the pages (default %(default)s)")
    q.add_argument("--token", help="the control token for disputes from other machines "
                   "(default $CHALK_LEAGUE_TOKEN, else league.token beside the archive)")
    q.add_argument("--quiet", "-q", action="store_true", help="only start-up and problems")
    with_config(cmd("check", check, "check the league config and that every enrolled board's "
                    "key is held"), db=False)
    for name, func, help in (("standings", standings, "the standings table"),
                             ("results", results, "every game by round and venue, with its "
                              "status")):
        q = with_config(cmd(name, func, help))
        q.add_argument("--csv", action="store_true", help="as CSV")
        q.add_argument("-o", "--output", metavar="FILE", help="write to FILE (CSV)")
    q = with_config(cmd("matches", matches, "counted results as a tournament tool imports "
                        "them: a per-match scores CSV (Challonge's scores_csv convention)"))
    q.add_argument("-o", "--output", metavar="FILE")
    with_config(cmd("reports", reports, "what the league noticed: forgeries, replays, forks, "
                    "missing games, refused messages"))
    q = with_config(cmd("dispute", dispute, "mark a filed game disputed (pending until "
                        "resolved)"))
    q.add_argument("game", type=int, metavar="GAME", help="the game's id in the league")
    q.add_argument("--note", required=True, help="what is disputed")
    q = with_config(cmd("resolve", resolve, "resolve a dispute: accepted (the game counts) or "
                        "voided (it never counts)"))
    q.add_argument("dispute", type=int, metavar="DISPUTE")
    q.add_argument("outcome", choices=("accepted", "voided"))
    q.add_argument("--note", required=True, help="why")
    with_config(cmd("reverify", reverify, "verify again every game not verified ok (after "
                    "a board's key was enrolled)"))
    q = with_config(cmd("enrol", enrol, "enrol a board: its key into the league's key store "
                        "(over USB, or from a key file the league signed), the board into the "
                        "config"), db=False)
    q.add_argument("device", metavar="DEVICE", nargs="?",
                   help="the board's device id (with --port: checked against the board's)")
    q.add_argument("--venue", required=True, metavar="ID")
    q.add_argument("--port", metavar="PORT", help="the board on USB: it signs a fresh "
                   "challenge with its own key, and its public key is kept")
    q.add_argument("--baud", type=int, metavar="N", help="the port's speed (default 115200)")
    q.add_argument("--key-file", metavar="FILE", help="a key file signed by a league key the "
                   "league's store trusts (`chalk keys export` at the league's enrolment night)")
    q.add_argument("--legacy", action="store_true", help="take an older board's HMAC key "
                   "from an unsigned key file: its games verify as legacy (the pub holds it)")
    q.add_argument("--replace", metavar="KID", help="the board's old key, when it has a new "
                   "one (its NVS was erased): said loudly")
    q.add_argument("--from-game", type=int, default=1, metavar="N",
                   help="the board's first game that counts for the league (default 1)")
    cmd("token", token, "a new random token for a venue (its disputes carry it)")
    q = cmd("bridge-config", bridge_config, "the lines a venue's mosquitto.conf needs to "
            "bridge to the league broker")
    q.add_argument("--venue", required=True, metavar="ID")
    q.add_argument("--league", required=True, metavar="HOST[:PORT]",
                   help="the league broker's address")
    q.add_argument("--user", help="the venue's user at the league broker (default: the "
                   "venue id)")
    q.add_argument("--password-file", metavar="FILE")
    q.add_argument("--ca", metavar="FILE", help="the league broker's CA (TLS)")
    q.add_argument("--live", action="store_true", help="also carry the tables' live state")
    q.add_argument("-o", "--output", metavar="FILE")
    q = cmd("broker-config", broker_config, "a mosquitto.conf for the league's broker")
    q.add_argument("--port", type=_tcp_port, default=1883)
    q.add_argument("--password-file", required=True, metavar="FILE",
                   help="mosquitto_passwd's file of the venues' and the league's users")
    q.add_argument("--acl-file", required=True, metavar="FILE")
    q.add_argument("--persistence", metavar="DIR", help="keep queued messages across restarts")
    q.add_argument("--cert", metavar="FILE", help="the broker's TLS certificate")
    q.add_argument("--key", metavar="FILE", help="its key")
    q.add_argument("-o", "--output", metavar="FILE")
    q = cmd("acl", acl, "the league broker's ACL: each venue writes under its own id only")
    q.add_argument("--league-user", default="league", metavar="NAME")
    q.add_argument("-o", "--output", metavar="FILE")
