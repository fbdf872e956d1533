"""The firmware on a simulated board, end to end: sensor traces played on a virtual clock by the
real firmware on the MicroPython unix port (chalk.sim.run_virtual, portable .mpy, SIM_HEAP).

Whole games: the bundled samples and generated matches (undos, voids, out-of-turn turns, fouls,
caroms) must journal exactly the actions a scorer made at the table, end in the state the
CPython rules give for them, and show the winner. Then the traced behaviours, one test per rule:
pin falls and wobbles (FP-19, FP-21, FP-23), stuck and chattering lines, peg mismatches (SH-2,
SH-15), void and out-of-turn turns (SH-17, SH-18), and presses that land in the same scan as a
sensor event.
"""

import io
import json
import time

import pytest

from chalk.link import BoardLink, open_port
from chalk.randomgame import random_match
from chalk.sim import Sim, run_virtual
from chalk.traces import Trace, from_matchlog
from scoreboard import matchlog
from scoreboard.rules import new_game
from tests.conftest import report_micropython
from tests.mpy import ROOT, micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

SAMPLES = ROOT / "host" / "chalk" / "samples"
Z = [0] * 9
BOARD_NAMES = {"shove-hapenny": "AB", "five-pins": ("P1", "P2")}


# -- helpers ---------------------------------------------------------------------------------------

def play(game, trace, tmp_path, name="trace"):
    """Run a trace (a Trace or a path) on a simulated board; return (actions without t, summary)."""
    path = trace
    if isinstance(trace, Trace):
        path = tmp_path / (name + ".jsonl")
        trace.write(path)
    actions, summary = run_virtual(game, path)
    assert summary is not None, "the board printed no summary"
    for a in actions:
        assert type(a.pop("t")) is int  # every journaled action carries its game time
    # Whatever was played, the board's state is the host's replay of its journal.
    assert summary["state"] == replay(game, summary["config"], actions)
    return actions, summary


def replay(game, config, actions):
    g = new_game(game, config)
    for a in actions:
        g.apply(a)
    return g.state()


def as_recorded(game, config, actions):
    """The actions as a scorer records them on the board. Five-pins: as they are. Shove
    ha'penny: a board sees pegs, not coins, so a turn's beds are the pegs it added (the shooter's
    row plus, with overflow "auto", the opponent's: an overflow peg stands for the shooter's coin);
    a coin that scores nowhere (SH-14, SH-15) adds no peg, and a void (SH-17) or out-of-turn
    (SH-18) turn adds none at all."""
    if game != "shove-hapenny":
        return [dict(a) for a in actions]
    g = new_game(game, config)
    out = []
    for a in actions:
        before = g.state()
        after = g.apply(a)
        a = dict(a)
        if a["a"] == "turn":
            s = a["side"]
            if a.get("void") or s != before["next"]:
                a["beds"] = list(Z)
            else:
                gain = [[after["beds"][k][b] - before["beds"][k][b] for b in range(9)]
                        for k in (0, 1)]
                a["beds"] = [gain[s][b] + gain[1 - s][b] for b in range(9)]
        out.append(a)
    # Recording what the pegs show must not change a single state of the game.
    assert replay(game, config, out) == replay(game, config, actions)
    return out


def features(game, config, actions):
    """What a match exercises, so a chosen seed is known to cover what it should."""
    g = new_game(game, config)
    seen = set()
    for a in actions:
        before = g.state()
        after = g.apply(a)
        if a["a"] == "undo":
            seen.add("undo")
        elif game == "shove-hapenny" and a["a"] == "turn":
            s = a["side"]
            if a.get("void"):
                seen.add("void")
            elif s != before["next"]:
                seen.add("out_of_turn")
            elif any(after["beds"][1 - s][b] > before["beds"][1 - s][b] for b in range(9)):
                seen.add("overflow")
        elif game == "five-pins" and a["a"] == "shot":
            if a["fouls"]:
                seen.add("foul")
            if a["carom"]:
                seen.add("carom")
            if "C" in a["pins"]:
                seen.add("centre")
    return seen


