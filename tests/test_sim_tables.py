"""Seven pins and Novuss on the simulated board (the firmware on the MicroPython unix port): the
bundled sample games played from their sensor traces, generated games, the tilt latch in a
seven-pins pin, and the screen showing what was sensed and chosen before it is confirmed."""

import pytest

from chalk.randomgame import random_match
from chalk.sim import run_virtual
from chalk.traces import Trace, from_matchlog
from tests import test_sim_games as sg
from tests.conftest import report_micropython
from tests.mpy import micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

sg.BOARD_NAMES.setdefault("seven-pins", ("P1", "P2"))
sg.BOARD_NAMES.setdefault("novuss", "AB")


@pytest.mark.parametrize("game", ["seven-pins", "novuss"])
def test_bundled_sample_game_on_the_simulated_board(game, tmp_path):
    lines = (sg.SAMPLES / (game + ".jsonl")).read_text().splitlines()
    actions, _ = sg.check_game(game, lines, sg.SAMPLES / "traces" / (game + ".jsonl"), tmp_path)
    assert any(a["a"] == "undo" for a in actions) and any(a.get("fouls") for a in actions)
    report_micropython("bundled %s game played from its sensor trace (%d actions)"
                       % (game, len(actions)), 1)


@pytest.mark.parametrize("game,seed", [("seven-pins", 9), ("novuss", 74)])
def test_generated_game_on_the_simulated_board(game, seed, tmp_path):
    head, actions = random_match(game, seed=seed)
    lines = sg.log_lines(head, actions)
    got, _ = sg.check_game(game, lines, from_matchlog(lines, seed=seed), tmp_path)
    assert len(got) == len(actions)


def test_seven_pins_fall_and_return_counts_wobble_does_not(tmp_path):
    tr = Trace(3)
    tr.wait(500)
    tr.press("confirm")  # P1 breaks
    tr.wait(2000)
    strike = tr.t
    tr.pin_fall("M1", strike + 300, 1500)  # stays down, then is stood up again
    tr.pin_fall("S2", strike + 400, 90)  # knocked off its base and lands back on it: counts
    tr.pin_fall("K", strike + 500, 120)
    tr.wobble("M3", strike + 600, 10)  # rocks without falling: does not count
    tr.wobble("S4", strike + 700, 15)
    tr.t = strike + 4500
    tr.press("confirm")
    actions, summary = sg.play("seven-pins", tr, tmp_path)
    assert actions == [{"a": "break", "player": 0},
                       {"a": "shot", "player": 0, "pins": ["K", "S2", "M1"], "pocketed": 0,
                        "carom": 0, "called": 0, "fouls": []}]
    assert summary["state"] == {"totals": [240, 300], "next": 0, "winner": None}  # 30+25+5


def test_seven_pins_screen_shows_the_shot_before_confirm(tmp_path):
    tr = Trace(4)
    tr.wait(500)
    tr.press("break")
    tr.press("confirm")  # P2 breaks
    tr.wait(2000)
    tr.pin_fall("K", tr.t + 300, 1500)
    tr.t += 4500
    tr.press("pocket")
    tr.press("carom")
    tr.press("called")
    tr.press("foul")
    tr.press("foul")  # the foul list, cursor on cue_pins
    tr.press("confirm")  # marks it and closes the list
    actions, summary = sg.play("seven-pins", tr, tmp_path)
    assert actions == [{"a": "break", "player": 1}]  # nothing scored yet
    shown = " ".join(summary["screen"])  # a long status wraps onto the next row
    assert "K p1 car call cue_pins" in shown


def test_seven_pins_several_fouls_in_one_shot_from_the_foul_list(tmp_path):
    # SP-8 with SP-12: the cue ball knocked a pin and then went into a pocket. The foul list
    # marks both; the screen shows the list while it is open.
    tr = Trace(8)
    tr.wait(500)
    tr.press("confirm")  # P1 breaks
    tr.wait(2000)
    tr.pin_fall("S1", tr.t + 300, 1500)
    tr.t += 4500
    for _ in range(2):
        tr.press("foul")  # cue_pins
    tr.press("confirm")
    for _ in range(4):
        tr.press("foul")  # cue_pocketed
    listed, summary = sg.play("seven-pins", tr, tmp_path, name="open")
    assert summary["screen"][0].startswith("FOUL  4/5 P1 *1")
    assert ">" + " cue_pocketed" in summary["screen"] and " *cue_pins" in summary["screen"]
    tr.press("confirm")
    tr.press("confirm")  # the shot
    actions, summary = sg.play("seven-pins", tr, tmp_path, name="done")
    assert actions[-1] == {"a": "shot", "player": 0, "pins": ["S1"], "pocketed": 0, "carom": 0,
                           "called": 0, "fouls": ["cue_pins", "cue_pocketed"]}
    # The penalty shot adds its sum (5) and the cue ball pocketed 5 more (contract, SP-12).
    assert summary["state"] == {"totals": [310, 300], "next": 1, "winner": None}


