"""Power cuts on a live simulated board: the firmware runs on the MicroPython unix port behind
its pty (chalk.sim.Sim, test mode) and is played through a match by injecting sensor-trace line
changes over the link (pins falling, pegs put in and pulled, buttons pressed), as a table drives
its lines. It is SIGKILLed (Sim.power_cut) at many points: right after an action's rec frame
reached the host, around the press that makes the journal write, at random moments, and well
before the press; then it boots again. After every boot:

- it boots to a consistent state: no journal damage, and no warning but the pegs that really
  disagree with the score;
- every record the host saw (its rec frame arrived) is in the journal, unchanged, with no gap;
- the journal holds the actions played, in order, at most the one in flight missing;
- the board's state is the host's replay of its journal (CPython rules);
- the game goes on from there (the five-pins match to its end, and the next one starts).
"""

import collections
import random
import time

import pytest

from chalk.link import BoardLink, open_port
from chalk.randomgame import random_match
from chalk.sim import Sim
from scoreboard.games.five_pins.referee import FOULS
from scoreboard.rules import new_game
from tests.conftest import report_micropython
from tests.mpy import micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

HOLD = 40  # ms a button is held (debounce is 20 ms)
GAP = 40
MODES = ("rec", "press", "random", "early")


def press(lines, t, button, hold=HOLD):
    lines.append((t, "btn." + button, 1))
    lines.append((t + hold, "btn." + button, 0))
    return t + hold + GAP


def five_lines(table, before, action, rng):
    """The line changes of one five-pins action [(t, line, v)], and when the journaling press
    is released."""
    lines = []
    t = 0
    a = action["a"]
    if a == "break":
        if action["player"]:
            t = press(lines, t, "break")
        t = press(lines, t, "confirm")
    elif a == "undo":
        t = press(lines, t, "confirm", hold=900)  # long press (800 ms): undo
    else:
        for i, p in enumerate(action["pins"]):
            down = 10 + 7 * i
            lines.append((down, "pin." + p, 1))
            lines.append((down + rng.randint(40, 90), "pin." + p, 0))  # back on its spot: FP-19
        t = 150
        if action["carom"]:
            t = press(lines, t, "carom%d" % action["carom"])
        for code in action["fouls"]:  # the foul list: foul moves to it, confirm marks it
            for _ in range(FOULS.index(code) + 1):
                t = press(lines, t, "foul")
            t = press(lines, t, "confirm")
        t = press(lines, t, "confirm")
    return lines, t - GAP


def shove_lines(table, before, action, rng):
    """The line changes of one shove ha'penny action: pegs put in (or pulled) until the squares
    show the score after it, and the buttons. The pegs are the table's: they move whether or not
    the board is powered."""
    lines = []
    t = 0
    a = action["a"]
    if a == "start":
        if action["side"]:
            t = press(lines, t, "out_of_turn")
        return lines, press(lines, t, "done") - GAP
    if a == "undo":
        t = press(lines, t, "done", hold=900) - GAP  # long press (800 ms): undo
        table.sync(lines, t + 100, table.after)
        return lines, t
    t = table.sync(lines, 0, table.after)
    t = t + 350 if lines else 0  # past the peg debounce (300 ms)
    for _ in range(("touched", "removed").index(action["void"]) + 1 if "void" in action else 0):
        t = press(lines, t, "void")
    if action["side"] != before["next"]:
        t = press(lines, t, "out_of_turn")
    return lines, press(lines, t, "done") - GAP


