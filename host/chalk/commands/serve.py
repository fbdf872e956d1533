"""chalk serve: one process for every table: archives each board, serves the scoreboard pages
and the local API that the other commands use while it runs (docs/venue.md)."""

import argparse
import os
import signal
import socket
import sys
import threading

from chalk.errors import ChalkError

ORDER = 31


def tables_wanted(args):
    """[(name, port)] from --table NAME=PORT, --port PORT, or every board attached."""
    from chalk import serve
    from chalk.link import ports

    out = []
    for item in args.table or []:
        name, eq, port = item.partition("=")
        name, port = name.strip(), port.strip()
        if not eq or not name or not port:
            raise ChalkError("--table %r is not NAME=PORT" % item,
                             "e.g. --table window=/dev/ttyUSB0")
        if "=" in port and "://" not in port:
            # "bar=snug=/dev/ttyUSB0": a name with "=" in it, or a port? Never guessed.
            raise ChalkError("--table %r has more than one \"=\": a table name cannot hold "
                             "\"=\"" % item, "e.g. --table bar-snug=/dev/ttyUSB0")
        why = serve.table_name_problem(name)
        if why:
            raise ChalkError("--table %r: %s" % (item, why), "e.g. --table window=/dev/ttyUSB0")
        out.append((name, port))
    given = list(args.port or [])
    if not out and not given:
        given = [p.device for p in ports() if p.board]
        if not given and args.rescan <= 0:
            raise ChalkError("no Chalk board found to serve (no ESP32 USB bridge among the "
                             "serial ports)", "plug the boards in, or give them with --port or "
                             "--table NAME=PORT")
    names = {n for n, _p in out}
    for port in given:
        base = serve.safe_table_name(serve.probe_name(port, args.baud)
                                     or os.path.basename(port.rstrip("/")) or "table")
        name, i = base, 2
        while name in names:
            name, i = "%s-%d" % (base[:36], i), i + 1
        names.add(name)
        out.append((name, port))
    seen = set()
    for name, _port in out:
        if name in seen:
            raise ChalkError("two tables named %r" % name, "give each its own NAME=PORT")
        seen.add(name)
    return out


def _watch_for_boards(venue, args, write):
    """Without --port or --table: serve each board plugged in later too."""
    from chalk import serve
    from chalk.link import ports

    said = None
    while not venue.stop.wait(args.rescan):
        try:
            if venue.discover(ports(), lambda p: serve.probe_name(p, args.baud),
                              idle=args.idle, baud=args.baud):
                write()
        except Exception as e:  # a port that cannot be listed or named: said, and looked again
            why = "looking for boards: %s" % (e.message if isinstance(e, ChalkError) else e)
            if why != said:
                venue.say(why)
                said = why


def _tcp_port(text):
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError("%r is not a TCP port (0-65535)" % text)
    return n


def _seconds(text):
    try:
        s = float(text)
    except ValueError:
        s = -1.0
    if not s > 0:
        raise argparse.ArgumentTypeError("%r is not a number of seconds above 0" % text)
    return s


def _terminate(signum, frame):
    raise KeyboardInterrupt


