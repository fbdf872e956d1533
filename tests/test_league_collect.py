"""The league's judgement, game by game, without a broker: what the collector files, counts,
reports and refuses, with the input that would fool a careless league (a forged shot, a replay
under another message id, a fork, a hidden game, a game from a board not enrolled, a dispute
without its token, a dispute of a game not here yet), and the standings its rules give."""

import hashlib
import json
import os

import pytest

from chalk import leaguecheck, leagueconf, leaguerank
from chalk.errors import ChalkError
from chalk.keys import KeyStore
from chalk.league import Collector, snapshot
from chalk.leaguedb import LeagueDB
from chalk.mqttconf import Broker
from tests.leaguehelp import Board, league_config, match

TOKEN = "the-crown-token-0123456789"


@pytest.fixture
def world(tmp_path):
    # Each board with its own key pair (the board's, made on it), enrolled as over USB; board-x
    # is nobody's: its key is not enrolled; board-l is an older board with a legacy key.
    boards = {d: Board(d) for d in ("board-a", "board-b", "board-x")}
    boards["board-l"] = Board("board-l", legacy=os.urandom(32))
    store = KeyStore(tmp_path / "keys.json")
    for d in ("board-a", "board-b", "board-l"):
        boards[d].enrol(store)
    store.save()
    cfg = league_config(tmp_path / "league.json",
                        {"board-a": {"venue": "crown"}, "board-b": {"venue": "swan"},
                         "board-l": {"venue": "crown"}},
                        {"crown": {"name": "The Crown", "token": TOKEN},
                         "swan": {"name": "The Swan"}})
    league = leagueconf.load(cfg)
    c = Collector(league, tmp_path / "league.sqlite3", Broker(), say=lambda t: None)
    c.keys = KeyStore(tmp_path / "keys.json")
    db = LeagueDB(tmp_path / "league.sqlite3", create=True)
    acks = []
    c._ack = lambda venue, mid, sha, verdict, status, words: acks.append(
        (venue, mid, verdict, status, words))

    class W:
        pass
    w = W()
    w.tmp, w.boards, w.league, w.c, w.db, w.acks = tmp_path, boards, league, c, db, acks
    w.n = 0

    def send(venue, text, mid=None):
        w.n += 1
        mid = str(mid if mid is not None else w.n)
        c._take(db, "chalk/v1/venue/%s/game/%s" % (venue, mid), text.encode("utf-8"))
        return acks[-1] if acks else None

    def log(device, no, players, seed, **kw):
        actions, winner, st = match(seed, players)
        return boards[device].log(tmp_path, players, actions, game_no=no, **kw), winner

    w.send, w.log = send, log

    def table():
        a = leaguerank.assess(league, db.games(), db.disputes())
        return {r["name"]: r for r in leaguerank.standings(league, a)}, a
    w.table = table
    yield w
    db.close()


def test_each_game_filed_once_acknowledged_and_counted(world):
    w = world
    text, winner = w.log("board-a", 1, ["Ann", "Bob"], 1)
    ack = w.send("crown", text, mid=7)
    assert ack[:4] == ("crown", "7", "ok-finished", "counted")
    for _ in range(3):  # the venue sends it again (no ack reached it): harmless
        assert w.send("crown", text, mid=7)[3] == "counted"
    assert len(w.db.games()) == 1
    assert [r["kind"] for r in w.db.receipts()] == ["first", "again", "again", "again"]
    table, _a = w.table()
    champ = ["Ann", "Bob"][winner]
    assert table[champ]["points"] == 2 and table[champ]["played"] == 1
    assert table[["Ann", "Bob"][1 - winner]]["lost"] == 1


