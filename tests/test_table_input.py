"""Real human input at the table, played by the real firmware on a simulated board (chalk sim
--virtual): contact bounce of 1-5 ms on every edge is not chatter, a glitch shorter than
min_press_ms is no press, a pin that left its base before "confirm" counts for that shot (FP-18),
the simulated board times every pin edge to the ms as the board's interrupt does (FP-21: a fall
of min_fall_ms - 1 never counts, min_fall_ms always does, at every phase of the scan), and
several fouls are entered in one shot from the buttons (FP-14, FP-15).
"""

import json

import pytest

from chalk.randomgame import random_match
from chalk.sim import run_virtual
from chalk.traces import Trace, from_matchlog
from scoreboard import boardconfig
from scoreboard.games.five_pins.referee import FOULS
from scoreboard.rules import new_game
from tests.mpy import ROOT, micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

BOARDS = ROOT / "firmware" / "boards"
BREAK = {"a": "break", "player": 0}


def play(game, tr, tmp_path, name="trace"):
    path = tmp_path / (name + ".jsonl")
    tr.write(path)
    actions, summary = run_virtual(game, path)
    for a in actions:
        a.pop("t")
    g = new_game(game, summary["config"])
    for a in actions:
        g.apply(a)
    assert g.state() == summary["state"]
    return actions, summary


def shot(player, pins="", carom=0, fouls=()):
    return {"a": "shot", "player": player, "pins": pins, "carom": carom, "fouls": list(fouls)}


def five_start(**kw):
    tr = Trace(**kw)
    tr.wait(500)
    tr.press("confirm")  # the break: P1 (FP-7)
    tr.wait(1000)
    return tr


def mark_fouls(tr, fouls):
    """Enter fouls the documented way: foul opens the list (and moves down it), confirm marks
    the code under the cursor and closes the list."""
    for code in fouls:
        for _ in range(FOULS.index(code) + 1):
            tr.press("foul")
        tr.press("confirm")


# -- bounce is not chatter ------------------------------------------------------------------------

def test_bouncy_presses_300ms_apart_are_not_chatter(tmp_path):
    # Five presses of carom3 300 ms apart, each edge rattling 2-4 times 1-5 ms apart: the
    # debouncer takes one press each, so the line health must not see a chattering line (it
    # muted the button at its 13th raw edge, and the last presses were lost).
    tr = five_start(seed=11, bounce_ms=(1, 5))
    tr.pin_fall("C", tr.t, 1500)
    tr.wait(3000)
    for _ in range(5):
        tr.press("carom3", hold=90, after=210)
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "C", 3)]  # toggled five times: on
    assert not [w for w in summary["warnings"] if "chatter" in w]


def test_60_shot_match_with_bouncy_presses_scores_right(tmp_path):
    head, acts = random_match("five-pins", seed=4, max_actions=61)
    lines = [json.dumps(head)] + [json.dumps(dict(a, seq=i + 1)) for i, (_, _, a) in
                                  enumerate(acts)]
    want = [a for _, _, a in acts]
    assert len([a for a in want if a["a"] == "shot"]) >= 55
    tr = from_matchlog(lines, seed=4, bounce_ms=(1, 5))
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == want
    assert not [w for w in summary["warnings"] if "chatter" in w]


# -- a glitch is not a press ----------------------------------------------------------------------

def test_min_press_ms_defaults_to_debounce_ms_in_every_board():
    for path in sorted(BOARDS.glob("*.json")):
        cfg = boardconfig.load(str(path))
        T = cfg["timings"]
        assert 0 < T["min_press_ms"] <= T["long_press_ms"], path.name
    cfg = json.loads((BOARDS / "five-pins.json").read_text())
    cfg["timings"].pop("min_press_ms", None)
    cfg["timings"]["debounce_ms"] = 12
    assert boardconfig.load(cfg)["timings"]["min_press_ms"] == 12


