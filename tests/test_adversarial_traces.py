"""Adversarial sensor traces, played by the real firmware on a simulated board on a virtual clock
(what `chalk sim --virtual --trace FILE` runs): contact bounce of 1-5 ms on every edge of every
button, pin and peg; bursts of presses; pins falling at every phase of a scan and of the confirm
press; spikes shorter than the debounce on every line; stuck lines. Each must play to exactly
the actions a referee made at the table (docs/sensing.md, docs/scoring-at-the-table.md).
"""

import json
import random

import pytest

from chalk.randomgame import random_match
from chalk.sim import run_virtual
from chalk.traces import Trace, from_matchlog
from scoreboard.games.five_pins.referee import FOULS
from scoreboard.rules import new_game
from tests.mpy import micropython_path
from tests.test_sim_games import check_game, log_lines

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

BREAK = {"a": "break", "player": 0}
START = {"a": "start", "side": 0}
BUTTONS = {"five-pins": ("confirm", "carom3", "carom4", "foul", "undo", "break"),
           "shove-hapenny": ("done", "void", "out_of_turn", "undo", "claim")}


def play(game, tr, tmp_path, name="trace"):
    path = tmp_path / (name + ".jsonl")
    tr.write(path)
    actions, summary = run_virtual(game, path)
    for a in actions:
        a.pop("t")
    g = new_game(game, summary["config"])
    for a in actions:
        g.apply(a)
    assert g.state() == summary["state"]  # the board's state is the replay of its journal
    return actions, summary


def shot(player, pins="", carom=0, fouls=()):
    return {"a": "shot", "player": player, "pins": pins, "carom": carom, "fouls": list(fouls)}


