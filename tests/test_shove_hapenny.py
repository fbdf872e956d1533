"""Shove ha'penny rules (rules/shove-hapenny.md, SH-1..SH-18): scenarios, units, properties."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoreboard import scenario
from scoreboard.games.shove_hapenny.rules import Rules
from scoreboard.rules import ConfigError, RuleError, new_game, rules_for

SCENARIOS = Path(__file__).parent / "scenarios" / "shove-hapenny"
SCENARIO_FILES = sorted(SCENARIOS.glob("*.json"))
Z = [0] * 9
FULL = [3] * 9


def game(**config):
    return new_game("shove-hapenny", config)


def start(side):
    return {"a": "start", "side": side}


def turn(side, beds, void=None):
    action = {"a": "turn", "side": side, "beds": list(beds)}
    if void is not None:
        action["void"] = void
    return action


def claim(side, bed):
    return {"a": "claim", "side": side, "bed": bed}


def bed(n, count):
    """A beds list with `count` coins in bed n (1..9)."""
    beds = [0] * 9
    beds[n - 1] = count
    return beds


def play(g, *actions):
    state = None
    for action in actions:
        state = g.apply(action)
    return state


def refused(g, action, rule):
    """Apply an action that must be refused with `rule`; check nothing changed; return the error."""
    before, length = g.state(), len(g)
    with pytest.raises(RuleError) as info:
        g.apply(action)
    assert info.value.rule == rule, str(info.value)
    assert g.state() == before
    assert len(g) == length
    return info.value


# A to 26, needing one score in bed 9; B plays empty turns.
BUILD_A = [
    start(0),
    turn(0, [3, 2, 0, 0, 0, 0, 0, 0, 0]), turn(1, Z),
    turn(0, [0, 1, 3, 1, 0, 0, 0, 0, 0]), turn(1, Z),
    turn(0, [0, 0, 0, 2, 3, 0, 0, 0, 0]), turn(1, Z),
    turn(0, [0, 0, 0, 0, 0, 3, 2, 0, 0]), turn(1, Z),
    turn(0, [0, 0, 0, 0, 0, 0, 1, 3, 1]), turn(1, Z),
    turn(0, bed(9, 1)),
]
A26 = [3, 3, 3, 3, 3, 3, 3, 3, 2]


# -- (a) the scenario files ----------------------------------------------------------------------
def test_scenario_files_exist():
    names = {p.stem for p in SCENARIO_FILES}
    for n in range(1, 6):
        assert "example-%d" % n in names
    assert "full-game" in names


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_scenario(path):
    data = json.loads(path.read_text())
    assert data["game"] == "shove-hapenny"
    assert data["rules"] and all(r.startswith("SH-") for r in data["rules"])
    g = new_game(data["game"], data.get("config"))
    results = scenario.run(data, g.apply, g.state, RuleError)
    problems = ["step %d %s: %s" % (i, json.dumps(data["steps"][i]["do"]), "; ".join(p))
                for i, _, _, p in results if p]
    assert not problems, "\n".join(problems)
    # Whatever the steps did, the state is the fold of the actions kept.
    assert replay(g).state() == g.state()


def replay(g):
    fresh = new_game("shove-hapenny", g.config)
    for action in g.actions():
        fresh.apply(action)
    return fresh


# -- config --------------------------------------------------------------------------------------
def test_config_defaults():
    g = game()
    assert g.config == {"sides": 2, "per_side": 1, "overflow": "auto"}
    assert rules_for("shove-hapenny") is Rules
    assert g.state() == {"beds": [Z, Z], "next": None, "turns": 0, "skip": [0, 0], "winner": None}


@pytest.mark.parametrize("config", [
    {"sides": 3}, {"sides": 1}, {"sides": 2.0}, {"per_side": 3}, {"per_side": 0},
    {"per_side": True}, {"per_side": "2"}, {"overflow": "maybe"}, {"overflow": None},
    {"target": 27}, {"sides": 2, "players": 4},
])
def test_config_errors(config):
    with pytest.raises(ConfigError):
        game(**config)


def test_config_error_names_unknown_key():
    with pytest.raises(ConfigError, match="target"):
        game(target=27)


# -- encode / decode -----------------------------------------------------------------------------
@pytest.mark.parametrize("action", [
    start(0), start(1), claim(0, 1), claim(1, 9),
    turn(0, Z), turn(1, [5, 0, 0, 0, 0, 0, 0, 0, 0]), turn(0, [0, 0, 0, 0, 0, 0, 0, 0, 5]),
    turn(1, [1, 1, 1, 1, 1, 0, 0, 0, 0], "touched"),
    turn(0, [0, 0, 0, 0, 1, 0, 2, 0, 2], "removed"),
])
def test_encode_decode_round_trip(action):
    g = game(overflow="claim")
    code = g.encode(action)
    assert type(code) is int and 0 <= code < 2 ** 29  # a small int on 32-bit MicroPython
    assert g.decode(code) == action


def test_decode_drops_unknown_keys():
    g = game()
    action = dict(turn(0, bed(2, 2)), seq=4, t=1200)
    assert g.decode(g.encode(action)) == turn(0, bed(2, 2))


# -- SH-1 / SH-3 / SH-6 --------------------------------------------------------------------------
def test_sh1_nine_beds():
    g = game()
    g.apply(start(0))
    refused(g, turn(0, [0] * 8), "SH-1")
    refused(g, turn(0, [0] * 10), "SH-1")
    refused(g, {"a": "turn", "side": 0}, "SH-1")
    refused(g, {"a": "turn", "side": 0, "beds": "000000000"}, "SH-1")


def test_sh3_five_coins_a_turn():
    g = game()
    g.apply(start(0))
    refused(g, turn(0, [1, 1, 1, 1, 1, 1, 0, 0, 0]), "SH-3")
    refused(g, turn(0, bed(4, 6)), "SH-3")
    refused(g, turn(0, bed(4, -1)), "SH-3")
    refused(g, turn(0, [0, 0, 0, 0, 1.0, 0, 0, 0, 0]), "SH-3")
    refused(g, turn(0, [0, 0, 0, 0, True, 0, 0, 0, 0]), "SH-3")
    s = g.apply(turn(0, [1, 1, 1, 1, 1, 0, 0, 0, 0]))
    assert s["beds"] == [[1, 1, 1, 1, 1, 0, 0, 0, 0], Z]


def test_sh6_sides_alternate():
    g = game()
    assert play(g, start(1))["next"] == 1
    assert play(g, turn(1, Z))["next"] == 0
    assert play(g, turn(0, Z))["next"] == 1
    assert g.state()["turns"] == 2


# -- SH-4 ----------------------------------------------------------------------------------------
def test_sh4_sides_are_0_and_1():
    g = game()
    refused(g, start(2), "SH-4")
    refused(g, start(-1), "SH-4")
    refused(g, {"a": "start"}, "SH-4")
    refused(g, {"a": "start", "side": True}, "SH-4")
    g.apply(start(0))
    refused(g, turn(2, Z), "SH-4")


def test_sh4_partner_rotation_with_pairs():
    g = game(per_side=2)
    g.apply(start(0))
    assert g.view()["partner"] == [0, 0]  # A1 shoots first
    g.apply(turn(0, Z))
    assert g.view()["partner"] == [1, 0]  # then B1
    g.apply(turn(1, Z))
    assert g.view()["partner"] == [1, 1]  # then A2
    g.apply(turn(0, Z))
    assert g.view()["partner"] == [0, 1]  # then B2
    g.apply(turn(1, Z))
    assert g.view()["partner"] == [0, 0]  # then A1 again
    # SH-18: B plays out of turn: its rotation does not move, and the turn B misses does not
    # move it either; the same B partner shoots B's next turn.
    g.apply(turn(1, Z))
    assert g.view()["partner"] == [0, 0]
    g.apply(turn(0, Z))  # A1; B misses its turn
    assert g.state()["next"] == 0
    assert g.view()["partner"] == [1, 0]
    g.apply(turn(0, Z))  # A2
    assert g.view()["partner"] == [0, 0]
    g.apply(turn(1, Z))  # B1
    assert g.view()["partner"] == [0, 1]
    g.apply({"a": "undo"})
    assert g.view()["partner"] == [0, 0]


def test_sh4_single_players_always_partner_0():
    g = game()
    play(g, start(0), turn(0, Z), turn(1, Z), turn(0, Z))
    assert g.view()["partner"] == [0, 0]


# -- SH-5 ----------------------------------------------------------------------------------------
def test_sh5_start_once_before_any_turn():
    g = game(overflow="claim")
    e = refused(g, turn(0, bed(1, 1)), "SH-5")
    assert "start" in e.reason
    refused(g, claim(0, 1), "SH-5")
    assert g.apply(start(1)) == {"beds": [Z, Z], "next": 1, "turns": 0, "skip": [0, 0],
                                 "winner": None}
    refused(g, start(1), "SH-5")
    refused(g, start(0), "SH-5")
    g.apply(turn(1, Z))
    refused(g, start(1), "SH-5")


# -- SH-7 ----------------------------------------------------------------------------------------
def test_sh7_win_and_game_over():
    g = game(overflow="claim")
    play(g, *BUILD_A)
    g.apply(turn(1, Z))
    s = g.apply(turn(0, [0, 0, 0, 0, 0, 0, 0, 0, 1]))
    assert s["beds"] == [FULL, Z]
    assert s["winner"] == 0 and s["turns"] == 13
    assert g.outcome() == {"game": "shove-hapenny", "winner": 0}
    for action in (turn(1, Z), turn(0, Z), start(0), claim(1, 1)):
        e = refused(g, action, "SH-7")
        assert "game over" in str(e)
    # undo across the win
    s = g.apply({"a": "undo"})
    assert s["winner"] is None and s["beds"] == [A26, Z] and s["next"] == 0 and s["turns"] == 12
    assert g.outcome() is None


def test_sh7_view_needed_and_complete():
    g = game()
    play(g, *BUILD_A)
    v = g.view()
    assert v["needed"] == [1, 27]
    assert v["complete"] == [8, 0]


# -- SH-11 / SH-12 / SH-13 / SH-14 ----------------------------------------------------------------
def test_sh11_sh12_scores_wholly_inside_coins():
    g = game()
    g.apply(start(0))
    # digest example 1: beds 2, 2, 5 (the coin on a line and the dead one are not counted)
    s = g.apply(turn(0, [0, 2, 0, 0, 1, 0, 0, 0, 0]))
    assert s["beds"] == [[0, 2, 0, 0, 1, 0, 0, 0, 0], Z]
    assert s["next"] == 1 and s["turns"] == 1


def test_sh13_any_order():
    g = game()
    s = play(g, start(0), turn(0, bed(9, 3)), turn(1, bed(5, 2)), turn(0, bed(1, 1)))
    assert s["beds"] == [[1, 0, 0, 0, 0, 0, 0, 0, 3], bed(5, 2)]


def test_sh14_only_while_needed():
    g = game(overflow="off")
    s = play(g, start(0), turn(0, bed(4, 2)), turn(1, Z), turn(0, bed(4, 3)))
    assert s["beds"] == [bed(4, 3), Z]
    s = play(g, turn(1, Z), turn(0, bed(4, 5)))
    assert s["beds"] == [bed(4, 3), Z]


# -- SH-15 / SH-16 -------------------------------------------------------------------------------
def test_sh15_auto_overflow_to_opponent():
    # digest example 2
    g = game()
    s = play(g, start(0), turn(0, bed(3, 3)), turn(1, bed(3, 1)), turn(0, bed(3, 2)))
    assert s["beds"] == [bed(3, 3), bed(3, 3)]


def test_sh15_auto_overflow_capped_then_lost():
    g = game()
    s = play(g, start(0), turn(0, bed(3, 3)), turn(1, bed(3, 2)), turn(0, bed(3, 4)))
    assert s["beds"] == [bed(3, 3), bed(3, 3)]
    s = g.apply(turn(1, bed(3, 3)))  # into A's full bed: lost
    assert s["beds"] == [bed(3, 3), bed(3, 3)]


def test_sh15_off_overflow_lost():
    g = game(overflow="off")
    s = play(g, start(0), turn(0, bed(3, 3)), turn(1, bed(3, 1)), turn(0, bed(3, 2)))
    assert s["beds"] == [bed(3, 3), bed(3, 1)]
    refused(g, claim(1, 3), "SH-15")


def test_sh15_claim_only_with_claim_config():
    for mode in ("auto", "off"):
        g = game(overflow=mode)
        play(g, start(0), turn(0, bed(3, 3)), turn(1, Z), turn(0, bed(3, 2)))
        e = refused(g, claim(1, 3), "SH-15")
        assert "claim" in e.reason


def test_sh15_claim_flow():
    g = game(overflow="claim")
    s = play(g, start(0), turn(0, bed(3, 3)), turn(1, bed(3, 1)), turn(0, bed(3, 3)))
    assert s["beds"] == [bed(3, 3), bed(3, 1)]  # nothing credited until claimed
    assert g.view()["claimable"] == [Z, bed(3, 2)]
    refused(g, claim(0, 3), "SH-15")  # the shooter's own overflow
    refused(g, claim(1, 4), "SH-15")  # nothing in bed 4
    refused(g, claim(1, 0), "SH-15")
    refused(g, claim(1, 10), "SH-15")
    refused(g, {"a": "claim", "side": 1}, "SH-15")
    s = g.apply(claim(1, 3))
    assert s["beds"] == [bed(3, 3), bed(3, 2)] and s["next"] == 1 and s["turns"] == 3
    s = g.apply(claim(1, 3))
    assert s["beds"] == [bed(3, 3), bed(3, 3)] and s["next"] == 1 and s["turns"] == 3
    assert g.view()["claimable"] == [Z, Z]
    refused(g, claim(1, 3), "SH-15")  # bed full, though one overflow is left
    g.apply(turn(1, Z))
    refused(g, claim(1, 3), "SH-15")  # no longer the immediately preceding turn


def test_sh15_claim_ends_with_next_turn_even_out_of_turn_or_void():
    for follow in (turn(1, Z), turn(0, Z, "touched")):
        g = game(overflow="claim")
        play(g, start(0), turn(0, bed(2, 3)), turn(1, bed(1, 3)), turn(0, Z), turn(1, bed(1, 1)))
        assert g.view()["claimable"] == [bed(1, 1), Z]
        g.apply(follow)
        refused(g, claim(0, 1), "SH-15")
        assert g.view()["claimable"] == [Z, Z]
        g.apply({"a": "undo"})  # the claim is back with the turn that made it
        assert g.apply(claim(0, 1))["beds"][0] == [1, 3, 0, 0, 0, 0, 0, 0, 0]


def test_sh15_no_winning_overflow_auto():
    # digest example 3: A needs one in bed 9; B's coin in its full bed 9 would win it for A
    g = game()
    actions = list(BUILD_A)
    actions[2] = turn(1, bed(9, 3))
    s = play(g, *actions)
    assert s["beds"] == [A26, bed(9, 3)]
    s = g.apply(turn(1, bed(9, 1)))
    assert s["beds"] == [A26, bed(9, 3)]
    assert s["winner"] is None and s["next"] == 0


def test_sh15_no_winning_claim():
    g = game(overflow="claim")
    actions = list(BUILD_A)
    actions[2] = turn(1, bed(9, 3))
    play(g, *actions)
    g.apply(turn(1, bed(9, 2)))
    assert g.view()["claimable"] == [Z, Z]  # A could only take its winning score
    e = refused(g, claim(0, 9), "SH-15")
    assert "winning" in e.reason
    s = g.apply(turn(0, bed(9, 1)))
    assert s["winner"] == 0


def test_sh16_overflows_bed_1_to_9_each_checked():
    # B has 25, needing bed 2 and bed 7; A's overflows in both: bed 2 is credited (26), bed 7
    # would be B's 27th and is lost. A's own coins in beds 1 and 9 score as usual.
    g = game()
    s = play(g, start(1),
             turn(1, [3, 2, 0, 0, 0, 0, 0, 0, 0]), turn(0, [0, 3, 0, 0, 0, 0, 2, 0, 0]),
             turn(1, [0, 0, 3, 2, 0, 0, 0, 0, 0]), turn(0, bed(7, 1)),
             turn(1, [0, 0, 0, 1, 3, 1, 0, 0, 0]), turn(0, Z),
             turn(1, [0, 0, 0, 0, 0, 2, 2, 1, 0]), turn(0, Z),
             turn(1, [0, 0, 0, 0, 0, 0, 0, 2, 3]))
    assert s["beds"] == [[0, 3, 0, 0, 0, 0, 3, 0, 0], [3, 2, 3, 3, 3, 3, 2, 3, 3]]
    s = g.apply(turn(0, [1, 1, 0, 0, 0, 0, 1, 0, 2]))
    assert s["beds"] == [[1, 3, 0, 0, 0, 0, 3, 0, 2], [3, 3, 3, 3, 3, 3, 2, 3, 3]]
    assert s["winner"] is None


def test_sh16_own_scores_before_overflow():
    # A's bed 5 has 2: of three coins, one fills it and two overflow to B (which has 0 there).
    g = game()
    s = play(g, start(0), turn(0, bed(5, 2)), turn(1, Z), turn(0, bed(5, 3)))
    assert s["beds"] == [bed(5, 3), bed(5, 2)]


# -- SH-17 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("why", ["touched", "removed"])
def test_sh17_void_turn_scores_nothing(why):
    g = game()
    g.apply(start(0))
    s = g.apply(turn(0, bed(1, 3), why))  # digest example 4
    assert s == {"beds": [Z, Z], "next": 1, "turns": 1, "skip": [0, 0], "winner": None}
    assert g.actions()[-1] == turn(0, bed(1, 3), why)


@pytest.mark.parametrize("void", ["kicked", "", None, True, 1])
def test_sh17_bad_void(void):
    g = game()
    g.apply(start(0))
    refused(g, {"a": "turn", "side": 0, "beds": Z, "void": void}, "SH-17")


# -- SH-18 ---------------------------------------------------------------------------------------
def test_sh18_out_of_turn_scores_nothing_and_misses_next_turn():
    # digest example 5
    g = game()
    play(g, start(0), turn(0, bed(2, 1)))
    s = g.apply(turn(0, bed(2, 2)))
    assert s == {"beds": [bed(2, 1), Z], "next": 1, "turns": 2, "skip": [1, 0], "winner": None}
    s = g.apply(turn(1, bed(1, 1)))
    assert s == {"beds": [bed(2, 1), bed(1, 1)], "next": 1, "turns": 3, "skip": [0, 0],
                 "winner": None}
    s = g.apply(turn(1, bed(1, 1)))
    assert s["next"] == 0 and s["beds"] == [bed(2, 1), bed(1, 2)] and s["turns"] == 4


def test_sh18_skip_does_not_accumulate():
    g = game()
    play(g, start(0), turn(0, Z), turn(0, Z))
    s = g.apply(turn(0, bed(1, 1)))
    assert s["skip"] == [1, 0] and s["turns"] == 3 and s["beds"] == [Z, Z]
    assert play(g, turn(1, Z))["next"] == 1
    assert play(g, turn(1, Z))["next"] == 0


def test_sh18_void_out_of_turn_is_out_of_turn():
    g = game()
    play(g, start(0))
    s = g.apply(turn(1, bed(1, 1), "touched"))
    assert s["skip"] == [0, 1] and s["next"] == 0 and s["turns"] == 1


def test_sh18_undo_out_of_turn():
    g = game()
    play(g, start(0), turn(0, bed(1, 1)), turn(0, bed(1, 1)))
    assert g.state()["skip"] == [1, 0]
    s = g.apply({"a": "undo"})
    assert s == {"beds": [bed(1, 1), Z], "next": 1, "turns": 1, "skip": [0, 0], "winner": None}
    assert len(g) == 2


# -- errors, undo --------------------------------------------------------------------------------
def test_rule_error_names_rule_action_and_state():
    g = game()
    play(g, start(0), turn(0, bed(1, 1)))
    for action, rule in ((start(1), "SH-5"), (turn(0, bed(1, 6)), "SH-3"),
                         (claim(1, 1), "SH-15"), (turn(1, Z, "oops"), "SH-17"),
                         (start(5), "SH-4")):
        e = refused(g, action, rule)
        text = str(e)
        assert text.startswith(rule + ":")
        assert json.dumps(action) in text
        assert json.dumps(g.state()) in text


def test_unknown_action_kind():
    g = game()
    refused(g, {"a": "shove", "side": 0}, "LOG")


def test_undo_nothing():
    g = game()
    refused(g, {"a": "undo"}, "LOG")


def test_undo_across_win_and_out_of_turn():
    g = game()
    play(g, *BUILD_A)
    play(g, turn(0, Z))  # out of turn: A misses its next turn
    assert g.state()["skip"] == [1, 0]
    play(g, turn(1, Z))  # A misses; B again
    assert g.state()["next"] == 1
    s = play(g, turn(1, Z), turn(0, bed(9, 1)))
    assert s["winner"] == 0 and s["beds"] == [FULL, Z] and s["turns"] == 15
    s = play(g, {"a": "undo"})
    assert s["winner"] is None and s["beds"] == [A26, Z] and s["next"] == 0 and s["turns"] == 14
    s = play(g, {"a": "undo"})
    assert s["skip"] == [0, 0] and s["next"] == 1 and s["turns"] == 13
    s = play(g, {"a": "undo"})
    assert s["skip"] == [1, 0] and s["next"] == 1 and s["turns"] == 12
    s = play(g, {"a": "undo"})
    assert s == {"beds": [A26, Z], "next": 1, "turns": 11, "skip": [0, 0], "winner": None}
    assert len(g) == len(BUILD_A)
    assert g.actions() == BUILD_A


# -- (c) properties of random legal games ---------------------------------------------------------
def total(beds):
    return sum(beds)


@st.composite
def game_plan(draw):
    config = {"per_side": draw(st.sampled_from([1, 2])),
              "overflow": draw(st.sampled_from(["auto", "claim", "off"]))}
    return config, draw(st.integers(0, 1)), draw(st.integers(5, 90))


def draw_turn_beds(data, need):
    """Five coins: each in a bed (1..9) or nowhere (0); often aimed at beds the shooter needs."""
    beds = [0] * 9
    aim = data.draw(st.booleans())
    wanted = [b for b in range(9) if need[b] < 3] or list(range(9))
    for _ in range(5):
        if aim:
            b = data.draw(st.sampled_from(wanted + [None]))
            if b is not None:
                beds[b] += 1
        else:
            b = data.draw(st.integers(0, 9))
            if b:
                beds[b - 1] += 1
    return beds


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=game_plan(), data=st.data())
def test_random_legal_games(plan, data):
    config, first, length = plan
    g = game(**config)
    g.apply(start(first))
    history = [g.state()]  # state after each kept action, for checking undo
    for _ in range(length):
        s = g.state()
        if s["winner"] is not None:
            choice = "undo" if data.draw(st.booleans()) else "stop"
        else:
            choice = data.draw(st.sampled_from(
                ["turn"] * 6 + ["void", "out", "claim", "undo"]))
        if choice == "stop":
            break
        if choice == "undo":
            if len(g) <= 1:
                continue
            history.pop()
            assert g.apply({"a": "undo"}) == history[-1]
            continue
        before = s
        if choice == "claim":
            claimable = g.view()["claimable"]
            options = [(side, b + 1) for side in (0, 1) for b in range(9) if claimable[side][b]]
            if not options:
                continue
            action = claim(*data.draw(st.sampled_from(options)))
        else:
            side = s["next"] if choice != "out" else 1 - s["next"]
            beds = draw_turn_beds(data, s["beds"][side])
            action = turn(side, beds, data.draw(st.sampled_from(["touched", "removed"]))
                          if choice == "void" else None)
        after = g.apply(action)
        history.append(after)
        # every bed 0..3; scores never go down (undo aside)
        for side in (0, 1):
            for b in range(9):
                assert 0 <= after["beds"][side][b] <= 3
                assert after["beds"][side][b] >= before["beds"][side][b]
        assert after["skip"] in ([0, 0], [1, 0], [0, 1])
        if choice == "claim":
            assert (after["turns"], after["next"]) == (before["turns"], before["next"])
        else:
            assert after["turns"] == before["turns"] + 1
        if choice in ("out", "void"):
            assert after["beds"] == before["beds"]
        # at most one winner, and only by its own coin in its own turn
        totals = [total(after["beds"][0]), total(after["beds"][1])]
        assert totals.count(27) <= 1
        if after["winner"] is None:
            assert 27 not in totals
        else:
            assert totals[after["winner"]] == 27
        if before["winner"] is None and after["winner"] is not None:
            w = after["winner"]
            assert choice == "turn" and action["side"] == w == before["next"]
            # the bed(s) that completed it were hit by w's own coins
            gained = [b for b in range(9) if after["beds"][w][b] > before["beds"][w][b]]
            assert gained and all(action["beds"][b] > 0 for b in gained)
        # the fold of the actions kept is the state
        assert replay(g).state() == after
        assert g.fold(g._codes) == g._s
    assert replay(g).state() == g.state()
    for action in g.actions():
        assert g.decode(g.encode(action)) == action


@settings(max_examples=200, deadline=None)
@given(side=st.integers(0, 1),
       coins=st.lists(st.integers(0, 9), min_size=0, max_size=5),
       void=st.sampled_from([None, "touched", "removed"]))
def test_turn_encoding_round_trip(side, coins, void):
    beds = [0] * 9
    for c in coins:
        if c:
            beds[c - 1] += 1
    g = game()
    action = turn(side, beds, void)
    code = g.encode(action)
    assert 0 <= code < 2 ** 29
    assert g.decode(code) == action
