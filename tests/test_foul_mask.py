"""The check of a shot's `fouls` that five pins, seven pins and novuss share (rules.base
foul_mask: FP-13, SP-4, NV-7), beside each game's check of its 0/1 flags, the referee's void
(FP-17's ruling, as FP-17, SP-9, NV-6 take it) and five pins' in_contact (FP-24). The same
refusals, each citing its own game's rule, naming the action and the untouched state, on CPython
and on the MicroPython unix port alike."""

import json

import pytest

from scoreboard.rules import new_game
from scoreboard.rules.base import RuleError, foul_mask
from tests.mpy import micropython_path, run_mp

VOID_RULE = {"five-pins": "FP-17", "seven-pins": "SP-9", "novuss": "NV-6"}
BAD_FLAGS = (2, -1, True, False, "1", 1.0, None, [1], {"x": 1})
GAMES = {
    # game: (rule, its first action, a shot with no fouls key, its first two foul codes)
    "five-pins": ("FP-13", {"a": "break", "player": 0},
                  {"a": "shot", "player": 0, "pins": "", "carom": 0}, ("pin", "miss")),
    "seven-pins": ("SP-4", {"a": "break", "player": 0},
                   {"a": "shot", "player": 0, "pins": []}, ("cue_pins", "off_table")),
    "novuss": ("NV-7", {"a": "start", "side": 0},
               {"a": "shot", "side": 0, "own": 0, "opp": 0},
               ("no_own_touch", "striker_pocketed")),
}
BAD = [  # fouls value, the message (after the rule id)
    ("miss", "fouls must be a list of foul codes"),
    ({"miss": 1}, "fouls must be a list of foul codes"),
    (None, "fouls must be a list of foul codes"),
    (["nope"], "unknown foul 'nope' (known: %s)"),
    ([1], "unknown foul 1 (known: %s)"),
    ([True], "unknown foul True (known: %s)"),
    ([["miss"]], "unknown foul ['miss'] (known: %s)"),
    (["Miss"], "unknown foul 'Miss' (known: %s)"),  # codes are exact: no case folding
    ([" pin"], "unknown foul ' pin' (known: %s)"),
    (["FIRST", "SECOND", "FIRST"], "foul FIRST listed twice"),
]


def _cases(game):
    rule, first, shot, (a, b) = GAMES[game]
    for fouls, message in BAD:
        text = json.dumps(fouls).replace("FIRST", a).replace("SECOND", b)
        yield dict(shot, fouls=json.loads(text)), message.replace("FIRST", a)
    flags = [("void", "the referee voided the shot")]
    if game == "five-pins":
        flags.append(("in_contact", "played from the break position after the balls were in "
                                    "contact"))
    for key, what in flags:
        for value in BAD_FLAGS:
            yield dict(shot, **{key: value}), "%s must be 1 (%s) or 0" % (key, what)


def _known(game):
    return __import__("scoreboard.games.%s.rules" % game.replace("-", "_"), None, None,
                      ("rules",)).FOULS


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_game_refuses_bad_fouls_citing_its_rule_with_the_state_untouched(game):
    rule, first, shot, (a, b) = GAMES[game]
    g = new_game(game, {})
    g.apply(first)
    before = g.state()
    known = _known(game)
    for action, message in _cases(game):
        if "%s" in message:
            message = message % ", ".join(known)
        with pytest.raises(RuleError) as e:
            g.apply(action)
        want = rule
        if message.startswith("void "):
            want = VOID_RULE[game]
        elif message.startswith("in_contact "):
            want = "FP-24"
        assert e.value.rule == want and e.value.reason == message, (action, str(e.value))
        assert str(e.value) == "%s: %s; action %s; state %s" % (
            want, message, json.dumps(action), json.dumps(before))
        assert g.state() == before and len(g) == 1
    # Absent and empty fouls are none; every known code once, in any order, is its bit.
    assert foul_mask(shot, known, rule) == 0
    assert foul_mask(dict(shot, fouls=[]), known, rule) == 0
    codes = list(reversed(known))
    assert foul_mask(dict(shot, fouls=codes), known, rule) == (1 << len(known)) - 1
    assert foul_mask(dict(shot, fouls=[b]), known, rule) == 2
    # A void flag of 0, like none, is an ordinary shot.
    g.apply(dict(shot, void=0))
    assert len(g) == 2


def test_the_games_use_the_one_check():
    for game in GAMES:
        rules = __import__("scoreboard.games.%s.rules" % game.replace("-", "_"), None, None,
                           ("rules",))
        assert rules.foul_mask is foul_mask, game


MP_CODE = r'''
import json
from scoreboard.rules import new_game
cases = json.loads(CASES)
out = []
for game, first, actions in cases:
    g = new_game(game, {})
    g.apply(first)
    for action in actions:
        try:
            g.apply(action)
            out.append(None)
        except Exception as e:
            out.append([e.rule, e.reason, g.state()])
print(json.dumps(out))
'''


@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_the_refusals_read_the_same_on_micropython():
    cases, want = [], []
    for game in sorted(GAMES):
        first = GAMES[game][1]
        actions = [a for a, _m in _cases(game)]
        cases.append([game, first, actions])
        g = new_game(game, {})
        g.apply(first)
        for action in actions:
            with pytest.raises(RuleError) as e:
                g.apply(action)
            want.append([e.value.rule, e.value.reason, g.state()])
    # (Compiled from source here, which a board never does: more heap than its 96k.)
    out = run_mp(code=MP_CODE.replace("CASES", repr(json.dumps(cases))), heap="512k").stdout
    got = json.loads(out.strip().splitlines()[-1])
    # (The dicts' key order differs on MicroPython: compared as values, not as text.)
    assert got == want