def spikes(tr, game, t0, t1, rng, every=150, pins=True):
    """Spikes of 1-19 ms (under debounce_ms and min_press_ms, 20) on random buttons and, for
    five-pins, of 1-25 ms on random pins (under min_fall_ms, 30), from t0 to t1."""
    t = t0
    lines = ["btn." + b for b in BUTTONS[game]]
    if game == "five-pins" and pins:
        lines += ["pin." + p for p in "1234C"]
    while t < t1:
        line = rng.choice(lines)
        width = rng.randint(1, 25 if line.startswith("pin.") else 19)
        tr.at(t, line, 1)
        tr.at(t + width, line, 0)
        t += rng.randint(every // 2, every * 3 // 2)


def with_spikes(tr, game, seed, quiet=()):
    """Add spikes through the whole trace, except on lines in use around their own changes; in
    a held press (e.g. a long press of undo), the spike is a dropout."""
    rng = random.Random(seed)
    busy = {}
    held = {}  # line -> [(from, to)] while it is active (a press held, a pin lying)
    for t, line, v in sorted(tr.records, key=lambda r: r[0]):
        busy.setdefault(line, []).append(t)
        spans = held.setdefault(line, [])
        if v and (not spans or spans[-1][1] is not None):
            spans.append([t, None])
        elif not v and spans and spans[-1][1] is None:
            spans[-1][1] = t
    extra = Trace()
    end = max(t for t, _, _ in tr.records)
    spikes(extra, game, 300, end, rng)
    recs = extra.records
    for k in range(0, len(recs), 2):  # (start, end) of each spike
        (t0, line, _), (t1, _, _) = recs[k], recs[k + 1]
        # A spike on a line that is itself changing within 100 ms would merge with a real
        # press or fall (a different input altogether); keep it apart.
        if line in quiet or any(t0 - 100 < u < t1 + 100 for u in busy.get(line, ())):
            continue
        if any(a <= t0 and (b is None or t1 <= b) for a, b in held.get(line, ())):
            # A held press, or a pin lying on the cloth, drops out for a moment instead: still
            # the same press, and no new fall.
            tr.at(t0, line, 0)
            tr.at(t1, line, 1)
            continue
        tr.at(t0, line, 1)
        tr.at(t1, line, 0)
    return tr


def multi_foul_match(seed, shots=40):
    """A legal five-pins match whose shots carry zero, one, two or three fouls."""
    rng = random.Random(seed)
    g = new_game("five-pins", {"target": 60, "sets": 3, "pin_foul_penalty": 0})
    actions = [BREAK]
    g.apply(BREAK)
    while len(actions) <= shots and g.state()["winner"] is None:
        st = g.state()
        pins = "".join(p for p in "1234C" if rng.random() < 0.25)
        fouls = sorted(rng.sample(FOULS, rng.choice((0, 0, 1, 2, 3))), key=FOULS.index)
        a = shot(st["next"], pins, rng.choice((0, 0, 3, 4)), fouls)
        try:
            g.apply(a)
        except Exception:
            continue
        actions.append(a)
    head = {"chalk": 1, "game": "five-pins", "config": g.config, "players": ["P1", "P2"]}
    return [json.dumps(head)] + [json.dumps(dict(a, seq=i + 1)) for i, a in enumerate(actions)]


# -- bounce on every edge -------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [21, 22])
def test_five_pins_match_with_bounce_on_every_edge_and_spikes(seed, tmp_path):
    # Every press, every pin fall and return rattles 2-4 times 1-5 ms apart; spikes shorter than
    # the debounce hit buttons and pins all game long. Shots carry up to three fouls.
    lines = multi_foul_match(seed)
    tr = with_spikes(from_matchlog(lines, seed=seed, bounce_ms=(1, 5)), "five-pins", seed)
    want = [json.loads(x) for x in lines[1:]]
    for a in want:
        a.pop("seq")
    assert any(len(a.get("fouls", ())) >= 2 for a in want)
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == want
    assert not [w for w in summary["warnings"] if "chatter" in w or "stuck" in w]


def test_generated_five_pins_match_with_bounce_on_every_edge(tmp_path):
    head, acts = random_match("five-pins", seed=7)
    lines = log_lines(head, acts)
    check_game("five-pins", lines, from_matchlog(lines, seed=7, bounce_ms=(1, 5)), tmp_path)


def test_shove_hapenny_game_with_bounce_on_every_edge_and_spikes(tmp_path):
    # Buttons and pegs rattle; spikes on the buttons never press one (pegs are debounced
    # 300 ms: a peg glitch is covered in test_sim_games).
    head, acts = random_match("shove-hapenny", seed=14, accuracy=0.55)
    lines = log_lines(head, acts)
    tr = with_spikes(from_matchlog(lines, seed=14, bounce_ms=(1, 5)), "shove-hapenny", 14)
    check_game("shove-hapenny", lines, tr, tmp_path)


# -- bursts of presses ----------------------------------------------------------------------------

def test_bursts_of_presses_are_presses_not_chatter(tmp_path):
    # A referee in a hurry: eight presses a second, each edge rattling. Nine carom3 presses
    # (on, off, ... on), twelve presses of foul to reach "contact", marked; confirm.
    tr = Trace(seed=5, bounce_ms=(1, 5))
    tr.wait(500)
    tr.press("confirm")
    tr.wait(1000)
    tr.pin_fall("4", tr.t, None)
    tr.wait(2500)
    for _ in range(9):
        tr.press("carom3", hold=45, after=80)
    tr.wait(300)
    for _ in range(FOULS.index("contact") + 1):
        tr.press("foul", hold=50, after=75)
    tr.press("confirm", hold=60, after=120)
    tr.press("confirm", hold=60, after=400)
    # A burst of undo presses: three undos, each of the last action.
    tr.set("pin.4", 0)  # the figure is set up again
    tr.wait(500)
    tr.pin_fall("4", tr.t, 100)
    tr.wait(2500)
    tr.press("confirm")
    tr.pin_fall("1", tr.t, 100)
    tr.wait(2500)
    tr.press("confirm")
    for _ in range(3):
        tr.press("undo", hold=50, after=90)
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "4", 3, ["contact"]), shot(1, "4"), shot(0, "1"),
                       {"a": "undo"}, {"a": "undo"}, {"a": "undo"}]
    assert summary["state"]["next"] == 0 and summary["warnings"] == []


# -- pins at every phase --------------------------------------------------------------------------