def test_a_forged_shot_is_filed_shown_and_never_counted(world):
    w = world
    text, _winner = w.log("board-a", 1, ["Ann", "Bob"], 2)
    lines = text.splitlines()
    rec = json.loads(lines[2])
    rec["pins"] = "1234C"
    forged = "\n".join(lines[:2] + [json.dumps(rec)] + lines[3:]) + "\n"
    ack = w.send("crown", forged)
    assert ack[2:4] == ("broken", "not counted")
    assert "does not verify" in ack[4]
    g = w.db.games()[0]
    assert "line 3" in g["verdict"]["reasons"][0]
    table, _a = w.table()
    assert all(r["played"] == 0 for r in table.values())
    # The true game still counts when it comes: the forgery claimed nothing.
    assert w.send("crown", text)[3] == "counted"
    assert not [s for s in leaguerank.sequences(w.league, w.db.games()) if s["kind"] ==
                "forked"]


def test_a_replay_under_another_message_or_venue_is_reported_and_counted_once(world):
    w = world
    text, _winner = w.log("board-a", 1, ["Ann", "Bob"], 3)
    w.send("crown", text, mid=1)
    assert w.send("crown", text, mid=99)[3] == "counted"  # acknowledged: it stops
    assert w.send("swan", text, mid=5)[3] == "counted"
    # The same signed game with a header key added outside the chain: verify calls that log
    # broken (every header key is in the board's chain), but what the board signed is the game
    # the league holds: a replay, counted once.
    head = json.loads(text.splitlines()[0])
    head["note"] = "again"
    head["chain"]["added"].append("note")
    rewrapped = "\n".join([json.dumps(head)] + text.splitlines()[1:]) + "\n"
    assert leaguecheck.check_log(rewrapped, w.c.keys).grade == "broken"
    w.send("crown", rewrapped, mid=100)
    assert len(w.db.games()) == 1
    reps = [r for r in w.db.reports() if r["kind"] == "replayed"]
    assert len(reps) == 3 and "counted once" in reps[0]["text"]
    table, _a = w.table()
    assert sum(r["played"] for r in table.values()) == 2


def test_a_hidden_game_shows_as_missing_until_it_comes(world):
    w = world
    logs = {no: w.log("board-a", no, players, seed)[0] for no, players, seed in (
        (1, ["Ann", "Bob"], 4), (2, ["Ann", "Bob"], 5), (3, ["Cy", "Di"], 7),
        (4, ["Ann", "Bob"], 6))}  # the board's games, each naming the one before
    for no in (1, 2, 4):  # the venue leaves out game 3 (it lost it)
        w.send("crown", logs[no])
    seqs = leaguerank.sequences(w.league, w.db.games())
    missing = [s for s in seqs if s["kind"] == "missing"]
    assert len(missing) == 1 and missing[0]["game_no"] == 3
    assert "game #3 not received" in missing[0]["text"] and "The Crown" in missing[0]["text"]
    assert not [s for s in seqs if s["kind"] != "missing"], seqs  # the chain holds
    w.send("crown", logs[3])
    assert leaguerank.sequences(w.league, w.db.games()) == []


def test_a_game_that_does_not_follow_the_one_held_is_a_fork(world):
    w = world
    import copy

    board = w.boards["board-a"]
    first = w.log("board-a", 1, ["Ann", "Bob"], 20)[0]
    rewound = copy.copy(board)  # the board's flash as it was after game 1, put back later
    second = w.log("board-a", 2, ["Ann", "Bob"], 21)[0]
    rewound.seq += 50  # it played on elsewhere: game 2 again, another game after game 1
    other = rewound.log(w.tmp, ["Cy", "Di"], match(22, ["Cy", "Di"])[0], game_no=2)
    for text in (first, second, other):
        w.send("crown", text)
    forks = {s["game_no"]: s for s in leaguerank.sequences(w.league, w.db.games())
             if s["kind"] == "forked" and s["device"] == "board-a"}
    # Two games numbered 2, and two games claiming game 1 as the one before them.
    assert sorted(forks) == [1, 2] and forks[2]["games"] == [2, 3], forks
    assert "The Crown" in forks[2]["text"] and "rewound or cloned" in forks[1]["text"]
    _table, assessed = w.table()
    assert [a.status for a in assessed] == ["counted", "pending", "pending"]