def check_game(game, log_lines, trace, tmp_path):
    log = matchlog.read(log_lines)
    assert not log.problems
    config = log.header["config"]
    logged = [matchlog.strip_meta(r) for _, r in log.actions]
    want = as_recorded(game, config, logged)
    actions, summary = play(game, trace, tmp_path)
    assert summary["game"] == game and summary["config"] == config
    for i, (got, exp) in enumerate(zip(actions, want)):
        assert got == exp, "action %d (seq %d): journaled %s, played %s" % (i, i + 2, got, exp)
    assert len(actions) == len(want)
    final = replay(game, config, logged)
    # The board's state, the host's replay of the board's journal and the log all agree.
    assert summary["state"] == replay(game, config, actions) == final
    assert final["winner"] is not None
    assert "WINNER " + BOARD_NAMES[game][final["winner"]] in summary["screen"]
    assert summary["warnings"] == []
    assert summary["last_seq"] == len(want) + 1  # the header, then one record per action
    return actions, summary


def log_lines(head, actions):
    buf = io.StringIO()
    matchlog.write(buf, head, actions)
    return buf.getvalue().splitlines()


def shove_turns(turns, start=0):
    """A shove ha'penny trace that plays `turns` [(side, beds)] from the start, pegging each."""
    head = matchlog.header("shove-hapenny", {"sides": 2, "per_side": 1, "overflow": "auto"})
    actions = [(1, 0, {"a": "start", "side": start})]
    for side, beds in turns:
        actions.append((len(actions) + 1, 0, {"a": "turn", "side": side, "beds": beds}))
    return from_matchlog(log_lines(head, actions))


def bed(*pairs):
    beds = list(Z)
    for b, n in pairs:
        beds[b - 1] = n
    return beds


def turn(side, beds, **kw):
    a = {"a": "turn", "side": side, "beds": beds}
    a.update(kw)
    return a


def shot(player, pins="", carom=0, fouls=()):
    return {"a": "shot", "player": player, "pins": pins, "carom": carom, "fouls": list(fouls)}


BREAK = {"a": "break", "player": 0}
START = {"a": "start", "side": 0}
SHOVE_CFG = {"sides": 2, "per_side": 1, "overflow": "auto"}


# -- whole games ----------------------------------------------------------------------------------

@pytest.mark.parametrize("game", ["shove-hapenny", "five-pins"])
def test_bundled_sample_game_on_the_simulated_board(game, tmp_path):
    lines = (SAMPLES / (game + ".jsonl")).read_text().splitlines()
    actions, _ = check_game(game, lines, SAMPLES / "traces" / (game + ".jsonl"), tmp_path)
    report_micropython("bundled %s game played from its sensor trace (%d actions)"
                       % (game, len(actions)), 1)


# Seeds picked for what they play (checked below): shove ha'penny 14 and 37 have undos, void and
# out-of-turn turns and overflows; five-pins 4 and 7 have undos, fouls, caroms, and confirm
# presses that land in the very scan the shot's window settles.
GENERATED = [("shove-hapenny", 14, {"undo", "void", "out_of_turn", "overflow"}),
             ("shove-hapenny", 37, {"undo", "void", "out_of_turn", "overflow"}),
             ("five-pins", 4, {"undo", "foul", "carom", "centre"}),
             ("five-pins", 7, {"undo", "foul", "carom", "centre"})]


@pytest.mark.parametrize("game,seed,covers", GENERATED, ids=["%s-%d" % g[:2] for g in GENERATED])
def test_generated_match_on_the_simulated_board(game, seed, covers, tmp_path):
    kw = {"accuracy": 0.55} if game == "shove-hapenny" else {}
    head, actions = random_match(game, seed=seed, **kw)
    assert covers <= features(game, head["config"], [a for _, _, a in actions])
    lines = log_lines(head, actions)
    got, _ = check_game(game, lines, from_matchlog(lines, seed=seed), tmp_path)
    report_micropython("generated %s match (seed %d) played from sensors (%d actions)"
                       % (game, seed, len(got)), 1)