class Table:
    """The host side of a table in play: the link, the records it has seen, the pegs in their
    holes, and the checks after each boot."""

    def __init__(self, game, sim, link):
        self.game = game
        self.sim = sim
        self.link = link
        self.seen = {}  # seq -> rec payload, for every rec frame that reached the host
        self.pegs = set()  # (side, bed, hole) with a peg in it
        self.boots = 0
        self.config = None
        self.after = None  # the state after the action being played

    # -- the wire ----------------------------------------------------------------------------
    def take(self, frame):
        if frame.type == "rec":
            self.seen[frame.payload["seq"]] = frame.payload
        return frame

    def drain(self, timeout=0.0):
        while True:
            f = self.link.poll(timeout)
            if f is None:
                return
            self.take(f)

    def until(self, what, timeout=60.0):  # an upper bound only: a busy machine is slow
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            f = self.link.poll(0.05)
            if f is not None and what(self.take(f)):
                return f
        raise AssertionError("the board never sent it (seen %d records)" % len(self.seen))

    def inject(self, lines):
        lines = sorted(lines)
        for k in range(0, len(lines), 32):  # at most 32 events a frame
            self.link.request("inject", {"events": [{"t": t, "line": n, "v": v}
                                                    for t, n, v in lines[k:k + 32]]})

    # -- pegs --------------------------------------------------------------------------------
    def sync(self, lines, t, state):
        """Put pegs in or pull them until each square shows `state`; return the time after."""
        for s in (0, 1):
            for b in range(1, 10):
                have = sum(1 for p in self.pegs if p[:2] == (s, b))
                want = state["beds"][s][b - 1]
                while have != want:
                    hole = have + 1 if have < want else have
                    lines.append((t, "peg.%d.%d.%d" % (s, b, hole), 1 if have < want else 0))
                    (self.pegs.add if have < want else self.pegs.discard)((s, b, hole))
                    have += 1 if have < want else -1
                    t += 30
        return t

    def expected_warnings(self, state):
        """What the board must show for the pegs in their holes against its score."""
        if self.game != "shove-hapenny":
            return []
        out = []
        for s in (0, 1):
            for b in range(1, 10):
                d = sum(1 for p in self.pegs if p[:2] == (s, b)) - state["beds"][s][b - 1]
                if d < 0:
                    out.append("PEG %s%d %d" % ("AB"[s], b, d))
        return out

    # -- power cuts --------------------------------------------------------------------------
    def cut(self):
        self.sim.power_cut()
        self.drain()  # what was on the wire before the plug was pulled still counts as seen
        self.until(lambda f: f.type == "boot")
        self.boots += 1
        if self.pegs:
            # The pegs stayed in their holes; the simulated board's lines start empty.
            self.inject([(0, "peg.%d.%d.%d" % p, 1) for p in self.pegs])
        return self.check()  # it waits for the board to have read them

    def check(self):
        """After a boot: the journal against what the host saw, the state against a replay of
        the journal, the warnings against the pegs. Returns the game's header and actions."""
        info = self.link.hello(timeout=60)
        recs = self.link.journal_since(0)
        by_seq = {r["seq"]: r for r in recs}
        assert [r["seq"] for r in recs] == list(range(1, len(recs) + 1))  # no gap, no repeat
        assert info["last_seq"] == recs[-1]["seq"]
        for seq, rec in self.seen.items():
            assert by_seq.get(seq) == rec, "acknowledged record %d lost or changed" % seq
        start = max(i for i, r in enumerate(recs) if r.get("type") == "H")
        header = recs[start]["header"]
        actions = [{k: v for k, v in r.items() if k not in ("seq", "t")} for r in recs[start:]
                   if "a" in r]
        game = new_game(header["game"], header["config"])
        for a in actions:
            game.apply(a)
        # Pegs injected after the boot are read after their debounce, in the board's own time:
        # wait for it (an event), however long a busy machine makes that take.
        want = self.expected_warnings(game.state())
        deadline = time.monotonic() + 60
        while True:
            status = self.link.request("state")
            if status["warnings"] == want or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status["state"] == game.state()
        assert status["game_no"] == header["game_no"]
        assert status["warnings"] == want
        return header, actions

    def play(self, played, kills, rng, lines_of):
        """Play `played` from the game's start, cutting the power `kills` times; return the
        outcome of each cut for the action in flight."""
        outcome = collections.Counter()
        at = sorted(rng.sample(range(1, len(played)), kills))
        plan = {i: MODES[k % len(MODES)] for k, i in enumerate(at)}
        i = 0
        while i < len(played):
            game = new_game(self.game, self.config)
            for a in played[:i]:
                game.apply(a)
            before = game.state()
            self.after = game.apply(played[i])
            lines, release = lines_of(self, before, played[i], rng)
            mode = plan.pop(i, None)
            if mode == "early":
                lines = [(t + 400, n, v) for t, n, v in lines]
            last = max(self.seen)
            sent = time.monotonic()
            self.inject(lines)
            if mode is None or mode == "rec":
                self.until(lambda f, last=last: f.type == "rec" and f.payload["seq"] > last)
                if mode is None:
                    # Pegs pulled after an undo must be read before the next turn is scored.
                    pegs = [t for t, n, v in lines if n.startswith("peg.") and t > release]
                    if pegs:
                        time.sleep(max(0, sent + (max(pegs) + 350) / 1000 - time.monotonic()))
                    i += 1
                    continue
            elif mode == "press":
                time.sleep(max(0, release + rng.randint(-5, 15)) / 1000)
            elif mode == "random":
                time.sleep(rng.uniform(0, release + 50) / 1000)
            else:
                time.sleep(0.1)
            header, actions = self.cut()
            assert header["game_no"] == self.game_no and header["config"] == self.config
            # The journal holds what was played, at most the action in flight missing; every
            # record the host saw is in it (checked in check()).
            assert actions == played[: len(actions)]
            assert i <= len(actions) <= i + 1
            seen = any(seq > last for seq in self.seen)
            if mode == "rec":
                assert seen
            outcome[("lost", "journaled", "acknowledged")[len(actions) - i + seen]] += 1
            i = len(actions)  # an action lost with the power is played again
        return outcome