def test_a_fork_puts_both_games_in_dispute_until_resolved(world):
    w = world
    import copy

    rewound = copy.copy(w.boards["board-a"])  # the board's flash put back: game 1 again
    first, _w1 = w.log("board-a", 1, ["Ann", "Bob"], 8)
    other = rewound.log(w.tmp, ["Ann", "Bob"], match(9, ["Ann", "Bob"])[0], game_no=1)
    w.send("crown", first)
    ack = w.send("crown", other)
    assert ack[3] == "pending" and "two different games claim board board-a game #1" in ack[4]
    forks = [s for s in leaguerank.sequences(w.league, w.db.games()) if s["kind"] == "forked"]
    assert forks and forks[0]["games"] == [1, 2]
    table, assessed = w.table()
    assert [a.status for a in assessed] == ["pending", "pending"]
    assert table["Ann"]["pending"] == 2 and table["Ann"]["played"] == 0
    disputes = {d["game_id"]: d for d in w.db.disputes()}
    w.db.resolve(disputes[1]["id"], "accepted", "the board's own log, read at the venue")
    w.db.resolve(disputes[2]["id"], "voided", "a copy of the board made this one")
    table, assessed = w.table()
    assert [a.status for a in assessed] == ["counted", "voided"]
    assert table["Ann"]["played"] == 1
    with pytest.raises(ChalkError, match="resolved already"):
        w.db.resolve(disputes[2]["id"], "accepted", "changed my mind")


@pytest.mark.parametrize("case, status, why", [
    ("unknown_board", "not counted", "not enrolled"),
    ("wrong_venue", "not counted", "enrolled at The Crown, but this came from swan"),
    ("stranger", "not counted", "Zed is not a player of the league"),
    ("short_game", "not counted", "played with target 5, the league plays 8"),
    ("in_progress", "not counted", "not finished"),
    ("unknown_key", "not counted", "key the league does not hold"),
    ("abandoned", "not counted", "abandoned"),
])
def test_games_the_rules_do_not_count_say_why(world, case, status, why):
    w = world
    if case == "unknown_board":
        text, _ = w.log("board-x", 1, ["Ann", "Bob"], 10)
        w.boards["board-x"].enrol(w.c.keys)  # its key held, the board not in the league
        w.c.keys.save()
    elif case == "wrong_venue":
        text, _ = w.log("board-a", 1, ["Ann", "Bob"], 10)
    elif case == "stranger":
        text, _ = w.log("board-a", 1, ["Ann", "Zed"], 10)
    elif case == "short_game":
        actions, _w, _s = match(10, ["Ann", "Bob"])
        from chalk.randomgame import random_match
        _h, acts = random_match("five-pins", seed=10, config={"target": 5, "sets": 3})
        text = w.boards["board-a"].log(w.tmp, ["Ann", "Bob"], [a for _s2, _t, a in acts],
                                       config={"target": 5, "sets": 3})
    elif case == "in_progress":
        actions, _w, _s = match(10, ["Ann", "Bob"])
        text = w.boards["board-a"].log(w.tmp, ["Ann", "Bob"], actions[:4], end=False)
    elif case == "unknown_key":
        text, _ = w.log("board-x", 1, ["Ann", "Bob"], 10)
    else:
        actions, _w, _s = match(10, ["Ann", "Bob"])
        text = w.boards["board-a"].log(w.tmp, ["Ann", "Bob"], actions[:3])
    ack = w.send("swan" if case == "wrong_venue" else "crown", text)
    assert ack[3] == status and why in ack[4], ack