def test_glitches_shorter_than_min_press_press_nothing(tmp_path):
    # Spikes of 1-19 ms (debounce and min_press 20 ms on this board) on every button, at every
    # phase of the 5 ms scan: none is a press, so nothing is toggled, undone or confirmed.
    tr = five_start()
    tr.pin_fall("2", tr.t, 1500)
    tr.wait(3000)
    t = tr.t
    for k, width in enumerate((1, 2, 3, 5, 8, 11, 13, 17, 19)):
        for j, button in enumerate(("carom3", "carom4", "foul", "undo", "confirm", "break")):
            start = t + 200 * k + 31 * j + k
            tr.at(start, "btn." + button, 1)
            tr.at(start + width, "btn." + button, 0)
    tr.t = t + 2500
    tr.press("carom4")  # a real press still works
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "2", 4)]


# -- a pin that left its base before confirm ------------------------------------------------------

@pytest.mark.parametrize("before", [1, 4, 9, 17, 28])
def test_fp18_pin_falling_at_the_confirm_press_counts_in_that_shot(before, tmp_path):
    # Pin 1 goes down and stays; pin 3 loses contact `before` ms before confirm is released
    # and lies there: both are this shot's (FP-18). The next shot, nothing falls.
    tr = five_start()
    tr.pin_fall("1", tr.t, None)
    tr.wait(2500)
    release = tr.t + 90
    tr.pin_fall("3", release - before, None)
    tr.press("confirm", hold=90)
    tr.wait(3000)
    tr.press("confirm")
    actions, _ = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "13"), shot(1, "")]


def test_fp21_pin_rocking_across_the_confirm_press_does_not_count(tmp_path):
    # Off its base 20 ms, 10 of them after confirm: a wobble (FP-21), in neither shot; a pin
    # off 40 ms across the press is down (FP-18).
    tr = five_start()
    tr.pin_fall("1", tr.t, 200)
    tr.wait(2500)
    release = tr.t + 90
    tr.wobble("2", release - 10, 20)
    tr.press("confirm", hold=90)
    tr.wait(2500)
    tr.pin_fall("C", tr.t, 200)
    tr.wait(2500)
    release = tr.t + 90
    tr.pin_fall("4", release - 10, 40)
    tr.press("confirm", hold=90)
    tr.wait(3000)
    actions, _ = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "1"), shot(1, "4C")]


# -- pin edges timed to the ms --------------------------------------------------------------------

def test_fp21_fall_timing_is_exact_to_the_ms_at_every_scan_phase(tmp_path):
    # min_fall_ms is 30: off 29 ms never counts, 30 ms always does, whichever ms of the 5 ms
    # scan the pin leaves on (the ESP32's interrupt stamps each edge; so does the sim).
    tr = five_start()
    want = [BREAK]
    player = 0
    for phase in range(5):
        for ms, pins in ((29, ""), (30, "2")):
            tr.t += (phase - tr.t) % 5
            tr.pin_fall("2", tr.t, ms)
            tr.wait(2600)
            tr.press("confirm")
            want.append(shot(player, pins))
            player = 1 - player
            tr.wait(300)
    actions, _ = play("five-pins", tr, tmp_path)
    assert actions == want


# -- several fouls in one shot --------------------------------------------------------------------

def test_several_fouls_in_one_shot_from_the_buttons(tmp_path):
    tr = five_start()
    tr.pin_fall("1", tr.t, None)
    tr.wait(2500)
    mark_fouls(tr, ["red_first", "pin", "ball_off"])
    tr.press("confirm")
    tr.wait(1000)
    mark_fouls(tr, ["miss"])
    mark_fouls(tr, ["touch"])
    mark_fouls(tr, ["miss"])  # marking it again takes it off
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "1", fouls=["red_first", "pin", "ball_off"]),
                       shot(1, "", fouls=["touch"])]


