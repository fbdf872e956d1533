"""A league for tests: its config, `chalk league run` in a process of its own, and short games
played on simulated boards (random legal games from chalk.randomgame, with `act` in test
mode), with what the rules say each gave."""

import json
import os
import sys
import urllib.request
from pathlib import Path

from chalk.randomgame import random_match
from scoreboard.rules import new_game
from tests.mqttbroker import launch, stop_process, wait_until

GAME = "five-pins"
CONFIG = {"target": 8, "sets": 3}  # short sets: a game is 20-40 shots


def league_config(path, boards, venues, players=("Ann", "Bob", "Cy", "Di"), broker=None,
                  **more):
    data = {"chalk_league": 1, "id": "north", "name": "North Five-Pins League", "game": GAME,
            "config": CONFIG, "players": list(players),
            "points": {"win": 2, "draw": 1, "loss": 0},
            "tie_breaks": ["sets_difference", "head_to_head"],
            "venues": venues, "boards": boards, "keys": "keys.json"}
    if broker:
        data["broker"] = broker
    data.update(more)
    Path(path).write_text(json.dumps(data, indent=1))
    return path


def match(seed, players):
    """(actions, winner index, final state) of a short random five-pins match."""
    head, actions = random_match(GAME, seed=seed, config=CONFIG, players=list(players),
                                 undo_rate=0.0)
    game = new_game(GAME, dict(CONFIG))
    for _s, _t, a in actions:
        game.apply(a)
    st = game.state()
    return [a for _s, _t, a in actions], st["winner"], st


def play(serve, table, players, seed):
    """A whole match at a served table (new game, then every action); what the rules gave."""
    actions, winner, st = match(seed, players)
    serve.new(table, GAME, list(players), dict(CONFIG))
    for a in actions:
        serve.act(table, a)
    return {"players": list(players), "winner": winner, "sets": st["sets"]}


def play_direct(port, players, seed, end=True):
    """The same, straight on the board's port (chalk serve down: the board keeps scoring)."""
    from chalk.link import BoardLink, open_port

    actions, winner, st = match(seed, players)
    with BoardLink(open_port(port), port) as link:
        link.hello(5)
        link.request("new", {"game": GAME, "players": list(players), "config": dict(CONFIG)})
        for a in actions:
            link.request("act", {"action": a})
        if end:
            link.request("new", {"game": GAME, "players": [], "config": dict(CONFIG)})
    return {"players": list(players), "winner": winner, "sets": st["sets"]}


def expected_table(results, players):
    """The standings the rules give, worked out here on their own: 2 a win, 0 a loss; sets
    difference; names with the same points and sets ordered by their games between them."""
    rows = {p: {"played": 0, "won": 0, "lost": 0, "points": 0, "sets": 0} for p in players}
    for r in results:
        w = r["winner"]
        for i, p in enumerate(r["players"]):
            rows[p]["played"] += 1
            rows[p]["won" if i == w else "lost"] += 1
            rows[p]["points"] += 2 if i == w else 0
            rows[p]["sets"] += r["sets"][i] - r["sets"][1 - i]
    return rows


class LeagueProc:
    """`chalk league run` in its own process: its pages on a free port."""

    def __init__(self, config, env=None, args=()):
        self.config = config
        self.env = dict(os.environ, **(env or {}))
        self.args = list(args)
        self.proc = None
        self.url = None
        self.lines = []

    def start(self):
        cmd = [sys.executable, "-m", "chalk.cli", "league", "run", "--config",
               str(self.config), "--http-port", "0"] + self.args
        self.proc, self.log, self.url, self.lines = launch(
            cmd, self.env, Path(self.config).parent / "league.log", "standings at ")
        return self

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            data = r.read()
            return json.loads(data) if path.startswith("/api/") else data.decode()

    def games(self):
        return self.get("/api/games")["games"]

    def wait_games(self, pred, timeout=120.0, what="the league's games"):
        return wait_until(lambda: (lambda g: g if pred(g) else None)(self.games()), timeout,
                          what, every=0.1)

    def stop(self, kill=False):
        stop_process(self.proc, kill)
        if self.proc is not None:
            self.log.close()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Board:
    """A board for tests that need no simulator: a key pair of its own (chainhost.SoftKey signs
    what a board signs), a device id, its records numbered one by one across its games, and its
    chain of games (each header names the game before: "prev"). `legacy`: the bytes of an HMAC
    key made on the pub's computer instead (older firmware: the end record carries the head).
    """

    def __init__(self, device, legacy=None):
        from chalk import chainhost

        self.device = device
        self.legacy = legacy
        self.key = legacy if legacy is not None else chainhost.SoftKey()
        self.seq = 0
        self.game_no = 0
        self.last = None  # the "prev" of the next game

    def enrol(self, store, since=1):
        """Keep this board's key in a KeyStore, as `chalk keys enrol` does over USB."""
        if self.legacy is not None:
            store.add_legacy(self.legacy.hex(), self.device, "made by chalk deploy (test)")
        else:
            store.add_board(self.device, self.key.pub, since, "enrolled over USB (test)")

    def log(self, tmp, players, actions, game_no=None, **kw):
        """The match log of its next game (or of game `game_no`: a board rewound or cloned)."""
        no = self.game_no + 1 if game_no is None else game_no
        text, signed = signed_log(tmp, self.key, self.device, no, players, actions,
                                  seq=self.seq + 1, prev=self.last, with_head=True, **kw)
        self.seq = signed["seq"]
        self.game_no = max(self.game_no, no)
        if kw.get("end", True):
            self.last = {"game_no": no, "seq": signed["seq"], "link": signed["head"]}
        return text


def signed_log(tmp, key, device, game_no, players, actions, started="2026-11-28T20:00:00Z",
               config=None, end=True, game=GAME, seq=1, prev=None, with_head=False):
    """The match log (JSONL, with its chain) a board with `key` (a chainhost.SoftKey standing
    for a board's own key, or the bytes of a legacy key) would have made of a game, as `chalk
    serve` exports it: recorded in a throw-away archive, signed as the board signs (its end,
    or its last record for a game under way). `prev`: the header's link to the board's game
    before. With `with_head`: (log, the signed head)."""
    from chalk.export import jsonl
    from chalk.store import Archive, board_records, sign_records
    from scoreboard import matchlog

    head = matchlog.header(game, dict(CONFIG if config is None else config), list(players),
                           started, device=device, game_no=game_no)
    head["board"] = "five-pins"  # as a board journals it (the export adds nothing then)
    head["prev"] = prev
    recs, states = board_records(head, actions, seq=seq, end=end)
    if end and recs[-1].get("type") != "E":  # no winner: ended as the next game starts
        recs.append({"seq": recs[-1]["seq"] + 1, "type": "E", "end": {"winner": None}})
    signed = sign_records(recs, key, device)
    import uuid

    path = Path(tmp) / ("a-%s.sqlite3" % uuid.uuid4().hex)
    with Archive(path, create=True) as db:
        bid = db.board({"device": device, "board": "five-pins", "game": game})
        db.ingest(bid, recs, states, resync=True)
        if not isinstance(key, bytes) or not end:
            db.set_head(bid, signed)  # the board's `sig` frame: its end, or its head so far
        text = jsonl(db, db.games()[-1])
    return (text, signed) if with_head else text