def test_pins_at_every_phase_of_a_scan(tmp_path):
    # Falls of 25..34 ms, wobbles and two pins in one scan, started on each ms of the 5 ms
    # scan: a fall counts exactly when it lasts min_fall_ms (30) or more (FP-18, FP-21), a fall
    # that stands again counts (FP-19).
    tr = Trace(seed=3, bounce=False)
    tr.wait(500)
    tr.press("confirm")
    tr.wait(1000)
    want = [BREAK]
    player = 0
    for phase in range(5):
        for ms in (25, 28, 29, 30, 31, 34):
            tr.t += (phase - tr.t) % 5
            tr.pin_fall("1", tr.t, ms)
            tr.pin_fall("C", tr.t + 1, ms + 1)  # another pin, a ms later, in the same scan
            tr.wait(2300)
            tr.press("confirm")
            down = ("1" if ms >= 30 else "") + ("C" if ms + 1 >= 30 else "")
            want.append(shot(player, down))
            player = 1 - player
            tr.wait(200)
    actions, _ = play("five-pins", tr, tmp_path)
    assert actions == want


@pytest.mark.parametrize("bounce", [None, (1, 5)])
def test_pins_at_every_phase_of_the_confirm_press(bounce, tmp_path):
    # A pin leaves its base 1..40 ms before confirm is let go, or up to 10 ms after (the board
    # takes the confirm when its release has lasted min_press_ms, 20 ms), and lies there: it is
    # that shot's (FP-18). One that leaves 40 ms or more after the release is the next shot's
    # (its window settles and goes with the next confirm). Contact bounce on the pins and the
    # buttons, or none.
    tr = Trace(seed=8, bounce_ms=bounce)
    tr.wait(500)
    tr.press("confirm")
    tr.wait(1000)
    want = [BREAK]
    player = 0
    carry = ""
    for k, before in enumerate((1, 2, 3, 4, 5, 7, 9, 13, 21, 29, 30, 31, 40, -5, -10, -40,
                                -60, -500)):
        pin = "1234C"[k % 5]
        tr.wait(400)
        release = tr.t + 90
        tr.pin_fall(pin, release - before, 1200)
        tr.press("confirm", hold=90)
        if before >= -10:
            want.append(shot(player, "".join(p for p in "1234C" if p in carry + pin)))
            carry = ""
        else:
            want.append(shot(player, carry))
            carry = pin
        player = 1 - player
        tr.wait(3000)
    tr.press("confirm")
    want.append(shot(player, carry))
    actions, _ = play("five-pins", tr, tmp_path)
    assert actions == want


# -- glitches and stuck lines ---------------------------------------------------------------------

def test_glitches_shorter_than_debounce_on_every_line_do_nothing(tmp_path):
    # Nothing but spikes for a minute (buttons under 20 ms, pins under 30 ms): no press, no
    # pin, no action, no window (a shot started later counts only its own pins).
    rng = random.Random(4)
    tr = Trace(seed=4)
    tr.wait(500)
    tr.press("confirm")
    t0 = tr.t + 500
    spikes(tr, "five-pins", t0, t0 + 60000, rng, every=120)
    tr.t = t0 + 62500
    tr.pin_fall("3", tr.t, None)
    tr.wait(2500)
    tr.press("confirm")
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == [BREAK, shot(0, "3")]
    assert summary["warnings"] == []


def test_stuck_lines_are_reported_and_play_goes_on(tmp_path):
    # carom4 jams pressed from the start and pin 2 lies on its spot with a broken switch (both
    # stuck past stuck_ms, 60 s). Neither ever acts or counts; 80 s of play goes on around them.
    tr = Trace(seed=6, bounce_ms=(1, 5))
    tr.set("pin.2", 1)
    tr.wait(300)
    tr.press("confirm")  # the break: pins lying now belong to no shot
    tr.set("btn.carom4", 1)
    want = [BREAK]
    for k in range(10):
        tr.wait(5000)
        pin = "134C"[k % 4]
        tr.pin_fall(pin, tr.t, 150)
        tr.wait(2500)
        if k % 3 == 0:
            tr.press("carom3")
        tr.press("confirm")
        want.append(shot(k % 2, pin, 3 if k % 3 == 0 else 0))
    tr.set("btn.carom4", 1)  # still held: a record so the trace lasts that long
    actions, summary = play("five-pins", tr, tmp_path)
    assert actions == want
    assert set(summary["warnings"]) == {"btn.carom4 stuck", "pin.2 stuck"}
