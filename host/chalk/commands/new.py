"""chalk new: start a new game on the board."""


from chalk import remote, watch
from chalk.commands import add_port
from chalk.errors import ChalkError
from scoreboard.safejson import loads

ORDER = 34


def parse_config(items):
    """--config as given: one JSON object, or KEY=VALUE words (a VALUE that is JSON, such as 60
    or true, is taken as such; anything else is a string)."""
    if not items:
        return None
    if len(items) == 1 and items[0].lstrip().startswith("{"):
        try:
            cfg = loads(items[0])
        except ValueError as e:
            raise ChalkError("--config is not valid JSON: %s" % e,
                             'give an object such as \'{"target": 60}\' or KEY=VALUE words')
        if type(cfg) is not dict:
            raise ChalkError("--config must be a JSON object")
        return cfg
    cfg = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ChalkError("--config %r is not KEY=VALUE" % item,
                             "e.g. --config target=60 sets=3, or one JSON object")
        try:
            cfg[key] = loads(value)
        except ValueError:
            cfg[key] = value
    return cfg


def parse_players(names):
    """Player names; "Ann,Bob" is a side of two. A name is any Unicode text; refused, before
    anything reaches the board: bytes that are not UTF-8 (a name typed in a terminal set to
    Latin-1), and control characters (an escape sequence, a newline), which would reach every
    terminal and screen that shows it."""
    if names is None:
        return None
    from chalk.text import printable, text_problem

    out = []
    for n in names:
        why = text_problem(n)
        if why:
            raise ChalkError('--players "%s": %s' % (printable(n)[:60], why),
                             "give plain names such as Ann Bob")
        pair = [x.strip() for x in n.split(",") if x.strip()]
        out.append(pair if len(pair) > 1 else n.strip())
    return out


def check_seats(game, players):
    """Refuse more names than the game seats (a dropped name would go unnoticed)."""
    from scoreboard.rules import ConfigError, rules_for

    try:
        seats = getattr(rules_for(game), "PLAYERS", None)
    except ConfigError:
        return  # a game this chalk does not know: the board judges
    if seats is not None and len(players) > seats:
        raise ChalkError("--players: %d names, but %s seats %d players or sides"
                         % (len(players), game, seats),
                         "name each side once; a side of two is Ann,Bob")


def run(args):
    """Start a new game; print the new game as the board shows it."""
    config = parse_config(args.config)
    players = parse_players(args.players)
    with remote.connect(args.port) as board:
        game = args.game or board.info.get("game")
        if players is None:  # a new game, same players: what the table's own button does
            players = board.request("state").get("players") or []
        else:
            check_seats(game, players)
        req = {"game": game, "players": players}
        if config is not None:
            req["config"] = config
        result = board.request("new", req)
        print("new game %s started on %s" % (result.get("game_no"), board.port))
        print("\n".join(watch.render(board.request("state"))))
    return 0


def register(sub):
    p = sub.add_parser("new", help="start a new game on the board",
                       description="Start a new game on the board (the game in progress ends "
                       "unfinished; its records stay in the board's journal). Without --config "
                       "the board keeps the config of the game in progress; without --players, "
                       "the same players.")
    add_port(p)
    p.add_argument("--game", help="game id (default: the board's game)")
    p.add_argument("--config", nargs="+", metavar="JSON|KEY=VALUE",
                   help="the game's config: one JSON object, or KEY=VALUE words "
                   "(e.g. target=60 sets=3); keys left out take the rules' defaults")
    p.add_argument("--players", nargs="+", metavar="NAME",
                   help="player names in order (A,B for a side of two)")
    p.set_defaults(func=run)