def _bind(host, port):
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise ChalkError("cannot serve on %s: %s" % (host, e), "give an address with --host")
    sock = socket.socket(info[0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(info[4])
    except OSError as e:
        sock.close()
        raise ChalkError("cannot serve on %s port %d: %s" % (host, port, e.strerror or e),
                         "is another chalk serve running? choose another with --http-port")
    sock.listen(128)
    return sock


def reachable_host(host):
    """The address to give a TV or a phone for a server bound to `host`: for 0.0.0.0 (or ::,
    every address) the address this computer has on its network, which no address in the
    printed URL can be taken for. Found by routing, not by sending anything."""
    if host not in ("0.0.0.0", "::", ""):
        return host
    for family, probe in ((socket.AF_INET, ("192.0.2.1", 9)), (socket.AF_INET6,
                                                              ("2001:db8::1", 9))):
        if host == "0.0.0.0" and family != socket.AF_INET:
            continue
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect(probe)  # UDP: picks the outgoing interface, sends nothing
                addr = s.getsockname()[0]
        except OSError:
            continue
        if addr and not addr.startswith(("127.", "0.")) and addr not in ("::1", "::"):
            return addr
    try:
        name = socket.gethostname()
        for info in socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM):
            addr = info[4][0]
            if not addr.startswith("127."):
                return addr
    except OSError:
        pass
    return "127.0.0.1"  # no network at all: this computer only


def uvicorn_config(app):
    """uvicorn's settings for the app. Proxy headers off: the client's address is the
    connection's own, whatever $FORWARDED_ALLOW_IPS says, so X-Forwarded-For: 127.0.0.1 from
    the pub's network cannot pass the host-only control check (web.py)."""
    import uvicorn

    return uvicorn.Config(app, log_level="warning", access_log=False,
                          timeout_graceful_shutdown=2, lifespan="off", proxy_headers=False,
                          forwarded_allow_ips="", server_header=False)


def run(args):
    import uvicorn

    from chalk import remote, serve, web
    from chalk.store import Archive, default_path

    db_path = args.db or str(default_path())
    with Archive(db_path, create=True) as db:
        db.check_writable()  # a locked archive fails now, before any board is touched
    from chalk import mqtt

    mqtt_settings = mqtt.settings_from(args)  # a bad MQTT option fails before anything starts
    wanted = tables_wanted(args)
    from chalk.text import printable

    def say(text):
        print(printable(text), flush=True)

    venue = serve.Venue(db_path, say=say, quiet=args.quiet)
    venue.mqtt_settings = mqtt_settings
    venue.mqtt = mqtt.Publisher(venue, mqtt_settings, db_path, say) if mqtt_settings else None
    for name, port in wanted:
        venue.add(name, port, idle=args.idle, baud=args.baud)
    token = args.token or os.environ.get("CHALK_TOKEN") or serve.new_token()
    sock = _bind(args.host, args.http_port)
    host, port = sock.getsockname()[:2]
    there = reachable_host(host)
    shown = "[%s]" % there if ":" in there else there
    url = "http://%s:%d" % (shown, port)
    loop_url = "http://%s:%d" % ("[::1]" if ":" in host else "127.0.0.1", port)
    app = web.create_app(venue, token=token, db_path=db_path)
    config = uvicorn_config(app)

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            venue.stop.set()  # ends the event streams, so the shutdown waits for nothing
            super().handle_exit(sig, frame)

    server = Server(config)
    sfile = remote.serve_file()

    def write():
        serve.write_serve_file(sfile, loop_url, token, venue.tables.values())

    try:
        write()
    except OSError as e:
        sock.close()
        raise ChalkError("cannot write %s: %s" % (sfile, e.strerror or e),
                         "set $%s to a writable path (the other commands read it too)"
                         % remote.ENV_FILE)
    venue.start()
    if venue.mqtt is not None:
        venue.mqtt.start()
    if not args.table and not args.port and args.rescan > 0:
        threading.Thread(target=_watch_for_boards, args=(venue, args, write), daemon=True,
                         name="board finder").start()
    print("chalk serve: %d table%s (%s), archive %s" % (
        len(wanted), "" if len(wanted) == 1 else "s",
        ", ".join("%s on %s" % t for t in wanted) or "boards plugged in will be served",
        db_path), flush=True)
    print("scoreboard at %s/  (API: %s/api/tables; Ctrl-C stops)" % (url, url), flush=True)
    if host not in ("127.0.0.1", "::1"):
        print("control (new game, undo) from other machines needs the token in %s"
              % remote.token_file(sfile), flush=True)
    # uvicorn handles SIGINT/SIGTERM itself (a graceful shutdown), then raises the signal again
    # under the handler it found: make that ours, so the tables are closed and we exit 0.
    old = signal.signal(signal.SIGTERM, _terminate)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)
        venue.close()
        if venue.mqtt is not None:
            venue.mqtt.stop()
        serve.remove_serve_file(sfile)
        sock.close()
    for t in list(venue.tables.values()):
        c = t.counts
        print("%s: archived %d new records (%d actions)%s" % (
            t.name, c["records"], c["actions"], " from " + t.device if t.device else ""),
            file=sys.stdout, flush=True)
    return 0


def register(sub):
    p = sub.add_parser(
        "serve", help="serve every table: archive, live scoreboard pages, local API",
        description="One process for the whole venue: archives every board exactly as `chalk "
        "archive` does, serves a live scoreboard web page (every table, and each table's own "
        "page) and an API. While it runs, chalk watch, new, undo, test and service reach the "
        "boards through it. Without --port or --table it serves every board attached. Ctrl-C or "
        "SIGTERM stops it.")
    p.add_argument("--port", "-p", action="append", metavar="PORT",
                   help="a board's serial port (repeat for more tables); the table is named "
                   "after the board's config")
    p.add_argument("--table", action="append", metavar="NAME=PORT",
                   help="a table with its name, e.g. window=/dev/ttyUSB0 (repeatable)")
    from chalk.store import add_db

    add_db(p)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to serve the pages on (default %(default)s, this computer "
                   "only; 0.0.0.0 for the pub's network)")
    p.add_argument("--http-port", type=_tcp_port, default=8421, metavar="N",
                   help="TCP port of the pages and API (default %(default)s)")
    p.add_argument("--token", help="the token other machines need to control a board (default "
                   "$CHALK_TOKEN, else a new random one, written to serve.token beside the "
                   "serve file)")
    p.add_argument("--idle", type=_seconds, default=2.0, metavar="SECONDS",
                   help="after this long without a frame, check each board is still there")
    p.add_argument("--rescan", type=float, default=3.0, metavar="SECONDS",
                   help="without --port or --table: look for newly plugged boards this often "
                   "(default %(default)s; 0: never)")
    from chalk import mqtt

    mqtt.add_options(p)
    p.add_argument("--baud", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no line per game and action, only start-up and problems")
    p.set_defaults(func=run)