def test_foul_list_on_the_screen(tmp_path):
    # What the referee sees (docs/scoring-at-the-table.md): the list opens on the most used
    # code, moves with "foul", shows the marks, and closes on "confirm" (mark) or "undo".
    from scoreboard.app import App
    from scoreboard.hal.sim import SimBoard, VirtualClock

    board = SimBoard(str(BOARDS / "five-pins.json"), str(tmp_path), VirtualClock())
    app = App(board)
    app.boot()

    def run(ms):
        for _ in range(ms // 5):
            board.clock.advance(5)
            app.tick()

    def press(button):
        board.set_line("btn." + button, 1)
        run(90)
        board.set_line("btn." + button, 0)
        run(150)
        return board.display.as_text().split("\n")

    press("confirm")  # the break
    board.set_line("pin.1", 1)
    run(2500)
    screen = press("foul")
    assert screen == ["FOUL  1/15 P1", "> miss", "  red_first", "  pin", "  pins_first",
                      "  ball_off", "  touch", "foul:next conf:*"]
    press("foul")
    screen = press("foul")
    assert screen[0] == "FOUL  3/15 P1" and screen[3] == "> pin"
    screen = press("confirm")  # marks "pin", closes the list
    assert "pins 1 pin" in screen
    for _ in range(5):
        press("foul")
    screen = press("foul")  # the 6th code: the list scrolls with the cursor
    assert screen == ["FOUL  6/15 P1 *1", "  pins_first", "  ball_off", "> touch",
                      "  wrong_ball", "  moving", "  not_tip", "foul:next conf:*"]
    screen = press("undo")  # closes the list, nothing changes, nothing undone
    assert "pins 1 pin" in screen and app.journal.stats()["last_seq"] == 2
    press("foul")
    press("foul")
    press("foul")
    screen = press("foul")
    assert screen[1:4] == ["  red_first", " *pin", "> pins_first"]
    screen = press("carom4")  # another button closes the list and acts
    assert "pins 1 c4 pin" in screen
    for button in ("foul", "foul", "confirm", "confirm"):  # mark red_first; submit
        screen = press(button)
    acts = list(app.journal.actions())
    assert acts[-1]["fouls"] == ["red_first", "pin"] and acts[-1]["carom"] == 4


# -- the referee's rulings: FP-17, FP-22, FP-24 ----------------------------------------------------

def mark_ruling(tr, ruling, down=""):
    """Mark a ruling from the foul list: after the fouls come "void", "in_contact" and then
    "not down <pin>" for each pin counted down now (`down`, in PINS' order), and only those."""
    from scoreboard.games.five_pins.referee import LIST

    offered = list(LIST) + ["not down " + p for p in down]
    for _ in range(offered.index(ruling) + 1):
        tr.press("foul")
    tr.press("confirm")


def test_the_referee_voids_a_shot_strikes_a_pin_and_rules_balls_in_contact(tmp_path):
    tr = five_start()
    # FP-22: pins 1 and C fell; C leant on a ball rolling away: the referee strikes it.
    tr.pin_fall("1", tr.t, None)
    tr.pin_fall("C", tr.t + 20, None)
    tr.wait(2500)
    mark_ruling(tr, "not down C", "1C")
    tr.press("confirm")
    tr.wait(1000)
    # FP-17: a spectator knocked the table: pin 2 fell, the shot is void, the turn passes.
    tr.pin_fall("2", tr.t, None)
    tr.wait(2500)
    mark_fouls(tr, ["miss"])  # a foul chosen first does not count once the shot is void
    mark_ruling(tr, "void", "2")
    tr.press("confirm")
    tr.wait(1000)
    # FP-24: balls in contact, played from the break position: pin 3 scores nothing.
    tr.pin_fall("3", tr.t, None)
    tr.wait(2500)
    mark_ruling(tr, "in_contact", "3")
    tr.press("confirm")
    tr.wait(1000)
    # The next shot starts clean: no ruling is left over from the last.
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [
        BREAK,
        dict(shot(0, "1"), struck="C"),
        {"a": "shot", "player": 1, "pins": "", "carom": 0, "fouls": [], "void": 1,
         "struck": "2"},
        dict(shot(0, "3"), in_contact=1),
        shot(1, ""),
    ]
    assert summary["state"]["scores"] == [2, 0] and summary["state"]["next"] == 0


def test_a_match_log_with_the_rulings_played_back_from_its_sensor_trace(tmp_path):
    # The trace builder presses what the referee pressed: the log's void, struck and
    # in_contact shots come back from the board as they were.
    head = {"chalk": 1, "game": "five-pins", "config": {"target": 60, "sets": 3,
                                                         "pin_foul_penalty": 0},
            "players": ["Ann", "Bob"]}
    want = [BREAK, dict(shot(0, "12"), struck="C"),
            {"a": "shot", "player": 1, "pins": "", "carom": 0, "fouls": [], "void": 1,
             "struck": "24"},
            dict(shot(0, "3", fouls=["miss"]), in_contact=1),
            dict(shot(1, "1C", carom=3), in_contact=1, struck="4"),
            {"a": "shot", "player": 0, "pins": "", "carom": 0, "fouls": [], "void": 1}]
    lines = [json.dumps(head)] + [json.dumps(dict(a, seq=i + 1)) for i, a in enumerate(want)]
    actions, summary = play("five-pins", from_matchlog(lines, seed=3), tmp_path)
    assert actions == want


def test_void_and_struck_pins_of_seven_pins_and_novuss_played_back(tmp_path):
    sp = {"a": "shot", "player": 0, "pins": ["S1"], "pocketed": 0, "carom": 0, "called": 0,
          "fouls": []}
    want = [BREAK, dict(sp, struck=["K"]),
            {"a": "shot", "player": 0, "pins": [], "pocketed": 0, "carom": 0, "called": 0,
             "fouls": [], "void": 1, "struck": ["S2", "M1"]},
            dict(sp, player=1, pins=[])]
    head = {"chalk": 1, "game": "seven-pins", "config": {"start": 300}, "players": ["A", "B"]}
    lines = [json.dumps(head)] + [json.dumps(dict(a, seq=i + 1)) for i, a in enumerate(want)]
    actions, _ = play("seven-pins", from_matchlog(lines, seed=5), tmp_path, "seven")
    assert actions == want
    want = [{"a": "start", "side": 0},
            {"a": "shot", "side": 0, "own": 0, "opp": 0, "fouls": [], "void": 1},
            {"a": "shot", "side": 1, "own": 1, "opp": 0, "fouls": []}]
    head = {"chalk": 1, "game": "novuss", "config": {"per_side": 1, "pucks": 8},
            "players": ["A", "B"]}
    lines = [json.dumps(head)] + [json.dumps(dict(a, seq=i + 1)) for i, a in enumerate(want)]
    actions, _ = play("novuss", from_matchlog(lines, seed=5), tmp_path, "novuss")
    assert actions == want


@pytest.mark.parametrize("game,head_config,opening,void,text,words", [
    ("five-pins", {"target": 60, "sets": 3, "pin_foul_penalty": 0}, BREAK,
     {"a": "shot", "player": 0, "pins": "", "carom": 0, "fouls": [], "void": 1, "struck": "2"},
     "P1 void", "Ann: shot void (FP-17"),
    ("seven-pins", {"start": 300}, BREAK,
     {"a": "shot", "player": 0, "pins": [], "pocketed": 0, "carom": 0, "called": 0,
      "fouls": [], "void": 1, "struck": ["K"]},
     "P1 void", "Ann: shot void (a third party or force majeure), nothing counts; the turn "
                "passes (SP-9)"),
    ("novuss", {"per_side": 1, "pucks": 8}, {"a": "start", "side": 0},
     {"a": "shot", "side": 0, "own": 0, "opp": 0, "fouls": [], "void": 1},
     "A void", "Ann: shot void (a third party or force majeure), nothing counts; Bob to play "
               "(NV-6)"),
])
def test_a_void_shot_reads_void_on_the_board_and_in_words_on_the_host(
        game, head_config, opening, void, text, words, tmp_path):
    # FP-17's ruling, as each pin table and novuss takes it: the board's screen says "void" at
    # its foot, not an empty shot ("P1 -", "A 0+0"), and the host reads that text back as the
    # void shot it stands for (a board whose state reply carries only its own short text).
    from chalk import views

    head = {"chalk": 1, "game": game, "config": head_config, "players": ["Ann", "Bob"]}
    want = [opening, void]
    lines = [json.dumps(head)] + [json.dumps(dict(a, seq=i + 1)) for i, a in enumerate(want)]
    actions, summary = play(game, from_matchlog(lines, seed=7), tmp_path, game)
    assert actions == want
    assert summary["screen"][-1] == text, summary["screen"]
    status = {"game": game, "config": head_config, "players": ["Ann", "Bob"],
              "state": summary["state"], "last": text}
    said, _fouls = views.last_words(status, ["Ann", "Bob"])
    assert said.startswith(words), said
    # The empty shot still reads as one: a void is not guessed from nothing down.
    empty = dict(void, pins="" if game == "five-pins" else [])
    for k in ("void", "struck"):
        empty.pop(k, None)
    from scoreboard.games import part

    short = part(game, "screen").short(empty)
    assert "void" not in short and short != text