# -- five-pins: the pin-fall latch ----------------------------------------------------------------

def five_start():
    tr = Trace()
    tr.wait(500)
    tr.press("confirm")  # the break: P1 (FP-7)
    tr.wait(1000)
    return tr


def test_fp21_wobble_shorter_than_min_fall_does_not_count(tmp_path):
    # min_fall_ms is 30 on this board: rocking for 12 ms or 25 ms is not a fall (FP-21) ...
    tr = five_start()
    tr.wobble("C", tr.t, 12)
    tr.wobble("2", tr.t + 300, 25)
    tr.wobble("2", tr.t + 700, 10)  # ... however often it happens
    tr.wait(3000)
    tr.press("confirm")
    # ... while 35 ms off its base is (FP-18).
    tr.pin_fall("3", tr.t, 35)
    tr.wobble("1", tr.t + 100, 20)
    tr.wait(3000)
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, ""), shot(1, "3")]
    assert summary["state"]["scores"] == [0, 2] and summary["state"]["next"] == 0
    assert summary["warnings"] == []


def test_fp19_pin_that_falls_and_stands_again_counts(tmp_path):
    # Pin 2 is off its base for 60 ms and stands on its spot again; C for 40 ms: both count
    # (FP-19), C with a side pin is worth 4 (FP-9): 2 + 4.
    tr = five_start()
    tr.pin_fall("2", tr.t, 60)
    tr.pin_fall("C", tr.t + 150, 40)
    tr.wait(400)
    tr.press("confirm")  # pressed while the window is still open: it closes it
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "2C")]
    assert summary["state"]["scores"] == [6, 0]
    assert "last +6 P1" in summary["screen"]


def test_fp23_pin_lying_off_its_spot_before_the_shot_is_not_counted(tmp_path):
    tr = Trace()
    tr.wait(200)
    tr.set("pin.C", 1)  # knocked over while the figure was set up: lies there before the break
    tr.wait(300)
    tr.press("confirm")  # the break, before that movement has settled
    tr.wait(1000)
    tr.pin_fall("2", tr.t, 100)  # shot 1: pin 2 only
    tr.wait(3000)
    tr.press("confirm")
    tr.set("pin.C", 0)  # the figure is set up again (standing a pin up counts as nothing)
    tr.wait(1000)
    tr.pin_fall("4", tr.t)  # shot 2: pin 4 goes down and stays: a ball now lies on its spot
    tr.wait(3000)
    tr.press("confirm")
    # Shot 3: pin 4 cannot be stood up (removed, FP-23); its switch rattles as the balls pass
    # (edges within one scan), and pin 1 falls and stands. Only pin 1 counts.
    tr.wait(1000)
    tr.at(tr.t + 1, "pin.4", 0)
    tr.at(tr.t + 3, "pin.4", 1)
    tr.pin_fall("1", tr.t + 200, 80)
    tr.wait(3000)
    tr.press("confirm")
    # Shot 4: the spot is free, pin 4 is set up and knocked down again: it counts.
    tr.set("pin.4", 0)
    tr.wait(1000)
    tr.pin_fall("4", tr.t, 100)
    tr.wait(3000)
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "2"), shot(1, "4"), shot(0, "1"), shot(1, "4")]
    assert summary["state"]["scores"] == [4, 4]