def test_disputes_need_the_venue_token_and_a_game_the_league_holds(world):
    w = world
    text, winner = w.log("board-a", 1, ["Ann", "Bob"], 11)
    sha = hashlib.sha256(text.encode()).hexdigest()

    def dispute(venue, mid, body):
        n = len(w.acks)
        w.c._take(w.db, "chalk/v1/venue/%s/dispute/%s" % (venue, mid),
                  json.dumps(body).encode())
        return w.acks[-1] if len(w.acks) > n else None
    ref = {"device": "board-a", "game_no": 1, "sha256": sha}
    # before the game is here: not recorded, not acknowledged (the venue sends it again)
    assert dispute("crown", 1, {"v": 1, "game": ref, "note": "the pin was reset",
                                "token": TOKEN}) is None
    w.send("crown", text, mid=50)
    assert dispute("crown", 2, {"v": 1, "game": ref, "note": "x", "token": "wrong"})[3] == \
        "refused"
    assert dispute("swan", 3, {"v": 1, "game": ref, "note": "x"})[3] == "refused"  # no token
    assert dispute("crown", 4, {"v": 1, "game": ref, "note": "", "token": TOKEN})[3] == \
        "refused"
    ack = dispute("crown", 1, {"v": 1, "game": ref, "note": "the pin was reset",
                               "token": TOKEN})
    assert ack[3] == "pending"
    dispute("crown", 1, {"v": 1, "game": ref, "note": "the pin was reset", "token": TOKEN})
    assert len(w.db.disputes()) == 1  # a resend is the same dispute
    table, assessed = w.table()
    assert assessed[0].status == "pending" and "disputed by The Crown" in assessed[0].why
    assert table["Ann"]["pending"] == 1 and table["Ann"]["played"] == 0
    w.db.resolve(w.db.disputes()[0]["id"], "accepted", "video shows the pin fell")
    table, assessed = w.table()
    assert assessed[0].status == "counted" and table["Ann"]["played"] == 1
    # records, never edits: the game's log and first verdict are as they came
    assert w.db.log(1) == text and len(w.db.q("SELECT * FROM verdicts")) == 1
    assert any(r["kind"] == "refused" and "wrong one" in r["text"] for r in w.db.reports())


def test_legacy_keys_wait_for_the_league_when_it_says_so(world):
    w = world
    text, _ = w.log("board-l", 1, ["Ann", "Bob"], 12)  # signed with a key the pub holds
    ack = w.send("crown", text)
    assert ack[2:4] == ("legacy", "pending") and "legacy key" in ack[4]
    w.league.legacy = "count"
    assert w.table()[1][0].status == "pending"  # the dispute raised stays until resolved
    w.db.resolve(1, "accepted", "checked with the venue")
    assert w.table()[1][0].status == "counted"


def test_a_key_enrolled_later_verifies_the_game_again(world):
    w = world
    text, _ = w.log("board-x", 1, ["Ann", "Bob"], 13)
    w.send("crown", text)
    assert w.db.games()[0]["verdict"]["grade"] == "unknown-key"
    w.boards["board-x"].enrol(w.c.keys)
    w.c.keys.save()
    w.c._reverify(w.db)
    g = w.db.games()[0]
    assert g["verdict"]["grade"] == "ok-finished"
    assert len(w.db.q("SELECT * FROM verdicts WHERE game_id = 1")) == 2  # a new record


def test_unreadable_or_foreign_messages_are_refused_in_words(world):
    w = world
    assert w.send("crown", "not a log at all")[2:4] == ("unreadable", "not counted")
    w.c._take(w.db, "chalk/v1/venue/pirate/game/1", b"{}")
    assert w.acks[-1][3] == "refused" and "not a venue of this league" in w.acks[-1][4]
    w.c._take(w.db, "chalk/v1/venue/crown/game/2", b"\xff\xfe garbage")
    assert w.acks[-1][2] == "unreadable"
    w.c._take(w.db, "chalk/v1/venue/crown/game/3", b"x" * (leaguecheck.MAX_LOG + 1))
    assert w.acks[-1][3] == "refused"
    body = snapshot(w.league, w.db)
    assert body["filed"] == 2 and any("pirate" in p for p in body["problems"])


def test_a_board_enrolled_while_the_league_runs_is_verified_from_then_on(world):
    w = world
    w.send("crown", w.log("board-a", 1, ["Ann", "Bob"], 14)[0])  # the store is read
    other = KeyStore(w.league.keys)  # `chalk league enrol` in another process
    w.boards["board-x"].enrol(other)
    other.save()
    ack = w.send("crown", w.log("board-x", 1, ["Ann", "Bob"], 15)[0])
    assert ack[2] == "ok-finished" and "not enrolled" in ack[4]