@pytest.fixture
def table(request, tmp_path):
    sim = Sim(request.param, flash=tmp_path / "flash", test_mode=True)
    port = sim.start()
    link = BoardLink(open_port(port), port)
    try:
        link.hello(timeout=60)
        yield Table(request.param, sim, link)
    finally:
        link.close()
        sim.stop()


def new_match(table, config):
    table.config = config
    table.game_no = table.link.request("new", {"game": table.game, "config": config,
                                               "players": ["Ann", "Bob"]})["game_no"]
    table.drain(0.2)


@pytest.mark.parametrize("table", ["five-pins"], indirect=True)
def test_power_cuts_of_a_five_pins_match(table):
    config = {"target": 30, "sets": 1, "pin_foul_penalty": 0}
    head, logged = random_match("five-pins", seed=32, config=config)
    played = [a for _, _, a in logged]
    assert len(played) == 21 and sum(a["a"] == "undo" for a in played) == 3
    assert any(a.get("fouls") for a in played) and any(a.get("carom") for a in played)
    final = new_game("five-pins", config)
    for a in played:
        final.apply(a)
    winner = final.state()["winner"]
    assert winner is not None

    new_match(table, config)
    outcome = table.play(played, 11, random.Random(7), five_lines)
    # Once more right after the winning shot's rec frame: the match is over and still won.
    header, actions = table.cut()
    assert actions == played
    status = table.link.request("state")
    assert status["state"] == final.state() and status["outcome"]["winner"] == winner
    assert "WINNER " + ["Ann", "Bob"][winner] in status["screen"]
    # "confirm" starts the next match: the won one is closed in the journal.
    last = max(table.seen)
    table.inject(five_lines(table, None, {"a": "break", "player": 0}, None)[0])
    table.until(lambda f: f.type == "rec" and f.payload["seq"] > last + 1)
    header, actions = table.cut()
    assert header["game_no"] == table.game_no + 1 and actions == []
    ends = [r for r in table.link.journal_since(0) if r.get("type") == "E"]
    end = ends[-1]["end"]
    # The end record is the winner (and when, with the clock set); its signature follows in a
    # `sig` frame (docs/journal.md).
    assert {k: v for k, v in end.items() if k != "ended"} == {"winner": winner}
    sig = table.link.request("sign", {"game_no": table.game_no})
    assert sig["seq"] == ends[-1]["seq"] and len(sig["head"]) == 64
    assert table.boots == 13 and outcome["lost"] >= 1 and outcome["acknowledged"] >= 2
    report_micropython("power cuts of a live five-pins board, nothing acknowledged lost (%d "
                       "actions; in flight: %d lost, %d journaled unseen, %d seen)"
                       % (len(played), outcome["lost"], outcome["journaled"],
                          outcome["acknowledged"]), table.boots)


@pytest.mark.parametrize("table", ["shove-hapenny"], indirect=True)
def test_power_cuts_of_a_shove_hapenny_game(table):
    # The first 12 actions of a game with an undo, a void and an out-of-turn turn. After each
    # boot the pegs still in their holes are read again and must agree with the resumed score.
    config = {"sides": 2, "per_side": 1, "overflow": "auto"}
    head, logged = random_match("shove-hapenny", seed=37, accuracy=0.55)
    played = [a for _, _, a in logged][:12]
    kinds = [a["a"] for a in played]
    assert "undo" in kinds and any(a.get("void") for a in played)
    new_match(table, config)
    # The scorer records what the pegs show: no coins for void or out-of-turn turns.
    game = new_game("shove-hapenny", config)
    for a in played:
        st = game.state()
        game.apply(a)
        if a["a"] == "turn" and (a.get("void") or a["side"] != st["next"]):
            a["beds"] = [0] * 9
    outcome = table.play(played, 6, random.Random(11), shove_lines)
    header, actions = table.cut()
    assert actions == played
    assert len(table.pegs) >= 10  # pegs in play, re-read at every boot
    assert table.boots == 7 and outcome["lost"] >= 1
    report_micropython("power cuts of a live shove ha'penny board, pegs re-read (%d actions; "
                       "in flight: %d lost, %d journaled unseen, %d seen)"
                       % (len(played), outcome["lost"], outcome["journaled"],
                          outcome["acknowledged"]), table.boots)