def test_novuss_buttons_count_and_the_screen_shows_them_first(tmp_path):
    tr = Trace(5)
    tr.wait(500)
    tr.press("start")
    tr.press("confirm")  # B shoots first
    for _ in range(2):
        tr.press("own")
    tr.press("opp")
    tr.press("foul")  # the foul list, cursor on opp_first
    tr.press("confirm")  # marks it
    tr.press("confirm")  # the shot
    tr.press("own")
    tr.press("own")
    actions, summary = sg.play("novuss", tr, tmp_path)
    assert actions == [{"a": "start", "side": 1},
                       {"a": "shot", "side": 1, "own": 2, "opp": 1, "fouls": ["opp_first"]}]
    assert summary["state"] == {"left": [7, 7], "debt": [0, 0], "next": 0, "winner": None}
    assert "own 2" in summary["screen"]  # A's count so far, not yet confirmed


def test_a_trace_of_the_samples_runs_under_run_virtual(tmp_path):
    # `make demo` runs these two after the first two: the same call as `chalk sim --virtual`.
    for game in ("seven-pins", "novuss"):
        actions, summary = run_virtual(game, sg.SAMPLES / "traces" / (game + ".jsonl"))
        assert summary["state"]["winner"] is not None and summary["warnings"] == []


def test_novuss_pocket_sensors_count_and_show_before_confirm(tmp_path):
    tr = Trace(6)
    tr.wait(500)
    tr.press("confirm")  # A (red) shoots first
    tr.wait(1000)
    tr.pocket(1, tr.t, 2000)  # a red: A's own
    tr.pocket(3, tr.t + 400, 2100)  # another red
    tr.pocket(2, tr.t + 800, 500)  # a black: B's, pocketed by A
    tr.wait(2000)
    tr.press("confirm")
    tr.wait(1000)
    tr.pocket(4, tr.t, 600)  # B pockets a black: own
    tr.pocket(4, tr.t + 500, 3600, ms=90)  # and the striker: long and bright
    tr.wait(2000)
    actions, summary = sg.play("novuss", tr, tmp_path)
    assert actions == [{"a": "start", "side": 0},
                       {"a": "shot", "side": 0, "own": 2, "opp": 1, "fouls": []}]
    assert summary["state"]["left"] == [6, 7] and summary["state"]["next"] == 1
    # B's shot is not confirmed: the screen shows what the sensors saw.
    assert "own 1 striker_pocketed" in " ".join(summary["screen"])


def test_seven_pins_pocket_beams_count_object_balls(tmp_path):
    tr = Trace(7)
    tr.wait(500)
    tr.press("confirm")
    tr.wait(2000)
    tr.pocket(1, tr.t + 500)
    tr.pocket(2, tr.t + 900, ms=4)  # a flicker: not a ball
    tr.pocket(2, tr.t + 1300)
    tr.pocket(1, tr.t + 1700)  # a third passage (the cue ball): capped at the two object balls
    tr.wait(4000)
    # The beams counted 2 (capped); one was the cue ball, so the scorer puts it right: the
    # pocket button cycles 2 -> 0 -> 1.
    tr.press("pocket")
    tr.press("pocket")
    tr.press("confirm")
    actions, summary = sg.play("seven-pins", tr, tmp_path)
    assert actions[-1] == {"a": "shot", "player": 0, "pins": [], "pocketed": 1, "carom": 0,
                           "called": 0, "fouls": []}
    assert summary["state"]["totals"] == [295, 300]


def test_novuss_several_fouls_in_one_shot_from_the_foul_list(tmp_path):
    # NV-7: the opponent's puck first, and the striker over the cushion: two penalty pucks.
    tr = Trace(9)
    tr.wait(500)
    tr.press("confirm")  # A shoots first
    tr.wait(1000)
    tr.press("foul")  # opp_first
    tr.press("confirm")
    for _ in range(6):
        tr.press("foul")  # striker_off
    tr.press("confirm")
    tr.press("confirm")  # the shot
    actions, summary = sg.play("novuss", tr, tmp_path)
    assert actions[-1] == {"a": "shot", "side": 0, "own": 0, "opp": 0,
                           "fouls": ["opp_first", "striker_off"]}
    assert summary["state"] == {"left": [8, 8], "debt": [2, 0], "next": 1, "winner": None}