def test_confirm_in_the_scan_the_shot_settles_keeps_the_shots_pins(tmp_path):
    # The window closes 2000 ms (settle_ms) after the last pin movement; "confirm" is released
    # just before, exactly at, and just after that moment. Each shot's pins belong to that shot,
    # never to the next (FP-11: points of a shot go to its shooter).
    tr = five_start()
    offsets = (-10, -5, 0, 5, 10, 15)
    for k, off in enumerate(offsets):
        pin = "1234"[k % 4]
        back = tr.t + 100  # the last pin movement, on a 5 ms scan
        tr.pin_fall(pin, tr.t, 100)
        tr.t = back + 2000 + off - 90  # release = press + 90 ms hold
        tr.press("confirm")
        tr.wait(1000)
    actions, summary = play("five-pins", tr, tmp_path)
    want = [BREAK] + [shot(k % 2, "1234"[k % 4]) for k in range(len(offsets))]
    assert actions == want
    assert summary["state"]["scores"] == [6, 6]


# -- line health ----------------------------------------------------------------------------------

def test_stuck_button_is_reported_and_play_goes_on_from_the_others(tmp_path):
    # stuck_ms is 60 s: the foul button jams down mid-game. Its long press (at 800 ms) means "no
    # foul", which changes nothing; after 60 s the line is reported stuck and muted. Shots go
    # on from confirm and the pins meanwhile.
    tr = five_start()
    tr.pin_fall("1", tr.t, 100)
    tr.wait(3000)
    tr.press("confirm")
    tr.set("btn.foul", 1)  # jammed
    for _ in range(8):  # 80 s of play with it jammed
        tr.wait(7000)
        tr.pin_fall("2", tr.t, 100)
        tr.wait(3000)
        tr.press("confirm")
    jammed = tr.t
    played = [BREAK, shot(0, "1")] + [shot((k + 1) % 2, "2") for k in range(8)]
    actions, summary = play("five-pins", tr, tmp_path, "stuck")
    assert actions == played
    assert summary["state"]["scores"] == [10, 8]
    assert summary["warnings"] == ["btn.foul stuck"]
    assert summary["screen"][-1] == "!btn.foul stuck"

    # Freed: the warning clears, the button works again (one press opens the foul list on
    # "miss", FP-15; confirm marks it, confirm submits the shot).
    tr.t = jammed + 5000
    tr.set("btn.foul", 0)
    tr.wait(1000)
    tr.press("foul")
    tr.press("confirm")
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path, "freed")
    assert actions == played + [shot(1, "", fouls=["miss"])]
    assert summary["state"]["scores"] == [12, 8] and summary["state"]["ball_in_hand"]
    assert summary["warnings"] == []
    assert not any(r.startswith("!") for r in summary["screen"])


def wait_for(link, what, timeout=60.0):  # an upper bound only
    """Ask the board for its status until what(status) is true; return that status."""
    deadline = time.monotonic() + timeout
    while True:
        st = link.request("state", timeout=30.0)  # an upper bound on a busy machine
        if what(st):
            return st
        if time.monotonic() > deadline:
            raise AssertionError("the board never reached it; last status %s" % json.dumps(st))
        time.sleep(0.05)


def test_chattering_line_is_reported_and_play_goes_on(tmp_path):
    # A live simulated board (real time, behind its pty): the claim button's line chatters for
    # 4 s (an edge every 15 ms: over chatter_edges=10 in 400 ms). It is reported and muted while
    # the game starts and a turn is played on the other buttons and the pegs; 0.4 s after the
    # line goes quiet the warning clears. A chatter can only be seen while it lasts, so this
    # runs live (a virtual run ends with 2 s of quiet).
    tr = Trace(bounce=False)
    for k in range(1000 // 15 * 4):
        tr.at(500 + 15 * k, "btn.claim", (k + 1) % 2)
    tr.t = 1500
    tr.press("done")  # start: A
    tr.set("peg.0.2.1", 1)
    tr.t = 2400
    tr.press("done")  # A's turn: one score in bed 2
    trace = tmp_path / "chatter.jsonl"
    tr.write(trace)
    sim = Sim("shove-hapenny", flash=tmp_path / "flash", trace=trace)
    port = sim.start()
    try:
        with BoardLink(open_port(port), port) as link:
            link.hello(timeout=60)
            # (The screen follows the warnings a redraw later: a part a pass of the loop.)
            st = wait_for(link, lambda s: "btn.claim chatter" in s["warnings"]
                          and "!btn.claim chatt" in s["screen"])  # 16 columns
            st = wait_for(link, lambda s: s["state"]["turns"] == 1 and not s["warnings"]
                          and not any(r.startswith("!") for r in s["screen"]))
            assert st["state"]["beds"] == [bed((2, 1)), Z] and st["state"]["next"] == 1
            warns = [f.payload for f in link.frames(timeout=0.2) if f.type == "warn"]
            assert {"line": "btn.claim", "fault": "chatter"} in warns
            assert {"line": "btn.claim", "fault": "ok"} in warns
            recs = link.journal_since(0)
    finally:
        sim.stop()
    acts = [{k: v for k, v in r.items() if k not in ("seq", "t")} for r in recs if "a" in r]
    assert acts == [START, turn(0, bed((2, 1)))]  # nothing from the chattering line


# -- shove ha'penny: pegs against the score -------------------------------------------------------

def mismatch_then_fixed(tmp_path, tr, fix, want_warnings, recorded, then):
    """Play `tr` (ending with a refused "done"), check nothing was recorded and the mismatch is
    shown; then play it on with `fix(tr)` and "done": the turn is recorded."""
    actions, summary = play("shove-hapenny", tr, tmp_path, "mismatch")
    assert actions == recorded
    assert summary["state"] == replay("shove-hapenny", SHOVE_CFG, recorded)
    assert summary["warnings"] == want_warnings
    assert summary["screen"][-len(want_warnings):] == ["!" + w for w in want_warnings]
    fix(tr)
    tr.wait(600)  # past the peg debounce
    tr.press("done")
    actions, summary = play("shove-hapenny", tr, tmp_path, "fixed")
    assert actions == recorded + [then]
    assert summary["state"] == replay("shove-hapenny", SHOVE_CFG, actions)
    assert summary["warnings"] == []
    return summary


def test_peg_pulled_is_shown_and_the_turn_waits_until_it_is_back(tmp_path):
    tr = shove_turns([(0, bed((2, 2)))])
    tr.set("peg.0.2.2", 0)  # someone pulls one of A's pegs
    tr.wait(600)
    tr.set("peg.1.5.1", 1)  # B's turn: one score in bed 5
    tr.wait(600)
    tr.press("done")
    summary = mismatch_then_fixed(
        tmp_path, tr, lambda t: t.set("peg.0.2.2", 1), ["PEG A2 -1"],
        [START, turn(0, bed((2, 2)))], turn(1, bed((5, 1))))
    assert summary["state"]["beds"] == [bed((2, 2)), bed((5, 1))]


def test_peg_in_the_wrong_square_is_shown_and_the_turn_waits(tmp_path):
    # A scores in bed 3 but the peg goes into B's square: with overflow "auto" a peg there would
    # be an overflow (SH-15), which A, not full in bed 3, cannot make. Both squares are shown.
    tr = shove_turns([])
    tr.set("peg.1.3.1", 1)
    tr.wait(600)
    tr.press("done")

    def fix(t):
        t.set("peg.1.3.1", 0)
        t.wait(200)
        t.set("peg.0.3.1", 1)

    mismatch_then_fixed(tmp_path, tr, fix, ["PEG A3 -1", "PEG B3 +1"], [START],
                        turn(0, bed((3, 1))))


def test_overflow_peg_that_would_win_the_game_is_refused_sh15(tmp_path):
    # A needs one score in bed 9 to win; B's bed 9 is full. B's coin in bed 9 overflows to A,
    # but an overflow may never give the winning score (SH-15): a peg put in A's square 9 is
    # a mismatch. Pulled, the turn is recorded and scores nothing.
    turns = [(0, bed((1, 3), (2, 2))), (1, bed((9, 3))),
             (0, bed((2, 1), (3, 3), (4, 1))), (1, Z),
             (0, bed((4, 2), (5, 3))), (1, Z),
             (0, bed((6, 3), (7, 2))), (1, Z),
             (0, bed((7, 1), (8, 3), (9, 1))), (1, Z),
             (0, bed((9, 1)))]
    tr = shove_turns(turns)
    tr.set("peg.0.9.3", 1)
    tr.wait(600)
    tr.press("done")
    played = [START] + [turn(s, b) for s, b in turns]
    before = replay("shove-hapenny", SHOVE_CFG, played)
    assert sum(before["beds"][0]) == 26 and before["beds"][1][8] == 3 and before["next"] == 1
    summary = mismatch_then_fixed(tmp_path, tr, lambda t: t.set("peg.0.9.3", 0),
                                  ["PEG A9 +1"], played, turn(1, Z))
    assert summary["state"]["winner"] is None and sum(summary["state"]["beds"][0]) == 26


def test_mismatch_found_by_done_in_the_scan_the_peg_settles_stays_shown(tmp_path):
    # A peg goes into the wrong square at 2000 ms and reads as present 305 ms later (first peg
    # scan + peg_debounce_ms). "done" released in that very scan, or later, finds the mismatch:
    # the turn is not recorded and the mismatch stays shown (SH-2: never silently accepted).
    for delta in range(305, 330, 5):
        tr = shove_turns([])
        tr.t = 2000
        tr.set("peg.1.3.1", 1)
        tr.t = 2000 + delta - 90  # released 90 ms after the press
        tr.press("done")
        actions, summary = play("shove-hapenny", tr, tmp_path, "d%d" % delta)
        assert actions == [START], delta
        assert summary["warnings"] == ["PEG A3 -1", "PEG B3 +1"], delta


def test_void_sh17_and_out_of_turn_sh18_from_the_buttons(tmp_path):
    tr = shove_turns([(0, bed((1, 2)))])
    tr.press("void")  # B touched a played coin: "touched"
    tr.press("done")
    tr.press("void")
    tr.press("void")  # A removed coins before the score was taken: "removed"
    tr.set("peg.0.4.1", 1)  # ... yet a peg goes in: the turn still scores nothing
    tr.wait(600)
    tr.press("done")
    played = [START, turn(0, bed((1, 2))), turn(1, Z, void="touched"),
              turn(0, Z, void="removed")]
    actions, summary = play("shove-hapenny", tr, tmp_path, "void")
    assert actions == played
    assert summary["state"] == replay("shove-hapenny", SHOVE_CFG, played)
    assert summary["state"]["beds"] == [bed((1, 2)), Z] and summary["state"]["turns"] == 3
    assert "+A4" in summary["screen"]  # the stray peg stays shown as not scored
    tr.set("peg.0.4.1", 0)
    tr.wait(600)
    # B on move; A plays out of turn (SH-18): it scores nothing and A misses its next turn.
    tr.press("out_of_turn")
    tr.press("done")
    actions, summary = play("shove-hapenny", tr, tmp_path, "oot")
    assert actions == played + [turn(0, Z)]
    st = summary["state"]
    assert st["next"] == 1 and st["skip"] == [1, 0] and st["turns"] == 4
    assert "next B (skip)" in summary["screen"]
    assert summary["warnings"] == []
    # So B plays twice in a row.
    for hole in (1, 2):
        tr.set("peg.1.6.%d" % hole, 1)
        tr.wait(600)
        tr.press("done")
    actions, summary = play("shove-hapenny", tr, tmp_path, "twice")
    assert actions == played + [turn(0, Z), turn(1, bed((6, 1))), turn(1, bed((6, 1)))]
    st = summary["state"]
    assert st["beds"] == [bed((1, 2)), bed((6, 2))] and st["next"] == 0 and st["skip"] == [0, 0]
    assert summary["warnings"] == []
